"""``lexicon``: an offline caption judge from ordinal words, in English and Mandarin.

Each caption gets an ordinal *level* for the instructed dimension, then the two levels are
compared: after > before is ``increased``, after < before ``decreased``, equal ``same``, and a
caption that says nothing about the dimension (or contradicts itself) makes ``cannot_tell``.

How a level is read, clause by clause (clauses split at punctuation and at and/but/while, 和/但):

- a *term* is a word with a direction: dimension words ("louder", "slower", "high-pitched",
  "大声", "缓慢") count wherever they stand; generic words ("higher", "lower", "more", "高",
  "低", "大", "小") count only in a clause naming exactly one dimension ("pitch", "pace", "音量");
- "same" words ("about the same", "unchanged", "as usual", "moderate", "差不多", "不变", "如常")
  in such a clause give level 0;
- a term's level is its sign times a degree: 1 for downtoners and hedges ("slightly", "a bit",
  "somewhat", "perhaps", "稍", "略", "有点"), 2 bare or "clearly"/"more"/"更", 3 for "much",
  "considerably", "很", "得多", 4 for "very much", "extremely", "非常", "极其";
- negation ("not", "no", "never", "n't", "neither"/"nor", "不", "没有", "并不") right before a
  term makes it 0 ("not fast" is neither fast nor slow); "less" before a term flips it at degree 1;
- the caption's level is the mean of its terms; terms of both signs make it ``None`` (conflict).

This is a reading of plain descriptions, not of every phrasing: the LLM judge (``openai``) is the
alternative for free-form captions. Ordinal words per dimension are the tables below for the
paper's four; any other dimension brings its own (:attr:`Dimension.caption_lexicon`, read from
the registry when a caption is first judged), and a word may belong to one dimension only.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from stylebench.metrics.captions.base import CaptionVerdict, CompareRequest

VERSION = "2"  # 2: a dimension's own words (Dimension.caption_lexicon) join the tables
EN_NOUNS = {
    "pitch": {"pitch", "pitched", "intonation", "register"},
    "volume": {"volume", "loudness", "level", "projection"},
    "speed": {"pace", "rate", "tempo", "speed", "pacing"},
    "emotion": {"emotion", "emotional", "feeling", "affect", "intensity"},
}
EN_TERMS = {  # word -> (dim, sign)
    **{w: ("pitch", 1) for w in ("high-pitched", "higher-pitched", "shrill", "squeaky")},
    **{w: ("pitch", -1) for w in ("low-pitched", "lower-pitched", "deeper", "deep")},
    **{w: ("volume", 1) for w in ("louder", "loud", "loudly", "booming", "shouting", "shouted")},
    **{
        w: ("volume", -1)
        for w in (
            "quieter",
            "quiet",
            "quietly",
            "softer",
            "soft",
            "softly",
            "hushed",
            "whispered",
            "whispering",
            "fainter",
        )
    },
    **{
        w: ("speed", 1)
        for w in (
            "faster",
            "fast",
            "quicker",
            "quick",
            "quickly",
            "rapid",
            "rapidly",
            "hurried",
            "brisk",
            "brisker",
        )
    },
    **{
        w: ("speed", -1)
        for w in ("slower", "slow", "slowly", "leisurely", "unhurried", "sluggish", "drawn-out")
    },
    **{
        w: ("emotion", 1)
        for w in (
            "intense",
            "intensely",
            "stronger",
            "excited",
            "agitated",
            "heightened",
            "passionate",
        )
    },
    **{
        w: ("emotion", -1)
        for w in ("calmer", "calm", "milder", "mild", "subdued", "flat", "weaker", "restrained")
    },
}
EN_GENERIC = {
    **dict.fromkeys(
        ("higher", "high", "raised", "rising", "increased", "greater", "more", "up"), 1
    ),
    **dict.fromkeys(
        ("lower", "low", "lowered", "falling", "dropped", "decreased", "reduced", "less", "down"),
        -1,
    ),
}
EN_SAME = {
    "same",
    "unchanged",
    "similar",
    "steady",
    "usual",
    "constant",
    "stable",
    "moderate",
    "medium",
    "average",
    "normal",
}
EN_DEGREE = {
    **dict.fromkeys(
        (
            "slightly",
            "somewhat",
            "marginally",
            "mildly",
            "bit",
            "little",
            "touch",
            "perhaps",
            "possibly",
            "maybe",
            "seems",
            "might",
            "fairly",
        ),
        1,
    ),
    **dict.fromkeys(("clearly", "noticeably", "distinctly", "markedly", "more", "even"), 2),
    **dict.fromkeys(
        (
            "much",
            "far",
            "considerably",
            "significantly",
            "substantially",
            "quite",
            "really",
            "strongly",
            "very",
            "lot",
        ),
        3,
    ),
    **dict.fromkeys(("extremely", "dramatically", "hugely", "enormously", "incredibly"), 4),
}
EN_NEG = {"not", "no", "never", "neither", "nor", "without", "hardly", "barely"}
ZH_NOUNS = {
    "pitch": ("音高", "音调", "声调", "调子"),
    "volume": ("音量", "响度"),
    "speed": ("语速", "速度", "节奏"),
    "emotion": ("情绪", "情感", "感情"),
}
ZH_TERMS = {
    **{w: ("pitch", 1) for w in ("尖细", "高亢")},
    **{w: ("pitch", -1) for w in ("低沉", "深沉")},
    **{w: ("volume", 1) for w in ("大声", "响亮", "洪亮", "响")},
    **{w: ("volume", -1) for w in ("小声", "轻声", "轻柔", "轻")},
    **{w: ("speed", 1) for w in ("急促", "加快", "快")},
    **{w: ("speed", -1) for w in ("缓慢", "放慢", "慢")},
    **{w: ("emotion", 1) for w in ("强烈", "激动", "浓烈")},
    **{w: ("emotion", -1) for w in ("平静", "平淡", "淡")},
}
ZH_GENERIC = {
    **dict.fromkeys(("升高", "提高", "上升", "高", "大", "强", "增加"), 1),
    **dict.fromkeys(("降低", "下降", "低", "小", "弱", "减少"), -1),
}
ZH_SAME = ("差不多", "不变", "一样", "相同", "如常", "保持", "平常", "正常", "适中", "中等")
ZH_DEGREE = {
    **dict.fromkeys(
        ("稍微", "稍", "略微", "略", "有点", "有些", "一点", "些许", "似乎", "可能"), 1
    ),
    **dict.fromkeys(("明显", "更加", "更", "较", "比较"), 2),
    **dict.fromkeys(("很", "十分", "特别", "大大"), 3),
    **dict.fromkeys(("非常", "极其", "极为", "极"), 4),
}
ZH_AFTER = {"得多": 3, "很多": 3, "多了": 3, "一些": 1, "一点": 1, "了一点": 1, "极了": 4}
ZH_NEG = ("并不", "没有", "不太", "不", "没", "未")


@functools.cache
def _tables() -> tuple[dict, dict, dict, dict, re.Pattern[str]]:
    """The noun and term tables with every registered dimension's own words added
    (``(en_nouns, en_terms, zh_nouns, zh_terms, zh_regex)``).

    Raises:
        ValueError: a dimension's word is already another dimension's.
    """
    from stylebench.metrics.dims.base import all_dims

    en_nouns, en_terms = {d: set(ns) for d, ns in EN_NOUNS.items()}, dict(EN_TERMS)
    zh_nouns, zh_terms = {d: tuple(ns) for d, ns in ZH_NOUNS.items()}, dict(ZH_TERMS)
    for dim in all_dims():
        own = dim.caption_lexicon
        if not own:
            continue
        taken = {w for ns in en_nouns.values() for w in ns} | set(en_terms)
        taken |= {w for ns in zh_nouns.values() for w in ns} | set(zh_terms)
        words = [*own.get("en_nouns", ()), *own.get("zh_nouns", ())]
        words += [*own.get("en_terms", {}), *own.get("zh_terms", {})]
        if clash := sorted(taken & set(words)):
            raise ValueError(f"caption words of {dim.name} already belong to another: {clash}")
        en_nouns[dim.name] = set(own.get("en_nouns", ()))
        zh_nouns[dim.name] = tuple(own.get("zh_nouns", ()))
        en_terms.update({w: (dim.name, sign) for w, sign in own.get("en_terms", {}).items()})
        zh_terms.update({w: (dim.name, sign) for w, sign in own.get("zh_terms", {}).items()})
    zh_words = sorted({*zh_terms, *ZH_GENERIC, *ZH_SAME}, key=len, reverse=True)
    return en_nouns, en_terms, zh_nouns, zh_terms, re.compile("|".join(map(re.escape, zh_words)))


_CLAUSE = re.compile(r"[.;:!?,\n，。；：！？、]|\b(?:and|but|while|whereas|though)\b|和|但|而且|而")
_WORD = re.compile(r"[a-z]+(?:[-'][a-z]+)*")


def _en_terms(clause: str, dim: str) -> list[float]:
    en_nouns, en_terms, *_ = _tables()
    words = _WORD.findall(clause.lower())
    nouns = {d for d, ns in en_nouns.items() if ns & set(words)}
    out = []
    for i, w in enumerate(words):
        before = words[max(0, i - 3) : i]
        if w in en_terms:
            d, sign = en_terms[w]
        elif w in EN_GENERIC and nouns == {dim}:
            d, sign = dim, EN_GENERIC[w]
            if (
                w in ("more", "less")
                and i + 1 < len(words)
                and (words[i + 1] in en_terms or words[i + 1] in EN_GENERIC)
            ):
                continue  # a degree word of the next term, not a term of its own
        elif w in EN_SAME and nouns == {dim}:
            out.append(0.0)
            continue
        else:
            continue
        if d != dim:
            continue
        if any(b in EN_NEG or b.endswith("n't") for b in before):
            out.append(0.0)
        elif before and before[-1] == "less":
            out.append(-sign * 1.0)
        else:
            deg = [EN_DEGREE[b] for b in before if b in EN_DEGREE]
            deg = [4] if before[-2:] == ["very", "much"] else deg
            out.append(sign * float(deg[-1] if deg else 2))
    return out


def _zh_terms(clause: str, dim: str) -> list[float]:
    _, _, zh_nouns, zh_terms, zh_re = _tables()
    nouns = {d for d, ns in zh_nouns.items() if any(n in clause for n in ns)}
    for n in (n for ns in zh_nouns.values() for n in ns):  # 音高 names pitch, its 高 is no term
        clause = clause.replace(n, "\0" * len(n))
    out = []
    for m in zh_re.finditer(clause):
        w = m.group()
        if w in ZH_SAME:
            if nouns == {dim}:
                out.append(0.0)
            continue
        if w in zh_terms:
            d, sign = zh_terms[w]
        elif nouns == {dim}:
            d, sign = dim, ZH_GENERIC[w]
        else:
            continue
        if d != dim:
            continue
        before, after = clause[max(0, m.start() - 3) : m.start()], clause[m.end() : m.end() + 3]
        if any(before.endswith(n) or before[:-1].endswith(n) for n in ZH_NEG):
            out.append(0.0)
            continue
        deg = next((v for k, v in ZH_AFTER.items() if after.startswith(k)), None)
        deg = deg or next((v for k, v in ZH_DEGREE.items() if k in before), 2)
        out.append(sign * float(deg))
    return out


def caption_level(text: str, dim: str) -> float | None:
    """The caption's ordinal level for ``dim`` (-4..4), or ``None`` (silent or contradictory)."""
    terms: list[float] = []
    for clause in _CLAUSE.split(text):
        if clause and clause.strip():
            terms += _zh_terms(clause, dim) + _en_terms(clause, dim)
    if not terms or (max(terms) > 0 and min(terms) < 0):
        return None
    return sum(terms) / len(terms)


def compare_levels(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "cannot_tell"
    return "increased" if after > before else "decreased" if after < before else "same"


class LexiconJudge:
    """Offline caption judge (see the module docstring for how levels are read)."""

    name = "lexicon"

    def compare(self, req: CompareRequest) -> CaptionVerdict:
        a, b = caption_level(req.before, req.dim), caption_level(req.after, req.dim)
        why = "; ".join(
            f"{n}: {'no ' + req.dim + ' words (or conflicting ones)' if v is None else f'level {v:g}'}"
            for n, v in (("before", a), ("after", b))
        )
        return CaptionVerdict(compare_levels(a, b), (a, b), why)

    def describe(self) -> dict[str, Any]:
        return {"backend": self.name, "model": f"ordinal-lexicon-v{VERSION}", "langs": ["en", "zh"]}
