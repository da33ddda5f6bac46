"""Judge prompts (loading, hashing, user prompts, fencing) and strict verdict parsing."""

from __future__ import annotations

import hashlib
import json
from importlib import resources

import pytest

from stylebench.metrics.judges.base import JudgeRequest
from stylebench.metrics.judges.prompting import (
    fence_data,
    load_prompts,
    parse_prompt,
    parse_verdict,
    render,
)

MRD = JudgeRequest(
    "mrd",
    "zh",
    (
        ("一年有多少天？", "平年三百六十五天。"),
        ("快点说。", "平年三百六十五天。"),
        ("再快点。", "三百六十五天。"),
    ),
)


def test_builtin_prompts_are_versioned_and_hashed():
    ps = load_prompts()
    for kind in ("srd", "mrd"):
        p = ps.for_kind(kind)
        builtin = resources.files("stylebench.metrics.judges").joinpath("prompts", f"{kind}_v1.txt")
        raw = builtin.read_bytes()
        assert p.name == f"{kind}_v1.txt" and p.source == f"builtin:{kind}_v1.txt"
        assert p.sha256 == hashlib.sha256(raw).hexdigest()
        assert p.system and "{{data}}" in p.user
    assert ps.describe()["mrd"]["sha256"] == ps.mrd.sha256
    assert ps.srd.sha256 != ps.mrd.sha256


def test_render_fills_language_and_fence_once():
    msgs = render(load_prompts().mrd, MRD)
    assert [m.role for m in msgs] == ["system", "user"]
    user = msgs[1].content
    begin, data, end = fence_data(MRD)
    assert f"{begin}\n{data}\n{end}" in user and "Mandarin Chinese" in user
    assert "{{" not in user and "{{" not in msgs[0].content
    assert json.loads(data)["turns"][2] == {
        "turn": 3,
        "user": "再快点。",
        "assistant": "三百六十五天。",
    }
    assert begin.split()[-1] == end.split()[-1]  # both markers carry the same key


def test_fence_key_depends_on_the_data():
    a = fence_data(JudgeRequest("srd", "en", (("q", "a"),)))
    b = fence_data(JudgeRequest("srd", "en", (("q", "b"),)))
    assert a[0] != b[0] and a[0] == fence_data(JudgeRequest("srd", "en", (("q", "a"),)))[0]


def test_user_prompt_folder_and_files(tmp_path):
    own = "[user]\nIs it on topic? {{language}}\n{{fence_begin}}\n{{data}}\n{{fence_end}}\nJSON only.\n"
    (tmp_path / "srd.txt").write_text(own, encoding="utf-8")
    (tmp_path / "mrd.txt").write_text(own.replace("on topic", "consistent"), encoding="utf-8")
    ps = load_prompts(tmp_path)
    assert ps.srd.source == str(tmp_path / "srd.txt") and ps.srd.system == ""
    assert ps.srd.sha256 == hashlib.sha256(own.encode()).hexdigest()
    msgs = render(ps.srd, JudgeRequest("srd", "en", (("q", "a"),)))
    assert len(msgs) == 1 and msgs[0].content.startswith("Is it on topic? English\n<<<CONVERSATION")
    only_mrd = load_prompts(mrd=tmp_path / "mrd.txt")
    assert only_mrd.srd.source == "builtin:srd_v1.txt" and "consistent" in only_mrd.mrd.user
    with pytest.raises(FileNotFoundError, match="no such folder"):
        load_prompts(tmp_path / "nope")
    with pytest.raises(
        FileNotFoundError, match=r"judge prompt file \(srd\) .*missing.txt does not exist"
    ):
        load_prompts(srd=tmp_path / "missing.txt")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("Judge this: {{data}}", "once each, in that order"),
        ("{{fence_begin}}\n{{data}}\n{{fence_end}}\n{{data}}", "once each"),
        ("{{fence_end}}\n{{data}}\n{{fence_begin}}", "in that order"),
        ("{{fence_begin}} {{data}} {{fence_end}} {{transcript}}", "unknown placeholders"),
        ("[system]\n{{data}}\n[user]\n{{fence_begin}}{{fence_end}}", "belong in the \\[user\\]"),
        ("[user]\n{{fence_begin}}{{data}}{{fence_end}}\n[user]\nagain", "appears twice"),
    ],
)
def test_malformed_prompts_are_rejected(text, why):
    with pytest.raises(ValueError, match=why):
        parse_prompt(text, "srd", "x.txt", "x.txt")


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ('{"label": "relevant", "reason": "on topic"}', "relevant"),
        ('  {"label":"irrelevant","reason":""}\n', "irrelevant"),
        ('{"reason": "first", "label": "relevant"}', "relevant"),
        ("", "unparseable"),
        ("   \n", "unparseable"),
        ("relevant", "unparseable"),
        ('```json\n{"label": "relevant", "reason": "x"}\n```', "unparseable"),
        ('Sure: {"label": "relevant", "reason": "x"}', "unparseable"),
        ('{"label": "relevant", "reason": "x"} trailing', "unparseable"),
        ('{"label": "Relevant", "reason": "x"}', "unparseable"),
        ('{"label": "maybe", "reason": "x"}', "unparseable"),
        ('{"label": "relevant"}', "unparseable"),
        ('{"label": "relevant", "reason": 3}', "unparseable"),
        ('{"label": "relevant", "reason": "x", "score": 1}', "unparseable"),
        ('{"label": "irrelevant", "label": "relevant", "reason": "x"}', "unparseable"),
        ('["relevant"]', "unparseable"),
        ('{"label": "relevant", "reason": "x"', "unparseable"),
        (None, "unparseable"),
    ],
)
def test_parse_is_strict(reply, label):
    v = parse_verdict(reply)
    assert v.label == label, v
    assert v.raw == (reply or "")
    if label == "unparseable":
        assert v.reason  # says why
