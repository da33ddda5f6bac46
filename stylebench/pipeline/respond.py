"""respond: drive a model through the three turns of every sample, its own replies in the history.

A reply's wav is moved into the run folder before its record is appended, so a kill at any point
loses at most the reply in flight. Resume rebuilds each sample's history from the stored records
and asks the model only for turns that are not yet ``ok``. A turn's fingerprint covers the run
identity (the model's ``describe()`` and the decode settings), the sample and the sha256 of every
earlier reply, so a changed configuration or a changed earlier reply re-asks that turn.

Only embedded calibration models (:class:`~stylebench.model_wrappers.base.ScriptedModel`) are
handed the dialogue script (the answer key); a real model gets the user's turn and nothing else.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
import traceback
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from stylebench.audio import sha256_file
from stylebench.pipeline.keys import Identity, turn_fp
from stylebench.pipeline.stage import Unit, is_ok
from stylebench.records import TURNS, Key, RespondRecord, Sample, Turn, validate_record
from stylebench.store import RunStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReplyLimits:
    """What one reply may carry; beyond it the reply is an error record that says so."""

    max_chars: int = 20000
    max_seconds: float = 600.0


def user_turn_of(sample: Sample, k: int, set_root: Path) -> Turn:
    """The k-th (1-based) user turn as a model hears it: the request's wav and its text."""
    ut = sample.turns[k - 1]
    return Turn("user", ut.text, str(set_root / ut.audio), ut.sr)


def script_of(sample: Sample, k: int) -> Any:
    """The answer key of turn ``k``, for embedded calibration models only."""
    from stylebench.model_wrappers.base import Script

    return Script(sample.content, sample.dim, sample.direction, sample.lang, sample.emotion, k)


def plain_json(value: Any) -> Any:
    """Model extras made storable: non-finite numbers and objects become their text."""
    if isinstance(value, dict):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return repr(value)


class RespondStage:
    """Asks the model; plan-only (``model=None``) it collects the current replies of a run."""

    name: ClassVar[str] = "respond"
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
    ) -> None:
        self.store, self.samples, self.set_root = store, samples, set_root
        self.identity, self.decode, self.model = identity, identity.decode, model
        self.limits, self.strict = limits, strict

    def plan(self) -> list[Unit]:
        keys = [(s.id, k) for s in self.samples for k in TURNS]
        index = self.store.index(self.name, keys)
        units = []
        for s in self.samples:
            fps: dict[Key, str] = {}
            prior: list[str] = []
            broken = False
            for k in TURNS:
                # a turn's key covers the replies before it; after a turn that is not ok, the
                # later turns are keyed as compute() keys their "not asked" records
                fps[(s.id, k)] = fp = turn_fp(self.identity, s, k, prior)
                rec = index.get(((s.id, k), fp))
                if not broken and is_ok(rec):
                    prior.append(rec.sha256)
                else:
                    broken = True
            units.append(Unit(s.id, fps, payload=s))
        return units

    def compute(self, unit: Unit, done: Mapping[Key, Any]) -> Iterator[RespondRecord]:
        if self.model is None:
            raise RuntimeError("the respond stage was planned without a model")
        sample: Sample = unit.payload
        history: list[Turn] = []
        prior: list[str] = []
        broken = ""
        for k in TURNS:
            fp = turn_fp(self.identity, sample, k, prior)
            rec = done.get((sample.id, k))
            rec = rec if rec is not None and rec.fp == fp else None
            user = user_turn_of(sample, k, self.set_root)
            if broken:
                if rec is None or rec.status != "error":
                    yield RespondRecord(sample.id, k, "error", fp, error=broken)
                continue
            if not is_ok(rec):
                rec = self._call(history, user, sample, k, fp)
                yield rec
            if rec.status != "ok":
                broken = f"not asked: turn {k} failed ({rec.error.splitlines()[0][:200]})"
                continue
            # raw goes back too: some models resume a dialogue from state they stored there
            reply = Turn("assistant", rec.text, str(self.store.root / rec.audio), rec.sr, dict(rec.raw))  # fmt: skip
            history += [user, reply]
            prior.append(rec.sha256)

    def _ask(self, history: list[Turn], user: Turn, sample: Sample, k: int) -> Turn:
        from stylebench.model_wrappers.base import ScriptedModel

        if isinstance(self.model, ScriptedModel):
            return self.model.respond_scripted(tuple(history), user, self.decode, script_of(sample, k))  # fmt: skip
        return self.model.respond(tuple(history), user, self.decode)

    def _call(self, history: list[Turn], user: Turn, sample: Sample, k: int, fp: str) -> RespondRecord:  # fmt: skip
        t0 = time.perf_counter()
        try:
            reply = self._ask(history, user, sample, k)
            dest = self._keep_audio(reply, sample.id, k)
            rec = RespondRecord(
                sample.id, k, "ok", fp, text=reply.text, audio=str(dest.relative_to(self.store.root)),
                sr=int(reply.sr or 0), sha256=sha256_file(dest),
                elapsed_s=round(time.perf_counter() - t0, 3), raw=plain_json(dict(reply.raw)),
            )  # fmt: skip
            return validate_record(rec)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a model crash of any kind is this turn's error record
            if self.strict:
                raise
            log.debug("respond failed for %s turn %d", sample.id, k, exc_info=True)
            return RespondRecord(
                sample.id, k, "error", fp, error=f"{type(exc).__name__}: {exc}"[:4000],
                elapsed_s=round(time.perf_counter() - t0, 3),
                raw={"traceback": traceback.format_exc(limit=3)[-4000:]},
            )  # fmt: skip

    def _keep_audio(self, reply: Turn, sample_id: str, k: int) -> Path:
        """Check the reply against its limits and move its wav into the run folder."""
        import soundfile as sf

        if not isinstance(reply.text, str):
            raise TypeError(f"reply text must be a string, got {type(reply.text).__name__}")
        if len(reply.text) > self.limits.max_chars:
            raise ValueError(f"reply text has {len(reply.text)} characters, over the limit of {self.limits.max_chars} (--max-reply-chars)")  # fmt: skip
        if reply.audio is None or not Path(reply.audio).is_file():
            raise RuntimeError(f"model returned no audio file (audio={reply.audio!r})")
        try:
            seconds = sf.info(str(reply.audio)).duration
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise ValueError(f"reply audio is not a readable sound file: {exc}") from None
        if seconds > self.limits.max_seconds:
            raise ValueError(f"reply audio lasts {seconds:.0f} s, over the limit of {self.limits.max_seconds:g} s (--max-reply-s)")  # fmt: skip
        dest = self.store.audio_path(sample_id, k)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".part")
        shutil.copyfile(reply.audio, tmp)
        tmp.replace(dest)
        Path(reply.audio).unlink(missing_ok=True)
        return dest
