"""judge: relevance verdicts (SRD, MRD) for every sample whose replies can be read.

Per sample, two requests go to the judge (:mod:`stylebench.metrics.judges`):

- **SRD** (single-turn relevance), stored under key ``(sample_id, 1)``: the turn-1 user text and
  the turn-1 reply.
- **MRD** (multi-turn consistency), stored under key ``(sample_id, 0)`` (turn 0 = the whole
  sample): the three user texts and the three replies.

What a reply reads as (ASR transcript, or the model's text channel) is chosen per sample by
:func:`sample_inputs`. A record's fingerprint covers the judge's ``describe()`` (backend, model,
prompt hashes, decode) and the request, so a new judge or a new transcript re-judges that key and
nothing else. Backend failures become error records (retried on resume); an ``unparseable``
reply is an ok record with that label.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import Unit
from stylebench.records import (
    JUDGEMENTS,
    FeatureRecord,
    JudgeRecord,
    Key,
    RecordKind,
    RespondRecord,
    Sample,
    TranscriptRecord,
)

JUDGE_STAGE_VERSION = "1"
SRD_TURN = 1
MRD_TURN = 0


def sample_inputs(
    samples: Sequence[Sample],
    replies: Mapping[Key, RespondRecord],
    transcripts: Mapping[Key, TranscriptRecord] | None,
    max_error: float | None = None,
    features: Mapping[Key, FeatureRecord] | None = None,
) -> dict[str, tuple[str, dict[int, str]]]:
    """Per sample, what the judge reads: ``(source, {turn: reply text})``.

    ``transcripts`` None: the text channel (``source="text"``). ``max_error`` None: the current
    transcripts (``"transcript"``). Otherwise (``judge_input="auto"``) the transcripts, unless a
    turn has none or its WER/CER against the model's text channel exceeds ``max_error``
    (:mod:`stylebench.metrics.fidelity`); then, when every ok reply has a text channel, the whole
    sample is judged on it (``"text_fallback"``), so that one source is used for all its turns.

    The error rate is the one the features stage measured (``asr_text_er`` of the reply's
    current features, :func:`text_error_rate`) where there is one, since it is the same number
    and a Mandarin one costs milliseconds a reply (pinyin), minutes at paper scale.
    """
    from stylebench.metrics.fidelity import is_faithful

    out: dict[str, tuple[str, dict[int, str]]] = {}
    for s in samples:
        ok = {k: r for k in s.turn_numbers if (r := replies.get((s.id, k))) and r.status == "ok"}
        chan = {k: r.text for k, r in ok.items()}
        if transcripts is None:
            out[s.id] = ("text", chan)
            continue
        heard = {k: t.text for k in ok if (t := transcripts.get((s.id, k))) and t.status == "ok"}
        if max_error is not None and ok and all(v.strip() for v in chan.values()):
            doubtful = len(heard) < len(ok) or not all(
                is_faithful(
                    text_error_rate(chan[k], heard[k], s.lang, (features or {}).get((s.id, k))),
                    max_error,
                )
                for k in heard
            )
            if doubtful:
                out[s.id] = ("text_fallback", chan)
                continue
        out[s.id] = ("transcript", heard)
    return out


def text_error_rate(text: str, heard: str, lang: str, features: FeatureRecord | None) -> float:
    """The transcript's error rate against the text channel: ``asr_text_er`` of the reply's
    features when they are ok (they were measured from this transcript and this text: their
    fingerprint covers both; no value there means nothing to compare, NaN), else computed."""
    if features is not None and features.status == "ok":
        return features.values.get("asr_text_er", math.nan)
    from stylebench.metrics.fidelity import transcript_error_rate

    return transcript_error_rate(text, heard, lang)


def language_notes(
    samples: Sequence[Sample], transcripts: Mapping[Key, TranscriptRecord] | None
) -> dict[Key, str]:
    """Per reply whose speech the ASR hears in another language than the sample's
    (:func:`stylebench.metrics.validity.language_mismatch`), the note the judge is given: the
    transcript it reads is a translation."""
    from stylebench.metrics.validity import language_mismatch

    out: dict[Key, str] = {}
    for s in samples:
        for k in s.turn_numbers:
            t = (transcripts or {}).get((s.id, k))
            spoken = getattr(t, "spoken_lang", "") if t is not None and t.status == "ok" else ""
            if spoken and t is not None and language_mismatch(s.lang, spoken, t.declared_lang_p):
                out[(s.id, k)] = (
                    f"speech recognition heard this reply spoken in another language "
                    f"({spoken}), not {s.lang}: the assistant text is its translation"
                )
    return out


def plan_requests(
    samples: Sequence[Sample],
    inputs: Mapping[str, tuple[str, dict[int, str]]],
    judge_desc: dict[str, Any],
    notes: Mapping[Key, str] | None = None,
) -> dict[Key, tuple[str, Any]]:
    """Every judge key that can be asked now, with its fingerprint and request. ``notes``
    (:func:`language_notes`) go with the transcripts they concern."""
    from stylebench.metrics.judges.base import JudgeRequest

    plan: dict[Key, tuple[str, Any]] = {}
    for s in samples:
        source, text = inputs[s.id]
        kind = "transcript" if source == "transcript" else "text"
        jfp = fingerprint("judge", JUDGE_STAGE_VERSION, judge_desc, kind)
        turns = s.turn_numbers
        said = {k: (notes or {}).get((s.id, k), "") if kind == "transcript" else "" for k in turns}
        asks = {}
        if s.SRD_EVERY_TURN:  # persistence: each reply must answer its own question
            for k in turns:
                if k in text:
                    note = (said[k],) if said[k] else ()
                    asks[k] = JudgeRequest("srd", s.lang, ((s.question_of(k), text[k]),), note)
        elif 1 in text:
            first = (said[1],) if said[1] else ()
            asks[SRD_TURN] = JudgeRequest("srd", s.lang, ((s.turns[0].text, text[1]),), first)
        if len(text) == 3 and not s.SRD_EVERY_TURN:
            every = tuple(said[k] for k in turns) if any(said.values()) else ()
            asks[MRD_TURN] = JudgeRequest(
                "mrd", s.lang, tuple((s.turns[k - 1].text, text[k]) for k in turns), every
            )
        for turn, req in asks.items():
            plan[(s.id, turn)] = (fingerprint(jfp, req.fields()), req)
    return plan


class JudgeStage:
    """Units are chunks of requests (an LLM backend runs a chunk concurrently or batched); each
    chunk's records are appended before the next is asked, so a kill loses one chunk."""

    records: ClassVar[RecordKind[JudgeRecord]] = JUDGEMENTS
    name: ClassVar[str] = JUDGEMENTS.name
    errors: ClassVar[tuple[type[BaseException], ...]] = ()
    unit: ClassVar[str] = "batch"

    def __init__(
        self,
        requests: Mapping[Key, tuple[str, Any]],
        judge: Any,
        desc: dict[str, Any],
        *,
        cache: Any = None,
        strict: bool = False,
        chunk: int = 64,
    ) -> None:
        self.requests, self.judge, self.desc = requests, judge, desc
        self.cache, self.strict, self.chunk = cache, strict, chunk
        self._first = True

    def plan(self) -> list[Unit]:
        keys = list(self.requests)
        return [
            Unit(f"chunk{i}", {k: self.requests[k][0] for k in keys[i : i + self.chunk]})
            for i in range(0, len(keys), self.chunk)
        ]

    def compute(self, unit: Unit, done: Mapping[Key, JudgeRecord]) -> Iterator[JudgeRecord]:
        """Yield the chunk's verdicts.

        Raises:
            JudgeError: every request of the first chunk asked failed (endpoint down, model not
                loadable, bad key): their error records are kept and the stage stops.
        """
        from stylebench.metrics.judges.base import JudgeError
        from stylebench.metrics.judges.cache import judge_all

        keys = [k for k in unit.fps if not (done.get(k) and done[k].status == "ok")]
        results, hits = judge_all(self.judge, [self.requests[k][1] for k in keys], self.cache)
        backend, model = str(self.desc.get("backend", "")), str(self.desc.get("model", ""))
        for i, (key, res) in enumerate(zip(keys, results, strict=True)):
            fp, req = self.requests[key]
            if isinstance(res, JudgeError):
                if self.strict:
                    raise res
                yield JudgeRecord(
                    *key,
                    "error",
                    fp,
                    kind=req.kind,
                    backend=backend,
                    model=model,
                    error=f"JudgeError: {res}",
                )
            else:
                yield JudgeRecord(
                    *key,
                    "ok",
                    fp,
                    kind=req.kind,
                    label=res.label,
                    score=res.score,
                    reason=res.reason,
                    raw=res.raw[:2000],
                    backend=backend,
                    model=model,
                    cached=i in hits,
                )
        failed = [r for r in results if isinstance(r, JudgeError)]
        first, self._first = self._first, False
        if first and failed and len(failed) == len(results):  # systematic, not a glitch
            raise JudgeError(f"every request of the first batch failed; stopping: {failed[0]}")
