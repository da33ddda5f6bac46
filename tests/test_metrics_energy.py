"""RMS volume metric on tones of known amplitude."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.metrics.energy import dbfs, gated_rms, rms_stats
from stylebench.metrics.vad import active_mask, speech_span

SR = 16000


def tone(amplitude: float, seconds: float = 1.0, hz: float = 440.0) -> np.ndarray:
    t = np.arange(int(SR * seconds)) / SR
    return amplitude * np.sin(2 * np.pi * hz * t)


@pytest.mark.parametrize("amplitude", [1.0, 0.5, 0.1])
def test_sine_rms_is_amplitude_over_root_two(amplitude: float) -> None:
    stats = rms_stats(tone(amplitude))
    expected_db = 20 * np.log10(amplitude / np.sqrt(2))
    assert abs(stats.rms_file_dbfs - expected_db) < 0.1
    assert stats.rms_active == stats.rms_file


def test_full_scale_sine_is_minus_3_dbfs() -> None:
    assert rms_stats(tone(1.0)).rms_file_dbfs == pytest.approx(-3.0103, abs=0.01)


def test_active_rms_ignores_leading_and_trailing_silence() -> None:
    x = np.concatenate([np.zeros(SR), tone(0.5), np.zeros(2 * SR)])
    exact = np.zeros(x.size, dtype=bool)
    exact[SR : 2 * SR] = True
    stats = rms_stats(x, mask=exact)
    assert stats.rms_active == pytest.approx(0.5 / np.sqrt(2), rel=1e-3)
    assert stats.rms_file == pytest.approx(stats.rms_active / 2, rel=1e-3)  # 1 s of 4 s active
    vad_mask = active_mask(speech_span(x, SR, backend="energy", pad_s=0.0), x.size, SR)
    assert abs(rms_stats(x, mask=vad_mask).rms_active_dbfs - stats.rms_active_dbfs) < 0.1


def test_bad_input_raises() -> None:
    x = tone(0.5)
    with pytest.raises(ValueError, match="shape"):
        rms_stats(x, mask=np.ones(10, dtype=bool))
    with pytest.raises(ValueError, match="no speech-active"):
        rms_stats(x, mask=np.zeros(x.size, dtype=bool))
    with pytest.raises(ValueError, match="boolean"):
        rms_stats(x, mask=np.ones(x.size))
    with pytest.raises(ValueError, match="integer PCM"):
        rms_stats((x * 32767).astype(np.int16))
    with pytest.raises(ValueError, match="silence"):
        rms_stats(np.zeros(100))
    with pytest.raises(ValueError):
        dbfs(0.0)


@pytest.mark.parametrize("pad_s", [0.0, 1.0, 5.0])
def test_gated_rms_leaves_out_silence_however_long(pad_s: float) -> None:
    x = np.concatenate([np.zeros(int(pad_s * SR)), tone(0.5, 2.0), np.zeros(int(pad_s * SR))])
    # the frames straddling an edge hold part tone, part silence: within 20 dB, they count
    assert 20 * np.log10(gated_rms(x, SR)) == pytest.approx(
        20 * np.log10(0.5 / np.sqrt(2)), abs=0.2
    )


def test_gated_rms_is_exact_under_gain_and_leaves_out_quiet_frames() -> None:
    loud, far = tone(0.5, 1.0), tone(0.5 * 10 ** (-30 / 20), 2.0, hz=180.0)
    x = np.concatenate([loud, far, loud])
    assert gated_rms(3.0 * x, SR) == pytest.approx(3.0 * gated_rms(x, SR), rel=1e-12)
    # a voice 30 dB down is under the gate: the level is the loud tone's, not diluted by half
    assert gated_rms(x, SR) == pytest.approx(0.5 / np.sqrt(2), rel=0.03)
    assert rms_stats(x).rms_file < 0.75 * 0.5 / np.sqrt(2)
    # a voice 6 dB down is above it, and counts
    near = np.concatenate([loud, tone(0.25, 2.0, hz=180.0), loud])
    assert gated_rms(near, SR) == pytest.approx(rms_stats(near).rms_file, rel=0.02)
    # with a mask, only frames centred inside it count
    m = np.zeros(x.size, dtype=bool)
    m[int(1.1 * SR) : int(2.9 * SR)] = True  # frame centres clear of the loud tone
    assert gated_rms(x, SR, mask=m) == pytest.approx(0.5 * 10 ** (-30 / 20) / np.sqrt(2), rel=0.1)


def test_gated_rms_bad_input() -> None:
    with pytest.raises(ValueError, match="silence"):
        gated_rms(np.zeros(SR), SR)
    with pytest.raises(ValueError, match="integer PCM"):
        gated_rms((tone(0.5) * 32767).astype(np.int16), SR)
    with pytest.raises(ValueError, match="mask"):
        gated_rms(tone(0.5), SR, mask=np.ones(10, dtype=bool))
    with pytest.raises(ValueError, match="drop_db"):
        gated_rms(tone(0.5), SR, drop_db=0.0)
