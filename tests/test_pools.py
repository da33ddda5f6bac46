"""Sanity checks for the neutral content pools and the style-request phrasings.

Files are located relative to this test file so the suite works from any working directory.
"""

import itertools
import json
import re
from pathlib import Path

import pytest

from stylebench.records import ACOUSTIC_DIMS as DIMS
from stylebench.records import DIMS as ALL_DIMS
from stylebench.records import DIRECTIONS, LANGS

POOLS = Path(__file__).resolve().parents[1] / "dialogues" / "pools"
TURNS = ("2", "3")
MIN_ITEMS = 100
MIN_PHRASINGS = 10

HAN = re.compile(r"[\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z\uff21-\uff3a\uff41-\uff5a]")
DIGIT = re.compile(r"[0-9\uff10-\uff19]")
ZH_CONTENT_PUNCT = set("，。、")

# Emotion vocabulary that must never appear in neutral contents or phrasings.
EN_EMOTION = re.compile(
    r"\b(happy|happi\w*|unhappy|sad|sadly|sadness|angry|anger|angrily|afraid|"
    r"love\w*|hate\w*|hatred|excit\w*|terribl\w*|wonderful\w*|scared|scary|"
    r"upset|glad|joy\w*|furious|anxi\w*|worri\w*|worry|disgust\w*|cheerful\w*|"
    r"depress\w*|annoy\w*|fright\w*|delight\w*|miserable|thrill\w*|awful|"
    r"horribl\w*|fear\w*|cry|crying)\b",
    re.IGNORECASE,
)
ZH_EMOTION = (
    "开心",
    "高兴",
    "难过",
    "伤心",
    "生气",
    "愤怒",
    "害怕",
    "恐惧",
    "惊讶",
    "厌恶",
    "喜欢",
    "讨厌",
    "激动",
    "糟糕",
    "太好了",
    "快乐",
    "悲伤",
    "担心",
    "兴奋",
    "着急",
    "烦躁",
    "烦恼",
    "痛苦",
    "失望",
    "委屈",
    "郁闷",
    "愉快",
)

# Keywords that name a change along each style dimension.  A phrasing for one
# dimension must not contain a keyword of another dimension.
EN_DIM_KEYWORDS = {
    "speed": re.compile(r"\b(fast\w*|quick\w*|slow\w*|speed\w*|pace|tempo|hurry|rush\w*)\b", re.I),
    "volume": re.compile(
        r"\b(loud\w*|quiet\w*|soft\w*|volume|whisper\w*|shout\w*|speak up)\b", re.I
    ),
    "pitch": re.compile(
        r"\b(pitch\w*|high\w*|deep\w*|low|lower\w*|lowest|bass|squeak\w*|tone|"
        r"register)\b",
        re.I,
    ),
}
# Chinese: 快/慢 are single characters that also occur in unrelated words
# (愉快, 凉快, 傲慢, ...), so those compounds are removed before the check.
ZH_SPEED_EXEMPT = re.compile(r"愉快|凉快|爽快|痛快|快乐|快递|傲慢|怠慢")
ZH_DIM_KEYWORDS = {
    "speed": re.compile(r"语速|速度|提速|节奏|快|慢"),
    "volume": re.compile(
        r"大声|小声|音量|响亮|轻声|轻柔|悄悄|声音(?:再|太|有点|稍微|还不够)?[大小轻响]"
    ),
    "pitch": re.compile(
        r"音调|声调|音高|高音|低音|低沉|尖细|浑厚|调高|调低|调子|提高|升高|降低|"
        r"抬高|压低|嗓音(?:再|有点|还不够)?[高低尖沉]"
    ),
}

EN_BACKREF = re.compile(r"\b(again|repeat\w*|once more|one more time)\b", re.I)
ZH_BACKREF = ("再", "重复", "一遍", "一次", "刚才", "刚刚")


def load_pool(lang):
    path = POOLS / f"neutral_{lang}.jsonl"
    items = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            assert line.strip(), f"{path.name}:{lineno} is blank"
            obj = json.loads(line)
            assert isinstance(obj, dict), f"{path.name}:{lineno} is not an object"
            items.append(obj)
    return items


def load_phrasings(lang):
    with (POOLS / f"phrasings_{lang}.json").open(encoding="utf-8") as fh:
        return json.load(fh)


def all_phrasings(lang):
    data = load_phrasings(lang)
    for dim in DIMS:
        for direction in DIRECTIONS:
            for turn in TURNS:
                for text in data[dim][direction][turn]:
                    yield dim, direction, turn, text


def zh_speed_text(text):
    return ZH_SPEED_EXEMPT.sub("", text)


def en_words(text):
    return re.findall(r"[a-z]+", text.lower())


def jaccard(a, b):
    return len(a & b) / len(a | b)


# --------------------------------------------------------------------------
# neutral pools
# --------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_pool_schema_and_ids(lang):
    items = load_pool(lang)
    id_re = re.compile(rf"^{lang}-\d{{3}}$")
    ids = []
    for obj in items:
        assert set(obj) == {"id", "request", "content"}, obj
        for key in ("id", "request", "content"):
            assert isinstance(obj[key], str) and obj[key].strip(), obj
            assert obj[key] == obj[key].strip(), obj
        assert id_re.match(obj["id"]), obj["id"]
        ids.append(obj["id"])
    assert len(ids) == len(set(ids)), "duplicate ids"
    # ids run consecutively from 001
    assert ids == [f"{lang}-{i:03d}" for i in range(1, len(ids) + 1)]


@pytest.mark.parametrize("lang", LANGS)
def test_pool_size(lang):
    assert len(load_pool(lang)) >= MIN_ITEMS


