"""Scoring on hand-made score tables whose VSP/SVD are computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stylebench.scoring.bootstrap import bootstrap_ci
from stylebench.scoring.cells import (
    Thresholds,
    TurnScore,
    is_valid,
    perceptual_change,
    score_cells,
)
from stylebench.scoring.stats import friedman_test, paired_test


def _sample(sid, values, *, dim="pitch", direction="intensify", lang="en", errors=(), flags=None):
    out = []
    for turn, v in enumerate(values, start=1):
        err = None if v is not None else (errors[turn - 1] if errors else "failed")
        fl = (flags or {}).get(turn, ())
        out.append(TurnScore(sid, dim, direction, lang, turn, v, err, fl))
    return out


def _table():
    return [
        *_sample("s1", [200.0, 230.0, 260.0], flags={3: ("f0_extractors_disagree",)}),
        *_sample("s2", [200.0, 201.0, 205.0]),
        *_sample("s3", [200.0, 180.0, 190.0]),
        *_sample("s4", [200.0, None, None], errors=(None, "tts timeout", "no speech")),
    ]


def test_hand_computed_cells():
    cells = score_cells(_table(), n_boot=200)
    assert [(c.dim, c.direction, c.lang, c.pair) for c in cells] == [
        ("pitch", "intensify", "en", "1-2"),
        ("pitch", "intensify", "en", "2-3"),
    ]
    c12, c23 = cells
    assert (c12.n, c12.n_decided, c12.n_valid) == (4, 3, 1)  # only s1 reaches +1 st (2.42 st)
    assert c12.vsp == pytest.approx(100 / 3)
    assert c12.vsp_all == pytest.approx(25.0)
    assert c12.svd == pytest.approx(15.0)  # 100*30/200
    assert c12.svd_signed == pytest.approx((15.0 + 0.5 - 10.0) / 3)
    st = [12 * math.log2(230 / 200), 12 * math.log2(201 / 200), 12 * math.log2(180 / 200)]
    assert c12.change_mean == pytest.approx(sum(st) / 3)
    assert c12.errors == {"tts timeout": 1}
    assert c12.n_flagged == 0
    assert c12.svd_ci == (15.0, 15.0)  # one valid sample: degenerate CI
    # 2-3: s1 +2.12 st valid, s2 +0.34 st, s3 +0.94 st (below 1 st): not valid.
    assert (c23.n, c23.n_decided, c23.n_valid) == (4, 3, 1)
    assert c23.svd == pytest.approx(100 * 30 / 230)
    assert c23.svd_signed == pytest.approx((100 * 30 / 230 + 100 * 4 / 201 + 100 * 10 / 180) / 3)
    assert c23.errors == {"tts timeout": 1}  # the earliest failed turn of the pair
    assert c23.n_flagged == 1
    lo, hi = c12.vsp_ci
    assert 0.0 <= lo <= c12.vsp <= hi <= 100.0


def test_perceptual_change_exact():
    assert perceptual_change("pitch", 100, 200) == pytest.approx(12.0)
    assert perceptual_change("volume", 0.1, 1.0) == pytest.approx(20.0)
    assert perceptual_change("speed", 200, 250) == pytest.approx(25.0)
    assert perceptual_change("emotion", 0.0, 0.4) == pytest.approx(0.4)
    for bad in [(0.0, 1.0), (1.0, -1.0), (math.nan, 1.0)]:
        with pytest.raises(ValueError):
            perceptual_change("pitch", *bad)
    with pytest.raises(ValueError, match="unknown dim"):
        perceptual_change("timbre", 1.0, 2.0)


def test_threshold_boundary_and_sign():
    th = Thresholds()
    assert is_valid("pitch", "intensify", 200.0, 200.0 * 2 ** (1 / 12), th)
    assert not is_valid("pitch", "intensify", 200.0, 200.0 * 2 ** (0.99 / 12), th)
    assert is_valid("volume", "intensify", 0.1, 0.1 * 10 ** (1 / 20), th)
    assert is_valid("speed", "attenuate", 200.0, 190.0, th)  # exactly -5%
    assert not is_valid("speed", "attenuate", 200.0, 191.0, th)
    assert is_valid("pitch", "attenuate", 200.0, 180.0, th)
    assert not is_valid("pitch", "attenuate", 200.0, 230.0, th)
    # Emotion: one just-noticeable step of the prosodic index (default 1.0); with threshold 0
    # any change in the asked direction counts, but no change never does.
    assert is_valid("emotion", "intensify", 0.2, 1.2, th)
    assert not is_valid("emotion", "intensify", 0.2, 1.19, th)
    zero = Thresholds(emotion_delta=0.0)
    assert is_valid("emotion", "intensify", 0.2, 0.25, zero)
    assert not is_valid("emotion", "intensify", 0.5, 0.5, zero)
    assert not is_valid("emotion", "intensify", 0.5, 0.5, th)
    assert not is_valid("emotion", "attenuate", 2.0, 3.0, th)
    assert Thresholds(pitch_st=2.0).for_dim("pitch") == 2.0
    with pytest.raises(ValueError):
        Thresholds(volume_db=-1.0)
    with pytest.raises(ValueError):
        th.for_dim("timbre")


def test_attenuate_cell_and_emotion_groups():
    scores = [
        *_sample("a1", [0.2, 0.1, 0.05], dim="volume", direction="attenuate"),
        *_sample("a2", [0.2, 0.3, 0.1], dim="volume", direction="attenuate"),
        TurnScore("e1", "emotion", "intensify", "zh", 1, 2.0, group="happy"),
        TurnScore("e1", "emotion", "intensify", "zh", 2, 3.0, group="happy"),
        TurnScore("e1", "emotion", "intensify", "zh", 3, 3.0, group="happy"),
    ]
    cells = {(c.dim, c.pair): c for c in score_cells(scores, n_boot=100)}
    v12 = cells[("volume", "1-2")]
    assert (v12.n_decided, v12.n_valid, v12.vsp) == (2, 1, 50.0)
    assert v12.svd == pytest.approx(50.0)
    assert cells[("volume", "2-3")].n_valid == 2
    e12, e23 = cells[("emotion", "1-2")], cells[("emotion", "2-3")]
    assert (e12.group, e12.vsp, e12.svd, e12.change_mean) == ("happy", 100.0, 1.0, 1.0)
    assert (e23.vsp, e23.svd, e23.svd_ci) == (0.0, None, None)
    # Order follows DIMS: volume before emotion.
    assert [c.dim for c in score_cells(scores, n_boot=10)] == ["volume"] * 2 + ["emotion"] * 2


def test_bad_records_raise():
    with pytest.raises(ValueError, match="duplicate"):
        score_cells(_table() + _sample("s1", [200.0]))
    mixed = _sample("m", [200.0, 210.0]) + [TurnScore("m", "pitch", "attenuate", "en", 3, 190.0)]
    with pytest.raises(ValueError, match="one cell key"):
        score_cells(mixed)
    with pytest.raises(ValueError, match="value=None"):
        TurnScore("x", "pitch", "intensify", "en", 1, 0.0)
    with pytest.raises(ValueError):
        TurnScore("x", "pitch", "intensify", "en", 4, 100.0)
    with pytest.raises(ValueError):
        TurnScore("x", "pitch", "louder", "en", 1, 100.0)
    with pytest.raises(ValueError, match="ci"):
        score_cells(_table(), ci=95)


def test_exclude_counts_nowhere_and_missing_turns():
    c12 = score_cells(_table(), exclude={"s4"}, n_boot=50)[0]
    assert (c12.n, c12.n_decided, c12.errors, c12.vsp_all) == (3, 3, {}, pytest.approx(100 / 3))
    partial = _sample("p", [200.0, 240.0])  # no turn-3 record at all
    c23 = score_cells(partial, n_boot=50)[1]
    assert (c23.n, c23.n_decided, c23.errors) == (1, 0, {"missing turn record": 1})
    assert (c23.vsp, c23.vsp_all, c23.vsp_ci) == (None, 0.0, None)


def test_bootstrap_deterministic_and_degenerate():
    vals = [1.0, 2.0, 3.0, 4.0, 10.0]
    a = bootstrap_ci(vals, n_boot=500, seed=3)
    assert a == bootstrap_ci(vals, n_boot=500, seed=3)
    assert a[0] <= np.mean(vals) <= a[1]
    med = bootstrap_ci(vals, np.median, n_boot=500, seed=3)
    assert med[0] <= 3.0 <= med[1]
    assert bootstrap_ci([], n_boot=10, seed=0) is None
    assert bootstrap_ci([7.5, 7.5, 7.5], n_boot=10, seed=0) == (7.5, 7.5)
    assert bootstrap_ci([2.0], n_boot=10, seed=0) == (2.0, 2.0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, math.nan], n_boot=10, seed=0)
    with pytest.raises(ValueError):
        bootstrap_ci(vals, n_boot=0, seed=0)
    cells1 = score_cells(_table(), n_boot=300, seed=5)
    assert cells1 == score_cells(list(reversed(_table())), n_boot=300, seed=5)


def test_paired_and_friedman():
    rng = np.random.default_rng(0)
    base = {f"s{i}": float(x) for i, x in enumerate(rng.normal(50, 10, 30))}
    shifted = {k: v + 3.0 + float(rng.normal(0, 0.5)) for k, v in base.items()}
    res = paired_test(base, shifted)
    assert res.n == 30 and res.p_value < 1e-4 and res.median_diff == pytest.approx(3.0, abs=0.5)
    same = paired_test(base, dict(base))
    assert (same.p_value, same.statistic, same.median_diff) == (1.0, 0.0, 0.0)
    assert paired_test(base, {"s0": 1.0, "zz": 2.0}).n == 1
    with pytest.raises(ValueError, match="share no sample ids"):
        paired_test(base, {"other": 1.0})

    tables = {"m_low": base, "m_mid": shifted, "m_high": {k: v + 10 for k, v in base.items()}}
    fr = friedman_test(tables)
    assert (fr.n, fr.k) == (30, 3) and fr.p_value < 1e-6
    assert fr.mean_ranks == {"m_high": 3.0, "m_low": 1.0, "m_mid": 2.0}
    tie = friedman_test({"a": base, "b": base, "c": base})
    assert (tie.statistic, tie.p_value) == (0.0, 1.0)
    with pytest.raises(ValueError, match=">= 3 models"):
        friedman_test({"a": base, "b": shifted})


def test_bootstrap_is_the_percentile_interval_over_every_value():
    vals = [0.0, 100.0, 100.0, 100.0]
    lo, hi = bootstrap_ci(vals, n_boot=400, seed=1)
    # the definition: percentiles 2.5 and 97.5 of the means of resamples drawn with replacement
    rng = np.random.default_rng(1)
    means = np.asarray(vals)[rng.integers(0, 4, size=(400, 4))].mean(axis=1)
    assert (lo, hi) == tuple(np.percentile(means, [2.5, 97.5]))
    assert lo < 75.0 < hi == 100.0  # the first value is drawn too (lo would be 100 without it)
    spread = list(np.random.default_rng(9).normal(size=25))  # continuous: no ties among means
    rng = np.random.default_rng(5)
    means = np.asarray(spread)[rng.integers(0, 25, size=(300, 25))].mean(axis=1)
    assert bootstrap_ci(spread, n_boot=300, seed=5, ci=0.9) == tuple(
        np.percentile(means, [5.0, 95.0])
    )
    assert bootstrap_ci(vals, n_boot=400, seed=1, ci=0.5) != (lo, hi)
    for bad in (-0.5, 0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="ci must be"):
            bootstrap_ci(vals, n_boot=10, seed=0, ci=bad)


def test_acoustic_scores_must_be_positive_and_cell_keys_consistent():
    for a, b in ((100.0, 0.0), (0.0, 100.0), (-1.0, 100.0), (100.0, -5.0)):
        with pytest.raises(ValueError, match="> 0"):
            perceptual_change("pitch", a, b)
    with pytest.raises(ValueError, match="finite"):
        TurnScore("s", "pitch", "intensify", "en", 1, -3.0)
    assert TurnScore("s", "emotion", "intensify", "en", 1, -3.0).value == -3.0
    for first, second in (("en", "zh"), ("zh", "en")):  # whichever turn comes first
        scores = [
            TurnScore("s", "pitch", "intensify", first, 1, 100.0),
            TurnScore("s", "pitch", "intensify", second, 2, 110.0),
        ]
        with pytest.raises(ValueError, match="one sample must keep one cell key"):
            score_cells(scores, n_boot=10)


def test_excluded_and_failed_samples_do_not_stop_the_count():
    scores = []
    for i, vals in enumerate(([100, 120, 140], [100, None, 140], [100, 120, 140], [100, 120, 140])):
        scores += [
            TurnScore(f"s{i}", "pitch", "intensify", "en", k, v, None if v else "failed")
            for k, v in zip((1, 2, 3), vals, strict=True)
        ]
    cells = {c.pair: c for c in score_cells(scores, n_boot=10, exclude={"s0"})}
    assert (cells["1-2"].n, cells["1-2"].n_decided, cells["1-2"].n_valid) == (3, 2, 2)
    assert cells["1-2"].errors == {"failed": 1}


def test_bootstrap_accepts_one_resample_and_refuses_other_shapes():
    assert bootstrap_ci([1.0, 3.0], n_boot=1, seed=0) is not None
    with pytest.raises(ValueError, match="one-dimensional"):
        bootstrap_ci(np.ones((2, 2)), n_boot=10, seed=0)
    with pytest.raises(ValueError, match="one-dimensional"):
        bootstrap_ci(np.float64(5.0), n_boot=10, seed=0)


def test_a_score_shared_by_some_turns_is_compared_only_with_them():
    """Speed turns 1 and 2 say the same words and share a count that no transcript vouches for:
    their change is scored, a change to turn 3 (other words) is not, in the cells, in the
    per-sample outcomes that compare's paired tests read, and in the trajectories plot."""
    from stylebench.compare.samples import outcomes
    from stylebench.report.plots import trajectories
    from stylebench.scoring.cells import pair_values

    why = "unscored: doubtful transcript and no text channel to vouch for it (asr_unsure)"
    shared = {"same_words": (1, 2), "cross_error": why}
    scores = [
        TurnScore("a", "speed", "intensify", "en", 1, 200.0, **shared),
        TurnScore("a", "speed", "intensify", "en", 2, 250.0, **shared),
        TurnScore("a", "speed", "intensify", "en", 3, 300.0),
        *_sample("b", [200.0, 250.0, 320.0], dim="speed"),
    ]
    c12, c23 = score_cells(scores, n_boot=100)
    assert (c12.n, c12.n_decided, c12.n_valid) == (2, 2, 2)
    assert (c23.n, c23.n_decided) == (2, 1) and c23.errors == {why: 1}
    assert pair_values(scores[2], scores[1]) == why  # either order
    assert pair_values(scores[0], scores[1]) == (200.0, 250.0)
    # a shared score with no doubt compares with any turn
    free = [TurnScore("c", "speed", "intensify", "en", 1, 200.0, same_words=(1, 2))]
    assert pair_values(free[0], scores[2]) == (200.0, 300.0)
    out = outcomes(scores, Thresholds())
    assert out[("speed", "intensify", "en", "2-3", "")]["a"].ok is False
    assert out[("speed", "intensify", "en", "1-2", "")]["a"].ok is True
    lines = trajectories(scores, exclude=())["speed"][("intensify", "en")]
    assert len(lines[2]) == 2 and len(lines[3]) == 1  # sample a has no change 1 -> 3
