"""Judge construction, the gate's definitions and notes, and the gate's calibration model: the
parts of the relevance judge that need no run."""

from __future__ import annotations

import re

import pytest

from stylebench.config import make_config
from stylebench.records import DecodeConfig
from stylebench.scoring.relevance import eligible, mrd_exclusions, relevance_score
from stylebench.stages.gate import make_judge


def test_relevance_score_and_gate_definitions():
    labels = {
        "a": "relevant",
        "b": "irrelevant",
        "c": "relevant",
        "d": "unparseable",
        "e": "error",
        "f": None,
    }
    s = relevance_score("mrd", labels, n_boot=200)
    assert s.rate == pytest.approx(200 / 3) and (s.n, s.n_judged, s.n_relevant) == (6, 3, 2)
    assert (s.n_unparseable, s.n_error, s.n_missing) == (1, 1, 1)
    assert 0.0 <= s.ci[0] <= s.rate <= s.ci[1] <= 100.0
    at = relevance_score(
        "mrd",
        {"a": "relevant", "b": "irrelevant", "c": "irrelevant", "d": "irrelevant", "e": "relevant"},
    )
    assert at.rate == 40.0 and eligible(at, 40.0) is False  # at the threshold: not eligible
    assert eligible(at, 39.99) is True
    assert eligible(relevance_score("mrd", {"a": "unparseable"}), 40.0) is None
    assert mrd_exclusions(labels) == ["b", "d", "e", "f"]


def test_make_judge_options():
    with pytest.raises(ValueError, match="uses no prompt"):
        make_judge(make_config(judge="offline", judge_prompt="/tmp").judge)
    with pytest.raises(ValueError, match="needs a model"):
        make_judge(make_config(judge="openai").judge)
    with pytest.raises(ValueError, match="takes no --judge-url"):
        make_judge(
            make_config(judge="transformers", judge_model="m", judge_url="http://x/v1").judge
        )
    with pytest.raises(KeyError, match="did you mean"):
        make_judge(make_config(judge="opena1").judge)
    assert make_judge(make_config(judge="none").judge) is None
    j = make_judge(
        make_config(
            judge="openai",
            judge_model="m",
            judge_url="http://h:1/v1",
            judge_args={"concurrency": "2", "timeout_s": "5"},
        ).judge
    )
    assert (j.concurrency, j.timeout_s, j.url) == (2, 5.0, "http://h:1/v1")
    with pytest.raises(ValueError, match="mrd-threshold"):
        make_config(mrd_threshold=140)


def test_a_judge_is_built_once_per_process_and_settings():
    cfg = make_config(judge="openai", judge_model="m", judge_url="http://h:1/v1").judge
    first = make_judge(cfg)
    assert (
        make_judge(make_config(judge="openai", judge_model="m", judge_url="http://h:1/v1").judge)
        is first
    )
    other = make_judge(
        make_config(judge="openai", judge_model="m", judge_url="http://h:2/v1").judge
    )
    assert other is not first and other.url == "http://h:2/v1"
    args = make_judge(
        make_config(
            judge="openai",
            judge_model="m",
            judge_url="http://h:1/v1",
            judge_args={"timeout_s": "5"},
        ).judge
    )
    assert args is not first and args.timeout_s == 5.0


def test_the_paper_judge_model_still_gets_a_note_that_the_prompts_are_ours():
    from stylebench.stages.gate import approximation_note, is_approximation

    desc = {"backend": "openai", "model": "Qwen/Qwen3-4B-Instruct-2507"}
    note = approximation_note(desc, "openai")
    assert note and "stylebench's own prompts" in note and not is_approximation(desc, "openai")
    other = approximation_note({"model": "llama"}, "openai")
    assert "approximation of the paper's judge" in other and is_approximation(
        {"model": "llama"}, "openai"
    )


def test_shuffled_model_swaps_content_and_keeps_the_steps(tmp_path, monkeypatch):
    from stylebench.model_wrappers.base import Script
    from stylebench.model_wrappers.embedded.reference import ReferenceModel
    from stylebench.model_wrappers.embedded.shuffled import ShuffledModel, other_contents
    from stylebench.model_wrappers.embedded.tts import step_style
    from stylebench.records import Turn

    monkeypatch.setenv("STYLEBENCH_SCRATCH", str(tmp_path))
    content = "Water boils at one hundred degrees Celsius at sea level."
    user = Turn("user", "Say it again, sadder.", None, None)
    history: list = []
    for k in range(3):
        script = Script(content, "emotion", "intensify", "en", "sad", k + 1)
        ref = ReferenceModel().respond_scripted(history, user, DecodeConfig(), script)
        shf = ShuffledModel().respond_scripted(history, user, DecodeConfig(), script)
        assert (
            ref.raw["style"]
            == shf.raw["style"]
            == step_style("emotion", "intensify", k, emotion="sad").shown()
            == {  # a reply's raw style shows the three synthesiser knobs
                n: v
                for n, v in vars(step_style("emotion", "intensify", k, emotion="sad")).items()
                if n != "extra"
            }
        )
        assert (shf.text == content) is (k == 0) and shf.raw["shuffled"] is (k > 0)
        history += [user, ref]
    from stylebench.dialogues.builder import load_contents

    content = load_contents("zh")[0].content
    others = other_contents(content, "zh", 0)
    assert content not in others and others == other_contents(content, "zh", 0)
    assert len(set(others[1:3])) == 2 and all(re.search("[\u4e00-\u9fff]", o) for o in others)


def test_a_step_that_needs_a_judge_says_so_in_one_line_with_judge_none() -> None:
    from stylebench.config import JudgeConfig
    from stylebench.errors import UserError
    from stylebench.stages.gate import required_judge

    with pytest.raises(UserError, match="--judge none"):
        required_judge(JudgeConfig(judge="none"))
