"""Speaking every user turn of a planned set, in rounds: each sample in its planned voice, then
the samples the intelligibility check could not read, all their turns, in the next voice.

Each round is one pass of :class:`~stylebench.dialogues.turns.TurnStage` through the stage loop
(:func:`stylebench.pipeline.stage.run_stage`) on the executor it is handed, so every round is
resumable and runs wherever the executor runs its units. What a round decides depends only on
the records (never on the order in which turns were computed), so a build that was killed and
run again takes the same decisions as one that was not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stylebench.dialogues.turns import TurnRecord, TurnResident, TurnStage, TurnWork
from stylebench.pipeline.progress import Progress
from stylebench.pipeline.stage import run_stage
from stylebench.store import RunStore
from stylebench.synth.base import Voice


@dataclass
class Spoken:
    """The outcome of speaking a set.

    ``kept``: per sample id, the records of its turns in the voice that speaks it (every sample
    the check read, or every sample without a check); ``refused``: the planned voice's turns over
    the bound of the samples no voice of their language was read in; ``failed``: error records
    (a turn the synthesiser or the check could not make; a re-run retries them);
    ``reused``/``computed``: turns found done in the build folder / computed by this call.
    """

    kept: dict[str, list[TurnRecord]] = field(default_factory=dict)
    refused: list[TurnRecord] = field(default_factory=list)
    failed: list[TurnRecord] = field(default_factory=list)
    reused: int = 0
    computed: int = 0


def speak(
    store: RunStore,
    plans: Sequence[Mapping[str, Any]],
    voices: Mapping[str, Sequence[Voice]],
    identity: Mapping[str, Any],
    *,
    local: tuple[Any, Any],
    resident: TurnResident,
    executor: Any,
    jobs: int = 1,
    progress: bool | Progress | None = None,
) -> Spoken:
    """Speak (and check) every turn of ``plans``, reusing the turns ``store`` holds.

    A sample with a turn over the check's bound is spoken again, all its turns (a dialogue keeps
    one speaker), by the next voice of its language (``voices``, in order) that it has not been
    tried in and that no other use of its pool item in its cell is planned in (so an item is
    never twice in a cell in one voice); with none left it is refused.
    """
    voice_by_id = {v.id: v for vs in voices.values() for v in vs}
    current = {p["id"]: p["voice"] for p in plans}
    tried = {p["id"]: [p["voice"]] for p in plans}
    by_id = {p["id"]: p for p in plans}
    uses: dict[tuple[str, ...], list[str]] = {}  # an item's samples in a cell
    for p in plans:
        uses.setdefault(_use(p), []).append(p["id"])
    planned_over: dict[str, list[TurnRecord]] = {}
    out = Spoken()
    pending = [p["id"] for p in plans]
    while pending:
        work = [
            TurnWork(sid, k, by_id[sid]["lang"], text, voice_by_id[current[sid]])
            for sid in pending
            for k, text in enumerate(by_id[sid]["texts"], start=1)
        ]
        stage = TurnStage(store, work, identity, local, resident, jobs=jobs)
        res = run_stage(store, stage, executor=executor, progress=progress)
        out.reused += res.counts.get("skipped", 0)
        out.computed += res.counts.get("ok", 0) + res.counts.get("error", 0)
        again = []
        for sid in pending:
            recs = [res.records.get((sid, k)) for k in range(1, len(by_id[sid]["texts"]) + 1)]
            kept = [r for r in recs if r is not None and r.status == "ok"]
            if len(kept) < len(recs):
                out.failed += [r for r in recs if r is not None and r.status != "ok"]
                continue
            if not any(r.over_bound for r in kept):
                out.kept[sid] = kept
                continue
            planned_over.setdefault(sid, [r for r in kept if r.over_bound])
            taken = {current[o] for o in uses[_use(by_id[sid])] if o != sid}
            alt = next(
                (v.id for v in voices[by_id[sid]["lang"]] if v.id not in {*tried[sid], *taken}),
                None,
            )
            if alt is None:
                out.refused += planned_over[sid]
                continue
            tried[sid].append(alt)
            current[sid] = alt
            again.append(sid)
        pending = again
    return out


def _use(plan: Mapping[str, Any]) -> tuple[str, ...]:
    """A pool item in a cell: the samples that must not share a voice."""
    return (plan["dim"], plan["direction"], plan["lang"], plan.get("emotion", ""), plan["pool_id"])
