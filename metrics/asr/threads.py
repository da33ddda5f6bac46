"""One BLAS thread while Whisper decodes, so a transcript does not depend on the core count.

faster-whisper computes its log-mel features with numpy, and numpy's BLAS sums a matrix product
in an order that depends on how many threads it uses; the last bits of the features then differ,
and greedy decoding can flip a token. Measured here: with numpy on 1 thread (as Ray starts its
workers) 4 of 36 transcripts of one run differed from those made with 2 threads. Pinning BLAS to
one thread for the duration of a transcription costs little (the features are a small part of the
work; CTranslate2 keeps its own ``cpu_threads``) and makes the transcripts the same whatever the
core count, for the same audio, model, settings and CPU code path (CTranslate2's ISA and GEMM
backends differ between CPUs and do change transcripts: :mod:`.isa`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every BLAS library loaded in this process to one thread inside the block."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
