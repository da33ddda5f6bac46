"""Percentile bootstrap confidence intervals, deterministic for a seed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def check_boot(n_boot: int, ci: float) -> None:
    """Raise ``ValueError`` unless ``n_boot`` is an int >= 1 and ``ci`` is in (0, 1)."""
    if not (isinstance(n_boot, int) and n_boot >= 1):
        raise ValueError(f"n_boot must be an int >= 1, got {n_boot!r}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), e.g. 0.95, got {ci!r}")


def bootstrap_ci(
    values: Sequence[float],
    stat: Callable[..., Any] = np.mean,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of ``stat`` over ``values``.

    ``n_boot`` resamples of size ``len(values)`` are drawn with replacement in one
    ``(n_boot, n)`` index array from ``numpy.random.default_rng(seed)``; ``stat`` is called as
    ``stat(resamples, axis=1)`` (``np.mean``, ``np.median`` work). Deterministic for a seed.

    Returns:
        ``(low, high)`` percentiles at ``(1-ci)/2`` and ``(1+ci)/2``; ``None`` for no values;
        ``(v, v)`` when all values equal ``v``.
    """
    check_boot(n_boot, ci)
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        return None
    if not np.all(np.isfinite(arr)):
        raise ValueError("values must be finite; drop failed samples before bootstrapping")
    if np.all(arr == arr[0]):
        v = float(arr[0])
        return (v, v)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(n_boot, arr.size))
    stats = np.asarray(stat(arr[idx], axis=1), dtype=float)
    lo, hi = np.percentile(stats, [50.0 * (1.0 - ci), 50.0 * (1.0 + ci)])
    return (float(lo), float(hi))
