"""The F0 search range: a high voice going up is measured, and a reply that reaches the ceiling
is flagged (``f0_near_ceiling``); the range is one number everywhere it is set."""

from __future__ import annotations

from types import MappingProxyType

import numpy as np
import pytest

from stylebench.metrics import pitch

pytest.importorskip("swift_f0", reason="swift-f0 (the [signal] extra) is not installed")

SR = 16000
#: a child-like voice: ten 180 ms syllables, each a glide between two pitches (semitones over
#: 430 Hz), 60 ms apart; its voiced frames have a median of about 472 Hz (the outside check's
#: child) and it rises to about 800 Hz, as an expressive high voice does
GLIDES = ((-3, 2), (2, 9), (9, -1), (-6, -2), (-2, 6), (6, 0), (0, -5), (-4, 3), (3, 11), (11, -2))


def high_voice(shift_st: float = 0.0, base_hz: float = 430.0) -> np.ndarray:
    """The glides of :data:`GLIDES` raised by ``shift_st`` semitones: a buzzy source (harmonics
    at 1/k up to 0.45 of the sample rate, so nothing aliases) under a syllable envelope."""
    syl, gap = int(0.18 * SR), int(0.06 * SR)
    f0, env = [np.zeros(int(0.1 * SR))], [np.zeros(int(0.1 * SR))]
    for a, b in GLIDES:
        f0 += [base_hz * 2.0 ** ((np.linspace(a, b, syl) + shift_st) / 12.0), np.zeros(gap)]
        env += [np.sqrt(np.hanning(syl)), np.zeros(gap)]
    f, e = np.concatenate(f0), np.concatenate(env)
    phase = 2 * np.pi * np.cumsum(np.where(f > 0, f, base_hz)) / SR
    x = sum(np.where(k * f < 0.45 * SR, np.sin(k * phase) / k, 0.0) for k in range(1, 20))
    x = x * e
    return 0.3 * x / np.max(np.abs(x))


def reply(x: np.ndarray, f0_ceil: float) -> tuple[dict[str, float], list[str]]:
    """The pitch dimension's values and flags for ``x`` with the trackers searching up to
    ``f0_ceil`` (the features stage's steps, without the speech span)."""
    from stylebench.metrics.dims.base import ReplyFrames
    from stylebench.metrics.dims.pitch import Pitch

    tracks = tuple(
        f(x, SR, f0_ceil=f0_ceil)
        for f in (pitch.f0_track, pitch.praat_f0_track, pitch.swift_f0_track)
    )
    frames = ReplyFrames(
        wave=x,
        sr=SR,
        tracks=tracks,  # type: ignore[arg-type]
        level_track=pitch.frame_levels_db(x, SR, tracks[0].size),
        f0_ceil=f0_ceil,
        measured=MappingProxyType({}),
    )
    return Pitch().reply_values(frames)


def default_ceil() -> float:
    from stylebench.stages.measure import FeatureConfig

    return FeatureConfig().f0_ceil


def test_the_high_voice_is_what_it_says() -> None:
    f = pitch.f0_track(high_voice(), SR, f0_ceil=1500.0)
    assert float(np.median(f[f > 0])) == pytest.approx(472.0, rel=0.03)


@pytest.mark.parametrize("key", ["f0_mean_agreed", "f0_mean_weighted"])
def test_a_high_voice_going_up_two_semitones_reads_two_semitones(key: str) -> None:
    """With an 800 Hz ceiling the raised copy loses its highest frames and reads +1.6-1.7 st;
    the default range must hold it."""
    ceil = default_ceil()
    before, _ = reply(high_voice(), ceil)
    after, flags = reply(high_voice(2.0), ceil)
    assert 12 * np.log2(after[key] / before[key]) == pytest.approx(2.0, abs=0.15)
    assert "f0_near_ceiling" not in flags


def test_a_voice_at_the_ceiling_is_flagged_and_an_ordinary_one_is_not() -> None:
    """The raised high voice under an 800 Hz ceiling (its highest glides cross it) is flagged;
    the same voice under the default ceiling, and a low voice under the 800 Hz one, are not."""
    values, flags = reply(high_voice(2.0), 800.0)
    assert "f0_near_ceiling" in flags
    assert values["f0_ceiling_share"] > 0.05
    values, flags = reply(high_voice(2.0), default_ceil())
    assert "f0_near_ceiling" not in flags and values["f0_ceiling_share"] < 0.01
    values, flags = reply(high_voice(-19.0), 800.0)  # the same glides around 160 Hz
    assert "f0_near_ceiling" not in flags and values["f0_ceiling_share"] == 0.0


def test_ceiling_share_counts_frames_near_or_over_the_ceiling() -> None:
    track = np.array([0.0, 200.0, 700.0, 800.0, 900.0, 0.0])
    # 2 st under 800 Hz is 712.7 Hz: 800 and 900 Hz count, 700 Hz does not
    assert pitch.ceiling_share(track, 800.0, 2.0) == pytest.approx(2 / 4)
    assert pitch.ceiling_share(track, 800.0, 3.0) == pytest.approx(3 / 4)
    assert pitch.ceiling_share(np.zeros(4), 800.0, 2.0) == 0.0
    with pytest.raises(ValueError):
        pitch.ceiling_share(track, 0.0, 2.0)


def test_the_range_is_one_number_everywhere() -> None:
    """The run setting, the features stage and every tracker's own default search the same
    range (a tracker called without a range must not quietly search a narrower one)."""
    import inspect

    from stylebench.config import MeasureConfig
    from stylebench.stages.measure import FeatureConfig

    ranges = {(MeasureConfig().f0_floor, MeasureConfig().f0_ceil)}
    ranges.add((FeatureConfig().f0_floor, FeatureConfig().f0_ceil))
    for f in (pitch.f0_track, pitch.praat_f0_track, pitch.swift_f0_track):
        p = inspect.signature(f).parameters
        ranges.add((p["f0_floor"].default, p["f0_ceil"].default))
    assert ranges == {(pitch.F0_FLOOR_HZ, pitch.F0_CEIL_HZ)}
