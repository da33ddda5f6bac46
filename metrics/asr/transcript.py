"""Transcript types, the transcriber protocol, and loop/empty/confidence flags of ASR output."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from stylebench.metrics._common import as_wave, resample

SAMPLE_RATE = 16000
LANGS = ("en", "zh")
#: decoding is greedy at temperature 0 only: Whisper's temperature fallback samples, and its
#: sampling is not reproducible (CTranslate2 draws in its worker threads; a seed does not fix it)
TEMPERATURES = (0.0,)
#: the deterministic re-decode of a looping or low-confidence first pass: beam search with an
#: n-gram ban, still at temperature 0
RETRY_BEAM_SIZE = 5
RETRY_NO_REPEAT_NGRAM = 3
COMPRESSION_RATIO_LIMIT = 2.4  # Whisper's own threshold for a looping segment
LOW_LOGPROB = -1.0
LOOP_REPEATS = 3
#: a single token needs one more repeat: "zero zero zero" (a digit string read aloud) and
#: "no, no, no" are speech, and Whisper's one-token loops run far longer
LOOP_REPEATS_UNIGRAM = 4
LOOP_MAX_NGRAM = 16
#: a word Whisper gives a probability below this is a guess (Whisper's word probabilities are the
#: mean token probability of the word)
UNSURE_WORD_P = 0.5
#: the stretch over which :attr:`Transcript.unsure_stretch_share` looks for guesses: a quarter of
#: the word time, and at least this many seconds (a name or a number is a short stretch of
#: guesses in a reply that is otherwise read well; a passage of nonsense words is a long one)
UNSURE_STRETCH_MIN_S = 5.0
UNSURE_STRETCH_SHARE = 0.25


@dataclass(frozen=True)
class Word:
    """One recognised word (a character or short run for Mandarin) with times in file seconds."""

    text: str
    start: float
    end: float


@dataclass(frozen=True)
class Transcript:
    """ASR output for one reply; ``model`` is the name as requested, e.g. ``"base"``."""

    text: str
    lang: str
    words: tuple[Word, ...]
    backend: str
    model: str
    flags: tuple[str, ...]
    #: the language the ASR hears (Whisper's language ID on the first 30 s, whatever language
    #: the transcript was forced into), its probability, and the probability it gives the
    #: declared ``lang``; "" and 0.0 when the backend cannot tell
    spoken_lang: str = ""
    spoken_lang_p: float = 0.0
    declared_lang_p: float = 0.0
    #: how sure the ASR is of its words: the segments' average log-probabilities weighted by
    #: their durations, and the share of word time on words it gives a probability under
    #: :data:`UNSURE_WORD_P` (0.0 when the backend reports none)
    mean_logprob: float = 0.0
    unsure_word_share: float = 0.0
    #: the share of word time on guesses on the stretch of consecutive words where it is highest
    #: (the stretch is :data:`UNSURE_STRETCH_SHARE` of the word time, at least
    #: :data:`UNSURE_STRETCH_MIN_S`; a shorter transcript is one stretch). A guess is an unsure
    #: word, or in English a word no dictionary knows (Whisper spells nonsense words out with
    #: confidence). A passage of nonsense inside a reply that the whole-reply share dilutes.
    unsure_stretch_share: float = 0.0


def unsure_stretch(timed: list[tuple[float, float, bool]]) -> float:
    """The highest share of word time on guessed words over any run of consecutive words whose
    time spans at least a quarter of all word time and :data:`UNSURE_STRETCH_MIN_S` seconds (the
    whole transcript when it is shorter).

    ``timed`` are ``(start, duration, guessed)`` per word, in time order.
    """
    total = sum(d for _, d, _ in timed)
    if total <= 0:
        return 0.0
    need = max(UNSURE_STRETCH_SHARE * total, UNSURE_STRETCH_MIN_S)
    if need >= total:
        return sum(d for _, d, g in timed if g) / total
    best, j, dur, bad = 0.0, 0, 0.0, 0.0
    for i in range(len(timed)):  # two pointers: the shortest run from word i that is long enough
        while j < len(timed) and dur < need:
            dur += timed[j][1]
            bad += timed[j][1] if timed[j][2] else 0.0
            j += 1
        if dur < need:
            break
        best = max(best, bad / dur)
        dur -= timed[i][1]
        bad -= timed[i][1] if timed[i][2] else 0.0
    return best


def guessed(word: str, p: float, lang: str) -> bool:
    """A word the ASR guessed: probability under :data:`UNSURE_WORD_P`, or an English word no
    dictionary knows (:func:`stylebench.metrics.rate.dictionary_word`)."""
    if p < UNSURE_WORD_P:
        return True
    if lang != "en":
        return False
    from stylebench.metrics.rate import dictionary_word

    return not dictionary_word(word)


def with_language(tr: Transcript, probs: Iterable[tuple[str, float]]) -> Transcript:
    """``tr`` with the spoken-language fields filled from a language ID's ``(code, p)`` pairs
    (Whisper's codes: ``en``, ``zh``, ``yue``, ...), rounded so the record is stable."""
    table = {code: float(p) for code, p in probs}
    if not table:
        return tr
    top = max(table, key=lambda c: table[c])
    return replace(
        tr,
        spoken_lang=top,
        spoken_lang_p=round(table[top], 4),
        declared_lang_p=round(table.get(tr.lang, 0.0), 4),
    )


@runtime_checkable
class Transcriber(Protocol):
    """Anything that turns a mono waveform into a :class:`Transcript`."""

    name: str

    def transcribe(self, wave: np.ndarray, sr: int, lang: str) -> Transcript: ...


def _tokens(text: str, lang: str) -> list[str]:
    if lang == "zh":  # characters, punctuation and spaces dropped
        return [c for c in text if c.isalnum()]
    return re.findall(r"[\w']+", text.lower())


def _has_loop(tokens: list[str]) -> bool:
    """True when some n-gram (2 <= n <= 16) occurs ``LOOP_REPEATS`` times back to back, or one
    token ``LOOP_REPEATS_UNIGRAM`` times."""
    size = len(tokens)
    for n in range(1, min(LOOP_MAX_NGRAM, size // LOOP_REPEATS) + 1):
        reps = LOOP_REPEATS_UNIGRAM if n == 1 else LOOP_REPEATS
        for i in range(size - reps * n + 1):
            gram = tokens[i : i + n]
            if all(tokens[i + k * n : i + (k + 1) * n] == gram for k in range(1, reps)):
                return True
    return False


def repetition_flags(text: str, lang: str) -> tuple[str, ...]:
    """Loop and emptiness flags of a transcript.

    ``asr_empty``: no word or character. ``asr_repetition``: an n-gram of tokens (characters
    for zh, words for en) repeated at least 3 times consecutively, or the UTF-8 text compressing
    better than 2.4:1 with zlib (Whisper's own loop test). A deliberate "no, no, no" also trips
    the n-gram rule; the flag marks a reply for a look, it does not drop it.

    Raises:
        ValueError: a language other than "en" or "zh".
    """
    if lang not in LANGS:
        raise ValueError(f"repetition flags support {LANGS}, not {lang!r}")
    tokens = _tokens(text, lang)
    if not tokens:
        return ("asr_empty",)
    raw = text.strip().encode("utf-8")
    ratio = len(raw) / len(zlib.compress(raw))
    return ("asr_repetition",) if _has_loop(tokens) or ratio > COMPRESSION_RATIO_LIMIT else ()


def check_lang(lang: str) -> None:
    """Raise ValueError unless ``lang`` is one of the supported languages (en, zh)."""
    if lang not in LANGS:
        raise ValueError(f"ASR language must be one of {LANGS}, got {lang!r}")


def to_16k(wave: np.ndarray, sr: int) -> np.ndarray:
    """Validated mono float32 samples at Whisper's 16 kHz."""
    return resample(as_wave(wave), sr, SAMPLE_RATE).astype(np.float32)


def make_transcript(
    texts: Iterable[str],
    words: Iterable[tuple[str, float, float] | tuple[str, float, float, float]],
    logprobs: Iterable[float | tuple[float, float]],
    *,
    lang: str,
    backend: str,
    model: str,
    extra_flags: tuple[str, ...] = (),
) -> Transcript:
    """Assemble a :class:`Transcript` from segment texts, word times and segment log-probs.

    ``words`` are ``(word, start, end)`` or ``(word, start, end, probability)``; ``logprobs``
    are each segment's average log-probability, or ``(avg_logprob, seconds)`` pairs, which
    weight :attr:`Transcript.mean_logprob` by duration.
    Flags: :func:`repetition_flags` of the joined text, ``asr_low_confidence`` when any segment's
    average log-probability is below -1.0, plus ``extra_flags``; sorted for stable records.
    """
    text = "".join(texts).strip()
    flags = set(repetition_flags(text, lang)) | set(extra_flags)
    segs = [lp if isinstance(lp, tuple) else (float(lp), 1.0) for lp in logprobs]
    if any(lp < LOW_LOGPROB for lp, _ in segs):
        flags.add("asr_low_confidence")
    weight = sum(max(w, 0.0) for _, w in segs)
    mean_lp = sum(lp * max(w, 0.0) for lp, w in segs) / weight if weight > 0 else 0.0
    kept = [w for w in words if w[0].strip()]
    timed = [(max(0.0, float(w[2]) - float(w[1])), float(w[3])) for w in kept if len(w) > 3]
    total = sum(d for d, _ in timed)
    unsure = sum(d for d, p in timed if p < UNSURE_WORD_P) / total if total > 0 else 0.0
    ordered = sorted(
        (float(w[1]), max(0.0, float(w[2]) - float(w[1])), guessed(w[0], float(w[3]), lang))
        for w in kept
        if len(w) > 3
    )
    return Transcript(
        text=text,
        lang=lang,
        words=tuple(Word(w[0].strip(), float(w[1]), float(w[2])) for w in kept),
        backend=backend,
        model=model,
        flags=tuple(sorted(flags)),
        mean_logprob=round(float(mean_lp), 4),
        unsure_word_share=round(float(unsure), 4),
        unsure_stretch_share=round(float(unsure_stretch(ordered)), 4),
    )
