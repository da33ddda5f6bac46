"""Percentile bootstrap confidence intervals, deterministic for a seed.

A comparison bootstraps many vectors of the same length with the same seed (every pair of models
in a cell, every model's VSP): the draw is the same each time, so :func:`resample_counts` makes
it once and keeps it, and a vector of whole numbers (the 0/100 valid indicator and its paired
differences) is summed over each resample as one matrix product. Sums of whole numbers below
2**53 are exact in any order, so the statistics are the very floats that indexing and summing
each resample gives.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

#: the largest sum of whole numbers a resample may reach and still be summed exactly in float64
EXACT = 2.0**53


def check_boot(n_boot: int, ci: float) -> None:
    """Raise ``ValueError`` unless ``n_boot`` is an int >= 1 and ``ci`` is in (0, 1)."""
    if not (isinstance(n_boot, int) and n_boot >= 1):
        raise ValueError(f"n_boot must be an int >= 1, got {n_boot!r}")
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be in (0, 1), e.g. 0.95, got {ci!r}")


@functools.lru_cache(maxsize=2)
def resample_counts(size: int, n_boot: int, seed: int) -> np.ndarray:
    """How often each of ``size`` units is drawn in each of ``n_boot`` resamples, unit by unit
    (read-only, ``(size, n_boot)``): the draw ``numpy.random.default_rng(seed).integers(0, size,
    size=(n_boot, size))`` that :func:`bootstrap_ci` and the paired bootstrap make, as counts."""
    idx = np.random.default_rng(seed).integers(0, size, size=(n_boot, size))
    flat = (idx * n_boot + np.arange(n_boot)[:, None]).ravel()
    counts = np.bincount(flat, minlength=size * n_boot).reshape(size, n_boot).astype(float)
    counts.flags.writeable = False
    return counts


def whole(values: np.ndarray) -> bool:
    """Whether every resample of ``values`` sums exactly in float64 whatever the order: whole
    numbers whose absolute sum times their count stays under 2**53."""
    return bool(
        np.all(values == np.round(values)) and float(np.abs(values).sum()) * values.size < EXACT
    )


def resampled_sums(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The sum of ``values`` over each of the ``n_boot`` resamples of ``seed`` (see the module
    docstring): for whole numbers from the shared counts of the units that are not 0 (a paired
    difference is 0 wherever the two models agree), by indexing otherwise."""
    if whole(values):
        nonzero = np.flatnonzero(values)
        return values[nonzero] @ resample_counts(values.size, n_boot, seed)[nonzero]
    idx = np.random.default_rng(seed).integers(0, values.size, size=(n_boot, values.size))
    return values[idx].sum(axis=1)


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
    if stat is np.mean and whole(arr):  # np.mean is the sum divided by the count
        stats = resampled_sums(arr, n_boot, seed) / arr.size
    else:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, arr.size, size=(n_boot, arr.size))
        stats = np.asarray(stat(arr[idx], axis=1), dtype=float)
    lo, hi = np.percentile(stats, [50.0 * (1.0 - ci), 50.0 * (1.0 + ci)])
    return (float(lo), float(hi))
