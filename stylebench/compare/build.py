"""A comparison of runs as one JSON-ready dict: cells, tests, the paper's tables, the leaderboard.

Samples are matched by id: everything is computed on the ids every run selected (the count each
run lost to this is reported). Models are keyed by label and processed in label order, so the
result does not depend on the order the runs were given in.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stylebench import __version__
from stylebench.compare.calibrate import CALIBRATION
from stylebench.compare.cell_tests import compare_cell
from stylebench.compare.load import RunData
from stylebench.compare.paper import paper_tables
from stylebench.compare.samples import outcomes
from stylebench.errors import BadValue
from stylebench.metrics.dims.base import dimension
from stylebench.scoring.cells import cell_dict, cell_sort_key, score_cells

CLUSTERS = ("none", "content", "voice")
FORMAT = "stylebench-compare/1"


def unique_labels(runs: Sequence[RunData]) -> list[RunData]:
    """The runs with distinct labels: a model that appears twice is labelled ``model@run_id``."""
    from dataclasses import replace

    seen = [r.label for r in runs]
    out = [
        replace(r, label=f"{r.label}@{r.root.name}") if seen.count(r.label) > 1 else r for r in runs
    ]
    labels = [r.label for r in out]
    if len(set(labels)) != len(labels):
        raise ValueError(
            f"two runs share the folder name and model: {sorted(labels)}; compare each folder once"
        )
    return sorted(out, key=lambda r: r.label)


@dataclass(frozen=True)
class SharedSamples:
    """What every view of a comparison starts from: the runs (labels made unique), the sample
    ids they share, and each run's per-sample outcomes per cell over those samples."""

    runs: tuple[RunData, ...]
    ids: frozenset[str]
    outcomes: dict[str, dict]  # run label -> {cell key: [PairOutcome, ...]}


def shared_samples(runs: Sequence[RunData]) -> SharedSamples:
    """The runs' shared samples and their outcomes (compare_runs and the HTML page read these).

    Raises:
        BadValue: the runs share no sample id.
    """
    labelled = unique_labels(runs)
    ids = set.intersection(*({s.id for s in r.scored.samples} for r in labelled))
    if not ids:
        raise BadValue("these runs share no sample id: run them on the same dialogue set and dims")
    per_out = {
        r.label: outcomes(
            [t for t in r.scored.turn_scores if t.sample_id in ids],
            r.scored.thresholds,
            exclude=r.scored.exclude,
        )
        for r in labelled
    }
    return SharedSamples(tuple(labelled), frozenset(ids), per_out)


def _cluster_of(runs: Sequence[RunData], cluster: str) -> dict[str, str] | None:
    if cluster == "none":
        return None
    if cluster not in CLUSTERS:
        raise BadValue(f"--cluster must be one of {CLUSTERS}, got {cluster!r}")
    return {s.id: f"{s.lang}:{getattr(s, cluster)}" for s in runs[0].scored.samples}


