"""Spell out digits in English text the way they are usually read aloud, for syllable counting."""

from __future__ import annotations

import re

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**9, "billion"), (10**6, "million"), (1000, "thousand"))
_ORDINAL_IRREGULAR = {
    "one": "first",
    "two": "second",
    "three": "third",
    "five": "fifth",
    "eight": "eighth",
    "nine": "ninth",
    "twelve": "twelfth",
}
_NUMBER = re.compile(
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:(?P<time>:\d{2})|(?P<dec>\.\d+))?(?P<ord>st|nd|rd|th)?"
    r"(?P<pct>\s*%)?",
    re.IGNORECASE,
)


def int_words(n: int) -> list[str]:
    """Cardinal words for a non-negative integer ("121" -> one hundred twenty one)."""
    if n < 0:
        raise ValueError(f"int_words needs n >= 0, got {n}")
    if n < 20:
        return [_ONES[n]]
    if n < 100:
        return [_TENS[n // 10]] + ([_ONES[n % 10]] if n % 10 else [])
    if n < 1000:
        return [_ONES[n // 100], "hundred"] + (int_words(n % 100) if n % 100 else [])
    if n >= 10**12:  # read very long numbers digit by digit
        return [_ONES[int(d)] for d in str(n)]
    value, name = next((v, s) for v, s in _SCALES if n >= v)
    rest = int_words(n % value) if n % value else []
    return int_words(n // value) + [name] + rest


def _year_words(n: int) -> list[str]:
    """Years 1100-1999 and 2010-2099 read as two pairs: 1990 -> nineteen ninety, 1905 -> oh five."""
    hi, lo = divmod(n, 100)
    if lo == 0:
        return int_words(hi) + ["hundred"]
    return int_words(hi) + (["oh"] if lo < 10 else []) + int_words(lo)


def _ordinal(words: list[str]) -> list[str]:
    last = words[-1]
    if last in _ORDINAL_IRREGULAR:
        last = _ORDINAL_IRREGULAR[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return words[:-1] + [last]


def _spell(match: re.Match[str]) -> str:
    raw_int = match.group("int")
    n = int(raw_int.replace(",", ""))
    if match.group("time"):
        minutes = int(match.group("time")[1:])
        words = int_words(n) + (["o'clock"] if minutes == 0 else _minute_words(minutes))
    elif match.group("dec"):
        words = int_words(n) + ["point"] + [_ONES[int(d)] for d in match.group("dec")[1:]]
    elif match.group("ord"):
        words = _ordinal(int_words(n))
    elif len(raw_int) == 4 and (1100 <= n <= 1999 or 2010 <= n <= 2099):
        words = _year_words(n)
    else:
        words = int_words(n)
    if match.group("pct"):
        words.append("percent")
    return f" {' '.join(words)} "


def _minute_words(minutes: int) -> list[str]:
    return (["oh"] if minutes < 10 else []) + int_words(minutes)


def spell_numbers(text: str) -> str:
    """Replace digit strings with English words.

    Covers integers (with thousands commas), decimals ("3.5" -> three point five), clock times
    ("9:30" -> nine thirty, "9:00" -> nine o'clock), ordinals ("21st"), percentages, and years
    read in pairs (1100-1999, 2010-2099). Other four-digit numbers are read as cardinals.
    """
    return _NUMBER.sub(_spell, text)
