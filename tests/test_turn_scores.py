"""Per-reply scores from records: which value, which flags, and why a turn has none."""

from __future__ import annotations

import pytest

from stylebench.metrics.dims.base import ScoreContext
from stylebench.records import FeatureRecord, RespondRecord, Sample, UserTurn
from stylebench.scoring.turns import collect_turn_scores


def sample(sid: str, dim: str, emotion: str = "") -> Sample:
    turns = tuple(UserTurn("r", "u.wav", 16000, "h") for _ in range(3))
    return Sample(sid, "v", dim, "intensify", "en", "en-f1", "c", turns, emotion)


def ok_reply(sid: str, k: int) -> RespondRecord:
    return RespondRecord(sid, k, "ok", "f", text="t", audio="a.wav", sr=16000, sha256="h")


def feat(sid: str, k: int, flags=(), **values) -> FeatureRecord:
    return FeatureRecord(sid, k, "ok", "f", values=values, flags=list(flags))


def test_values_flags_and_errors_per_turn():
    s = sample("p", "pitch")
    replies = {
        ("p", 1): ok_reply("p", 1),
        ("p", 2): ok_reply("p", 2),
        ("p", 3): RespondRecord("p", 3, "error", "f", error="CUDA out of memory\nTraceback"),
    }
    features = {
        ("p", 1): feat(
            "p", 1, ["f0_octave_suspect", "asr_empty"], f0_mean_agreed=200.0, f0_mean=190.0
        ),
        ("p", 2): FeatureRecord("p", 2, "error", "f", error="AudioError: silent"),
    }
    got = collect_turn_scores([s], replies, features, ScoreContext())
    assert [(t.turn, t.value, t.error) for t in got] == [
        (1, 200.0, None),
        (2, None, "features: AudioError: silent"),
        (3, None, "respond: CUDA out of memory"),
    ]
    assert got[0].flags == ("f0_octave_suspect",)  # only the flags that concern pitch
    assert collect_turn_scores([s], {}, {}, ScoreContext())[0].error.startswith(
        "respond: no record"
    )
    assert collect_turn_scores([s], replies, {}, ScoreContext())[0].error.startswith(
        "features: not computed"
    )
    assert (
        collect_turn_scores([s], replies, features, ScoreContext.of(pitch_stat="mean"))[0].value
        == 190.0
    )


def test_speed_source_flags_every_turn_of_the_sample():
    s = sample("v", "speed")
    replies = {("v", k): ok_reply("v", k) for k in (1, 2, 3)}
    features = {
        ("v", k): feat(
            "v", k, spm=200.0 + k, text_spm=180.0 + k, flags=["asr_repetition"] if k == 2 else []
        )
        for k in (1, 2, 3)
    }
    got = collect_turn_scores([s], replies, features, ScoreContext())
    assert [t.value for t in got] == [181.0, 182.0, 183.0]
    assert all(t.flags == ("speed_from_text",) for t in got)
    asr = collect_turn_scores([s], replies, features, ScoreContext.of(speed_source="asr"))
    # an explicit asr source never switches estimator: the unfaithful turn is unscored instead
    assert [t.value for t in asr] == [201.0, None, 203.0] and all(t.flags == () for t in asr)
    assert asr[1].error.startswith("unscored: doubtful transcript")


def test_emotion_is_the_prosodic_index_against_turn_1():
    s = sample("e", "emotion", emotion="sad")
    replies = {("e", k): ok_reply("e", k) for k in (1, 2, 3)}
    base = {
        "f0_mean_agreed": 200.0,
        "f0_std_st": 2.0,
        "rms_gated_dbfs": -20.0,
        "nuclei_spm": 240.0,
    }
    louder = {
        **base,
        "rms_gated_dbfs": -16.0,
    }  # +4 dB: index (0 + 0 + 4 + 0) / 4 = 1, sign - for sad
    features = {
        ("e", 1): feat("e", 1, **base),
        ("e", 2): feat("e", 2, **louder),
        ("e", 3): feat("e", 3, ["f0_extractors_disagree"], **base),
    }
    got = collect_turn_scores([s], replies, features, ScoreContext())
    assert [t.value for t in got[:2]] == pytest.approx([0.0, -1.0]) and got[0].group == "sad"
    # trackers that disagree leave the pitch term, so the whole index, unscored
    assert got[2].value is None and got[2].error.startswith("unscored: the three F0 trackers")
    no_base = collect_turn_scores([s], replies, {("e", 2): features[("e", 2)]}, ScoreContext())
    assert no_base[1].error == "prosodic: turn 1 (the baseline) has no features"


def test_an_upstream_error_is_cut_to_its_first_line_of_300_characters():
    s = sample("x", "volume")
    long = "E" * 400 + "\nsecond line"
    got = collect_turn_scores(
        [s], {("x", 1): RespondRecord("x", 1, "error", "f", error=long)}, {}, ScoreContext()
    )
    assert got[0].error == "respond: " + "E" * 300


def test_the_report_says_the_nuclei_rate_is_not_the_papers_speed_score() -> None:
    from stylebench.metrics.dims.base import dimension

    speed = dimension("speed")
    from stylebench.scoring.cells import TurnScore

    turns = [TurnScore(s, "speed", "intensify", "en", 1, 100.0) for s in ("a", "b")]
    (note,) = speed.run_notes(ScoreContext.of(speed_source="nuclei"), turns)
    assert "NOT the paper's syllable rate" in note and "2 samples" in note
    note, routes = speed.run_notes(ScoreContext.of(speed_source="asr"), turns[:1])
    assert "NOT" not in note and "1 samples" in note
    # how many turn pairs were measured over the same words and how many over other words
    assert routes.startswith("speed routes: 0 turn pairs say the same words")
    assert speed.run_notes(ScoreContext(), []) == []