def _summary(run: RunData, cells: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A model's leaderboard entry. A model that failed the relevance gate keeps its place on
    the board (ranked after the others) but not its style number: ``mean_vsp`` is None and
    ``carried_forward`` False (its cells stay in the comparison, for inspection only)."""
    acoustic = [c["vsp"] for c in cells if dimension(c["dim"]).acoustic and c["vsp"] is not None]
    rel = run.scored.relevance
    carried = rel.get("eligible") is not False
    return {
        "model": run.label,
        "calibration": run.model in CALIBRATION,
        "mean_vsp": round(sum(acoustic) / len(acoustic), 2) if acoustic and carried else None,
        "carried_forward": carried,
        "n_cells": len(acoustic),
        "srd": rel.get("srd"),
        "mrd": rel.get("mrd"),
        "eligible": rel.get("eligible"),
        "provenance": run.provenance,
    }


def change_table(runs: Sequence[RunData], shared: Collection[str]) -> list[dict[str, Any]]:
    """``tables.change``: each model's mean change from turn 1 per (dim, direction, lang) and
    turn over the shared samples, as its trajectory plot draws it
    (:func:`stylebench.report.plots.change_rows`); what the comparison's change figures show."""
    from stylebench.report.plots import change_rows

    return [
        {"model": r.label, **row}
        for r in runs
        for row in change_rows(
            [t for t in r.scored.turn_scores if t.sample_id in shared], r.scored.exclude
        )
    ]


def compare_runs(
    runs: Sequence[RunData],
    *,
    cluster: str = "none",
    n_boot: int = 2000,
    seed: int = 0,
    ci: float = 0.95,
    alpha: float = 0.05,
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """Compare two or more runs (already checked compatible) on their shared samples.

    Raises:
        ValueError: fewer than two runs, or runs that share no sample id.
    """
    if len(runs) < 2:
        raise BadValue("compare needs at least two runs")
    common = shared_samples(runs)
    runs, shared, per_run_out = list(common.runs), set(common.ids), common.outcomes
    clusters = _cluster_of(runs, cluster)
    boot = {"n_boot": n_boot, "seed": seed, "ci": ci}
    per_run_cells: dict[str, dict[tuple, dict[str, Any]]] = {}
    for r in runs:
        scores = [t for t in r.scored.turn_scores if t.sample_id in shared]
        cells = score_cells(
            scores, thresholds=r.scored.thresholds, exclude=r.scored.exclude, **boot
        )
        per_run_cells[r.label] = {
            (c.dim, c.direction, c.lang, c.pair, c.group): cell_dict(c) for c in cells
        }
    keys = sorted(
        set().union(*(set(v) for v in per_run_out.values())), key=lambda k: cell_sort_key(*k)
    )
    blocks = []
    for key in keys:
        per_model = {m: out.get(key, {}) for m, out in per_run_out.items()}
        cells = {m: per_run_cells[m].get(key) for m in per_run_cells}
        blocks.append(compare_cell(key, per_model, cells, clusters, boot, alpha))
    summaries = [_summary(r, list(per_run_cells[r.label].values())) for r in runs]
    own = {
        "format": FORMAT,
        "stylebench": __version__,
        "models": [r.label for r in runs],
        "calibration": [r.label for r in runs if r.model in CALIBRATION],
        "n_shared": len(shared),
        "n_dropped": {r.label: len({s.id for s in r.scored.samples} - shared) for r in runs},
        "settings": {"cluster": cluster, "n_boot": n_boot, "seed": seed, "ci": ci, "alpha": alpha},
        # not-eligible models stay on the board, marked and without their style number,
        # below the eligible (or unknown) ones
        "leaderboard": sorted(
            summaries,
            key=lambda s: (
                not s["carried_forward"],
                -(s["mean_vsp"] if s["mean_vsp"] is not None else -1.0),
                s["model"],
            ),
        ),
        "cells": blocks,
        "tables": {
            **paper_tables(runs, per_run_out, shared, boot),
            "change": change_table(runs, shared),
        },
        "notes": list(notes),
    }
    return with_stage_tables(own, runs, frozenset(shared), boot)


def with_stage_tables(
    own: Mapping[str, Any],
    runs: Sequence[RunData],
    shared: frozenset[str],
    boot: Mapping[str, Any],
) -> dict[str, Any]:
    """``own`` (the comparison's own keys, ``tables`` among them) with every stage's tables
    (``StageSpec.compare``) put in, each key at its place (:mod:`stylebench.stages.outputs`)."""
    from stylebench.stages.outputs import COMPARE_JSON_AT, placed
    from stylebench.stages.registry import STAGES

    top = [(COMPARE_JSON_AT[k], (k, v)) for k, v in own.items() if k != "tables"]
    tables = [(COMPARE_JSON_AT[f"tables.{k}"], (k, v)) for k, v in own["tables"].items()]
    for spec in STAGES:
        for part in spec.compare:
            value = part.build(runs, shared, boot)
            if value is None:  # nothing to show (no run measured it): no key either
                continue
            parent, _, name = part.key.rpartition(".")
            (tables if parent == "tables" else top).append((part.json_at, (name, value)))
    top.append((COMPARE_JSON_AT["tables"], ("tables", dict(placed(tables)))))
    return dict(placed(top))
