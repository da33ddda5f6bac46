"""FFmpeg transforms and espeak-ng synthesis do exactly what the style asks."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.synth.base import Audio, Style
from stylebench.synth.espeak import VOICES, EspeakSynth
from stylebench.synth.ffmpeg import apply_style


def harmonic(f0: float, sr: int = 16000, dur: float = 1.0) -> Audio:
    t = np.arange(int(sr * dur)) / sr
    x = sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, 6))
    return Audio((0.2 * x).astype(np.float32), sr)


def rms_db(x: np.ndarray) -> float:
    return 20 * np.log10(np.sqrt(np.mean(x.astype(np.float64) ** 2)))


def test_gain_is_exact():
    a = harmonic(150)
    b = apply_style(a, Style(gain_db=4.0))
    assert rms_db(b.wave) - rms_db(a.wave) == pytest.approx(4.0, abs=0.05)


def test_pitch_shift_keeps_tempo_and_moves_f0():
    from stylebench.metrics.pitch import f0_stats, f0_track

    a = harmonic(150)
    b = apply_style(a, Style(pitch_st=2.0))
    assert b.wave.size == pytest.approx(a.wave.size, rel=0.02)
    fa = f0_stats(f0_track(a.wave, a.sr)).median_hz
    fb = f0_stats(f0_track(b.wave, b.sr)).median_hz
    assert 12 * np.log2(fb / fa) == pytest.approx(2.0, abs=0.1)


def test_tempo_changes_duration():
    a = harmonic(150, dur=2.0)
    b = apply_style(a, Style(rate=1.25))
    assert b.wave.size / a.wave.size == pytest.approx(0.8, rel=0.02)


def test_style_bounds():
    with pytest.raises(ValueError, match="rate"):
        Style(rate=10)


@pytest.mark.parametrize("voice", ["en-m1", "zh-f1"])
def test_espeak_rate_shortens_speech(voice):
    s = EspeakSynth()
    text = "The museum is closed on Mondays." if voice.startswith("en") else "博物馆每周一闭馆。"
    slow = s.synthesize(text, VOICES[voice], Style())
    fast = s.synthesize(text, VOICES[voice], Style(rate=1.25))
    assert fast.duration_s < 0.9 * slow.duration_s
    assert np.max(np.abs(slow.wave)) < 0.5  # headroom for louder turns


def test_espeak_rejects_empty_text():
    with pytest.raises(ValueError, match="empty"):
        EspeakSynth().synthesize("  ", VOICES["en-m1"])
