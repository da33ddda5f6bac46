"""F0 metric on synthetic voiced signals with known fundamentals."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.metrics.pitch import (
    agreed_frames,
    f0_stats,
    f0_track,
    praat_f0_track,
    speaker_f0_range,
)


def harmonic(f0: float, sr: int, seconds: float) -> np.ndarray:
    """Sum of harmonics with 1/k amplitudes below 0.9 * Nyquist: a buzzy voiced vowel."""
    t = np.arange(int(sr * seconds)) / sr
    x = sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, 40) if k * f0 < 0.45 * sr)
    return 0.3 * x / np.max(np.abs(x))


def with_gaps(parts: list[np.ndarray], sr: int, gap_s: float = 0.3) -> np.ndarray:
    gap = np.zeros(int(gap_s * sr))
    return np.concatenate([gap, *[np.concatenate([p, gap]) for p in parts]])


@pytest.mark.parametrize("sr", [16000, 22050])
@pytest.mark.parametrize("f0", [120.0, 220.0])
def test_mean_f0_within_one_percent(sr: int, f0: float) -> None:
    x = with_gaps([harmonic(f0, sr, 0.6), harmonic(f0, sr, 0.5)], sr)
    stats = f0_stats(f0_track(x, sr))
    assert abs(stats.mean_hz / f0 - 1) < 0.01
    assert abs(stats.median_hz / f0 - 1) < 0.01
    voiced_fraction = 1.1 / (x.size / sr)
    assert abs(stats.voiced_ratio - voiced_fraction) < 0.05
    assert stats.extractor == "pyworld"


@pytest.mark.parametrize("f0", [120.0, 220.0])
def test_praat_cross_check_agrees(f0: float) -> None:
    sr = 16000
    x = with_gaps([harmonic(f0, sr, 0.6)], sr)
    world = f0_stats(f0_track(x, sr))
    praat = f0_stats(praat_f0_track(x, sr), extractor="praat")
    assert abs(praat.mean_hz / f0 - 1) < 0.02
    assert abs(praat.mean_hz / world.mean_hz - 1) < 0.02
    assert agreed_frames(f0_track(x, sr), praat_f0_track(x, sr)).sum() >= 0.9 * world.voiced_frames


def test_unvoiced_noise_raises() -> None:
    sr = 16000
    noise = np.random.default_rng(0).normal(0, 0.1, sr)
    with pytest.raises(ValueError, match="voiced frames"):
        f0_stats(f0_track(noise, sr))
    with pytest.raises(ValueError, match="voiced frames"):
        f0_stats(np.zeros(200))


def test_octave_guard_removes_doubled_segments() -> None:
    sr = 16000
    turns = [
        with_gaps([harmonic(120, sr, 0.6)], sr),
        with_gaps([harmonic(120, sr, 0.5), harmonic(240, sr, 0.3)], sr),  # octave error
        with_gaps([harmonic(127, sr, 0.6)], sr),  # one semitone up: a real change
    ]
    tracks = [f0_track(x, sr) for x in turns]
    lo, hi = speaker_f0_range(tracks)
    assert lo < 90 and 190 < hi < 235  # 0.75 octave around the pooled median (120-127 Hz)
    raw = f0_stats(tracks[1])
    guarded = f0_stats(tracks[1], f0_range=(lo, hi))
    assert raw.mean_hz > 150  # the doubled segment drags the raw mean up
    assert abs(guarded.mean_hz / 120 - 1) < 0.01
    assert guarded.voiced_frames < raw.voiced_frames
    assert abs(f0_stats(tracks[2], f0_range=(lo, hi)).mean_hz / 127 - 1) < 0.01


def test_speaker_range_definition_and_errors() -> None:
    track = np.array([0, 100, 100, 100, 0], dtype=float)
    lo, hi = speaker_f0_range([track], octaves_below=1, octaves_above=0.5)
    assert lo == pytest.approx(50) and hi == pytest.approx(100 * 2**0.5)
    with pytest.raises(ValueError):
        speaker_f0_range([])
    with pytest.raises(ValueError):
        speaker_f0_range([np.zeros(10)])
    with pytest.raises(ValueError):
        speaker_f0_range([track], octaves_below=0)


def test_praat_track_lies_on_the_pyworld_grid() -> None:
    """Frame i of both tracks is the same instant: a voice that starts at 0.3 s and steps from
    150 to 250 Hz at 0.9 s is voiced and stepped at the same frames in both."""
    sr = 16000
    x = with_gaps([np.concatenate([harmonic(150.0, sr, 0.6), harmonic(250.0, sr, 0.6)])], sr)
    world, praat = f0_track(x, sr), praat_f0_track(x, sr)
    assert world.size == praat.size
    onset = [int(np.flatnonzero(t > 0)[0]) for t in (world, praat)]
    step = [int(np.flatnonzero(t > 200)[0]) for t in (world, praat)]
    assert abs(onset[0] - onset[1]) <= 4 and abs(step[0] - step[1]) <= 2
    assert agreed_frames(world, praat).sum() >= 0.85 * (world > 0).sum()


@pytest.mark.parametrize("n", [32080, 32081, 129200, 16000 * 3])
def test_both_tracks_have_pyworlds_frame_count(n: int) -> None:
    """Lengths where ``int(n / sr / 0.005)`` rounds a whole-frame duration down (32080 samples:
    400.99999 frames) must still give Praat's track pyworld's frame count, or no frame compares."""
    sr = 16000
    x = harmonic(180.0, sr, (n + 10) / sr)[:n]
    assert x.size == n
    assert f0_track(x, sr).size == praat_f0_track(x, sr).size


def test_agreement_drops_subharmonic_frames() -> None:
    """Frames one tracker halves (a subharmonic) or the other misses leave the agreed mean at the
    true F0, where the plain mean is pulled down."""
    true = np.full(100, 200.0)
    sub = true.copy()
    sub[::2] = 100.0  # every other frame tracked an octave low
    other = true.copy()
    other[:10] = 0.0  # unvoiced for the second tracker
    mask = agreed_frames(sub, other)
    assert mask.sum() == 45 and np.all(sub[mask] == 200.0)
    assert f0_stats(np.where(mask, sub, 0.0)).mean_hz == 200.0 and f0_stats(sub).mean_hz == 150.0
    near = agreed_frames(true * 2 ** (0.9 / 12), true)  # 0.9 st apart: agree at 1 st, not 0.5
    assert near.all() and not agreed_frames(true * 2 ** (0.9 / 12), true, tol_st=0.5).any()
    with pytest.raises(ValueError, match="differ in length"):
        agreed_frames(true, true[:50])


def test_bad_input_raises() -> None:
    sr = 16000
    with pytest.raises(ValueError, match="mono"):
        f0_track(np.zeros((2, sr)), sr)
    with pytest.raises(ValueError, match="samples"):
        f0_track(np.zeros(100), sr)
    with pytest.raises(ValueError, match="NaN"):
        f0_track(np.full(sr, np.nan), sr)
    with pytest.raises(ValueError, match="f0_floor"):
        f0_track(np.zeros(sr), sr, f0_floor=500, f0_ceil=100)
    with pytest.raises(ValueError, match="sample rate"):
        f0_track(np.zeros(sr), 0)
    with pytest.raises(ValueError, match="f0_range"):
        f0_stats(np.full(10, 100.0), f0_range=(200, 100))
