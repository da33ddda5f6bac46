"""RMS volume metric on tones of known amplitude."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.metrics.energy import dbfs, rms_stats
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
