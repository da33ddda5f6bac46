"""Transcript types, the transcriber protocol, and loop/empty/confidence flags of ASR output."""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
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
    words: Iterable[tuple[str, float, float]],
    logprobs: Iterable[float],
    *,
    lang: str,
    backend: str,
    model: str,
    extra_flags: tuple[str, ...] = (),
) -> Transcript:
    """Assemble a :class:`Transcript` from segment texts, word times and segment log-probs.

    Flags: :func:`repetition_flags` of the joined text, ``asr_low_confidence`` when any segment's
    average log-probability is below -1.0, plus ``extra_flags``; sorted for stable records.
    """
    text = "".join(texts).strip()
    flags = set(repetition_flags(text, lang)) | set(extra_flags)
    if any(lp < LOW_LOGPROB for lp in logprobs):
        flags.add("asr_low_confidence")
    return Transcript(
        text=text,
        lang=lang,
        words=tuple(Word(w.strip(), float(a), float(b)) for w, a, b in words if w.strip()),
        backend=backend,
        model=model,
        flags=tuple(sorted(flags)),
    )
