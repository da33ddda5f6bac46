"""respond: drive a model through the three turns of every sample, its own replies in the history.

A reply's wav is written into the run folder (atomically) before its record is appended, so a kill
at any point loses at most the reply in flight. The turns themselves are asked by a
:class:`~stylebench.stages.respond_job.RespondJob`, in this process or on a worker; this stage
plans, packs jobs and writes what they return. Resume rebuilds each sample's history from the stored records
and asks the model only for turns that are not yet ``ok``. A turn's fingerprint covers the run
identity (the model's ``describe()`` and the decode settings), the sample and the sha256 of every
earlier reply, so a changed configuration or a changed earlier reply re-asks that turn.

Only embedded calibration models (:class:`~stylebench.model_wrappers.base.ScriptedModel`) are
handed the dialogue script (the answer key); a real model gets the user's turn and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

from stylebench.atomic import replace_with
from stylebench.audio import sha256_file
from stylebench.pipeline.blobs import Blob
from stylebench.pipeline.keys import (
    Identity,
    turn_fp,
    turn_fp_after,
    turn_key_head,
    turn_key_prefix,
)
from stylebench.pipeline.stage import Unit, is_ok, repeated
from stylebench.records import RESPONSES, Key, RecordKind, RespondRecord, Sample, Turn
from stylebench.stages.respond_job import ReplyLimits, ReplyOut, RespondJob, plain_json, script_of
from stylebench.store import RunStore

__all__ = ["ReplyLimits", "RespondStage", "plain_json", "script_of", "user_turn_of"]


def _write_checked(tmp: Path, *, data: bytes, sha256: str, name: str) -> None:
    """Write a reply's bytes and refuse them when they are not the ones its record names."""
    tmp.write_bytes(data)
    if sha256_file(tmp) != sha256:
        raise RuntimeError(f"{name}: the bytes written differ from the reply's sha256")


def user_turn_of(sample: Sample, k: int, set_root: Path) -> Turn:
    """The k-th (1-based) user turn as a model hears it: the request's wav and its text."""
    ut = sample.turns[k - 1]
    return Turn("user", ut.text, str(set_root / ut.audio), ut.sr)


class RespondStage:
    """Asks the model; plan-only (``model=None``) it collects the current replies of a run."""

    records: ClassVar[RecordKind[RespondRecord]] = RESPONSES
    name: ClassVar[str] = RESPONSES.name
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "sample"

    def __init__(
        self,
        store: RunStore,
        samples: Sequence[Sample],
        set_root: Path,
        identity: Identity,
        model: Any = None,
        *,
        limits: ReplyLimits = ReplyLimits(),
        strict: bool = False,
        model_spec: Any = None,
    ) -> None:
        self.store, self.samples, self.set_root = store, samples, set_root
        self.identity, self.decode, self.model = identity, identity.decode, model
        self.limits, self.strict, self.model_spec = limits, strict, model_spec

    def plan(self) -> list[Unit]:
        keys = [(s.id, k) for s in self.samples for k in s.turn_numbers]
        index = self.store.index(self.records, keys)
        units = []
        prefix = turn_key_prefix(self.identity)
        for s in self.samples:
            fps: dict[Key, str] = {}
            prior: list[str] = []
            broken = False
            head = turn_key_head(self.identity, s, prefix)  # turn_fp's common part, once
            for k in s.turn_numbers:
                # a turn's key covers the replies before it; after a turn that is not ok, the
                # later turns are keyed as compute() keys their "not asked" records
                fps[(s.id, k)] = fp = turn_fp_after(head, k, prior)
                rec = index.get(((s.id, k), fp))
                if not broken and is_ok(rec):
                    prior.append(rec.sha256)
                else:
                    broken = True
            units.append(Unit(s.id, fps, payload=s))
        return units

    def job(self, unit: Unit, done: Mapping[Key, RespondRecord]) -> RespondJob:
        """The unit's sample with its user audio and earlier ok replies, by path."""
        s: Sample = unit.payload
        mine = {k: r for k in s.turn_numbers if (r := done.get((s.id, k))) is not None}
        replies = {
            k: Blob(f"reply/{Path(r.audio).name}", path=str(self.store.root / r.audio))
            for k, r in mine.items()
            if r.status == "ok"
        }
        users = tuple(
            Blob(f"user/{Path(t.audio).name}", path=str(self.set_root / t.audio)) for t in s.turns
        )
        return RespondJob(s, self.identity, users, mine, replies, self.limits, self.strict)

    def accept(
        self, unit: Unit, outcomes: Iterable[ReplyOut], done: Mapping[Key, RespondRecord]
    ) -> Iterator[RespondRecord]:
        """Write each new reply's wav into the run folder (atomically), then hand its record on.

        A repeated delivery of a turn that is already ok leaves the stored wav alone: the first
        ok record, and the file its sha256 names, stand. A turn asked after an earlier reply
        that was not the one kept (a repeat of a whole sample by a model that answers
        differently each time) is dropped: its history is not the stored one.
        """
        s: Sample = unit.payload
        for out in outcomes:
            rec = out.record
            prior = [
                r.sha256 for j in s.turn_numbers[: rec.turn - 1] if is_ok(r := done.get((s.id, j)))
            ]
            if len(prior) == rec.turn - 1 and rec.fp != turn_fp(self.identity, s, rec.turn, prior):
                continue
            if out.wav is None or repeated(done, rec):
                yield rec
                continue
            dest = self.store.audio_path(rec.sample_id, rec.turn)
            replace_with(
                dest, partial(_write_checked, data=out.wav, sha256=rec.sha256, name=dest.name)
            )
            yield replace(rec, audio=str(dest.relative_to(self.store.root)))

    @property
    def resident(self) -> Any:
        """What a worker builds once and keeps: the model (see :class:`ModelSpec`)."""
        return self.model_spec

    def compute(self, unit: Unit, done: Mapping[Key, RespondRecord]) -> Iterator[RespondRecord]:
        if self.model is None:
            raise RuntimeError("the respond stage was planned without a model")
        yield from self.accept(unit, self.job(unit, done).run(self.model), done)
