"""A run's records turned into scores, once: :func:`score_run` -> :class:`ScoredRun`.

``stylebench run``/``score``/``report`` (:func:`stylebench.commands.reporting.report`),
``stylebench compare`` (:func:`stylebench.compare.load.load_run`), ``caption-eval`` and the
ratings import (which rebuilds the report) all read a :class:`ScoredRun`: the per-reply scores,
the relevance gate, the thresholds, the probe's scores and the imported listening test are
computed here and nowhere else. This is where the run folder is read (its manifest once, the
ratings summary); the scoring itself (:mod:`stylebench.scoring`) is pure and reads nothing.
What each stage adds (the relevance gate, the probe's scores, ...) is its ``scores`` hook
(:class:`~stylebench.stages.outputs.ScoredPart`), called here for every stage of
:data:`~stylebench.stages.registry.STAGES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from stylebench.config import RunConfig
from stylebench.metrics.dims.base import ScoreContext
from stylebench.pipeline.score_config import score_context, thresholds_of
from stylebench.records import (
    FEATURES,
    PROBE_SCORES,
    RESPONSES,
    Key,
    RespondRecord,
    RunRecords,
    Sample,
)
from stylebench.scoring.cells import Cell, Thresholds, TurnScore, score_cells
from stylebench.scoring.emotion import ProbeScores
from stylebench.stages import registry
from stylebench.stages.outputs import Measured, ScoredPart, ScoreInputs
from stylebench.store import RunStore


@dataclass(frozen=True)
class ScoredRun:
    """One run's scores and what they were computed from (read-only; see the module docstring).

    ``parts`` holds each stage's part (:meth:`part`); ``relevance`` is the gate's report keys
    (srd, mrd, their CIs, eligible, judge), ``exclude`` the sample ids a stage leaves out of
    style scores (the MRD filter). ``human`` is the imported listening test's block,
    ``majority`` its per-(sample, pair) majorities (``None`` for both when no ratings were
    imported).
    """

    root: Path
    manifest: Mapping[str, Any]
    cfg: RunConfig
    samples: tuple[Sample, ...]
    measured: Measured
    context: ScoreContext
    thresholds: Thresholds
    turn_scores: tuple[TurnScore, ...]
    parts: Mapping[str, ScoredPart]
    human: dict[str, Any] | None
    majority: list[dict[str, Any]] | None

    def part(self, name: str) -> ScoredPart:
        """Stage ``name``'s part (an empty one for a stage that adds nothing)."""
        return self.parts.get(name) or ScoredPart()

    @cached_property
    def exclude(self) -> frozenset[str]:
        """The sample ids left out of every style score (each stage's ``exclude``, together)."""
        return frozenset().union(*(p.exclude for p in self.parts.values()))

    @cached_property
    def relevance(self) -> dict[str, Any]:
        """The relevance gate's report keys (srd, mrd, their CIs, eligible, judge, ...)."""
        return {k: v for p in self.parts.values() if p.gate for k, v in p.gate.items()}

    @property
    def probe(self) -> ProbeScores | None:
        """The emotion probe's scores, when it ran on the run's probed samples."""
        value = self.part(PROBE_SCORES.name).value
        return value if isinstance(value, ProbeScores) else None

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
    inputs = ScoreInputs(cfg, tuple(samples), measured, store.root)
    parts = {spec.name: spec.scores(inputs) for spec in registry.STAGES if spec.scores is not None}
    return ScoredRun(
        root=store.root,
        manifest=manifest,
        cfg=cfg,
        samples=tuple(samples),
        measured=measured,
        context=ctx,
        thresholds=thresholds_of(cfg),
        turn_scores=tuple(turn_scores),
        parts=parts,
        human=human_report_block(store.root),
        majority=read_majority(store.root),
    )
