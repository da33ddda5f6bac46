"""transcribe: an ASR transcript (with word times) for every ok reply.

Keyed by the reply's sha256 and the ASR backend + model, so a re-run with the same ASR reuses
every transcript and a different ASR writes new records beside the old ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

from stylebench.audio import AudioError, load_audio
from stylebench.pipeline.keys import fingerprint
from stylebench.pipeline.stage import Unit
from stylebench.records import Key, TranscriptRecord
from stylebench.registry import LazyRegistry
from stylebench.store import RunStore

ASR_BACKENDS = LazyRegistry.from_pairs(
    "ASR backend",
    [
        ("faster-whisper", "stylebench.metrics.asr.backends:FasterWhisperASR"),
        ("openai-whisper", "stylebench.metrics.asr.backends:OpenAIWhisperASR"),
    ],
)


def make_asr(backend: str, model: str) -> Any:
    return ASR_BACKENDS.load(backend)(model)


def asr_fp(backend: str, model: str) -> str:
    """Who transcribed, and under which decoding definition (the ASR spec version): a new
    decoding rule makes new transcripts instead of reusing the old ones."""
    from stylebench.metrics.asr.backends import SPEC

    return fingerprint("asr", backend, model, f"v{SPEC.version}")


def transcript_fp(asr: tuple[str, str], reply_sha: str) -> str:
    """The fingerprint of the transcript of one reply by one ASR."""
    return fingerprint(asr_fp(*asr), reply_sha)


class TranscribeStage:
    """One unit per ok reply; the ASR model is built on first use, once."""

    name: ClassVar[str] = "transcribe"
    errors: ClassVar[tuple[type[BaseException], ...]] = (AudioError, ValueError, RuntimeError)
    unit: ClassVar[str] = "reply"

    def __init__(
        self,
        store: RunStore,
        replies: Mapping[Key, Any],
        lang_of: Mapping[str, str],
        asr: tuple[str, str],
        get_asr: Callable[[], Any],
    ) -> None:
        self.store, self.replies, self.lang_of = store, replies, lang_of
        self.asr, self.get_asr = asr, get_asr

    def plan(self) -> list[Unit]:
        return [
            Unit(f"{k[0]}/{k[1]}", {k: transcript_fp(self.asr, r.sha256)}, payload=r)
            for k, r in self.replies.items()
            if r.status == "ok"
        ]

    def compute(self, unit: Unit, done: Mapping[Key, Any]) -> Iterator[TranscriptRecord]:
        r = unit.payload
        (key, fp), = unit.fps.items()
        wave, sr = load_audio(self.store.root / r.audio, target_sr=16000)
        tr = self.get_asr().transcribe(wave, sr, self.lang_of[r.sample_id])
        yield TranscriptRecord(
            *key, "ok", fp, text=tr.text, lang=tr.lang,
            words=[[w.text, round(w.start, 3), round(w.end, 3)] for w in tr.words],
            backend=tr.backend, model=tr.model, flags=list(tr.flags),
        )  # fmt: skip


def current_transcripts(
    replies: Mapping[Key, Any], transcripts: Mapping[Key, Any], asr: tuple[str, str] | None
) -> dict[Key, Any]:
    """The transcripts (ok or error) of the current replies by this ASR; none without ASR."""
    if asr is None:
        return {}
    out = {}
    for k, r in replies.items():
        t = transcripts.get(k)
        if r.status == "ok" and t is not None and t.fp == transcript_fp(asr, r.sha256):
            out[k] = t
    return out
