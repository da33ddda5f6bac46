"""Every kind of unscorable reply gives an AudioError with an actionable reason."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from stylebench.audio import AudioError, load_audio, write_wav


def tone(sr: int = 16000, dur: float = 1.0, amp: float = 0.5) -> np.ndarray:
    t = np.arange(int(sr * dur)) / sr
    return (amp * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def test_good_file_roundtrip_and_resample(tmp_path):
    p = tmp_path / "a.wav"
    write_wav(p, tone(22050), 22050)
    wave, sr = load_audio(p, target_sr=16000)
    assert sr == 16000 and abs(wave.size - 16000) <= 1
    assert abs(np.sqrt(np.mean(wave**2)) - 0.5 / np.sqrt(2)) < 0.01


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda p: p.write_bytes(b""), "empty"),
        (lambda p: p.write_text("<html>not audio</html>"), "not a readable audio"),
        (lambda p: sf.write(str(p), np.zeros(16000, np.float32), 16000), "silent"),
        (
            lambda p: sf.write(str(p), np.full(16000, np.nan, np.float32), 16000, subtype="FLOAT"),
            "NaN",
        ),
        (lambda p: sf.write(str(p), tone()[:800], 16000), "ms of audio"),
        (lambda p: sf.write(str(p), tone(4000), 4000), "sample rate"),
    ],
    ids=["empty", "non-audio", "silent", "nan", "too-short", "odd-rate"],
)
def test_bad_files(tmp_path, make, reason):
    p = tmp_path / "bad.wav"
    make(p)
    with pytest.raises(AudioError, match=reason):
        load_audio(p)


def test_truncated_wav(tmp_path):
    p = tmp_path / "t.wav"
    write_wav(p, tone(), 16000)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(AudioError, match="truncated"):
        load_audio(p)


def test_missing_file(tmp_path):
    with pytest.raises(AudioError, match="does not exist"):
        load_audio(tmp_path / "nope.wav")


def test_stereo_is_averaged(tmp_path):
    p = tmp_path / "s.wav"
    x = tone()
    sf.write(str(p), np.stack([x, x], axis=1), 16000)
    wave, _ = load_audio(p)
    assert wave.ndim == 1
