"""Label-leakage check for emotion contents: no content may name an emotion.

An emotion sample's content must imply its emotion through the situation it describes ("the vet
said the tumour was benign"), never by naming it ("I am so happy"): a model that hears the label
can copy it instead of expressing it. The lexicon (``pools/leakage_lexicon.json``) lists, per
language, emotion words and their forms for the six emotions, general words (emotion, feel,
情绪, 心情) and displays of emotion (cry, laugh, 哭, 尖叫).

Definitions:

- English: the text is lower-cased and split into letter runs (``[a-z]+``); a hit is a run equal
  to a listed form. Hyphenated compounds are also checked joined ("heart-broken" ->
  "heartbroken"). Whole-word matching keeps "glade" or "sadder" apart from "glad" unless the
  form itself is listed.
- Chinese: substring matching, since Chinese has no spaces; innocent compounds that contain a
  listed single character (恐怕 "probably" contains 怕 "fear") are masked first (``zh_allow``).
  Speed words such as 快 (fast) are not emotion words: only compounds like 快乐 or 愉快 are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

_WORD = re.compile(r"[a-z]+")
_HYPHENATED = re.compile(r"[a-z]+(?:-[a-z]+)+")


@dataclass(frozen=True)
class Leak:
    """One emotion word found in a text: the word, its lexicon category, and where it starts."""

    word: str
    category: str
    start: int


@lru_cache(maxsize=1)
def lexicon() -> dict[str, Any]:
    """The shipped lexicon: ``{"en": {category: [forms]}, "zh": {...}, "zh_allow": [...]}``."""
    path = resources.files("stylebench.dialogues").joinpath("pools", "leakage_lexicon.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    for lang in ("en", "zh"):
        if not isinstance(data.get(lang), dict) or not data[lang]:
            raise ValueError(f"leakage_lexicon.json has no {lang!r} categories")
    return data


@lru_cache(maxsize=2)
def _index(lang: str) -> dict[str, str]:
    """form -> category for ``lang`` (English forms lower-cased)."""
    out: dict[str, str] = {}
    for category, forms in lexicon()[lang].items():
        for form in forms:
            out[form.lower() if lang == "en" else form] = category
    return out


def find_leaks(text: str, lang: str) -> list[Leak]:
    """Every emotion word of the lexicon that ``text`` contains, in order of position.

    Raises:
        ValueError: ``lang`` is not ``"en"`` or ``"zh"``.
    """
    if lang == "en":
        return _find_en(text)
    if lang == "zh":
        return _find_zh(text)
    raise ValueError(f"leakage check supports en and zh, got {lang!r}")


def _find_en(text: str) -> list[Leak]:
    index = _index("en")
    low = text.lower()
    leaks = [
        Leak(m.group(0), index[m.group(0)], m.start())
        for m in _WORD.finditer(low)
        if m.group(0) in index
    ]
    for m in _HYPHENATED.finditer(low):
        joined = m.group(0).replace("-", "")
        if joined in index:
            leaks.append(Leak(joined, index[joined], m.start()))
    return sorted(leaks, key=lambda leak: leak.start)


def _find_zh(text: str) -> list[Leak]:
    index = _index("zh")
    masked = text
    for allowed in lexicon().get("zh_allow", []):
        masked = masked.replace(allowed, "\0" * len(allowed))  # same length: positions hold
    leaks: list[Leak] = []
    covered: set[int] = set()
    # longest forms first, so 快乐 is reported as 快乐 and its characters are not re-reported
    for form in sorted(index, key=len, reverse=True):
        start = masked.find(form)
        while start != -1:
            span = set(range(start, start + len(form)))
            if not span & covered:
                leaks.append(Leak(form, index[form], start))
                covered |= span
            start = masked.find(form, start + 1)
    return sorted(leaks, key=lambda leak: leak.start)


def check_content(item_id: str, text: str, lang: str) -> None:
    """Raise when ``text`` names an emotion.

    Raises:
        ValueError: naming the item, every emotion word found and its category, so the pool
            author can rewrite the item.
    """
    leaks = find_leaks(text, lang)
    if leaks:
        found = ", ".join(f"{leak.word!r} ({leak.category})" for leak in leaks)
        raise ValueError(
            f"emotion item {item_id}: the text names an emotion ({found}); rewrite it so the "
            "situation implies the emotion without naming it (label leakage)"
        )
