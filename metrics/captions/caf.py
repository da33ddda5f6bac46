"""CAF-Score (Lee et al., 2026): S-CLAP, FLEUR, their weighted sum, and the tie rate. Pure
functions; the CLAP model is :mod:`.clap`, the served LLM's digit probabilities :mod:`.openai_api`.

- **S-CLAP** (the paper's equation 2): the maximum over sliding windows of the cosine between
  each window's L2-normalised audio embedding and the caption's; hop 1 s, window 7 s for MS-CLAP
  and 10 s otherwise (:func:`windows`). ``mode="max_embedding"`` is the compatibility mode with
  the released code as we read it: the window embeddings are max-pooled element-wise first, and
  the cosine is taken once (it differs from the equation; labelled wherever used).
- **FLEUR** (equation 3): ``sum_j 10^-j sum_{i=1..9} i * p(i, j)`` over the first two decimal
  places ``j``, with ``p(i, j)`` the probability of digit token ``i`` there (``top_logprobs``). As
  in the equation, only decimal places count: an answer "1.00" scores its decimals.
- **S_CAF** = ``alpha * S-CLAP + (1 - alpha) * FLEUR``, ``alpha`` 0.8 by default.
- **tie rate**: the share of caption pairs given identical scores (the paper's reason for FLEUR
  over raw LLM scores).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

ALPHA = 0.8
HOP_S = 1.0


def window_s(clap_name: str) -> float:
    """7 s for MS-CLAP, 10 s for every other CLAP (the paper's setting)."""
    n = clap_name.lower().replace("_", "-")
    return 7.0 if ("ms-clap" in n or "msclap" in n or "microsoft" in n) else 10.0


def windows(n_samples: int, sr: int, win_s: float, hop_s: float = HOP_S) -> list[tuple[int, int]]:
    """Sample ranges of the sliding windows: starts every ``hop_s`` while a full window fits, plus
    one window ending at the last sample when the starts leave a tail; audio no longer than one
    window is one window (the whole clip)."""
    win, hop = int(round(win_s * sr)), int(round(hop_s * sr))
    if n_samples <= 0 or win <= 0 or hop <= 0:
        raise ValueError("windows need audio, a window and a hop longer than 0")
    if n_samples <= win:
        return [(0, n_samples)]
    out = [(s, s + win) for s in range(0, n_samples - win + 1, hop)]
    if out[-1][1] < n_samples:
        out.append((n_samples - win, n_samples))
    return out


def _unit(x: Any) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    n = np.linalg.norm(a, axis=-1, keepdims=True)
    if np.any(n == 0):
        raise ValueError("an embedding of norm 0 has no direction")
    return a / n


def s_clap(window_embs: Any, text_emb: Any, mode: str = "max_cosine") -> float:
    """S-CLAP of one caption from its audio's window embeddings ``(n_windows, dim)``.

    ``mode``: ``"max_cosine"`` (the paper's equation) or ``"max_embedding"`` (released-code
    compatibility: element-wise max of the window embeddings, then one cosine).
    """
    w, t = np.atleast_2d(np.asarray(window_embs, dtype=float)), _unit(text_emb)
    if mode == "max_cosine":
        return float(np.max(_unit(w) @ t))
    if mode == "max_embedding":
        return float(_unit(w.max(axis=0)) @ t)
    raise ValueError(f"S-CLAP mode must be max_cosine or max_embedding, got {mode!r}")


def fleur(digit_probs: Sequence[dict[str, float]]) -> float:
    """FLEUR from per-decimal-place digit probabilities (``[{"8": 0.7, "9": 0.3}, {...}]``).

    The paper's worked example: ``fleur([{"8": .7, "9": .3}, {"5": .6, "4": .4}]) == 0.876``.
    """
    if len(digit_probs) < 2:
        raise ValueError("FLEUR needs the digit probabilities of two decimal places")
    return float(
        sum(
            10.0 ** -(j + 1)
            * sum(int(d) * p for d, p in pos.items() if d in "123456789" and len(d) == 1)
            for j, pos in enumerate(digit_probs[:2])
        )
    )


def decimal_digit_probs(content: Sequence[dict[str, Any]]) -> tuple[list[dict[str, float]], str]:
    """The digit distributions of the first two decimal places from OpenAI ``logprobs.content``.

    Walks the generated tokens to the first ``.``; each of the next two positions must be a
    one-digit token, whose ``top_logprobs`` give ``p(i, j)`` (digit tokens only, as probabilities).

    Raises:
        ValueError: no decimal point, or a decimal place not generated as a one-digit token.
    """
    text = "".join(str(t.get("token", "")) for t in content)
    seen, out = "", []
    for tok in content:
        s = str(tok.get("token", ""))
        if "." in seen and len(out) < 2:
            if len(s.strip()) != 1 or not s.strip().isdigit():
                raise ValueError(
                    f"decimal place {len(out) + 1} is the token {s!r}, not one digit: FLEUR needs one digit per token"
                )
            tops = tok.get("top_logprobs") or [{"token": s, "logprob": tok.get("logprob", 0.0)}]
            probs: dict[str, float] = {}
            for t in tops:
                d = str(t.get("token", "")).strip()
                if len(d) == 1 and d.isdigit():
                    probs[d] = probs.get(d, 0.0) + math.exp(float(t["logprob"]))
            out.append(probs)
        seen += s
    if len(out) < 2:
        raise ValueError(f"no two decimal places in the reply {text[:40]!r}")
    return out, text


def caf_score(s_clap_value: float, fleur_value: float, alpha: float = ALPHA) -> float:
    """``alpha * S-CLAP + (1 - alpha) * FLEUR``; alpha 1 is S-CLAP alone, 0 is FLEUR alone."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    return alpha * s_clap_value + (1.0 - alpha) * fleur_value


def tie_rate(a: Sequence[float], b: Sequence[float], decimals: int | None = None) -> float | None:
    """Share of caption pairs ``(a[i], b[i])`` with equal scores (after rounding to ``decimals``)."""
    if len(a) != len(b):
        raise ValueError("tie_rate needs two score lists of equal length")
    if not a:
        return None
    r = (lambda x: round(float(x), decimals)) if decimals is not None else float
    return sum(r(x) == r(y) for x, y in zip(a, b, strict=True)) / len(a)
