"""transcribe: an ASR transcript (with word times) for every ok reply.

Keyed by the reply's sha256 and the ASR backend + model, so a re-run with the same ASR reuses
every transcript and a different ASR writes new records beside the old ones.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from stylebench.audio import AudioError, load_audio
from stylebench.records import Sample, TranscriptRecord
from stylebench.registry import LazyRegistry
from stylebench.stages import fingerprint
from stylebench.store import RunStore

log = logging.getLogger(__name__)

ASR_BACKENDS = LazyRegistry.from_pairs(
    "ASR backend",
    [
        ("faster-whisper", "stylebench.metrics.asr:FasterWhisperASR"),
        ("openai-whisper", "stylebench.metrics.asr:OpenAIWhisperASR"),
    ],
)


def make_asr(backend: str, model: str) -> Any:
    return ASR_BACKENDS.load(backend)(model)


def asr_fp(backend: str, model: str) -> str:
    return fingerprint("asr", backend, model, "v1")


def run_transcribe(
    store: RunStore,
    samples: Sequence[Sample],
    backend: str,
    model: str,
    *,
    strict: bool = False,
    progress: bool = True,
    asr: Any = None,
) -> dict[str, int]:
    """Transcribe every ok reply that has no transcript from this ASR yet."""
    from tqdm import tqdm

    replies = store.load("respond")
    lang_of = {s.id: s.lang for s in samples}
    afp = asr_fp(backend, model)
    todo = []
    expected: dict[tuple[str, int], str] = {}
    for s in samples:
        for k in (1, 2, 3):
            r = replies.get((s.id, k))
            if r is not None and r.status == "ok":
                expected[(s.id, k)] = fingerprint(afp, r.sha256)
                todo.append(r)
    have = store.load("transcribe", expected)
    todo = [
        r
        for r in todo
        if not (have.get((r.sample_id, r.turn)) and have[(r.sample_id, r.turn)].status == "ok")
    ]
    counts = {"called": 0, "ok": 0, "error": 0, "skipped": len(expected) - len(todo)}
    if todo and asr is None:
        asr = make_asr(backend, model)
    for r in tqdm(todo, desc="transcribe", unit="reply", disable=not progress):
        fp = expected[(r.sample_id, r.turn)]
        try:
            wave, sr = load_audio(store.root / r.audio, target_sr=16000)
            tr = asr.transcribe(wave, sr, lang_of[r.sample_id])
            rec = TranscriptRecord(
                r.sample_id,
                r.turn,
                "ok",
                fp,
                text=tr.text,
                lang=tr.lang,
                words=[[w.text, round(w.start, 3), round(w.end, 3)] for w in tr.words],
                backend=tr.backend,
                model=tr.model,
                flags=list(tr.flags),
            )
        except (KeyboardInterrupt, SystemExit, ImportError):
            raise
        except (AudioError, ValueError, RuntimeError) as exc:
            if strict:
                raise
            rec = TranscriptRecord(
                r.sample_id, r.turn, "error", fp, error=f"{type(exc).__name__}: {exc}"
            )
        store.append("transcribe", rec)
        counts["called"] += 1
        counts[rec.status] += 1
    return counts
