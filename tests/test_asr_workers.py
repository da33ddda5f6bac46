"""Faster offline ASR without changing a transcript: replies decoded at once on threads
(``--asr-workers``), the BLAS limit held across them, and repeated audio transcribed once. That
real Whisper base writes the same transcripts on two threads as on one is tested beside the other
real-ASR runs, in tests/test_pipeline.py (they share the run decoded one reply at a time)."""

from __future__ import annotations

import hashlib
import threading
import time

import numpy as np
import pytest
import soundfile as sf

from stylebench.config import make_config
from stylebench.executors import serial
from stylebench.metrics.asr.transcript import Transcript
from stylebench.pipeline.stage import Unit, run_stage
from stylebench.records import RespondRecord
from stylebench.stages.transcribe import (
    AUTO_ASR_WORKERS_MAX,
    AsrSpec,
    TranscribeStage,
    asr_workers,
)
from stylebench.store import RunStore


def blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}


def _replies(store: RunStore, waves: dict[tuple[str, int], np.ndarray]) -> dict:
    """Respond records of ``waves``, written into the run folder."""
    (store.root / "audio").mkdir(parents=True, exist_ok=True)
    out = {}
    for (sample, turn), wave in waves.items():
        rel = f"audio/{sample}_t{turn}.wav"
        sf.write(str(store.root / rel), wave, 16000, subtype="FLOAT")
        sha = hashlib.sha256(wave.astype(np.float32).tobytes()).hexdigest()
        out[(sample, turn)] = RespondRecord(sample, turn, "ok", "fp", audio=rel, sha256=sha)
    return out


class OverlappingASR:
    """Two decodes at once: the first returns while the second is still computing, which then
    reads the BLAS threads it has (a stand-in for Whisper's log-mel features)."""

    backend = "overlapping"
    concurrency = 2

    def __init__(self) -> None:
        self.arrived = threading.Barrier(2, timeout=10)
        self.first_done = threading.Event()
        self.calls = 0
        self.seen: list[set[int]] = []
        self.lock = threading.Lock()

    def transcribe(self, wave, sr, lang):
        with self.lock:
            i, self.calls = self.calls, self.calls + 1
        self.seen.append(blas_threads())
        if i < 2:
            self.arrived.wait()  # the first two decodes overlap
        if i == 1:
            self.first_done.wait(10)
            time.sleep(0.2)  # the first decode's thread has left its job by now
            self.seen.append(blas_threads())
        elif i == 0:
            self.first_done.set()
        return Transcript(text="x", lang=lang, words=(), backend="o", model="o", flags=())


def test_one_blas_thread_holds_over_decodes_that_end_under_others(tmp_path):
    """threadpoolctl lets one thread set OpenBLAS's limit; a decode thread's own limit would be
    ignored or end under the other decode. The stage holds it around all of them."""
    from threadpoolctl import threadpool_limits

    store = RunStore(tmp_path / "run")
    rng = np.random.default_rng(1)
    replies = _replies(store, {("s-en-1", t): 0.1 * rng.standard_normal(16000) for t in (1, 2, 3)})
    asr = OverlappingASR()
    stage = TranscribeStage(
        store,
        replies,
        {"s-en-1": "en"},
        ("overlapping", "o"),
        lambda: asr,
        machine={},
    )
    assert stage.concurrency == 2
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() != {2}:
            pytest.skip(f"numpy's BLAS here cannot use 2 threads ({blas_threads()})")
        res = run_stage(store, stage, executor=serial.SerialExecutor())
        assert res.counts["ok"] == 3 and asr.calls == 3
        assert asr.seen == [{1}] * 4  # every decode, and the second after the first ended
        assert blas_threads() == {2}  # given back after the stage


class BarrierStage:
    """A stage whose first two units can only finish if they run at the same time."""

    name = "fake"
    concurrency = 2
    errors = (ValueError,)

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2, timeout=10)

    def compute(self, unit: Unit, done):
        if unit.id in ("u0", "u1"):
            self.barrier.wait()  # BrokenBarrierError if the units ran one after the other
        if unit.id == "u3":
            raise ValueError("unit u3 cannot be computed")
        return [f"record of {unit.id}"]


def test_units_run_at_once_on_threads_and_come_back_in_order():
    units = [Unit(f"u{i}", {}) for i in range(6)]
    got = []
    for unit, records in serial.SerialExecutor().map(BarrierStage(), units, {}):
        try:
            got.append((unit.id, list(records)))
        except ValueError as exc:
            got.append((unit.id, str(exc)))
    assert got == [
        ("u0", ["record of u0"]),
        ("u1", ["record of u1"]),
        ("u2", ["record of u2"]),
        ("u3", "unit u3 cannot be computed"),  # that unit's error, the others go on
        ("u4", ["record of u4"]),
        ("u5", ["record of u5"]),
    ]


