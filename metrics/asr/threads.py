"""One BLAS thread while Whisper decodes, so a transcript does not depend on the core count.

faster-whisper computes its log-mel features with numpy, and numpy's BLAS sums a matrix product
in an order that depends on how many threads it uses; the last bits of the features then differ,
and greedy decoding can flip a token. Measured here: with numpy on 1 thread (as Ray starts its
workers) 4 of 36 transcripts of one run differed from those made with 2 threads. Pinning BLAS to
one thread for the duration of a transcription costs little (the features are a small part of the
work; CTranslate2 keeps its own ``cpu_threads``) and makes the transcripts the same whatever the
core count, for the same audio, model, settings and CPU code path (CTranslate2's ISA and GEMM
backends differ between CPUs and do change transcripts: :mod:`.isa`).

BLAS limits are process-wide, and threadpoolctl lets one thread at a time set OpenBLAS's (it
ignores the others). With several replies decoded at once on threads (``--asr-workers``), the
thread that starts them holds the limit around them all (the serial executor does, through the
transcribe stage's ``holding``); a decode thread that enters while it is held changes nothing and
gives nothing back, so no decode thread can end the limit under another that is still computing.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_holders = 0


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every BLAS library loaded in this process to one thread inside the block.

    Several threads may be inside at once: the first to enter takes the limit and gives the
    original back when it leaves, so it must be the last to leave (enter it in the thread that
    starts the others, around them).
    """
    global _holders
    with contextlib.ExitStack() as limit:
        with _lock:
            if _holders == 0:
                from threadpoolctl import threadpool_limits

                limit.enter_context(threadpool_limits(limits=1, user_api="blas"))
            _holders += 1
        try:
            yield
        finally:
            with _lock:  # given back (by the thread that took it) before another can take it
                _holders -= 1
                limit.close()
