"""Hand-written Krippendorff's alpha and Fleiss' kappa: the implementations stylebench used before it
moved to the maintained packages (``krippendorff``, statsmodels). Kept only as an independent
cross-check of those packages in tests/test_ratings_stats.py; not part of stylebench.

Definitions as in the Krippendorff (2011) and Fleiss (1971) papers; with unequal numbers of
ratings per unit, this Fleiss' kappa averages ``P_i`` over units (the usual generalisation).
"""

from __future__ import annotations

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
