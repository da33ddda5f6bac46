"""The third F0 tracker (SwiftF0, the installed ``swift-f0`` package) and the three-tracker vote,
on signals with known fundamentals."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.metrics import pitch
from stylebench.metrics.pitch import (
    SWIFT_HOP,
    SWIFT_SR,
    drop_off_voice,
    f0_track,
    majority_f0,
    n_frames,
    praat_f0_track,
    swift_f0_track,
    trim_edges,
    voted_voiced,
)

pytest.importorskip("swift_f0", reason="swift-f0 (the [signal] extra) is not installed")


def harmonic(f0: float | np.ndarray, sr: int, seconds: float) -> np.ndarray:
    """A buzzy vowel: harmonics with 1/k amplitudes; ``f0`` may be a per-sample contour."""
    n = int(sr * seconds)
    f = np.broadcast_to(np.asarray(f0, dtype=np.float64), (n,))
    phase = 2 * np.pi * np.cumsum(f) / sr
    x = sum(np.sin(k * phase) / k for k in range(1, 30) if k * float(f.max()) < 0.45 * sr)
    return 0.3 * x / np.max(np.abs(x))


@pytest.mark.parametrize("sr", [16000, 24000])
@pytest.mark.parametrize("f0", [110.0, 240.0])
def test_swift_track_reads_a_steady_vowel_on_the_pyworld_grid(sr: int, f0: float) -> None:
    gap = np.zeros(int(0.3 * sr))
    x = np.concatenate([gap, harmonic(f0, sr, 0.8), gap])
    track = swift_f0_track(x, sr)
    assert track.size == f0_track(x, sr).size == n_frames(x.size, sr, 5.0)
    voiced = track[track > 0]
    assert voiced.size > 0.6 * 0.8 / 0.005
    assert abs(float(np.median(voiced)) / f0 - 1) < 0.01
    assert np.all(track[: int(0.2 / 0.005)] == 0)  # the leading silence is unvoiced


def test_swift_frames_are_centred_at_multiples_of_the_hop() -> None:
    """On a fast chirp a one-frame (16 ms) misalignment reads about 0.3 st off; the grid mapping
    must be within a tenth of that."""
    sr = 16000
    seconds = 1.5
    t = np.arange(int(sr * seconds)) / sr
    contour = 100.0 + 300.0 * t / seconds  # 200 Hz per second
    track = swift_f0_track(harmonic(contour, sr, seconds), sr)
    grid = np.arange(track.size) * 0.005
    truth = 100.0 + 300.0 * grid / seconds
    keep = (track > 0) & (grid > 0.1) & (grid < seconds - 0.1)
    err = 12 * np.log2(track[keep] / truth[keep])
    shifted = 12 * np.log2(track[keep] / (truth[keep] + 200.0 * SWIFT_HOP / SWIFT_SR))
    assert abs(float(np.mean(err))) < 0.05
    assert abs(float(np.mean(shifted))) > 0.1  # the test can tell a one-frame shift


def test_silence_and_noise_give_no_swift_voicing() -> None:
    sr = 16000
    assert not np.any(swift_f0_track(np.zeros(sr), sr) > 0)
    noise = np.random.default_rng(1).normal(0, 0.1, sr)
    assert np.mean(swift_f0_track(noise, sr) > 0) < 0.05


def test_majority_takes_the_two_that_agree_and_drops_the_odd_one() -> None:
    pw = np.array([200.0, 200.0, 0.0, 150.0, 100.0, 0.0])
    pr = np.array([202.0, 100.0, 200.0, 300.0, 100.0, 0.0])
    sw = np.array([198.0, 101.0, 204.0, 500.0, 0.0, 120.0])
    out = majority_f0([pw, pr, sw])
    assert out[0] == pytest.approx(200.0)  # all three agree: the median
    assert out[1] == pytest.approx(100.5)  # pyworld an octave up: Praat and SwiftF0
    assert out[2] == pytest.approx(202.0)  # pyworld unvoiced: the other two
    assert out[3] == 0.0  # three different answers: no majority
    assert out[4] == pytest.approx(100.0)  # SwiftF0 unvoiced, the other two agree
    assert out[5] == 0.0  # one voiced tracker is no majority
    assert voted_voiced([pw, pr, sw]).tolist() == [True, True, True, True, True, False]


def test_majority_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="two F0 tracks"):
        majority_f0([np.ones(3)])
    with pytest.raises(ValueError, match="differ in length"):
        majority_f0([np.ones(3), np.ones(4)])


def test_the_vote_follows_praat_and_swift_where_pyworld_is_off() -> None:
    """The failure of two-tracker agreement: pyworld about 6 st off on a voice. Praat and
    SwiftF0 agree on the true pitch, and the vote follows them frame by frame."""
    sr = 16000
    x = np.concatenate([np.zeros(3200), harmonic(105.0, sr, 1.0), np.zeros(3200)])
    wrong = f0_track(x, sr) * 2 ** (6 / 12)
    vote = trim_edges(majority_f0([wrong, praat_f0_track(x, sr), swift_f0_track(x, sr)]))
    voiced = vote[vote > 0]
    assert voiced.size > 150
    assert abs(float(np.mean(voiced)) / 105.0 - 1) < 0.01


def test_subharmonic_frames_go_and_high_excursions_stay() -> None:
    track = np.array([0.0, 200.0, 210.0, 190.0, 99.0, 420.0, 205.0, 0.0])
    out = drop_off_voice(track)
    assert out.tolist() == [0.0, 200.0, 210.0, 190.0, 0.0, 420.0, 205.0, 0.0]
    assert drop_off_voice(np.array([0.0, 100.0, 0.0])).tolist() == [0.0, 100.0, 0.0]


def test_a_tone_two_octaves_over_the_voice_goes_and_a_wide_rise_stays() -> None:
    """The reply's median is 200 Hz: frames at 19 st over it (600 Hz, the widest rise on real
    replies) and just under 24 st (790 Hz) stay; frames over two octaves (810, 1050 Hz) go."""
    track = np.array([0.0, 200, 200, 200, 200, 200, 600, 790, 810, 1050, 0])
    assert drop_off_voice(track).tolist() == [0, 200, 200, 200, 200, 200, 600, 790, 0, 0, 0]
    assert drop_off_voice(track, above_st=30.0)[8:10].tolist() == [810.0, 1050.0]


def test_a_missing_swift_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from stylebench.errors import MissingExtra

    real_import = builtins.__import__

    def no_swift(name: str, *args: object, **kwargs: object) -> object:
        if name == "swift_f0":
            raise ImportError("no module named swift_f0")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(pitch, "_SWIFT", {})
    monkeypatch.setattr(builtins, "__import__", no_swift)
    with pytest.raises(MissingExtra, match=r"stylebench\[signal\]"):
        swift_f0_track(np.zeros(16000), 16000)


def test_frame_levels_read_a_sine_and_silence_on_the_f0_grid() -> None:
    sr = 16000
    x = np.concatenate([np.zeros(sr // 2), 0.5 * np.sin(2 * np.pi * 200 * np.arange(sr) / sr)])
    n = n_frames(x.size, sr, 5.0)
    lv = pitch.frame_levels_db(x, sr, n)
    assert lv.shape == (n,) == f0_track(x, sr).shape
    expect = 20 * np.log10(0.5 / np.sqrt(2))  # a sine's power is A**2 / 2
    assert np.allclose(lv[120:280], expect, atol=0.05)  # frames 0.6-1.4 s lie inside the sine
    assert np.all(lv[:90] == -120.0)  # the first 0.45 s: 25 ms windows that hold only silence
    with pytest.raises(ValueError):
        pitch.frame_levels_db(x, sr, -1)


def test_the_weighted_mean_leans_on_loud_frames_and_ignores_gain() -> None:
    track = np.array([0.0, 200.0, 200.0, 100.0, 100.0, 0.0])
    levels = np.array([-120.0, -10.0, -10.0, -30.0, -30.0, -120.0])  # 100 Hz frames 20 dB down
    assert pitch.weighted_mean_f0(track, levels) == pytest.approx((200 + 0.1 * 100) / 1.1)
    assert pitch.weighted_mean_f0(track, levels + 12.0) == pytest.approx((200 + 10) / 1.1)
    assert pitch.weighted_mean_f0(track, np.full(6, -20.0)) == pytest.approx(150.0)
    with pytest.raises(ValueError, match="differ in length"):
        pitch.weighted_mean_f0(track, levels[:-1])
    with pytest.raises(ValueError, match="voiced frames"):
        pitch.weighted_mean_f0(np.array([0.0, 200.0, 0.0]), np.zeros(3))


def test_a_quiet_low_stretch_barely_moves_the_pitch_score() -> None:
    """The features pass end to end: a loud 220 Hz vowel and a quiet 110 Hz one (24 dB down,
    as a creaky phrase end or a far speaker). The plain mean of the voted frames sits between
    the two; the score (amplitude-weighted) stays near the loud vowel, and a gain change moves
    neither."""
    from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

    sr = 16000
    gap = np.zeros(int(0.2 * sr))
    x = np.concatenate([gap, harmonic(220.0, sr, 1.0), 0.063 * harmonic(110.0, sr, 1.0), gap])
    scores = []
    for gain in (1.0, 2.0):
        cfg = FeatureConfig(vad="energy")
        parts = {1: analyse_reply(x * gain, sr, cfg)}
        done = finish_sample(parts, {}, "en")[1]
        assert not isinstance(done, str), done
        values = done[0]
        scores.append(values["f0_mean_weighted"])
        assert 150.0 < values["f0_mean_agreed"] < 190.0
    assert 205.0 < scores[0] < 220.0
    assert scores[1] == pytest.approx(scores[0], rel=1e-4)  # SwiftF0 voicing follows level a little
