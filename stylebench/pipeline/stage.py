"""The one Stage protocol and the one loop around it.

A stage plans its work as :class:`Unit`\\ s (each: the keys it produces and the fingerprint every
current record of a key must carry) and computes the records of one unit. The loop, written once
in :func:`run_stage`, loads what is already done for exactly those fingerprints, skips units that
are complete, computes the rest, appends each record as soon as it exists (so a kill loses at most
the record being written), turns the stage's declared errors into error records, counts, and
clocks the stage (:attr:`StageResult.compute_s`).

Where a unit is computed is the executor's business (:mod:`stylebench.executors`): the serial
executor calls :meth:`Stage.compute` in this process; a parallel one ships a stage's
:meth:`PortableStage.job` to a process pool or a Ray worker and hands what comes back to
:meth:`PortableStage.accept`. Either way this loop, in the driver, is the only writer of the
run folder.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Generic, Protocol, TypeGuard, TypeVar

from stylebench.pipeline.progress import Progress, open_bar
from stylebench.records import Key, RecordKind, StageRecord, error_record
from stylebench.store import RunStore

R = TypeVar("R")
#: a stage's record type (its kind's)
Rec = TypeVar("Rec", bound=StageRecord)


@dataclass(frozen=True)
class Unit:
    """Work computed together: one sample (respond, features) or a batch of keys (judge).

    ``fps`` holds the fingerprint of every key the unit produces that is known when planning.
    (respond learns a turn's fingerprint only once the turns before it are ok, so its plan stops
    at the first turn that is not; that turn is pending, and computing it reveals the next.)
    """

    id: str
    fps: Mapping[Key, str]
    payload: Any = None


@dataclass
class StageResult(Generic[Rec]):
    """The current record of every planned key (ok or error), and what the run did.

    ``compute_s`` is the time the loop spent waiting for units (computing them here, or waiting
    for the executor's workers): the stage's wall time less its planning, loading and appending.
    ``records_s`` is the sum of the ``elapsed_s`` of the records computed this time; with units
    computed in parallel it exceeds ``compute_s``.
    """

    records: dict[Key, Rec] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    compute_s: float = 0.0
    records_s: float = 0.0

    def ok(self) -> dict[Key, Rec]:
        return {k: r for k, r in self.records.items() if r.status == "ok"}


class Stage(Protocol[Rec]):
    """What a stage implements; :func:`run_stage` does the rest. ``Rec`` is its record type:
    the loop hands ``compute`` the stage's own records and keeps what it yields as such."""

    @property
    def records(self) -> RecordKind[Rec]:
        """The stage's records: its file (``<name>.jsonl``) and record type, declared by the
        stage as a class attribute (a built-in kind of :mod:`stylebench.records`, or one in the
        stage's own module)."""
        ...

    #: its kind's name (the progress bar's, the records' key)
    name: ClassVar[str]
    #: exceptions of :meth:`compute` that become error records of the unit's pending keys
    errors: ClassVar[tuple[type[BaseException], ...]]
    #: what one unit is, for the progress bar ("sample", "reply", "batch")
    unit: ClassVar[str]

    def plan(self) -> list[Unit]:
        """The units of work, with the fingerprint every current record must carry."""
        ...

    def compute(self, unit: Unit, done: Mapping[Key, Rec]) -> Iterable[Rec]:
        """Yield the records of the unit's keys that are not ok in ``done``."""
        ...


#: the key of a record's ``raw`` that says where it was computed (node, actor, process, GPUs):
#: never part of a fingerprint, never handed back to a model
PROVENANCE = "executor"


class WorkerLost(RuntimeError):
    """The process computing a unit died (a Ray actor exited, a pool worker was killed): the
    unit's pending keys become error records, and a re-run retries them."""


class PortableStage(Stage[Rec], Protocol[Rec]):
    """A stage whose units can be computed away from the run folder.

    :meth:`job` packs everything one unit needs (audio as :class:`~stylebench.pipeline.blobs.Blob`)
    into a picklable object whose ``run(resident, where)`` yields the unit's outcomes, wherever it
    runs; :meth:`accept` turns those outcomes into records in the driver (writing any audio they
    carry). ``resident`` is what :attr:`resident` builds once per worker (the model, the ASR), or
    ``None`` for stateless stages; ``where`` is the worker's provenance for the records' ``raw``.
    """

    #: a picklable zero-argument factory of the per-worker resource, or None (stateless tasks)
    resident: Any

    def job(self, unit: Unit, done: Mapping[Key, Rec]) -> Any: ...

    def accept(
        self, unit: Unit, outcomes: Iterable[Any], done: Mapping[Key, Rec]
    ) -> Iterable[Rec]: ...


def is_ok(record: R | None) -> TypeGuard[R]:
    """The record exists and is ok (a type checker then knows it is not ``None``)."""
    return record is not None and getattr(record, "status", None) == "ok"


def timed(records: Iterable[Any]) -> Iterator[Any]:
    """The records, each with its ``elapsed_s``: the seconds the iterator took to produce it
    after the previous one (the first: after the unit began), so a unit's records sum to its
    compute time. Where a unit computes its records together (a features sample, an ASR batch,
    a judge chunk) the first carries the unit's time. A record that was timed already (respond's
    turns by the model's call; records timed where a worker computed them) keeps its own.
    Only the time inside the iterator counts, never what the consumer does between records."""
    it = iter(records)
    while True:
        t0 = time.perf_counter()
        try:
            rec = next(it)
        except StopIteration:
            return
        took = time.perf_counter() - t0
        if getattr(rec, "elapsed_s", None) == 0.0:
            rec = replace(rec, elapsed_s=round(took, 4))
        yield rec


class _Clock:
    """Adds up the time spent inside the iterators it wraps (the units' computation)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, items: Iterable[Any]) -> Iterator[Any]:
        it = iter(items)
        while True:
            t0 = time.perf_counter()
            try:
                item = next(it)
            except StopIteration:
                return
            finally:  # a unit that raises (its error records) took its time too
                self.seconds += time.perf_counter() - t0
            yield item


def run_stage(
    store: RunStore,
    stage: Stage[Rec],
    *,
    compute: bool = True,
    strict: bool = False,
    progress: bool | Progress | None = False,
    executor: Any = None,
) -> StageResult[Rec]:
    """Plan, load what is done, compute the rest, append and count.

    Args:
        compute: False only collects the current records (for ``stylebench report``); its
            counts' ``pending`` is then the number of units a run would compute (absent: none).
        strict: the stage's declared errors stop the run instead of becoming error records.
        progress: a bar of the stage's units, done / total and time left
            (:func:`stylebench.pipeline.progress.open_bar`: True a tqdm bar, or a
            :class:`~stylebench.pipeline.progress.Progress` that makes one).
        executor: where units are computed (:mod:`stylebench.executors`); default this process.
            It yields ``(unit, records)`` pairs, in any order; iterating ``records`` may raise
            the stage's declared errors or :class:`WorkerLost`, handled here alike.
    """
    units = stage.plan()
    keys: dict[Key, str] = {k: fp for u in units for k, fp in u.fps.items()}
    done = store.load(stage.records, keys)
    counts = {"ok": 0, "error": 0, "skipped": 0}
    todo = []
    for unit in units:
        before = sum(is_ok(done.get(k)) for k in unit.fps)
        counts["skipped"] += before
        if before < len(unit.fps):
            if compute:
                todo.append(unit)
            else:  # what a run would compute here: a collect says how much is left
                counts["pending"] = counts.get("pending", 0) + 1
    bar = open_bar(
        progress if compute else False,
        stage.name,
        len(units),
        stage.unit,
        done=len(units) - len(todo),
    )
    pairs = (
        executor.map(stage, todo, done)
        if executor is not None
        else ((u, stage.compute(u, done)) for u in todo)
    )
    clock, records_s = _Clock(), 0.0
    caught: tuple[type[BaseException], ...] = (*stage.errors, WorkerLost)
    for unit, records in clock.wrap(pairs):
        bar.update(1)
        try:
            for rec in clock.wrap(timed(records)):
                if _keep(store, stage.name, rec, done, counts):
                    records_s += rec.elapsed_s
        except caught as exc:
            if strict:
                raise
            message = f"{type(exc).__name__}: {exc}"
            for key, fp in unit.fps.items():
                if not is_ok(done.get(key)):
                    _keep(
                        store,
                        stage.name,
                        error_record(stage.records, key, fp, message),
                        done,
                        counts,
                    )
    bar.close()
    return StageResult(done, counts, round(clock.seconds, 4), round(records_s, 4))


def repeated(done: Mapping[Key, Rec], rec: Rec) -> bool:
    """A record of a key that is already ok with the same fingerprint: work delivered twice (a
    retried task, a resubmitted unit). The first ok record stands; the repeat is dropped."""
    prev = done.get((rec.sample_id, rec.turn))
    return is_ok(prev) and prev.fp == rec.fp


def _keep(
    store: RunStore, name: str, rec: Rec, done: dict[Key, Rec], counts: dict[str, int]
) -> bool:
    """Append ``rec`` unless it repeats a kept one; whether it was kept."""
    if repeated(done, rec):
        counts["repeated"] = counts.get("repeated", 0) + 1
        return False
    store.append(name, rec)
    done[(rec.sample_id, rec.turn)] = rec
    counts[rec.status] += 1
    return True
