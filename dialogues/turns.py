"""One user turn of a dialogue set, synthesised and checked: the unit of a resumable set build.

:func:`stylebench.dialogues.builder.build_set` runs :class:`TurnStage` through the run's own
stage loop (:func:`stylebench.pipeline.stage.run_stage`) and executors
(:mod:`stylebench.executors`), into an append-only build folder
(:class:`stylebench.store.RunStore`). A unit is one turn of one sample in one voice: a
:class:`TurnJob` synthesises it and, with the intelligibility check, transcribes it and
synthesises it again while it reads over the bound (:data:`RETRIES` times at most, keeping the
best reading), wherever it runs (this process, a thread, a Ray actor); it hands back the
record and the wav's bytes and never writes a file. The driver (:meth:`TurnStage.accept`) writes
the wav atomically, then appends the record: a kill loses at most the turns in flight, and a
turn whose record is ok is never synthesised again.

A turn's key is ``(sample id, turn)`` and its fingerprint names everything that decides it: the
set (builder version, pools, seed), the synthesiser and its version, the check (ASR, bounds,
DNSMOS, retries; or none), the voice and the text. A sample spoken again by another voice has
the same keys under another fingerprint, so its records sit beside the first voice's.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

from stylebench.atomic import write_bytes
from stylebench.audio import AudioError, wav_bytes
from stylebench.dialogues.intelligibility import RETRIES, TurnCheck
from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import PROVENANCE, Unit, repeated
from stylebench.records import Key, RecordKind, Status
from stylebench.store import RunStore
from stylebench.synth.base import Voice, synthesize_draw


@dataclass(frozen=True)
class TurnRecord:
    """A user turn as synthesised (and checked): a line of the build folder's ``turns.jsonl``.

    ``audio`` is the wav's path in the build folder; ``error_rate`` is None for a text without
    words or syllables to compare (never over the bound); ``checked`` is False for a set built
    without the intelligibility check (then the check's fields are empty).
    """

    sample_id: str
    turn: int
    status: Status
    fp: str
    voice: str = ""
    lang: str = ""
    text: str = ""
    audio: str = ""
    sr: int = 0
    sha256: str = ""
    checked: bool = False
    transcript: str = ""
    error_rate: float | None = None
    cer: float | None = None
    ovrl: float | None = None
    attempts: int = 0
    over_bound: bool = False
    error: str = ""
    stage: str = "turns"
    raw: dict[str, Any] = field(default_factory=dict)  # where it was computed (never in the fp)
    elapsed_s: float = 0.0  # seconds synthesising and checking it; never in the fp

    def check(self, revoiced_from: str | None = None) -> TurnCheck:
        """The intelligibility check this record holds (NaN error rate where it has none)."""
        return TurnCheck(
            self.sample_id,
            self.turn,
            self.lang,
            self.voice,
            self.text,
            self.transcript,
            float("nan") if self.error_rate is None else self.error_rate,
            self.cer,
            self.ovrl,
            self.attempts,
            revoiced_from,
        )


TURNS = RecordKind("turns", TurnRecord)


@dataclass(frozen=True)
class TurnWork:
    """What one unit says: turn ``turn`` of sample ``sample_id``, ``text`` in ``voice``."""

    sample_id: str
    turn: int
    lang: str
    text: str
    voice: Voice


def turn_fp(identity: Mapping[str, Any], work: TurnWork) -> str:
    """The fingerprint of a turn: the build's identity (set, synthesiser, check), the voice,
    the text and where it sits."""
    return fingerprint(
        "turn", dict(identity), work.sample_id, work.turn, work.lang, work.text, asdict(work.voice)
    )


@dataclass(frozen=True)
class TurnOut:
    """A turn's record (``audio`` still empty) and its wav's bytes."""

    record: TurnRecord
    wav: bytes


@dataclass(frozen=True)
class TurnResident:
    """What a worker builds once and keeps: the synthesiser and the checker (None: no check).
    Both are picklable factories, so a Ray actor builds its own."""

    synth: Callable[[], Any]
    checker: Callable[[], Any] | None = None

    def __call__(self) -> tuple[Any, Any]:
        return self.synth(), None if self.checker is None else self.checker()


@dataclass(frozen=True)
class TurnJob:
    """Synthesise (and check) one turn wherever the synthesiser lives; never writes a file."""

    work: TurnWork
    fp: str

    def shipped(self) -> TurnJob:
        return self  # text and voice only: nothing to carry as bytes

    def run(
        self, resident: tuple[Any, Any], where: Mapping[str, Any] | None = None
    ) -> Iterator[TurnOut]:
        synth, checker = resident
        w = self.work
        t0 = time.perf_counter()
        audio = synth.synthesize(w.text, w.voice)
        best = None
        if checker is not None:
            where_ = {"text": w.text, "lang": w.lang, "sample_id": w.sample_id, "turn": w.turn}
            best = checker.check(audio.wave, audio.sr, voice=w.voice.id, **where_)
            for attempt in range(2, RETRIES + 2):
                if not best.over(checker.bounds):
                    break
                # another seeded draw (the same one in any build), or the same samples again
                # from a deterministic synthesiser
                again = synthesize_draw(synth, w.text, w.voice, attempt - 1)
                c = checker.check(again.wave, again.sr, voice=w.voice.id, **where_)
                if c.error_rate < best.error_rate:
                    audio = again
                best = replace(min(best, c, key=lambda x: x.error_rate), attempts=attempt)
        data = wav_bytes(audio.wave, audio.sr)
        rec = TurnRecord(
            w.sample_id,
            w.turn,
            "ok",
            self.fp,
            voice=w.voice.id,
            lang=w.lang,
            text=w.text,
            sr=audio.sr,
            sha256=hashlib.sha256(data).hexdigest(),
            raw={PROVENANCE: dict(where)} if where else {},
            elapsed_s=round(time.perf_counter() - t0, 4),
        )
        if best is not None:
            er = best.error_rate
            rec = replace(
                rec,
                checked=True,
                transcript=best.transcript,
                error_rate=None if er != er else er,  # NaN: nothing to compare
                cer=best.cer,
                ovrl=best.ovrl,
                attempts=best.attempts,
                over_bound=best.over(checker.bounds),
            )
        yield TurnOut(rec, data)


class TurnStage:
    """Every turn of ``work`` synthesised (and checked) once; the wavs into ``store``'s folder.

    ``local`` is the (synthesiser, checker) pair this process computes with (the serial
    executor, ``jobs`` turns at once on threads); ``resident`` is the factory a Ray actor
    builds its own pair from.
    """

    records: ClassVar[RecordKind[TurnRecord]] = TURNS
    name: ClassVar[str] = TURNS.name
    #: a synthesiser or checker that fails on a turn: that turn's error record, retried by the
    #: next build; a missing extra or tool (ImportError) stops the build
    errors: ClassVar[tuple[type[BaseException], ...]] = (
        AudioError,
        RuntimeError,
        ValueError,
        OSError,
    )
    unit: ClassVar[str] = "turn"

    def __init__(
        self,
        store: RunStore,
        work: Sequence[TurnWork],
        identity: Mapping[str, Any],
        local: tuple[Any, Any],
        resident: TurnResident,
        *,
        jobs: int = 1,
    ) -> None:
        self.store, self.work, self.identity = store, work, identity
        self.local, self.resident, self.jobs = local, resident, jobs

    @property
    def concurrency(self) -> int:
        """Turns computed at once on threads by the serial executor (``--jobs``)."""
        return self.jobs

    def plan(self) -> list[Unit]:
        return [
            Unit(f"{w.sample_id}/{w.turn}", {(w.sample_id, w.turn): turn_fp(self.identity, w)}, w)
            for w in self.work
        ]

    def job(self, unit: Unit, done: Mapping[Key, TurnRecord]) -> TurnJob:
        w: TurnWork = unit.payload
        return TurnJob(w, unit.fps[(w.sample_id, w.turn)])

    def accept(
        self, unit: Unit, outcomes: Iterable[TurnOut], done: Mapping[Key, TurnRecord]
    ) -> Iterator[TurnRecord]:
        """Write each turn's wav into the build folder (atomically), then hand its record on.
        A turn delivered twice keeps the first record and the wav it names."""
        for out in outcomes:
            rec = out.record
            if repeated(done, rec):
                yield rec
                continue
            if hashlib.sha256(out.wav).hexdigest() != rec.sha256:
                raise RuntimeError(f"{unit.id}: the wav received differs from its sha256")
            rel = f"wavs/{rec.sample_id}_u{rec.turn}-{rec.fp[:12]}.wav"
            write_bytes(self.store.root / rel, out.wav)
            yield replace(rec, audio=rel)

    def compute(self, unit: Unit, done: Mapping[Key, TurnRecord]) -> Iterator[TurnRecord]:
        yield from self.accept(unit, self.job(unit, done).run(self.local), done)
