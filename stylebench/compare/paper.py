"""The paper's tables from any set of runs (pooled over directions and languages).

(The relevance table, the paper's Table 2, is the judge stage's: ``stylebench.stages.gate``.)

- ``emotion`` (Table 3): emotion VSP per emotion and turn pair, from the human listening test
  where the run has imported ratings (the kept raters' majority per sample and pair), else from
  the automatic probe, else from the prosodic index; each row names its ``source``.
- ``dims`` (Table 4): VSP, the direction-only rate ``vsp_direction`` and SVD per dim and turn
  pair.
- ``retention``: turn-3 retention, VSP over pair 2-3 against pair 1-2 on the samples ok in both
  ("style amnesia" when it drops): the paired difference with its bootstrap CI and McNemar.

Pooled VSP = 100 x valid / ok over every sample of the dim (both directions, both languages);
pooled ``vsp_direction`` = 100 x (ok samples whose change has the asked sign, any size) / ok
(none from a listening test's majority, which has no sign); pooled SVD = mean |relative change|
over the valid ones; CIs are percentile bootstraps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stylebench.compare import paired
from stylebench.compare.load import RunData
from stylebench.compare.samples import PairOutcome, outcomes
from stylebench.metrics.dims.base import dimension
from stylebench.records import DIMS
from stylebench.scoring.bootstrap import bootstrap_ci
from stylebench.scoring.cells import direction_rate

PAIR_NAMES = ("1-2", "2-3")


def _ci(ci: tuple[float, float] | None, nd: int = 2) -> list[float] | None:
    return None if ci is None else [round(ci[0], nd), round(ci[1], nd)]


def pooled(rows: Sequence[PairOutcome], boot: dict[str, Any]) -> dict[str, Any]:
    """VSP [CI], the direction-only rate [CI] and SVD [CI] over outcomes pooled from several
    cells."""
    ok = [r for r in rows if r.ok]
    ind = [100.0 if r.valid else 0.0 for r in ok]
    rel = [abs(r.relative) for r in ok if r.valid and r.relative is not None]
    direction, direction_ci = direction_rate([r.moved for r in ok], boot)
    return {
        "vsp": round(sum(ind) / len(ind), 2) if ind else None,
        "vsp_ci": _ci(bootstrap_ci(ind, **boot)),
        "vsp_direction": None if direction is None else round(direction, 2),
        "vsp_direction_ci": _ci(direction_ci),
        "svd": round(sum(rel) / len(rel), 3) if rel else None,
        "svd_ci": _ci(bootstrap_ci(rel, **boot), 3),
        "n_ok": len(ok),
        "n": len(rows),
    }


def _by(
    per_out: Mapping[tuple, Mapping[str, PairOutcome]],
    dim: str,
    pair: str,
    group: str | None = None,
) -> list[PairOutcome]:
    return [
        o
        for k, rows in per_out.items()
        if k[0] == dim and k[3] == pair and (group is None or k[4] == group)
        for o in rows.values()
    ]


def _human_rows(
    run: RunData, shared: set[str], dim: str, group: str, pair: str
) -> list[PairOutcome] | None:
    majority = run.scored.majority if run.scored.human else None
    if not majority:
        return None
    rows = [
        PairOutcome(
            r["sample_id"],
            (dim, r["direction"], r["lang"], pair, group),
            ok=r["valid"] is not None,
            valid=bool(r["valid"]),
        )
        for r in majority
        if r["dim"] == dim
        and r["group"] == group
        and r["pair"] == pair
        and r["sample_id"] in shared
    ]
    return rows or None


def _groups(
    run: RunData, dim: str, per_out: Mapping, shared: set[str], boot: dict[str, Any]
) -> list[dict[str, Any]]:
    """Per group (emotion) and pair of a grouped dimension: VSP from the human majority when a
    listening test was imported, else the probe's when it ran, else the dimension's own score."""
    groups = sorted({k[4] for k in per_out if k[0] == dim})
    probe_out, probe = None, run.scored.probe
    if probe is not None:
        shown = [t for t in probe.turn_scores if t.sample_id in shared]
        probe_out = outcomes(shown, probe.thresholds, exclude=run.scored.exclude)
    out = []
    for group in groups:
        for pair in PAIR_NAMES:
            rows, source = _human_rows(run, shared, dim, group, pair), "human"
            if rows is None and probe_out is not None:
                rows, source = _by(probe_out, dim, pair, group), "probe"
            if rows is None:
                rows, source = _by(per_out, dim, pair, group), "prosodic"
            stats = pooled(rows, boot)
            if source == "human":
                stats["svd"] = stats["svd_ci"] = None  # a majority vote has no magnitude
                stats["vsp_direction"] = stats["vsp_direction_ci"] = None  # nor a sign
            out.append(
                {"model": run.label, "emotion": group, "pair": pair, "source": source, **stats}
            )
    return out


def retention(per_out: Mapping, dim: str, boot: dict[str, Any]) -> dict[str, Any] | None:
    """VSP over pair 2-3 against 1-2 on the samples of ``dim`` ok in both pairs."""
    first = {o.sample_id: o for o in _by(per_out, dim, "1-2")}
    second = {o.sample_id: o for o in _by(per_out, dim, "2-3")}
    ids = sorted(i for i in set(first) & set(second) if first[i].ok and second[i].ok)
    if not ids:
        return None
    a = [100.0 * first[i].valid for i in ids]
    b = [100.0 * second[i].valid for i in ids]
    mc = paired.mcnemar_exact([first[i].valid for i in ids], [second[i].valid for i in ids])
    return {
        "n": len(ids),
        "vsp_12": round(sum(a) / len(a), 2),
        "vsp_23": round(sum(b) / len(b), 2),
        "diff": round((sum(b) - sum(a)) / len(a), 2),
        "diff_ci": _ci(paired.paired_bootstrap_diff(a, b, **boot)),
        "mcnemar_p": round(mc.p_value, 6),
    }


def paper_tables(
    runs: Sequence[RunData],
    per_run_out: Mapping[str, Mapping],
    shared: set[str],
    boot: dict[str, Any],
) -> dict[str, Any]:
    """The three tables (see the module docstring), one row per model and table key."""
    dims: list[dict[str, Any]] = []
    emo: list[dict[str, Any]] = []
    ret: list[dict[str, Any]] = []
    for run in runs:
        per_out = per_run_out[run.label]
        present = [d for d in DIMS if any(k[0] == d for k in per_out)]
        for dim in present:
            for pair in PAIR_NAMES:
                source = "acoustic" if dimension(dim).acoustic else "prosodic"
                dims.append(
                    {
                        "model": run.label,
                        "dim": dim,
                        "pair": pair,
                        "source": source,
                        **pooled(_by(per_out, dim, pair), boot),
                    }
                )
            ret.append(
                {"model": run.label, "dim": dim, **(retention(per_out, dim, boot) or {"n": 0})}
            )
        for dim in present:  # the grouped dimensions (emotion): per group, the paper's Table 3
            if dimension(dim).groups:
                emo += _groups(run, dim, per_out, shared, boot)
    return {"dims": dims, "emotion": emo, "retention": ret}
