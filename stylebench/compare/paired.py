"""Paired statistics between models scored on the same samples (pure functions).

- **McNemar** (exact): on the discordant pairs of a binary outcome (valid / not valid) of two
  models on the same samples; ``n10`` = samples only model A got valid, ``n01`` = only B. The
  p-value is the two-sided binomial test of ``min(n01, n10)`` out of ``n01 + n10`` at 1/2
  (statsmodels' ``mcnemar(exact=True)``); with no discordant pair it is 1.
- **Paired bootstrap** of the VSP difference ``mean(b) - mean(a)`` in percentage points: one
  resample of the sample ids serves both models, so the pairing is kept. With ``clusters`` the
  resampled units are whole clusters (all samples that share a content text, or a voice), and
  the statistic is the difference over every sample of the chosen clusters; samples that reuse
  one content are not independent, and the plain bootstrap would be too narrow.
- **Cochran's Q** (statsmodels) on the binary outcome of k >= 3 models on shared samples.
- **Holm** step-down adjustment: the arithmetic of statsmodels ``multipletests(method="holm")``,
  done here because that function runs a full garbage collection on every call, which a
  comparison of ten paper-size runs (millions of live objects, two families per cell) paid for
  minutes.
- **Groups the data cannot separate**: with models ordered by their score, the maximal runs of
  consecutive models no two of which differ significantly (the "homogeneous subsets" reading).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from stylebench.registry import MissingExtraError
from stylebench.scoring.bootstrap import check_boot, resampled_sums, whole


def _statsmodels(what: str):
    try:
        import statsmodels.stats.contingency_tables as ct
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("statsmodels"):
            raise
        raise MissingExtraError(
            f"{what} needs statsmodels, which is not installed: pip install 'stylebench[compare]'"
        ) from None
    return ct


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test of two paired binary outcomes over ``n`` shared samples."""

    n: int
    n10: int  # A valid, B not
    n01: int  # B valid, A not
    statistic: float  # min(n01, n10), the binomial statistic
    p_value: float


@dataclass(frozen=True)
class CochranQ:
    """Cochran's Q across ``k`` models on ``n`` shared samples (``df = k - 1``)."""

    n: int
    k: int
    statistic: float
    p_value: float


def _binary(x: Sequence[bool] | np.ndarray, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype != bool and not np.all(np.isin(arr, (0, 1))):
        raise ValueError(f"{what}: outcomes must be 0/1 or booleans")
    return arr.astype(bool)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> McNemar:
    """Exact McNemar test of paired outcomes ``a[i]``, ``b[i]`` (same sample ``i``).

    Raises:
        ValueError: lengths differ, or non-binary outcomes.
    """
    x, y = _binary(a, "mcnemar_exact"), _binary(b, "mcnemar_exact")
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"mcnemar_exact needs two equal-length 1-D outcome lists, got {x.shape}, {y.shape}"
        )
    n10, n01 = int(np.sum(x & ~y)), int(np.sum(~x & y))
    if n10 + n01 == 0:
        return McNemar(int(x.size), 0, 0, 0.0, 1.0)
    ct = _statsmodels("McNemar's test")
    table = [[int(np.sum(x & y)), n10], [n01, int(np.sum(~x & ~y))]]
    res = ct.mcnemar(table, exact=True)
    return McNemar(int(x.size), n10, n01, float(res.statistic), min(1.0, float(res.pvalue)))


def cochran_q(outcomes: np.ndarray | Sequence[Sequence[bool]]) -> CochranQ:
    """Cochran's Q of a (samples x models) binary table.

    When no sample differs between models the test has nothing to test: ``statistic=0, p=1``.

    Raises:
        ValueError: fewer than 3 models or no samples, or non-binary outcomes.
    """
    table = _binary(outcomes, "cochran_q")
    if table.ndim != 2 or table.shape[1] < 3 or table.shape[0] == 0:
        raise ValueError(
            f"cochran_q needs a samples x models table with >= 3 models, got shape {table.shape}"
        )
    n, k = table.shape
    if np.all(table == table[:, :1]):
        return CochranQ(n, k, 0.0, 1.0)
    ct = _statsmodels("Cochran's Q")
    res = ct.cochrans_q(table.astype(int))
    return CochranQ(n, k, float(res.statistic), float(res.pvalue))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given (an empty list for none).

    The step-down of statsmodels' ``multipletests(method="holm")``, operation for operation (the
    same numbers, tested), without the full garbage collection statsmodels runs on every call:
    0.09 s of CPU a call in a process that has loaded the offline judge (measured), and a
    comparison corrects twice per cell.
    """
    if not len(p_values):
        return []
    p = np.asarray(list(p_values), dtype=float)
    order = np.argsort(p)
    ranked = np.take(p, order)
    adjusted = np.maximum.accumulate(ranked * np.arange(len(ranked), 0, -1))
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return [float(x) for x in out]


def paired_bootstrap_diff(
    a: Sequence[float],
    b: Sequence[float],
    clusters: Sequence[Hashable] | None = None,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of ``mean(b) - mean(a)`` over paired samples.

    Each of the ``n_boot`` resamples draws sample indices (or, with ``clusters``, cluster labels,
    one per sample) with replacement from ``numpy.random.default_rng(seed)``, and the same draw is
    used for both models. With clusters the statistic of a resample is the sum of ``b - a`` over
    every sample of the drawn clusters divided by their number of samples.

    Returns:
        ``(low, high)``; ``None`` for no samples; ``(d, d)`` when every difference equals ``d``.

    Raises:
        ValueError: unequal lengths, non-finite values, or bad ``n_boot``/``ci``.
    """
    check_boot(n_boot, ci)
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(
            f"paired_bootstrap_diff needs two equal-length 1-D lists, got {x.shape}, {y.shape}"
        )
    if x.size == 0:
        return None
    d = y - x
    if not np.all(np.isfinite(d)):
        raise ValueError("paired_bootstrap_diff: values must be finite; drop failed samples first")
    if np.all(d == d[0]):
        return (float(d[0]), float(d[0]))
    if clusters is None:
        sums, counts = d, np.ones_like(d)
    else:
        if len(clusters) != d.size:
            raise ValueError(
                f"clusters must label every sample: {len(clusters)} labels for {d.size} samples"
            )
        _, inv = np.unique(np.asarray([str(c) for c in clusters]), return_inverse=True)
        sums, counts = np.bincount(inv, weights=d), np.bincount(inv).astype(float)
    if whole(sums):  # the valid indicator's differences: one shared draw, one product
        drawn = float(sums.size) if clusters is None else resampled_sums(counts, n_boot, seed)
        stats = resampled_sums(sums, n_boot, seed) / drawn
    else:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, sums.size, size=(n_boot, sums.size))
        stats = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
    lo, hi = np.percentile(stats, [50.0 * (1.0 - ci), 50.0 * (1.0 + ci)])
    return (float(lo), float(hi))


def inseparable_groups(
    ordered: Sequence[str], differ: Callable[[str, str], bool]
) -> list[list[str]]:
    """Maximal runs of consecutive models in ``ordered`` (best first) with no pair that ``differ``s.

    Every model is in at least one group; a model the data separates from all others is a group
    of one. Groups may overlap (A~B, B~C but A differs from C gives [A, B] and [B, C]).
    """
    groups: list[list[str]] = []
    for i in range(len(ordered)):
        j = i + 1
        while j < len(ordered) and not any(differ(ordered[m], ordered[j]) for m in range(i, j)):
            j += 1
        run = list(ordered[i:j])
        if not groups or not set(run) <= set(groups[-1]):
            groups.append(run)
    return groups
