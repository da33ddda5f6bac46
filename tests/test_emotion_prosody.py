"""The prosodic emotion index and the agreement statistics, on inputs with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stylebench.metrics import prosody
from stylebench.metrics.dims.emotion import prosodic_by_turn
from stylebench.model_wrappers.embedded.tts import step_style
from stylebench.records import FeatureRecord, Sample, UserTurn
from stylebench.scoring.cells import TurnScore
from stylebench.scoring.emotion import agreement_with_humans, cohen_kappa

BASE = {"f0_mean_agreed": 100.0, "f0_std_st": 2.0, "rms_gated_dbfs": -20.0, "nuclei_spm": 200.0}
# two semitones higher, one semitone wider, 3 dB louder, 10% faster
UP = {
    "f0_mean_agreed": 100.0 * 2 ** (2 / 12),
    "f0_std_st": 3.0,
    "rms_gated_dbfs": -17.0,
    "nuclei_spm": 220.0,
}


def test_f0_spread_is_the_sd_in_semitones_and_ignores_a_shift():
    assert prosody.f0_spread_st(np.full(50, 180.0)) == 0.0
    track = np.array([100.0, 200.0] * 20 + [0.0] * 10)  # unvoiced frames are left out
    # semitones around the median (150 Hz): -7.02 and +4.98, so the SD is half of 12 st
    assert prosody.f0_spread_st(track) == pytest.approx(6.0)
    assert prosody.f0_spread_st(track * 1.5) == pytest.approx(6.0)  # a pitch step is no wider
    assert prosody.f0_spread_st(track, (90.0, 110.0)) == 0.0  # outside the guard range: dropped
    with pytest.raises(ValueError, match="voiced frames"):
        prosody.f0_spread_st(np.zeros(20))


def test_arousal_terms_and_index_in_jnd_units():
    terms = prosody.arousal_terms(BASE, UP)
    assert terms == pytest.approx(
        {"pitch_st": 2.0, "spread_st": 1.0, "level_db": 3.0, "rate_pct": 2.0}
    )
    assert prosody.arousal_index(BASE, UP) == pytest.approx(2.0)
    assert prosody.arousal_index(BASE, BASE) == 0.0
    half = prosody.ProsodyUnits(pitch_st=2.0, spread_st=1.0, level_db=3.0, rate_pct=10.0)
    assert prosody.arousal_index(BASE, UP, half) == pytest.approx(1.0)


def test_intensity_takes_the_emotions_arousal_side():
    assert prosody.AROUSAL_SIGN["happy"] * prosody.arousal_index(BASE, UP) == pytest.approx(2.0)
    assert prosody.AROUSAL_SIGN["sad"] * prosody.arousal_index(BASE, UP) == pytest.approx(-2.0)
    assert set(prosody.AROUSAL_SIGN) == {
        "happy",
        "angry",
        "surprised",
        "fearful",
        "sad",
        "disgusted",
    }
    with pytest.raises(ValueError, match="nuclei_spm missing for this turn"):
        prosody.arousal_index(BASE, {k: v for k, v in UP.items() if k != "nuclei_spm"})


def test_reference_steps_follow_the_arousal_convention():
    happy_up = step_style("emotion", "intensify", 2, emotion="happy")
    assert (happy_up.rate, happy_up.gain_db, happy_up.pitch_st) == pytest.approx((1.21, 6, 3))
    sad_up = step_style("emotion", "intensify", 1, emotion="sad")  # sadder: slower, softer, lower
    assert (sad_up.rate, sad_up.gain_db, sad_up.pitch_st) == pytest.approx((1 / 1.1, -3, -1.5))
    sad_down = step_style("emotion", "attenuate", 1, emotion="sad")
    assert sad_down.gain_db == 3.0
    # the reference's own step, read back by the index: (2 + 0 + 3 + 2) / 4 JND per step
    one = {
        **BASE,
        "f0_mean_agreed": 100 * 2 ** (1.5 / 12),
        "rms_gated_dbfs": -17.0,
        "nuclei_spm": 220.0,
        "f0_std_st": 2.0,
    }
    assert prosody.arousal_index(BASE, one) == pytest.approx((1.5 + 0 + 3 + 2) / 4)


def _sample(emotion="fearful"):
    turns = tuple(UserTurn("q", f"u{k}.wav", 16000, "0") for k in (1, 2, 3))
    return Sample("s1", "v", "emotion", "intensify", "en", "v1", "c", turns, emotion)


def test_prosodic_by_turn_reports_why_a_turn_has_no_score():
    s = _sample()
    # the dimension is handed each turn's ok feature record (failed turns are left out)
    ok = {k: FeatureRecord("s1", k, "ok", "fp", values=v) for k, v in ((1, BASE), (2, UP))}
    assert prosodic_by_turn(s, ok) == pytest.approx({1: 0.0, 2: 2.0})
    assert prosodic_by_turn(s, {2: ok[2]}) == {2: "prosodic: turn 1 (the baseline) has no features"}
    no_rate = {**ok, 2: FeatureRecord("s1", 2, "ok", "fp", values={**UP, "nuclei_spm": 0})}
    assert "nuclei_spm must be > 0" in prosodic_by_turn(s, no_rate)[2]


def test_cohen_kappa_known_values():
    assert cohen_kappa(["L", "L", "E", "E"], ["L", "E", "E", "E"]) == pytest.approx(0.5)
    assert cohen_kappa(["L", "E", "L"], ["L", "E", "L"]) == 1.0
    assert cohen_kappa(["L", "E"], ["E", "L"]) == -1.0
    assert cohen_kappa(["L", "L"], ["L", "L"]) is None  # chance agreement 1: undefined
    with pytest.raises(ValueError):
        cohen_kappa([], [])


def test_agreement_with_the_human_majority():
    def ts(sid, values):
        return [
            TurnScore(sid, "emotion", "intensify", "en", k, v, None if v is not None else "x")
            for k, v in zip((1, 2, 3), values, strict=True)
        ]

    scores = ts("a", [0.0, 1.0, 2.0]) + ts("b", [0.0, -1.0, 0.5]) + ts("c", [0.0, None, 1.0])
    majority = [
        {"sample_id": "a", "pair": "1-2", "majority": "later"},  # auto later: agree
        {"sample_id": "a", "pair": "2-3", "majority": "earlier"},  # auto later: disagree
        {"sample_id": "b", "pair": "1-2", "majority": "earlier"},  # auto earlier: agree
        {"sample_id": "b", "pair": "2-3", "majority": "tie"},  # left out, counted
        {"sample_id": "c", "pair": "1-2", "majority": "later"},  # no auto score: left out
    ]
    got = agreement_with_humans(scores, majority)
    # human [L, E, E], auto [L, L, E]: 2/3 agree; pe = (1/3)(2/3) + (2/3)(1/3) = 4/9
    assert got["n_pairs"] == 3 and got["n_human_ties"] == 1
    assert got["percent"] == pytest.approx(66.67)
    assert got["kappa"] == pytest.approx(round((2 / 3 - 4 / 9) / (1 - 4 / 9), 4))
    none = agreement_with_humans(scores, [])
    assert none["n_pairs"] == 0 and none["kappa"] is None
    assert not math.isnan(got["percent"])


def test_prosody_spec_is_declared():
    assert prosody.SPEC.name == "prosodic_emotion" and "f0_std_st" in prosody.SPEC.outputs
