"""One sample's three turns, asked of a model wherever it runs (this process, a Ray actor).

A :class:`RespondJob` carries everything the turns need: the sample, the run identity, the user
turns' audio and the sample's earlier ok replies (as :class:`~stylebench.pipeline.blobs.Blob`\\ s),
so it runs the same beside the run folder or on a machine that cannot see it. It yields one
:class:`ReplyOut` per record, with the reply's wav bytes; it never writes the run folder. The
driver (:meth:`stylebench.stages.respond.RespondStage.accept`) writes each wav atomically and
then appends the record. The turns run in order on the one model instance the job is given, since
history and stateful models need that.
"""

from __future__ import annotations

import hashlib
import logging
import math
import tempfile
import time
import traceback
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from stylebench.config import RunConfig
from stylebench.errors import BadValue
from stylebench.pipeline.blobs import Blob
from stylebench.pipeline.keys import Identity, turn_fp
from stylebench.pipeline.stage import PROVENANCE
from stylebench.records import RespondRecord, Sample, Turn, validate_record

log = logging.getLogger(__name__)
_RUN_FIELDS = RunConfig.__dataclass_fields__  # the limits' defaults are the config's


@dataclass(frozen=True)
class ReplyLimits:
    """What one reply may carry; beyond it the reply is an error record that says so."""

    max_chars: int = cast(int, _RUN_FIELDS["max_reply_chars"].default)
    max_seconds: float = cast(float, _RUN_FIELDS["max_reply_s"].default)


@dataclass(frozen=True)
class ReplyOut:
    """One turn's record (``audio`` still empty) and, for a new ok reply, its wav bytes."""

    record: RespondRecord
    wav: bytes | None = None


@dataclass(frozen=True)
class ModelSpec:
    """How to build the model wrapper, anywhere: in this process, or in a worker environment
    through the worker adapter (``worker_python``). Calling it builds the model."""

    model: str
    model_args: Mapping[str, str]
    worker_python: str | None = None
    turn_timeout_s: float = 600.0
    log_path: str | None = None  # the worker adapter's stderr log; default a scratch file

    def __call__(self) -> Any:
        if self.worker_python:
            from stylebench.model_wrappers.worker import WorkerModel

            return WorkerModel(
                self.model,
                dict(self.model_args),
                python=self.worker_python,
                turn_timeout_s=self.turn_timeout_s,
                log_path=self.log_path,
            )
        from stylebench.model_wrappers.common import build_model
        from stylebench.model_wrappers.registry import MODELS

        return build_model(MODELS.load(self.model), dict(self.model_args), self.model)


def script_of(sample: Sample, k: int) -> Any:
    """The answer key of turn ``k``, for embedded calibration models only."""
    from stylebench.model_wrappers.base import Script

    return Script(
        sample.content_of(k),
        sample.dim,
        sample.direction,
        sample.lang,
        sample.emotion,
        k,
        protocol=sample.PROTOCOL,
        instructed=sample.instructed,
    )