def test_how_many_replies_are_decoded_at_once():
    assert asr_workers(0, "faster-whisper", "cpu", 1, cores=2) == 2
    assert asr_workers(0, "faster-whisper", "cpu", 1, cores=64) == AUTO_ASR_WORKERS_MAX
    assert asr_workers(3, "faster-whisper", "cpu", 1, cores=2) == 3
    assert asr_workers(1, "faster-whisper", "cpu", 1, cores=8) == 1
    # where one reply is not decoded alone on a CPU by faster-whisper: one at a time
    assert asr_workers(4, "openai-whisper", "cpu", 1, cores=8) == 1
    assert asr_workers(4, "faster-whisper", "cuda", 1, cores=8) == 1
    assert asr_workers(4, "faster-whisper", "cpu", 8, cores=8) == 1
    with pytest.raises(ValueError, match="--asr-workers"):
        make_config(asr_workers=-1)


def test_workers_share_the_cores_as_intra_op_threads(monkeypatch):
    built = AsrSpec("faster-whisper", "base", workers=2, cores=8)()
    assert (built.concurrency, built.cpu_threads) == (2, 4)
    one = AsrSpec("faster-whisper", "base", cores=8)()
    assert (one.concurrency, one.cpu_threads) == (1, 0)  # CTranslate2's own choice, as before
    # built through make_asr either way, so whatever is installed there is what runs
    from stylebench.stages import transcribe

    calls = []
    monkeypatch.setattr(transcribe, "make_asr", lambda *a, **kw: calls.append((a, kw)))
    AsrSpec("faster-whisper", "base", workers=2, cores=2)()
    AsrSpec("faster-whisper", "base")()
    assert calls == [
        (("faster-whisper", "base"), {"cpu_threads": 1, "workers": 2}),
        (("faster-whisper", "base"), {}),
    ]


def test_an_asr_without_concurrency_is_asked_one_reply_at_a_time(tmp_path):
    store = RunStore(tmp_path / "run")
    rng = np.random.default_rng(2)
    replies = _replies(store, {("s-en-1", t): 0.1 * rng.standard_normal(16000) for t in (1, 2)})
    asr = CountingASR()  # declares no concurrency: may not be thread-safe
    stage = TranscribeStage(
        store,
        replies,
        {"s-en-1": "en"},
        ("counting", "c"),
        lambda: asr,
        spec=AsrSpec("counting", "c", workers=4),
        machine={},
    )
    assert stage.concurrency == 1
    assert run_stage(store, stage, executor=serial.SerialExecutor()).counts["ok"] == 2


class CountingASR:
    """A stand-in that counts its decodes and answers with the language it was asked for."""

    backend = "counting"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def transcribe(self, wave, sr, lang):
        self.calls.append(lang)
        text = f"{lang} {len(self.calls)}"
        return Transcript(text=text, lang=lang, words=(), backend="c", model="c", flags=())


def test_the_same_audio_is_transcribed_once_per_language(tmp_path):
    store = RunStore(tmp_path / "run")
    tone = 0.1 * np.sin(np.arange(16000) * 0.05)
    noise = 0.1 * np.random.default_rng(0).standard_normal(16000)
    replies = _replies(
        store,
        {
            ("s-en-1", 1): tone,
            ("s-en-1", 2): noise,
            ("s-en-2", 1): tone,  # the bytes of s-en-1 turn 1
            ("s-zh-1", 1): tone,  # the same bytes, another language: decoded in that language
        },
    )
    lang_of = {"s-en-1": "en", "s-en-2": "en", "s-zh-1": "zh"}
    asr = CountingASR()
    stage = TranscribeStage(store, replies, lang_of, ("counting", "c"), lambda: asr, machine={})
    assert len(stage.plan()) == 3  # one unit per audio and language
    res = run_stage(store, stage)
    assert sorted(asr.calls) == ["en", "en", "zh"]
    assert res.counts["ok"] == 4
    recs = res.records
    assert recs[("s-en-2", 1)].text == recs[("s-en-1", 1)].text
    assert recs[("s-en-2", 1)].raw == {"same_audio_as": ["s-en-1", 1]}
    assert recs[("s-en-1", 1)].raw == {}
    assert recs[("s-zh-1", 1)].lang == "zh" and recs[("s-zh-1", 1)].raw == {}
