"""Where the time goes: each invocation's time per stage, as data in the run folder.

An :class:`Invocation` (one ``stylebench run`` or ``score``; a resume is another one) clocks each
stage it runs and appends one :class:`~stylebench.records.StageTiming` line to the run folder's
``timings.jsonl`` as the stage ends (so a killed run keeps the timings of the stages it
finished), then one :class:`~stylebench.records.InvocationTiming` at its end. :func:`timings_block`
turns those lines into the report's ``timings`` block: per invocation, each stage's share of the
wall time and the harness overhead (the wall time not spent computing: planning, loading and
appending records, the manifest, the dialogue set).

Timings are provenance. They never enter a fingerprint, a record's key or a report cell, and the
report files a run writes stay free of them (two runs of one configuration write the same
report.json byte for byte); ``stylebench report RUN --timings`` prints them
(docs/scale.md, "Where the time goes").
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from stylebench.records import InvocationTiming, StageTiming
from stylebench.store import RunStore

#: the harness overhead a run should stay under, as a share of its wall time (docs/scale.md)
OVERHEAD_TARGET = 0.02
T = TypeVar("T")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass
class StageClock:
    """One stage being clocked: when it began, and what it reports of itself (the part of its
    time spent computing, and its counts)."""

    name: str
    started_at: str
    t0: float
    c0: float
    all_compute: bool = False
    compute_s: float = 0.0
    records_s: float = 0.0
    computed: int = 0
    reused: int = 0
    failed: int = 0

    def took(self, result: Any) -> None:
        """Add a :class:`~stylebench.pipeline.stage.StageResult` (compute time and counts)."""
        self.compute_s += result.compute_s
        self.records_s += result.records_s
        self.computed += result.counts.get("ok", 0)
        self.failed += result.counts.get("error", 0)
        self.reused += result.counts.get("skipped", 0)

    def timed(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)``, its time counted as computation (building a model, a judge, a stage's
        backend: the work of what is benchmarked, not of the harness around it)."""
        t0 = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.compute_s += time.perf_counter() - t0


class Invocation:
    """Clocks one command on one run folder and appends its timings there.

    ``store`` may be set once the command knows its run folder (after loading the dialogue set);
    lines can be appended once it is set.
    """

    def __init__(self, command: str, store: RunStore | None = None) -> None:
        self.store, self.command = store, command
        self.started_at = _now()
        stamp = self.started_at.replace("-", "").replace(":", "").split("+")[0]
        self.id = f"{stamp}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._t0, self._c0 = time.perf_counter(), time.process_time()

    def start(self, name: str, *, all_compute: bool = False) -> StageClock:
        """Begin clocking stage ``name`` (``all_compute``: the whole of it is computation, as
        for scoring and writing the report)."""
        return StageClock(name, _now(), time.perf_counter(), time.process_time(), all_compute)

    def stop(self, clock: StageClock) -> None:
        """Append the stage's line to the run folder's ``timings.jsonl``."""
        if self.store is None:
            raise RuntimeError(f"the {self.command} invocation has no run folder to time into")
        wall = time.perf_counter() - clock.t0
        self.store.append_timing(
            StageTiming(
                self.id,
                self.command,
                clock.name,
                clock.started_at,
                round(wall, 4),
                round(wall if clock.all_compute else min(clock.compute_s, wall), 4),
                round(clock.records_s, 4),
                round(time.process_time() - clock.c0, 4),
                clock.computed,
                clock.reused,
                clock.failed,
            )
        )

    @contextlib.contextmanager
    def stage(self, name: str, *, all_compute: bool = False) -> Iterator[StageClock]:
        """Clock the block as stage ``name``; its line is appended when the block ends normally
        (a stage that raises has no line)."""
        clock = self.start(name, all_compute=all_compute)
        yield clock
        self.stop(clock)

    def finish(self) -> None:
        """Append the invocation's own line (its wall and CPU time)."""
        if self.store is None:
            raise RuntimeError(f"the {self.command} invocation has no run folder to time into")
        self.store.append_timing(
            InvocationTiming(
                self.id,
                self.command,
                self.started_at,
                round(time.perf_counter() - self._t0, 4),
                round(time.process_time() - self._c0, 4),
            )
        )


def clocked(inv: Invocation | None, name: str) -> contextlib.AbstractContextManager[StageClock]:
    """``inv.stage(name)``, or without an invocation a clock whose figures go nowhere."""
    if inv is None:
        return contextlib.nullcontext(StageClock(name, "", 0.0, 0.0))
    return inv.stage(name)


def _share(part: float, whole: float | None) -> float | None:
    return round(part / whole, 4) if whole else None


def timings_block(lines: Sequence[Any]) -> dict[str, Any]:
    """The report's ``timings`` block from a run folder's timing lines, one entry per invocation
    in the order they ran.

    Each entry: ``invocation``, ``command``, ``started_at``, ``wall_s`` and ``cpu_s`` (``None``
    for an invocation that was killed), ``stages`` (per stage: ``wall_s``, ``compute_s``,
    ``records_s``, ``cpu_s``, ``computed``, ``reused``, ``failed`` and ``share``, its wall time
    over the invocation's), and ``harness_s`` / ``harness_share``: the wall time less every
    stage's compute time. A run made before timings were recorded gets no invocations and a note.
    """
    runs: dict[str, dict[str, Any]] = {}
    for line in lines:
        entry = runs.setdefault(
            line.invocation,
            {
                "invocation": line.invocation,
                "command": line.command,
                "started_at": line.started_at,
                "wall_s": None,
                "cpu_s": None,
                "stages": [],
            },
        )
        if isinstance(line, InvocationTiming):
            entry.update(started_at=line.started_at, wall_s=line.wall_s, cpu_s=line.cpu_s)
        else:
            entry["stages"].append(
                {
                    "stage": line.stage,
                    "wall_s": line.wall_s,
                    "compute_s": line.compute_s,
                    "records_s": line.records_s,
                    "cpu_s": line.cpu_s,
                    "computed": line.computed,
                    "reused": line.reused,
                    "failed": line.failed,
                }
            )
    out = []
    for entry in runs.values():  # file order: the order they ran
        wall = entry["wall_s"]
        for st in entry["stages"]:
            st["share"] = _share(st["wall_s"], wall)
        harness = None if wall is None else wall - sum(s["compute_s"] for s in entry["stages"])
        entry["harness_s"] = None if harness is None else round(harness, 4)
        entry["harness_share"] = None if harness is None else _share(harness, wall)
        out.append(entry)
    block: dict[str, Any] = {"invocations": out, "overhead_target": OVERHEAD_TARGET}
    if not out:
        block["note"] = (
            "no timings recorded: this run folder was made before stylebench recorded them "
            "(timings.jsonl)"
        )
    return block
