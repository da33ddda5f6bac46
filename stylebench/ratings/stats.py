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
  Computed by the ``krippendorff`` package.
- **Fleiss' kappa** ``= (P_bar - P_e) / (1 - P_e)`` (Fleiss 1971), where
  ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))`` is the share of agreeing rater pairs in unit i,
  ``P_bar`` their mean, ``p_j = sum_i n_ij / sum_i n`` and ``P_e = sum_j p_j^2``, over the units
  rated by the full panel of ``n >= 2`` raters (the most ratings any unit received): the
  statistic assumes one number of raters per unit. Computed by statsmodels.
- **Mean pairwise percent agreement**: for each pair of raters, the percent of the units both
  rated on which they gave the same value; the mean over rater pairs that share at least one unit.

A statistic whose chance term leaves nothing to explain (every pairable value identical, so
``D_e = 0`` or ``P_e = 1``) is undefined and returned as ``None``, never as 0 or 1.
"""

from __future__ import annotations

import importlib.util
import itertools
from collections.abc import Hashable, Sequence

import numpy as np

from stylebench.registry import MissingExtraError

LEVELS = ("nominal", "ordinal", "interval")
Unit = Sequence[Hashable | None]


def _packages(what: str) -> None:
    for module in ("krippendorff", "statsmodels"):
        if importlib.util.find_spec(module) is None:
            raise MissingExtraError(
                f"{what} needs {module}, which is not installed: pip install 'stylebench[compare]'"
            )


def _pairable(units: Sequence[Unit]) -> list[list[Hashable]]:
    out = []
    for u in units:
        vals = [v for v in u if v is not None]
        if len(vals) >= 2:
            out.append(vals)
    return out


def krippendorff_alpha(units: Sequence[Unit], level: str = "nominal") -> float | None:
    """Krippendorff's alpha of a reliability table, by the ``krippendorff`` package.

    Only pairable units (two or more values) are passed on; nominal labels are coded as integers
    first (the package wants numbers), ordinal and interval values are used as they are.

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
    if len(values) < 2:
        return None
    _packages("Krippendorff's alpha")
    import krippendorff

    code = {v: (i if level == "nominal" else float(v)) for i, v in enumerate(values)}
    width = max(len(vals) for vals in pairable)
    data = np.full((width, len(pairable)), np.nan)  # the package's shape: raters x units
    for j, vals in enumerate(pairable):
        data[: len(vals), j] = [code[v] for v in vals]
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


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
    """Fleiss' kappa from a count table ``n_ij`` (units x categories), by statsmodels.

    Fleiss (1971) assumes the same number of ratings per unit, so only the units rated by the
    most raters enter (a unit a rater skipped is left out here; Krippendorff's alpha, reported
    beside it, uses every pairable unit). Returns ``None`` when no unit has 2 ratings or every
    rating falls in one category (``P_e = 1``).

    Raises:
        ValueError: a table that is not 2-D or holds negative counts.
    """
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"counts must be a units x categories table, got shape {table.shape}")
    if np.any(table < 0):
        raise ValueError("counts must be >= 0")
    n_i = table.sum(axis=1)
    if table.shape[0] == 0 or n_i.max() < 2:
        return None
    table = table[n_i == n_i.max()]
    p_j = table.sum(axis=0) / table.sum()
    if float((p_j**2).sum()) >= 1.0 - 1e-12:
        return None
    _packages("Fleiss' kappa")
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss

    return float(sm_fleiss(table, method="fleiss"))


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