def plain_json(value: Any) -> Any:
    """Model extras made storable: arrays and numpy numbers become their values, non-finite
    numbers and other objects their text."""
    if callable(getattr(value, "tolist", None)) and not isinstance(value, (str, bytes)):
        try:
            return plain_json(value.tolist())
        except Exception:  # noqa: BLE001 - a tolist that fails: the text below
            pass
    if isinstance(value, dict):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_json(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return repr(value)


def model_raw(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A stored reply's ``raw`` as the model wrote it (provenance removed)."""
    return {k: v for k, v in raw.items() if k != PROVENANCE}


@dataclass(frozen=True)
class RespondJob:
    """Ask the turns of one sample that are not ok in ``done``; see the module docstring."""

    sample: Sample
    identity: Identity
    user_audio: tuple[Blob, ...]  # the three user turns
    done: Mapping[int, RespondRecord]  # this sample's current records, by turn
    reply_audio: Mapping[int, Blob]  # the wav of every ok record in ``done``
    limits: ReplyLimits = ReplyLimits()
    strict: bool = False

    def shipped(self) -> RespondJob:
        """The same job with its audio as bytes, for a worker that cannot see this disk."""
        return replace(
            self,
            user_audio=tuple(b.shipped() for b in self.user_audio),
            reply_audio={k: b.shipped() for k, b in self.reply_audio.items()},
        )

    def run(self, model: Any, where: Mapping[str, Any] | None = None) -> Iterator[ReplyOut]:
        """Yield the records of the turns that are not ok yet, in order (the logic of a turn that
        fails: later turns become "not asked" error records and are retried with it)."""
        s = self.sample
        with tempfile.TemporaryDirectory(prefix="stylebench-job-") as tmp:
            history: list[Turn] = []
            prior: list[str] = []
            broken = ""
            for k in s.turn_numbers:
                fp = turn_fp(self.identity, s, k, prior)
                rec = self.done.get(k)
                rec = rec if rec is not None and rec.fp == fp else None
                ut = s.turns[k - 1]
                user = Turn("user", ut.text, str(self.user_audio[k - 1].local(tmp)), ut.sr)
                if broken:
                    if rec is None or rec.status != "error":
                        yield ReplyOut(RespondRecord(s.id, k, "error", fp, error=broken))
                    continue
                path: Path | None
                if rec is not None and rec.status == "ok":
                    path = self.reply_audio[k].local(tmp)
                else:
                    out, path = self._call(model, history, user, k, fp, Path(tmp), where)
                    yield out
                    rec = out.record
                if rec.status != "ok":
                    broken = f"not asked: turn {k} failed ({rec.error.splitlines()[0][:200]})"
                    continue
                # raw goes back too: some models resume a dialogue from state they stored there
                history += [
                    user,
                    Turn("assistant", rec.text, str(path), rec.sr, model_raw(rec.raw)),
                ]
                prior.append(rec.sha256)

    def _ask(self, model: Any, history: list[Turn], user: Turn, k: int) -> Turn:
        from stylebench.model_wrappers.base import ScriptedModel

        decode = self.identity.decode
        if isinstance(model, ScriptedModel):
            return model.respond_scripted(tuple(history), user, decode, script_of(self.sample, k))
        return model.respond(tuple(history), user, decode)

    def _call(
        self,
        model: Any,
        history: list[Turn],
        user: Turn,
        k: int,
        fp: str,
        tmp: Path,
        where: Mapping[str, Any] | None,
    ) -> tuple[ReplyOut, Path | None]:
        """One turn: its record, and the local copy of its wav that the next turn's history uses."""
        sid = self.sample.id
        t0 = time.perf_counter()
        try:
            reply = self._ask(model, history, user, k)
            data = self._take_audio(reply)
            path = tmp / "reply" / f"t{k}.wav"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            raw = plain_json(dict(reply.raw))
            if where:
                raw[PROVENANCE] = dict(where)
            rec = RespondRecord(
                sid,
                k,
                "ok",
                fp,
                text=reply.text,
                audio="",
                sr=int(reply.sr or 0),
                sha256=hashlib.sha256(data).hexdigest(),
                elapsed_s=round(time.perf_counter() - t0, 3),
                raw=raw,
            )
            return ReplyOut(validate_record(rec), data), path
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as exc:  # a model crash of any kind is this turn's error record
            if self.strict:
                raise
            log.debug("respond failed for %s turn %d", sid, k, exc_info=True)
            raw = {"traceback": traceback.format_exc(limit=3)[-4000:]}
            if where:
                raw[PROVENANCE] = dict(where)
            rec = RespondRecord(
                sid,
                k,
                "error",
                fp,
                error=f"{type(exc).__name__}: {exc}"[:4000],
                elapsed_s=round(time.perf_counter() - t0, 3),
                raw=raw,
            )
            return ReplyOut(rec), None

    def _take_audio(self, reply: Turn) -> bytes:
        """Check the reply against its limits and take its wav; the model's file is removed
        whether the reply is taken or refused (a refused reply leaves no scratch file)."""
        audio = reply.audio if isinstance(reply.audio, str) and reply.audio else None
        try:
            return self._checked_audio(reply, audio)
        finally:
            if audio is not None:
                Path(audio).unlink(missing_ok=True)

    def _checked_audio(self, reply: Turn, audio: str | None) -> bytes:
        import soundfile as sf

        from stylebench.audio import check_length, wav_truncation

        if not isinstance(reply.text, str):
            raise TypeError(f"reply text must be a string, got {type(reply.text).__name__}")
        if len(reply.text) > self.limits.max_chars:
            raise BadValue(
                f"reply text has {len(reply.text)} characters, over the limit of {self.limits.max_chars} (--max-reply-chars)"
            )
        if audio is None or not Path(audio).is_file():
            raise RuntimeError(f"model returned no audio file (audio={reply.audio!r})")
        try:
            info = sf.info(audio)
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise ValueError(f"reply audio is not a readable sound file: {exc}") from None
        # the features stage decodes and measures the whole reply: its length bounds that cost
        check_length(info.duration, self.limits.max_seconds)
        if why := wav_truncation(audio):
            raise ValueError(
                f"reply audio is a truncated wav ({why}); the model's file is incomplete"
            )
        try:  # what the header promises must decode, or every later stage stumbles on it
            frames = len(sf.read(audio, dtype="float32", always_2d=True)[0])
        except (RuntimeError, sf.LibsndfileError) as exc:
            raise ValueError(f"reply audio does not decode: {exc}") from None
        if frames < info.frames:
            raise ValueError(
                f"reply audio is truncated: its header declares {info.frames} frames, {frames} decode"
            )
        from stylebench.audio import AudioError, load_audio

        try:  # the rule import-replies applies to a reply file: one rule for both routes
            load_audio(audio)
        except AudioError as exc:  # NaN-filled, a rate outside [8, 192] kHz, silent, too short
            raise ValueError(f"reply audio cannot be measured: {exc}") from None
        return Path(audio).read_bytes()
