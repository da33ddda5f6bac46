"""A run's records turned into scores, once: :func:`score_run` -> :class:`ScoredRun`.

``stylebench run``/``score``/``report`` (:func:`stylebench.commands.reporting.report`),
``stylebench compare`` (:func:`stylebench.compare.load.load_run`), ``caption-eval`` and the
ratings import (which rebuilds the report) all read a :class:`ScoredRun`: the per-reply scores,
the relevance gate, the thresholds, the probe's scores and the imported listening test are
computed here and nowhere else. This is where the run folder is read (its manifest once, the
ratings summary); the scoring itself (:mod:`stylebench.scoring`) is pure and reads nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from stylebench.config import RunConfig
from stylebench.metrics.dims.base import ScoreContext, dimension
from stylebench.pipeline.score_config import score_context, thresholds_of
from stylebench.records import (
    FEATURES,
    JUDGEMENTS,
    PROBE_SCORES,
    RESPONSES,
    Key,
    RespondRecord,
    RunRecords,
    Sample,
)
from stylebench.scoring.cells import Cell, Thresholds, TurnScore, score_cells
from stylebench.scoring.emotion import ProbeScores, probe_scores
from stylebench.stages import gate
from stylebench.stages.runner import Measured
from stylebench.store import RunStore


@dataclass(frozen=True)
class ScoredRun:
    """One run's scores and what they were computed from (read-only; see the module docstring).

    ``relevance`` is the report's judge block (srd, mrd, their CIs, eligible, judge), ``exclude``
    the sample ids the gate leaves out of style scores, ``gate_notes`` what the report says of
    the gate. ``human`` is the imported listening test's block, ``majority`` its per-(sample,
    pair) majorities (``None`` for both when no ratings were imported).
    """

    root: Path
    manifest: Mapping[str, Any]
    cfg: RunConfig
    samples: tuple[Sample, ...]
    measured: Measured
    context: ScoreContext
    thresholds: Thresholds
    turn_scores: tuple[TurnScore, ...]
    relevance: dict[str, Any]
    exclude: frozenset[str]
    gate_notes: tuple[str, ...]
    probe: ProbeScores | None
    human: dict[str, Any] | None
    majority: list[dict[str, Any]] | None

    @property
    def records(self) -> RunRecords:
        """Every stage's current records, by stage name (``"respond"`` = the replies)."""
        return self.measured.records

    @property
    def replies(self) -> Mapping[Key, RespondRecord]:
        return self.measured.records.of(RESPONSES)

    @cached_property
    def cells(self) -> tuple[Cell, ...]:
        """VSP/SVD per cell, with the run's own bootstrap settings (gate exclusions applied)."""
        return tuple(
            score_cells(
                self.turn_scores,
                thresholds=self.thresholds,
                n_boot=self.cfg.score.n_boot,
                seed=self.cfg.decode.seed,
                exclude=self.exclude,
            )
        )

    @cached_property
    def dim_values(self) -> dict[Key, dict[str, float]]:
        """Per ok reply, its score on each acoustic dimension (what captions are read against)."""
        from stylebench.stages.caption import dim_values

        return dim_values(self.samples, self.records.of(FEATURES), self.context)


def score_run(
    store: RunStore,
    samples: Sequence[Sample],
    cfg: RunConfig,
    measured: Measured,
    *,
    manifest: Mapping[str, Any] | None = None,
) -> ScoredRun:
    """Score a run's current records (``measured``) under ``cfg``.

    ``manifest`` is the run's manifest when the caller has read it already; otherwise it is read
    here, once.
    """
    from stylebench.ratings.importer import human_report_block, read_majority
    from stylebench.scoring.turns import collect_turn_scores

    if manifest is None:
        manifest = store.read_manifest() if store.exists() else {}
    ctx = score_context(cfg)
    records = measured.records
    turn_scores = collect_turn_scores(samples, records.of(RESPONSES), records.of(FEATURES), ctx)
    judge = measured.info.get("judge") or {}
    relevance, exclude, notes = gate.gate_report(
        cfg, samples, judge.get("describe"), records.of(JUDGEMENTS), judge.get("inputs") or {}
    )
    probe = None
    if cfg.emotion.emotion_probe != "none" and any(dimension(s.dim).probed for s in samples):
        probe = probe_scores(
            samples,
            records.of(RESPONSES),
            records.of(PROBE_SCORES),
            Thresholds(emotion_delta=cfg.emotion.probe_delta),
        )
    return ScoredRun(
        root=store.root,
        manifest=manifest,
        cfg=cfg,
        samples=tuple(samples),
        measured=measured,
        context=ctx,
        thresholds=thresholds_of(cfg),
        turn_scores=tuple(turn_scores),
        relevance=relevance,
        exclude=frozenset(exclude),
        gate_notes=tuple(notes),
        probe=probe,
        human=human_report_block(store.root),
        majority=read_majority(store.root),
    )
