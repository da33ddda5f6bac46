"""The benchmarks' transcript cache: what a run's transcribe stage would record for one reply.

Keyed by the decoded samples (not the file's bytes: float WAV headers hold a timestamp), the
language, the ASR spec version and CTranslate2's CPU code path (version, ISA, GEMM backends:
:mod:`stylebench.metrics.asr.isa`), so runs under ``CT2_FORCE_CPU_ISA=...`` do not reuse each
other's transcripts. One Whisper base model per process, made on first use; decoding with one
BLAS thread, as the transcribe stage does (metrics/asr/threads.py).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

_ASR: dict[str, Any] = {}


def _asr() -> Any:
    if "base" not in _ASR:
        from stylebench.metrics.asr.backends import FasterWhisperASR

        _ASR["base"] = FasterWhisperASR("base")
    return _ASR["base"]


def cached_transcript(wave: np.ndarray, sr: int, lang: str, cache: Path) -> tuple[str, dict]:
    """``(key, fields)``: the transcript's fields (text, lang, backend, model, words, flags) as a
    ``TranscriptRecord`` takes them, from ``cache/asr/`` or decoded now and stored there."""
    from stylebench.audio import samples_sha256
    from stylebench.metrics.asr.backends import SPEC
    from stylebench.metrics.asr.isa import ct2_cpu

    parts = [samples_sha256(wave, sr), "base", lang, SPEC.version, ct2_cpu().key()]
    key = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    f = cache / "asr" / f"{key[:32]}.json"
    if f.exists():
        return key, json.loads(f.read_text(encoding="utf-8"))
    from stylebench.metrics.asr.threads import one_blas_thread

    with one_blas_thread():
        tr = _asr().transcribe(wave, sr, lang)
    d = {
        "text": tr.text,
        "lang": tr.lang,
        "backend": tr.backend,
        "model": tr.model,
        "words": [[w.text, round(w.start, 3), round(w.end, 3)] for w in tr.words],
        "flags": list(tr.flags),
        "spoken_lang": tr.spoken_lang,
        "spoken_lang_p": tr.spoken_lang_p,
        "declared_lang_p": tr.declared_lang_p,
        "mean_logprob": tr.mean_logprob,
        "unsure_word_share": tr.unsure_word_share,
        "unsure_stretch_share": tr.unsure_stretch_share,
    }
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(d, ensure_ascii=False), encoding="utf-8")
    return key, d
