"""Agreement statistics for human ratings: Krippendorff's alpha, Fleiss' kappa, pairwise agreement.

Pure functions over plain tables. A *unit* is one thing that was rated (one turn pair of one item
for a forced choice, one turn for an intensity); a unit's *values* are the ratings it received,
one per rater, with ``None`` for a rater who did not rate it.

Definitions:

- **Krippendorff's alpha** ``= 1 - D_o / D_e``. Only *pairable* values count (units rated by at
  least 2 raters). The coincidence matrix is ``o_ck = sum_u (number of ordered pairs (c, k) of
  values in u) / (m_u - 1)``, with ``m_u`` the number of values in unit ``u``; ``n_c = sum_k o_ck``,
  ``n = sum_c n_c``. ``D_o = sum_ck o_ck d2(c, k) / n`` and
  ``D_e = sum_ck n_c n_k d2(c, k) / (n (n - 1))``. The distance ``d2`` is 0/1 for *nominal* data,
  ``(c - k)^2`` for *interval* data, and for *ordinal* data
  ``(sum_{g between c and k} n_g - (n_c + n_k) / 2)^2`` (ranks taken from the observed marginals).
- **Fleiss' kappa** ``= (P_bar - P_e) / (1 - P_e)`` over units with ``n_i >= 2`` ratings, where
  ``P_i = (sum_j n_ij^2 - n_i) / (n_i (n_i - 1))`` is the share of agreeing rater pairs in unit i,
  ``P_bar`` their mean, ``p_j = sum_i n_ij / sum_i n_i`` and ``P_e = sum_j p_j^2``. With the same
  number of raters per unit this is Fleiss (1971); with unequal numbers it is the usual
  generalisation that averages ``P_i`` over units.
- **Mean pairwise percent agreement**: for each pair of raters, the percent of the units both
  rated on which they gave the same value; the mean over rater pairs that share at least one unit.

A statistic whose chance term leaves nothing to explain (every pairable value identical, so
``D_e = 0`` or ``P_e = 1``) is undefined and returned as ``None``, never as 0 or 1.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Hashable, Sequence

import numpy as np

LEVELS = ("nominal", "ordinal", "interval")
Unit = Sequence[Hashable | None]


def _pairable(units: Sequence[Unit]) -> list[list[Hashable]]:
    out = []
    for u in units:
        vals = [v for v in u if v is not None]
        if len(vals) >= 2:
            out.append(vals)
    return out


def _distance(level: str, values: list[Hashable], n_c: np.ndarray) -> np.ndarray:
    """Squared distance ``d2[c, k]`` between the sorted distinct values."""
    k = len(values)
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        x = np.asarray(values, dtype=float)
        return (x[:, None] - x[None, :]) ** 2
    cum = np.concatenate([[0.0], np.cumsum(n_c)])  # cum[i] = sum of n_g for g < i
    d2 = np.zeros((k, k))
    for a in range(k):
        for b in range(k):
            lo, hi = min(a, b), max(a, b)
            d2[a, b] = (cum[hi + 1] - cum[lo] - (n_c[a] + n_c[b]) / 2.0) ** 2
    return d2


def krippendorff_alpha(units: Sequence[Unit], level: str = "nominal") -> float | None:
    """Krippendorff's alpha of a reliability table (see the module docstring).

    Args:
        units: one sequence of values per unit (``None`` = not rated); values are any hashable
            labels for ``nominal`` and numbers for ``ordinal`` / ``interval``.
        level: ``nominal``, ``ordinal`` or ``interval``.

    Returns:
        alpha in ``(-inf, 1]``; ``None`` when no unit has two values or all pairable values are
        identical (no variation, so agreement is not measurable).

    Raises:
        ValueError: unknown level, or non-numeric values for ordinal/interval data.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    pairable = _pairable(units)
    if not pairable:
        return None
    if level != "nominal":
        for vals in pairable:
            for v in vals:
                if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise ValueError(f"{level} alpha needs numeric values, got {v!r}")
    values = sorted({v for vals in pairable for v in vals}, key=lambda v: (str(type(v)), v))
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for vals in pairable:
        m = len(vals)
        counts = Counter(index[v] for v in vals)
        for c, nc in counts.items():
            for k, nk in counts.items():
                o[c, k] += (nc * (nc - 1) if c == k else nc * nk) / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    d2 = _distance(level, values, n_c)
    expected = float((np.outer(n_c, n_c) * d2).sum())
    if expected == 0.0:
        return None
    observed = float((o * d2).sum())
    return 1.0 - (n - 1.0) * observed / expected


def category_counts(units: Sequence[Unit], categories: Sequence[Hashable]) -> np.ndarray:
    """Count table ``n_ij`` (units x categories) from a reliability table; ``None`` is skipped.

    Raises:
        ValueError: a value that is not one of ``categories``.
    """
    col = {c: j for j, c in enumerate(categories)}
    out = np.zeros((len(units), len(categories)), dtype=int)
    for i, u in enumerate(units):
        for v in u:
            if v is None:
                continue
            if v not in col:
                raise ValueError(f"value {v!r} is not one of the categories {list(categories)}")
            out[i, col[v]] += 1
    return out


def fleiss_kappa(counts: np.ndarray | Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from a count table ``n_ij`` (units x categories); see the module docstring.

    Units with fewer than 2 ratings are left out. Returns ``None`` when no unit has 2 ratings or
    every rating falls in one category (``P_e = 1``).

    Raises:
        ValueError: a table that is not 2-D or holds negative counts.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"counts must be a units x categories table, got shape {table.shape}")
    if np.any(table < 0):
        raise ValueError("counts must be >= 0")
    n_i = table.sum(axis=1)
    table, n_i = table[n_i >= 2], n_i[n_i >= 2]
    if table.shape[0] == 0:
        return None
    p_i = ((table**2).sum(axis=1) - n_i) / (n_i * (n_i - 1.0))
    p_bar = float(p_i.mean())
    p_j = table.sum(axis=0) / n_i.sum()
    p_e = float((p_j**2).sum())
    if p_e >= 1.0 - 1e-12:
        return None
    return (p_bar - p_e) / (1.0 - p_e)


def pairwise_agreement(table: Sequence[Sequence[Hashable | None]]) -> float | None:
    """Mean pairwise percent agreement (0-100) of a raters x units table (``None`` = not rated).

    Returns ``None`` when no two raters rated a common unit.
    """
    per_pair = []
    for a, b in itertools.combinations(table, 2):
        shared = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
        if shared:
            per_pair.append(100.0 * sum(x == y for x, y in shared) / len(shared))
    return float(np.mean(per_pair)) if per_pair else None


def transpose(table: Sequence[Sequence[Hashable | None]]) -> list[list[Hashable | None]]:
    """Raters x units -> units x raters (the shape the alpha and count functions take)."""
    return [list(col) for col in zip(*table, strict=True)] if table else []
