"""Per-cell comparison of runs on the samples they share: each model's cell, pairwise tests,
and the k-model tests.

For one (dim, direction, lang, pair, group) cell:

- ``models``: each run's own cell (:func:`stylebench.scoring.cells.score_cells` on the shared
  samples): VSP [CI], SVD [CI], ``n_ok`` / ``n``.
- ``pairwise``: for every pair of models (in label order), on the samples ok in both: their
  paired VSPs, the exact McNemar test, the paired bootstrap CI of the VSP difference (optionally
  by content or voice cluster), and the paired Wilcoxon test of the per-sample signed change
  (SVD is not compared: each model's SVD averages over its own valid samples). p-values are
  Holm-adjusted over the cell's pairs (McNemar and Wilcoxon families separately).
- ``multi`` (three or more models, on the samples ok in all): Cochran's Q on valid, Friedman on
  the signed change, and the groups of models that the Holm-adjusted McNemar tests cannot
  separate at ``alpha``, ordered by VSP.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from stylebench.compare import paired
from stylebench.compare.samples import CellKey, PairOutcome
from stylebench.scoring.stats import friedman_test, paired_test


def _r(x: float | None, nd: int = 4) -> float | None:
    return None if x is None else round(float(x), nd)


def _ci(ci: tuple[float, float] | None, nd: int = 2) -> list[float] | None:
    return None if ci is None else [round(ci[0], nd), round(ci[1], nd)]


def pair_stats(
    a: Mapping[str, PairOutcome],
    b: Mapping[str, PairOutcome],
    clusters: Mapping[str, str] | None,
    boot: dict[str, Any],
) -> dict[str, Any]:
    """Paired VSP and change statistics of ``b`` against ``a`` on the samples ok in both."""
    ids = sorted(i for i in set(a) & set(b) if a[i].ok and b[i].ok)
    out: dict[str, Any] = {"n": len(ids)}
    if not ids:
        return {
            **out,
            "vsp_a": None,
            "vsp_b": None,
            "vsp_diff": None,
            "vsp_diff_ci": None,
            "mcnemar": None,
            "wilcoxon": None,
            "signed_change_a": None,
            "signed_change_b": None,
        }
    va = np.array([a[i].valid for i in ids], dtype=float) * 100.0
    vb = np.array([b[i].valid for i in ids], dtype=float) * 100.0
    mc = paired.mcnemar_exact(va > 0, vb > 0)
    cl = [clusters[i] for i in ids] if clusters is not None else None
    sa = {i: a[i].signed for i in ids}
    sb = {i: b[i].signed for i in ids}
    w = paired_test(sa, sb)  # type: ignore[arg-type]
    return {
        **out,
        "vsp_a": _r(va.mean(), 2),
        "vsp_b": _r(vb.mean(), 2),
        "vsp_diff": _r(vb.mean() - va.mean(), 2),
        "vsp_diff_ci": _ci(paired.paired_bootstrap_diff(va, vb, cl, **boot)),
        "mcnemar": {"n10": mc.n10, "n01": mc.n01, "p": _r(mc.p_value, 6)},
        "wilcoxon": {
            "statistic": _r(w.statistic),
            "p": _r(w.p_value, 6),
            "median_diff": _r(w.median_diff),
        },
        "signed_change_a": _r(float(np.mean(list(sa.values())))),
        "signed_change_b": _r(float(np.mean(list(sb.values())))),
    }


def multi_stats(
    per_model: Mapping[str, Mapping[str, PairOutcome]],
    pairwise: Sequence[dict[str, Any]],
    vsp: Mapping[str, float | None],
    alpha: float,
) -> dict[str, Any]:
    """Cochran's Q, Friedman and the inseparable groups across three or more models."""
    labels = sorted(per_model)
    ids = sorted(set.intersection(*(set(per_model[m]) for m in labels)))
    ids = [i for i in ids if all(per_model[m][i].ok for m in labels)]
    out: dict[str, Any] = {"n": len(ids), "k": len(labels), "cochran_q": None, "friedman": None}
    if ids:
        q = paired.cochran_q(np.array([[per_model[m][i].valid for m in labels] for i in ids]))
        out["cochran_q"] = {"statistic": _r(q.statistic), "p": _r(q.p_value, 6), "df": q.k - 1}
        f = friedman_test({m: {i: per_model[m][i].signed for i in ids} for m in labels})  # type: ignore[misc]
        out["friedman"] = {
            "statistic": _r(f.statistic),
            "p": _r(f.p_value, 6),
            "mean_ranks": {m: _r(r) for m, r in f.mean_ranks.items()},
        }
    p_adj = {
        frozenset((row["a"], row["b"])): row["mcnemar"]["p_holm"]
        for row in pairwise
        if row["mcnemar"] is not None
    }

    def differ(x: str, y: str) -> bool:
        p = p_adj.get(frozenset((x, y)))
        return p is not None and p < alpha

    ordered = sorted(labels, key=lambda m: (-(vsp[m] if vsp[m] is not None else -1.0), m))
    out["order"] = ordered
    out["groups"] = paired.inseparable_groups(ordered, differ)
    return out


def compare_cell(
    key: CellKey,
    per_model: Mapping[str, Mapping[str, PairOutcome]],
    cells: Mapping[str, dict[str, Any]],
    clusters: Mapping[str, str] | None,
    boot: dict[str, Any],
    alpha: float,
) -> dict[str, Any]:
    """The JSON block of one cell: per-model cells, pairwise tests, and (k >= 3) the k-model tests."""
    labels = sorted(per_model)
    pairwise = []
    for x, y in itertools.combinations(labels, 2):
        pairwise.append({"a": x, "b": y, **pair_stats(per_model[x], per_model[y], clusters, boot)})
    for family in ("mcnemar", "wilcoxon"):
        rows = [r for r in pairwise if r[family] is not None]
        for r, p in zip(rows, paired.holm([r[family]["p"] for r in rows]), strict=True):
            r[family]["p_holm"] = _r(p, 6)
    block: dict[str, Any] = {
        "dim": key[0],
        "direction": key[1],
        "lang": key[2],
        "pair": key[3],
        "group": key[4],
        "models": {m: cells.get(m) for m in labels},
        "pairwise": pairwise,
        "multi": None,
    }
    if len(labels) >= 3:
        vsp = {m: (cells.get(m) or {}).get("vsp") for m in labels}
        block["multi"] = multi_stats(per_model, pairwise, vsp, alpha)
    return block
