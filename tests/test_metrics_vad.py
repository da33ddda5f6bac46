"""Speech-span detection on tone bursts (energy backend) and espeak speech (Silero)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stylebench.metrics.vad import active_mask, speech_span

SR = 16000


def burst(start_s: float, seconds: float, total_s: float, sr: int = SR) -> np.ndarray:
    x = np.zeros(int(total_s * sr))
    t = np.arange(int(seconds * sr)) / sr
    x[int(start_s * sr) : int(start_s * sr) + t.size] = 0.5 * np.sin(2 * np.pi * 300 * t)
    return x


def test_energy_span_of_a_tone_burst_is_exact() -> None:
    span = speech_span(burst(0.5, 1.0, 2.5), SR, backend="energy", pad_s=0.0)
    assert span.backend == "energy"
    assert abs(span.start - 0.5) < 0.01 and abs(span.end - 1.5) < 0.01
    assert span.active_s == pytest.approx(1.0, abs=0.02)
    assert span.duration_s == pytest.approx(span.end - span.start)
    padded = speech_span(burst(0.5, 1.0, 2.5), SR, backend="energy")
    assert padded.start == pytest.approx(span.start - 0.03, abs=1e-6)


def test_short_gaps_merge_and_long_gaps_split() -> None:
    x = burst(0.2, 0.4, 2.0) + burst(0.7, 0.4, 2.0)  # 0.1 s gap
    assert len(speech_span(x, SR, backend="energy").segments) == 1
    y = burst(0.2, 0.4, 2.0) + burst(0.9, 0.4, 2.0)  # 0.3 s gap
    span = speech_span(y, SR, backend="energy", pad_s=0.0)
    assert len(span.segments) == 2
    assert span.active_s == pytest.approx(0.8, abs=0.04)  # each edge within 10 ms
    assert span.duration_s == pytest.approx(1.1, abs=0.02)


def test_active_mask_marks_segment_samples() -> None:
    span = speech_span(burst(0.5, 1.0, 2.5), SR, backend="energy", pad_s=0.0)
    mask = active_mask(span, int(2.5 * SR), SR)
    assert mask.dtype == np.bool_ and mask.size == int(2.5 * SR)
    assert mask.sum() == pytest.approx(span.active_s * SR, abs=2)
    assert not mask[: int(0.45 * SR)].any() and mask[int(0.6 * SR) : int(1.4 * SR)].all()


@pytest.mark.parametrize("backend", ["energy", "silero"])
def test_silence_raises(backend: str) -> None:
    with pytest.raises(ValueError, match="no speech detected"):
        speech_span(np.zeros(SR), SR, backend=backend)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="unknown VAD backend"):
        speech_span(burst(0.1, 0.5, 1.0), SR, backend="webrtc")
    with pytest.raises(ValueError, match="threshold"):
        speech_span(burst(0.1, 0.5, 1.0), SR, threshold=1.5)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_silero_span_of_espeak_speech(tmp_path: Path) -> None:
    wav = tmp_path / "s.wav"
    text = "Please remember to bring your library card when you visit the reading room."
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), text], check=True)
    speech, sr = sf.read(wav)
    audible = np.flatnonzero(np.abs(speech) > 1e-3)
    x = np.concatenate([np.zeros(sr), speech, np.zeros(sr // 2)])
    truth_start, truth_end = 1.0 + audible[0] / sr, 1.0 + audible[-1] / sr
    # Silero decides per 32 ms chunk; without padding both edges land within about 50 ms.
    span = speech_span(x, sr, pad_s=0.0)
    assert span.backend == "silero"
    assert abs(span.start - truth_start) < 0.06 and abs(span.end - truth_end) < 0.06
    energy = speech_span(x, sr, backend="energy", pad_s=0.0)
    assert abs(energy.start - truth_start) < 0.02 and abs(energy.end - truth_end) < 0.02


def _espeak(tmp_path: Path, text: str) -> np.ndarray:
    wav = tmp_path / "v.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(wav), text], check=True)
    speech, sr = sf.read(wav)
    from scipy.signal import resample_poly

    return resample_poly(speech, SR, sr).astype(np.float32)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_batched_silero_equals_one_chunk_at_a_time(tmp_path: Path, monkeypatch) -> None:
    """The batched call must give what the model gives when fed chunk by chunk with the
    previous chunk's last 64 samples and the LSTM state carried: the streaming definition."""
    from stylebench.metrics import vad

    y = np.concatenate([np.zeros(SR // 3, np.float32), _espeak(tmp_path, "Turn left at the bank.")])
    batched = vad.silero_probs(y)
    session = vad._silero_session()
    n = int(np.ceil(y.size / vad.SILERO_CHUNK))
    padded = np.pad(y, (0, n * vad.SILERO_CHUNK - y.size))
    h = c = np.zeros((1, 1, 128), np.float32)
    prev = np.zeros(vad.SILERO_CONTEXT, np.float32)
    streamed = []
    for i in range(n):
        chunk = padded[i * vad.SILERO_CHUNK : (i + 1) * vad.SILERO_CHUNK]
        x = np.concatenate([prev, chunk])[None, :]
        p, h, c = session.run(None, {"input": x, "h": h, "c": c})
        streamed.append(float(np.asarray(p).reshape(-1)[0]))
        prev = chunk[-vad.SILERO_CONTEXT :]
    assert batched.size == n
    np.testing.assert_allclose(batched, streamed, atol=1e-4)
    assert batched.max() > 0.9 and batched[:5].max() < 0.2  # speech found, leading silence not
    # splitting the file over several ONNX calls carries the state: same probabilities
    monkeypatch.setattr(vad, "SILERO_BATCH", 7)
    np.testing.assert_allclose(vad.silero_probs(y), batched, atol=1e-5)


def test_silero_model_file_is_the_validated_one() -> None:
    import hashlib

    from stylebench.metrics import vad

    path = vad.silero_model_path()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == vad.SILERO_MODEL_SHA256


def test_speech_level_sound_touching_a_segment_joins_it_and_nothing_else_does() -> None:
    from stylebench.metrics.vad import join_loud

    rng = np.random.default_rng(0)
    x = 0.005 * rng.standard_normal(4 * SR)  # noise floor about 40 dB below the tone
    t = np.arange(int(1.4 * SR)) / SR
    x[int(0.6 * SR) : int(2.0 * SR)] += 0.5 * np.sin(2 * np.pi * 200 * t)  # the voice
    x[int(3.0 * SR) : int(3.3 * SR)] += 0.5 * np.sin(2 * np.pi * 200 * t[: int(0.3 * SR)])
    # Silero started 0.4 s late: the first 0.4 s of the voice joins, the floor and the
    # speech-level burst 1 s after the voice do not
    (a, b), *rest = join_loud([(1.0, 2.0)], x, SR, 0.15)
    assert not rest
    assert a == pytest.approx(0.6, abs=0.02) and b == pytest.approx(2.0, abs=0.02)
    assert join_loud([], x, SR, 0.15) == []
    # a speech-level stretch 0.1 s before the segment joins across the pause, 0.3 s does not
    y = 0.005 * rng.standard_normal(4 * SR)
    y[int(0.6 * SR) : int(2.0 * SR)] += 0.5 * np.sin(2 * np.pi * 200 * t)
    y[int(2.1 * SR) : int(3.5 * SR)] += 0.5 * np.sin(2 * np.pi * 200 * t)
    assert join_loud([(2.1, 3.5)], y, SR, 0.15)[0][0] == pytest.approx(0.6, abs=0.02)
    assert join_loud([(2.1, 3.5)], y, SR, 0.05)[0][0] == pytest.approx(2.1, abs=0.02)


def test_span_edges_grow_over_voiced_sound_only() -> None:
    """With voicing given, a noise burst at speech level next to the speech does not join and
    does not pull an edge out (its level decides nothing then); a voiced stretch still does."""
    from stylebench.metrics.vad import VoicedTimes, join_loud, snap_edges

    rng = np.random.default_rng(2)
    x = 0.005 * rng.standard_normal(4 * SR)
    t = np.arange(int(1.4 * SR)) / SR
    x[int(0.6 * SR) : int(2.0 * SR)] += 0.5 * np.sin(2 * np.pi * 200 * t)  # the voice
    x[int(0.45 * SR) : int(0.55 * SR)] += 0.5 * rng.standard_normal(int(0.1 * SR))  # a burst
    frames = np.arange(int(4 / 0.005)) * 0.005
    voiced = VoicedTimes((frames >= 0.6) & (frames < 2.0), 0.005)
    # Silero started 0.4 s late: the voice before it joins either way
    assert join_loud([(1.0, 2.0)], x, SR, 0.15, voiced)[0][0] == pytest.approx(0.6, abs=0.02)
    # the burst 0.05 s before the voice joins on level alone, not with voicing
    assert join_loud([(0.6, 2.0)], x, SR, 0.15)[0][0] == pytest.approx(0.45, abs=0.02)
    assert join_loud([(0.6, 2.0)], x, SR, 0.15, voiced)[0][0] == pytest.approx(0.6, abs=0.02)
    # snapping to an energy edge 0.15 s out: over the burst only without voicing
    assert snap_edges([(0.6, 2.0)], [(0.45, 2.0)])[0][0] == 0.45
    assert snap_edges([(0.6, 2.0)], [(0.45, 2.0)], voiced)[0][0] == 0.6
    assert snap_edges([(0.8, 2.0)], [(0.6, 2.0)], voiced)[0][0] == 0.6  # a late voiced onset
    assert voiced.seconds(0.6, 0.7) == pytest.approx(0.1)
