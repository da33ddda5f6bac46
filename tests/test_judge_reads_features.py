"""The judge's input choice (``judge_input=auto``) takes each reply's transcript error rate
from its features (``asr_text_er``, the same number) instead of computing it again: a Mandarin
rate costs milliseconds a reply in pinyin, minutes for a paper-size report."""

from __future__ import annotations

import pytest

from stylebench.records import FeatureRecord, RespondRecord, Sample, TranscriptRecord, UserTurn
from stylebench.stages import judge
from stylebench.stages.judge import sample_inputs

TEXTS = {1: "北京是中国的首都。", 2: "北京是中国的首都。", 3: "北京是中国的首都。"}


def _sample() -> Sample:
    turns = tuple(UserTurn(f"q{k}", f"audio/u{k}.wav", 16000, "0" * 64) for k in (1, 2, 3))
    return Sample("s", "v", "speed", "intensify", "zh", "zh-f1", "c", turns)


def _records(heard: dict[int, str]):
    replies = {("s", k): RespondRecord("s", k, "ok", f"r{k}", text=t) for k, t in TEXTS.items()}
    trs = {("s", k): TranscriptRecord("s", k, "ok", f"t{k}", text=t) for k, t in heard.items()}
    return replies, trs


def _features(rates: dict[int, float | None], status: str = "ok"):
    return {
        ("s", k): FeatureRecord(
            "s", k, status, f"f{k}", values={} if er is None else {"asr_text_er": er}
        )
        for k, er in rates.items()
    }


def test_the_rate_the_features_stage_measured_is_the_one_used(monkeypatch):
    replies, heard = _records(TEXTS)  # heard exactly as written

    def computed(*a):
        raise AssertionError("computed again although the features hold it")

    monkeypatch.setattr("stylebench.metrics.fidelity.transcript_error_rate", computed)
    # the features say turn 2 was misheard: that decides (it is their number, not a recomputation)
    got = sample_inputs([_sample()], replies, heard, 0.3, _features({1: 0.0, 2: 0.8, 3: 0.1}))
    assert got["s"] == ("text_fallback", TEXTS)
    # no value in ok features: nothing to compare (NaN), a faithful reading
    got = sample_inputs([_sample()], replies, heard, 0.3, _features({1: None, 2: 0.0, 3: 0.0}))
    assert got["s"][0] == "transcript"


@pytest.mark.parametrize("features", [None, _features({1: 0.0, 2: 0.0, 3: 0.0}, "error")])
def test_without_ok_features_the_rate_is_computed(features):
    replies, heard = _records({**TEXTS, 2: "上海是中国最大的城市。"})
    got = sample_inputs([_sample()], replies, heard, 0.3, features)
    assert got["s"][0] == "text_fallback"  # computed: turn 2 was heard as another sentence
    assert judge.text_error_rate(TEXTS[2], heard[("s", 2)].text, "zh", None) > 0.3
