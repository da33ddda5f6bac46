"""What a stage adds after it ran: to the scored run, to the report, to a comparison.

A :class:`~stylebench.stages.registry.StageSpec` declares these beside its records and settings,
so scoring (:func:`stylebench.commands.scored.score_run`), the report
(:func:`stylebench.commands.reporting.report`) and ``stylebench compare`` loop over
:data:`~stylebench.stages.registry.STAGES` and name no stage:

- ``scores`` (:class:`ScoredPart`, ``ScoredRun.part(name)``): computed once per scored run from
  the stage's records; its ``value`` is the stage's own scores, ``exclude`` the samples it takes
  out of every style score, ``gate`` the relevance gate's report keys;
- ``report`` (:class:`StageReport`): its blocks of ``report.json``, its notes, its sections of
  ``report.md``;
- ``compare`` (:class:`StageCompare`): its table in ``compare.json``, ``compare.md`` and the
  comparison page.

Where each of them goes is a number (``*_at``) on one scale per output, shared with the parts
that belong to no stage (the cell tables, the notes every run has, ...): the files keep the
layout they had before stages declared their parts, byte for byte, and a new stage's parts go
wherever its numbers put them (after everything else by default).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stylebench.config import RunConfig
from stylebench.records import RunRecords, Sample
from stylebench.report.sections import Section
from stylebench.scoring.cells import Thresholds, TurnScore

#: where a part goes when its stage does not say: after every part there is
LAST = 1000


@dataclass
class Measured:
    """Every stage's current records for one run, by stage name, and what each stage did.

    ``records`` holds ``"respond"`` and every stage of :data:`.registry.STAGES` (``{}`` for one
    that did not run); ``info`` what a stage's backend described (``Built.info``); ``counts``
    what each stage that ran did.
    """

    records: RunRecords
    info: dict[str, dict[str, Any]] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class ScoreInputs:
    """What a stage's ``scores`` hook reads: the run as measured, nothing scored yet."""

    cfg: RunConfig
    samples: tuple[Sample, ...]
    measured: Measured
    root: Path


@dataclass(frozen=True)
class ScoredPart:
    """A stage's contribution to a scored run."""

    #: the stage's own scores, e.g. the emotion probe's
    value: Any = None
    #: sample ids every style score leaves out (the relevance gate's filtered samples)
    exclude: frozenset[str] = frozenset()
    #: the relevance gate's report keys (srd, mrd, their CIs, eligible, judge, ...): what the
    #: report and the comparison's leaderboard read as ``ScoredRun.relevance``
    gate: Mapping[str, Any] | None = None
    #: what the report must say of it (e.g. why the gate was not applied)
    notes: tuple[str, ...] = ()


class ScoredView(Protocol):
    """What a report or compare hook may read of a scored run (``commands.scored.ScoredRun``)."""

    @property
    def root(self) -> Path: ...
    @property
    def manifest(self) -> Mapping[str, Any]: ...
    @property
    def cfg(self) -> RunConfig: ...
    @property
    def samples(self) -> tuple[Sample, ...]: ...
    @property
    def measured(self) -> Measured: ...
    @property
    def records(self) -> RunRecords: ...
    @property
    def turn_scores(self) -> tuple[TurnScore, ...]: ...
    @property
    def thresholds(self) -> Thresholds: ...
    @property
    def exclude(self) -> frozenset[str]: ...
    @property
    def majority(self) -> list[dict[str, Any]] | None: ...
    def part(self, name: str) -> ScoredPart: ...


class LabelledRun(Protocol):
    """One run of a comparison (``compare.load.RunData``): its label and its scores."""

    @property
    def label(self) -> str: ...
    @property
    def scored(self) -> ScoredView: ...


@dataclass(frozen=True)
class ReportPart:
    """A stage's blocks of ``report.json`` (in this order) and its notes."""

    blocks: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StageReport:
    """How a stage shows in a run's report."""

    build: Callable[[ScoredView], ReportPart]
    #: where its blocks go among ``report.json``'s optional blocks (:data:`REPORT_BLOCKS_AT`)
    blocks_at: int = LAST
    #: where its notes go among the report's notes (:data:`REPORT_NOTES_AT`)
    notes_at: int = LAST
    #: its sections of ``report.md``, each placed by its own ``at``
    sections: tuple[Section, ...] = ()


@dataclass(frozen=True)
class StageCompare:
    """A stage's table in a comparison: built from the runs, shown in each output."""

    #: ``(runs, shared sample ids, bootstrap settings) -> JSON-ready value``; ``None``: the
    #: comparison has no such key (nothing to show)
    build: Callable[[Sequence[LabelledRun], frozenset[str], Mapping[str, Any]], Any]
    #: where it goes in ``compare.json``: a top-level key, or ``tables.<name>``
    key: str
    #: its place among the keys of its parent in ``compare.json`` (:data:`COMPARE_JSON_AT`)
    json_at: int = LAST
    #: its place on ``compare.md`` and the HTML page (:data:`COMPARE_SHOWN_AT`)
    shown_at: int = LAST
    #: ``value -> Markdown lines`` and ``value -> HTML fragments``
    markdown: Callable[[Any], list[str]] = lambda value: []
    html: Callable[[Any], list[str]] = lambda value: []


#: the places of the report's own blocks (``ReportMeta.extra``), between which stages put theirs
REPORT_BLOCKS_AT = {"human": 10, "history_kind": 20, "emotion_scores": 60}
#: the places of the report's own notes
REPORT_NOTES_AT = {"model": 10, "dimensions": 20, "dimension_runs": 40, "asr": 50, "history": 90}
#: the places of ``compare.json``'s own keys: the top level, and ``tables``
COMPARE_JSON_AT = {
    "format": 10,
    "stylebench": 11,
    "models": 12,
    "calibration": 13,
    "n_shared": 14,
    "n_dropped": 15,
    "settings": 16,
    "leaderboard": 17,
    "cells": 18,
    "tables": 19,
    "notes": 90,
    "tables.dims": 20,
    "tables.emotion": 30,
    "tables.retention": 40,
    "tables.change": 45,
}
#: the places of ``compare.md``'s and the page's own parts
COMPARE_SHOWN_AT = {
    "leaderboard": 10,
    "figures": 15,
    "emotion": 30,
    "dims": 40,
    "retention": 50,
    "cells": 70,
}


def placed(items: Iterable[tuple[int, Any]]) -> list[Any]:
    """The items in the order of their places (ties keep the order given)."""
    return [x for _, x in sorted(items, key=lambda pair: pair[0])]