@pytest.mark.parametrize("lang", LANGS)
def test_pool_no_repeats(lang):
    items = load_pool(lang)
    contents = [o["content"] for o in items]
    requests = [o["request"] for o in items]
    assert len(contents) == len(set(contents)), "repeated content"
    assert len(requests) == len(set(requests)), "repeated request"


def test_en_pool_content_rules():
    for obj in load_pool("en"):
        content, request = obj["content"], obj["request"]
        for text in (content, request):
            assert text.isascii(), obj["id"]
            assert not DIGIT.search(text), obj["id"]
        n = len(content.split())
        assert 14 <= n <= 28, f"{obj['id']}: {n} words"
        # plain declarative prose: letters, spaces, commas and full stops only
        assert re.fullmatch(r"[A-Za-z ,.]+", content), obj["id"]
        assert content.endswith("."), obj["id"]
        assert not re.search(r"\b[A-Z]{2,}\b", content), f"{obj['id']}: abbreviation"
        assert request.endswith("?"), obj["id"]


def test_zh_pool_content_rules():
    for obj in load_pool("zh"):
        content, request = obj["content"], obj["request"]
        for text in (content, request):
            assert not DIGIT.search(text), obj["id"]
            assert not LATIN.search(text), obj["id"]
        n = len(HAN.findall(content))
        assert 18 <= n <= 40, f"{obj['id']}: {n} Han characters"
        others = {ch for ch in content if not HAN.match(ch)}
        assert others <= ZH_CONTENT_PUNCT, f"{obj['id']}: {others}"
        assert content.endswith("。"), obj["id"]
        assert HAN.search(request), obj["id"]


def test_en_pool_no_near_duplicates():
    items = load_pool("en")
    sets = [(o["id"], set(en_words(o["content"]))) for o in items]
    for (ia, a), (ib, b) in itertools.combinations(sets, 2):
        assert jaccard(a, b) < 0.5, f"{ia} and {ib} are near-duplicates"


def test_zh_pool_no_near_duplicates():
    items = load_pool("zh")

    def bigrams(text):
        han = "".join(HAN.findall(text))
        return {han[i : i + 2] for i in range(len(han) - 1)}

    sets = [(o["id"], bigrams(o["content"])) for o in items]
    for (ia, a), (ib, b) in itertools.combinations(sets, 2):
        assert jaccard(a, b) < 0.5, f"{ia} and {ib} are near-duplicates"


def test_en_pool_no_emotion_words():
    for obj in load_pool("en"):
        m = EN_EMOTION.search(obj["content"])
        assert m is None, f"{obj['id']}: {m.group(0)!r}"


def test_zh_pool_no_emotion_words():
    for obj in load_pool("zh"):
        for word in ZH_EMOTION:
            assert word not in obj["content"], f"{obj['id']}: {word}"


# --------------------------------------------------------------------------
# phrasings
# --------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_phrasings_structure(lang):
    data = load_phrasings(lang)
    # every dimension but emotion (its phrasings: tests/test_emotion_sets.py) has phrasings
    phrased = {d for d in ALL_DIMS if d != "emotion"}
    assert set(data) - {"emotion"} == phrased
    for dim in phrased:
        assert set(data[dim]) == set(DIRECTIONS), dim
        for direction in DIRECTIONS:
            assert set(data[dim][direction]) == set(TURNS), (dim, direction)
            for turn in TURNS:
                lst = data[dim][direction][turn]
                assert isinstance(lst, list)
                assert all(isinstance(s, str) and s.strip() for s in lst)
                assert len(set(lst)) == len(lst), (dim, direction, turn)
                assert len(set(lst)) >= MIN_PHRASINGS, (dim, direction, turn)


@pytest.mark.parametrize("lang", LANGS)
def test_phrasings_globally_unique(lang):
    texts = [t for *_, t in all_phrasings(lang)]
    assert len(texts) == len(set(texts))


def test_en_phrasings_text_rules():
    for dim, direction, turn, text in all_phrasings("en"):
        key = (dim, direction, turn, text)
        assert text.isascii(), key
        assert not DIGIT.search(text), key
        assert 5 <= len(text.split()) <= 25, key
        assert EN_BACKREF.search(text), f"no reference to previous answer: {key}"
        m = EN_EMOTION.search(text)
        assert m is None, (key, m.group(0))


def test_zh_phrasings_text_rules():
    for dim, direction, turn, text in all_phrasings("zh"):
        key = (dim, direction, turn, text)
        assert not DIGIT.search(text), key
        assert not LATIN.search(text), key
        assert 6 <= len(HAN.findall(text)) <= 30, key
        assert any(m in text for m in ZH_BACKREF), f"no reference to previous answer: {key}"
        for word in ZH_EMOTION:
            assert word not in text, (key, word)


def test_en_phrasings_single_dimension():
    for dim, _direction, _turn, text in all_phrasings("en"):
        for other, pattern in EN_DIM_KEYWORDS.items():
            if other == dim:
                continue
            m = pattern.search(text)
            assert m is None, f"{dim} phrasing mentions {other} ({m.group(0)!r}): {text}"


def test_zh_phrasings_single_dimension():
    for dim, _direction, _turn, text in all_phrasings("zh"):
        for other, pattern in ZH_DIM_KEYWORDS.items():
            if other == dim:
                continue
            probe = zh_speed_text(text) if other == "speed" else text
            m = pattern.search(probe)
            assert m is None, f"{dim} phrasing mentions {other} ({m.group(0)!r}): {text}"


@pytest.mark.parametrize("lang", LANGS)
def test_phrasings_do_not_contain_content(lang):
    contents = [o["content"] for o in load_pool(lang)]
    for *_, text in all_phrasings(lang):
        for content in contents:
            assert content not in text
