"""Paired tests between models scored on the same samples: Wilcoxon (two), Friedman (three+)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PairedTest:
    """Wilcoxon signed-rank test of ``b - a`` over ``n`` shared samples."""

    n: int
    statistic: float
    p_value: float
    median_diff: float


@dataclass(frozen=True)
class FriedmanTest:
    """Friedman test across ``k`` models on ``n`` shared samples; rank 1 = lowest value."""

    n: int
    k: int
    statistic: float
    p_value: float
    mean_ranks: dict[str, float]


def _shared(tables: Sequence[Mapping[str, float]], what: str) -> tuple[list[str], np.ndarray]:
    """Sorted shared sample ids and the (ids x tables) value matrix."""
    ids = sorted(set.intersection(*(set(t) for t in tables)))
    if not ids:
        raise ValueError(f"{what}: the tables share no sample ids; score the same samples")
    data = np.array([[t[i] for t in tables] for i in ids], dtype=float)
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{what}: values must be finite; drop failed samples first")
    return ids, data


def paired_test(a: Mapping[str, float], b: Mapping[str, float]) -> PairedTest:
    """Wilcoxon signed-rank test of ``b[id] - a[id]`` over the sample ids both share.

    ``n`` counts all shared ids; zero differences are then dropped by scipy's default
    ``zero_method="wilcox"``; when every difference is zero the result is
    ``statistic=0, p_value=1``. ``median_diff`` is the median of ``b - a`` (all shared ids).

    Raises:
        ValueError: no shared sample ids, or non-finite values.
    """
    from scipy.stats import wilcoxon

    ids, data = _shared([a, b], "paired_test")
    diff = data[:, 1] - data[:, 0]
    med = float(np.median(diff))
    if np.all(diff == 0):
        return PairedTest(n=len(ids), statistic=0.0, p_value=1.0, median_diff=med)
    res = wilcoxon(diff)
    return PairedTest(len(ids), float(res.statistic), float(res.pvalue), med)


def friedman_test(tables: Mapping[str, Mapping[str, float]]) -> FriedmanTest:
    """Friedman test across models (``tables[model][sample_id] -> score``) on shared sample ids.

    Ranks are taken within each sample (average ranks for ties, 1 = lowest). When every sample
    ties across all models the result is ``statistic=0, p_value=1``.

    Raises:
        ValueError: fewer than 3 models, no shared sample ids, or non-finite values.
    """
    from scipy.stats import friedmanchisquare, rankdata

    models = sorted(tables)
    if len(models) < 3:
        raise ValueError(f"friedman_test needs >= 3 models, got {len(models)}; use paired_test")
    ids, data = _shared([tables[m] for m in models], "friedman_test")
    ranks = rankdata(data, axis=1).mean(axis=0)
    mean_ranks = {m: float(r) for m, r in zip(models, ranks, strict=True)}
    if np.all(data == data[:, :1]):
        return FriedmanTest(len(ids), len(models), 0.0, 1.0, mean_ranks)
    res = friedmanchisquare(*data.T)
    return FriedmanTest(len(ids), len(models), float(res.statistic), float(res.pvalue), mean_ranks)
