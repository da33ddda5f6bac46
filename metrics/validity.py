"""When a reply's measurement cannot be trusted: the rules that leave a dimension unscored.

A flag that is counted but still lets a value into a VSP protects nothing, so each rule here
names a feature flag that *blocks* a score (the dimensions list which ones concern them:
:mod:`stylebench.metrics.dims`). The score stage turns a blocking flag into that turn's error,
with the reason in :data:`REASONS`, counted beside ``n_ok`` like any other failure.

Rules (every threshold was set from measurements listed in docs/metrics.md, "Unscored replies"):

- **too short** (every dimension): under :data:`MIN_SPEECH_S` seconds of detected speech, or a
  transcript (or text channel) with fewer than :data:`MIN_SYLLABLES` syllables. A pitch mean,
  a level and a rate over one or two syllables are not the speaker's style.
- **not speech** (every dimension): a steady level (the spread of the 20 ms frame levels inside
  the speech span under :data:`MIN_LEVEL_SPREAD_DB`: tones, hum, steady noise) or a steady
  pitch (F0 spread under :data:`MIN_F0_SPREAD_ST` over frames voiced for at least half the
  span: a tone, a square wave, a held note), unless a transcript vouches for speech (at
  least :data:`MIN_SYLLABLES` syllables and no doubt about it). A steady pitch blocks even then:
  no speaker holds F0 within a quarter semitone for a whole reply.
- **doubtful transcript** (speed, where a count is needed: between turns that say other words;
  turns that say the same words share a count and compare by their aligned tempo): the
  transcript loops, is empty, has low confidence, was
  re-decoded without the nuclei count confirming it, is mostly guessed words, is in the wrong script for the language, has a syllable rate per
  second of speech outside :data:`PLAUSIBLE_SYL_PER_S`, or its syllable count is far from the
  ASR-independent syllable-nuclei count of the same audio (ratio outside
  :data:`PLAUSIBLE_SYL_PER_NUCLEUS`). A text channel that agrees with the transcript vouches for
  it; otherwise speed is taken from the text channel when every turn has one, else unscored.
- **trackers disagree** (pitch, ``f0_extractors_disagree``): of the frames a majority of the three
  F0 trackers (pyworld, Praat, SwiftF0) call voiced, fewer than ``F0_MIN_AGREEMENT`` have two
  trackers within 2 semitones (``stylebench.metrics.dims.pitch``).
- **too little voicing** (pitch and the dimensions built on it): ``unvoiced_speech`` under
  :data:`MIN_VOICED_SHARE` voiced seconds per second of speech, ``whispered`` for little
  voicing with energy high in the spectrum.
- **another language** (speed where a count is needed, ``language_mismatch``): the ASR's
  language ID hears another language than the declared one (:func:`language_mismatch`); the
  transcript is a translation, whose count is not the spoken syllables'.
- **guessed words** (speed, ``asr_unsure``): much of the transcript's word time lies on words
  the ASR is unsure of and its mean log-probability is low (nonsense words, mumbling). A re-decoded transcript is doubtful only when
  the syllable-nuclei count does not confirm it (``asr_redecoded_unconfirmed``), so the same
  clean speech is scored whichever instruction set the ASR ran on.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from stylebench.metrics._common import as_wave, check_sr
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="validity",
    version="3",
    outputs=(
        "level_spread_db",
        "high_band_share",
        "asr_declared_lang_p",
        "asr_mean_logprob",
        "asr_unsure_share",
        "asr_unsure_stretch",
        "asr_unknown_stretch",
    ),
    needs=("audio", "speech_span"),
    description=(
        "level_spread_db: 90th minus 10th percentile of the 20 ms frame levels (dB) inside the "
        "speech span (steady under 6 dB: a tone, hum or noise). The rules that leave a reply "
        "unscored (too short, not speech, doubtful transcript, trackers disagree) read it with "
        "the F0 spread, the speech seconds and the syllable counts. high_band_share: energy "
        "above 2 kHz / all energy in the speech span (whisper signature). From the transcript: "
        "asr_declared_lang_p (the ASR's language-ID probability of the declared language), "
        "asr_mean_logprob, asr_unsure_share (share of word time on words under p 0.5) and "
        "asr_unsure_stretch (the share of guessed words on the worst quarter of the word time, at "
        "least 5 s) and asr_unknown_stretch (the same for English words no dictionary knows)."
    ),
)

#: at least this much detected speech (seconds of VAD-active audio) for any score
MIN_SPEECH_S = 1.0
#: at least this many syllables in the transcript or text channel, when there is one
MIN_SYLLABLES = 4
#: spread (90th - 10th percentile, dB) of the 20 ms frame levels inside the speech span below
#: which the level is steady: a tone, hum or steady noise, not syllables
MIN_LEVEL_SPREAD_DB = 6.0
#: F0 spread (SD, semitones) below which the pitch is steady: a tone or a held note
MIN_F0_SPREAD_ST = 0.25
#: transcript syllables per second of active speech that a human reply can have
PLAUSIBLE_SYL_PER_S = (1.0, 11.0)
#: transcript syllables per ASR-free syllable nucleus (intensity peak) of the same audio
PLAUSIBLE_SYL_PER_NUCLEUS = (0.5, 3.0)

#: voiced seconds (frames a majority of the three F0 trackers call voiced) per second of
#: detected speech below which a reply has no pitch: whispered, breathy or unvoiced speech.
#: Tuning data (benchmarks/corpus, clean real speech): 0.46 at the least; the same clips
#: resynthesised unvoiced (a whisper's source) read 0.009 at most. Held out (VStyle replies):
#: 181 of 182 at 0.30 or more (5th percentile 0.48); the one whispered reply 0.001.
MIN_VOICED_SHARE = 0.2
#: the whisper/breathy signature: little voicing (under :data:`WHISPER_MAX_VOICED`, below every
#: clean clip's share) with energy high in the spectrum (:func:`high_band_share` at least
#: :data:`WHISPER_MIN_HIGH_BAND`; clean real speech: 0.21 at most on the corpus, a telephone
#: clip; held-out replies: 0.25 at most among the voiced ones, 0.53 for the whispered one)
WHISPER_MAX_VOICED = 0.4
WHISPER_MIN_HIGH_BAND = 0.35
#: a transcript is in another language than the declared one when the ASR's language ID gives
#: the declared language a probability under this (clean real speech in its own language: 0.57
#: at the least, a digit string; the same clips declared in the other language: 0.08 at most;
#: the geometric midpoint is 0.21). Whisper then writes a translation, whose syllables are not
#: the ones spoken.
MIN_DECLARED_LANG_P = 0.2
#: a transcript is mostly guesses when more than this share of its word time lies on words the
#: ASR gives a probability under 0.5 AND its duration-weighted mean log-probability is under
#: :data:`MAX_UNSURE_MEAN_LOGPROB`. Tuning data (benchmarks/corpus): clean real speech 0.34 and
#: -0.66 at the extremes (a quiet digit string), never both; the same clips with their first 40%
#: played backwards (a stand-in for nonsense words) caught 6 of 11. Held out (VStyle replies whose
#: transcript reads their text channel within 10% error, 160): 1 flagged; on the share alone
#: (no log-probability bound) 6 of those 160 correct transcripts would have been flagged.
MAX_UNSURE_WORD_SHARE = 0.4
MAX_UNSURE_MEAN_LOGPROB = -0.6
#: a passage of guesses: the worst stretch of consecutive words (a quarter of the word time, at
#: least 5 s; ``asr_unsure_stretch``) has more than this share of its time on guessed words
#: (probability under 0.5, or an English word no dictionary knows), or more than
#: :data:`MAX_UNKNOWN_STRETCH` on words no dictionary knows alone (``asr_unknown_stretch``:
#: Whisper spells nonsense words out, often with confidence). Tuning half (16 clean clips):
#: 0.71 and 0.26 at most, both on AMI meeting clips with crosstalk; nonsense stand-ins (Piper
#: reading pseudo-words before each English clip, 12 tune / 11 held out): see docs/metrics.md
MAX_UNSURE_STRETCH = 0.75
MAX_UNKNOWN_STRETCH = 0.4
#: a re-decoded transcript (Whisper's first pass looped or was unsure) is vouched for when its
#: syllable count agrees with the ASR-free syllable-nuclei count as closely as a faithful text
#: channel must (:data:`TEXT_SYL_PER_NUCLEUS`) and its words are not mostly guesses: whether the
#: first pass was unsure depends on the CPU's instruction set (CTranslate2's kernels), the final
#: transcript much less

#: blocking flag -> the reason a score is missing (stable text: reports count reasons)
REASONS = {
    "too_short": f"unscored: too short (under {MIN_SPEECH_S:g} s of speech or "
    f"{MIN_SYLLABLES} syllables)",
    "not_speech": "unscored: not speech (steady level or pitch, no transcript vouching for words)",
    "asr_doubtful": "unscored: doubtful transcript and no text channel to vouch for it",
    "f0_extractors_disagree": "unscored: the three F0 trackers agree on too few voiced frames",
    "unvoiced_speech": f"unscored: too little voiced speech for a pitch (under "
    f"{MIN_VOICED_SHARE:.0%} of the speech voiced)",
    "whispered": "unscored: whispered or breathy (little voicing, energy high in the spectrum)",
    "language_mismatch": "unscored: spoken in another language than declared (the transcript "
    "is a translation)",
    "reply_truncated": "unscored: the reply was cut off at the model's token budget",
    # --min-quality (stylebench.metrics.dims.base.quality_gate): never a gate by default
    "low_quality": "unscored: low speech quality (DNSMOS OVRL under --min-quality)",
    "no_quality": "unscored: no DNSMOS score to check --min-quality against (quality not measured)",
}
#: transcript flags (from the ASR and from :func:`transcript_doubts`) that make it doubtful
DOUBT_FLAGS = frozenset(
    {
        "asr_empty",
        "asr_repetition",
        "asr_redecoded_unconfirmed",
        "asr_unsure",
        "asr_low_confidence",
        "asr_wrong_script",
        "asr_implausible_rate",
        "asr_nuclei_mismatch",
    }
)

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")


def level_spread_db(wave: np.ndarray, sr: int, start: float, end: float) -> float:
    """90th minus 10th percentile of the 20 ms frame levels (dB) between ``start`` and ``end``.

    Speech alternates syllables and dips, so its frame levels spread over 15-30 dB; a tone, hum
    or steady noise stays within a few dB.

    Raises:
        ValueError: bad audio, or a span shorter than two frames.
    """
    sr = check_sr(sr)
    x = as_wave(wave)
    hop = int(0.02 * sr)
    seg = x[int(max(0.0, start) * sr) : int(end * sr)]
    n = seg.size // hop
    if n < 2:
        raise ValueError(f"speech span of {end - start:.3f} s is too short for a level spread")
    frames = seg[: n * hop].astype(np.float64).reshape(n, hop)
    db = 10.0 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
    lo, hi = np.percentile(db, [10, 90])
    return float(hi - lo)


#: the band edge of :func:`high_band_share`: voiced speech keeps most of its energy in its
#: harmonics below it; whispered and breathy speech, with no harmonics, spread it above
HIGH_BAND_HZ = 2000.0


def high_band_share(wave: np.ndarray, sr: int, mask: np.ndarray) -> float:
    """Share of the energy of the audio under ``mask`` (one bool per sample: the speech span's
    active segments) that lies above :data:`HIGH_BAND_HZ`, from 32 ms Hann frames.

    Voiced speech puts most of its energy in the harmonics of its first formants (real speech:
    a median of a few percent above 2 kHz); a whisper has no harmonics and a flat, noise-like
    spectrum, so much of its energy lies above 2 kHz. NaN when the mask holds under one frame.

    Raises:
        ValueError: bad audio, a mask of another length, or a rate at or under 4 kHz.
    """
    sr = check_sr(sr)
    x = as_wave(wave)
    m = np.asarray(mask, dtype=bool).reshape(-1)
    if m.size != x.size:
        raise ValueError(f"mask has {m.size} entries for {x.size} samples")
    if sr <= 2 * HIGH_BAND_HZ:
        raise ValueError(f"a {sr} Hz recording has no band above {HIGH_BAND_HZ:g} Hz")
    n = int(0.032 * sr)
    hop = n // 2
    starts = np.arange(0, max(0, x.size - n + 1), hop)
    if starts.size:
        inside = np.concatenate([[0], np.cumsum(m, dtype=np.int64)])
        starts = starts[(inside[starts + n] - inside[starts]) * 2 >= n]
    if starts.size == 0:
        return math.nan
    frames = x[starts[:, None] + np.arange(n)] * np.hanning(n)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    freqs = np.fft.rfftfreq(n, 1.0 / sr)
    total = float(power.sum())
    return float(power[:, freqs >= HIGH_BAND_HZ].sum() / total) if total > 0 else math.nan


def wrong_script(text: str, lang: str) -> bool:
    """True when a transcript is mostly in another script than ``lang`` is written in
    (Mandarin: Han characters; English: Latin letters). Digits and punctuation do not count."""
    han, latin = len(_HAN.findall(text)), len(_LATIN.findall(text))
    if han + latin == 0:
        return False
    share = (han if lang == "zh" else latin) / (han + latin)
    return share < 0.5


def transcript_doubts(
    text: str,
    lang: str,
    syllables: float,
    active_s: float,
    nuclei: float | None,
    *,
    asr_flags: tuple[str, ...] | list[str] = (),
    unsure_word_share: float = 0.0,
    mean_logprob: float = 0.0,
    unsure_stretch_share: float = 0.0,
    unknown_stretch_share: float = 0.0,
) -> list[str]:
    """Flags that make a transcript doubtful for counting syllables (see module docstring).

    Args:
        text: the transcript.
        lang: ``en`` or ``zh``.
        syllables: its syllable count.
        active_s: seconds of detected speech in the reply.
        nuclei: the ASR-free syllable-nuclei count over the same span (None: not measured).
        asr_flags: the ASR's own flags (``asr_redecoded`` among them).
        unsure_word_share: share of word time on words the ASR is unsure of.
        mean_logprob: the transcript's duration-weighted mean segment log-probability.
        unsure_stretch_share: the guessed share on the transcript's worst stretch of words.
        unknown_stretch_share: the share of words no dictionary knows on its worst stretch.
    """
    out = []
    if unsure_word_share > MAX_UNSURE_WORD_SHARE and mean_logprob < MAX_UNSURE_MEAN_LOGPROB:
        out.append("asr_unsure")
    elif unsure_stretch_share > MAX_UNSURE_STRETCH or unknown_stretch_share > MAX_UNKNOWN_STRETCH:
        out.append("asr_unsure")
    if "asr_redecoded" in asr_flags:
        lo, hi = TEXT_SYL_PER_NUCLEUS
        confirmed = bool(nuclei) and syllables > 0 and lo <= syllables / float(nuclei) <= hi
        if not confirmed or "asr_unsure" in out:
            out.append("asr_redecoded_unconfirmed")
    if wrong_script(text, lang):
        out.append("asr_wrong_script")
    if active_s > 0 and syllables > 0:
        per_s = syllables / active_s
        if not PLAUSIBLE_SYL_PER_S[0] <= per_s <= PLAUSIBLE_SYL_PER_S[1]:
            out.append("asr_implausible_rate")
    if nuclei is not None and nuclei > 0 and syllables > 0:
        ratio = syllables / nuclei
        if not PLAUSIBLE_SYL_PER_NUCLEUS[0] <= ratio <= PLAUSIBLE_SYL_PER_NUCLEUS[1]:
            out.append("asr_nuclei_mismatch")
    return out


#: text syllables per ASR-free syllable nucleus that a text channel standing in for a transcript
#: may have. Set on the design corpus (benchmarks/real_speech.py: the 11 clips' correct
#: transcripts read 0.79-1.21 syllables per nucleus) widened by a factor of 1.5 both ways;
#: checked on held-out real replies (benchmarks/real_replies.py: transcripts faithful to their
#: text channel, 164 replies, 1st-99th percentile 0.67-1.67). A text channel that covers half
#: the letters a reply spells reads 0.52.
TEXT_SYL_PER_NUCLEUS = (0.6, 1.8)
#: a text channel whose words a transcript does not read faithfully may still score speed when the
#: two syllable counts differ by at most this share (or by 1). The text then scores every turn of
#: the sample, so the transcripts' own count jitter does not enter. Reference replies (espeak-ng,
#: Whisper base at WER 0.4-0.7): counts 29-34 for texts of 28-32, within 7%; real replies whose
#: text and speech differ (benchmarks/real_replies.py): 7 vs 5, 27 vs 8, 26 vs 19 syllables.
TEXT_COUNT_TOL = 0.10
#: text-channel flags that keep the text from scoring speed or vouching for a transcript
TEXT_DOUBT_FLAGS = frozenset({"text_wrong_script", "text_implausible_rate", "text_nuclei_mismatch"})


def text_doubts(
    text: str, lang: str, syllables: float, active_s: float, nuclei: float | None = None
) -> list[str]:
    """Flags that keep a model's text channel from counting syllables: written in another
    script than the language it should speak (a Mandarin tail under English speech, a
    transliteration), a syllable rate per second of speech no human reply has (the text
    channel of a reply that spells letters, or that stopped early), or a syllable count far
    from the ASR-free nuclei count of the audio (:data:`TEXT_SYL_PER_NUCLEUS`: the text is not
    what was said)."""
    out = []
    if wrong_script(text, lang):
        out.append("text_wrong_script")
    if syllables == 0 or (
        active_s > 0
        and not PLAUSIBLE_SYL_PER_S[0] <= syllables / active_s <= PLAUSIBLE_SYL_PER_S[1]
    ):
        out.append("text_implausible_rate")
    if nuclei and syllables > 0:
        lo, hi = TEXT_SYL_PER_NUCLEUS
        if not lo <= syllables / nuclei <= hi:
            out.append("text_nuclei_mismatch")
    return out


def unknown_stretch(words: list[list[Any]] | tuple[Any, ...], lang: str) -> float:
    """The highest share of word time on English words no dictionary knows over a stretch of
    consecutive words (:func:`stylebench.metrics.asr.transcript.unsure_stretch`); ``words`` are
    ``[word, start_s, end_s]`` as a transcript record holds them. Mandarin: 0.0 (no such check)."""
    if lang != "en":
        return 0.0
    from stylebench.metrics.asr.transcript import unsure_stretch
    from stylebench.metrics.rate import dictionary_word

    timed = sorted(
        (float(w[1]), max(0.0, float(w[2]) - float(w[1])), not dictionary_word(str(w[0])))
        for w in words
    )
    return unsure_stretch(timed)


def blocking_flags(values: dict[str, float], flags: list[str]) -> list[str]:
    """The whole-reply blocking flags (``too_short``, ``not_speech``) from a reply's values.

    Uses ``active_s`` (speech seconds), ``syllables`` / ``text_syllables`` (when a transcript or a
    text channel exists), ``level_spread_db``, ``f0_std_st`` and ``f0_voiced_span_share``.
    """
    out = []
    # a count in the wrong script says nothing about length (English text under a Mandarin item)
    wrong = {"syllables": "asr_wrong_script", "text_syllables": "text_wrong_script"}
    syl = [values[k] for k, w in wrong.items() if k in values and w not in flags]
    active = values.get("active_s", 0.0)
    if active < MIN_SPEECH_S or (syl and max(syl) < MIN_SYLLABLES):
        out.append("too_short")
    vouched = bool(syl) and max(syl) >= MIN_SYLLABLES and not DOUBT_FLAGS & set(flags)
    steady_level = values.get("level_spread_db", math.inf) < MIN_LEVEL_SPREAD_DB
    steady_pitch = (
        values.get("f0_std_st", math.inf) < MIN_F0_SPREAD_ST
        and values.get("f0_voiced_span_share", 0.0) >= 0.5
    )
    if steady_pitch or (steady_level and not vouched):
        out.append("not_speech")
    return out


def language_mismatch(declared: str, spoken: str, declared_p: float) -> bool:
    """True when the ASR's language ID hears another language than the declared one with the
    declared one under :data:`MIN_DECLARED_LANG_P` (no ID: False). Whisper codes ``zh`` for
    Mandarin and ``en`` for English."""
    return bool(spoken) and spoken != declared and declared_p < MIN_DECLARED_LANG_P


def voicing_flags(values: dict[str, float]) -> list[str]:
    """``unvoiced_speech`` (too little voicing for a pitch) or ``whispered`` (little voicing and
    energy high in the spectrum), from ``f0_voiced_share`` and ``high_band_share``."""
    share = values.get("f0_voiced_share")
    if share is None:
        return []
    if share < MIN_VOICED_SHARE:
        return ["unvoiced_speech"]
    band = values.get("high_band_share", 0.0)
    if share < WHISPER_MAX_VOICED and band >= WHISPER_MIN_HIGH_BAND:
        return ["whispered"]
    return []


#: two turns say the same words when the DTW cost of their spectra is under this
#: (stylebench.metrics.alignment; real-speech corpus: copies of one clip under tempo, gain and
#: pitch changes 0.81 median, 1.31 at most; two different clips 2.18 at least)
SAME_CONTENT_COST = 1.7
#: over the same words, transcripts whose syllable counts differ by more than this share were
#: changed by the ASR, not the speaker (corpus copies: 2.6% at most; a transcript that lost four
#: words: 15%). 5% is the speed threshold, the change a count error alone would fake. The same
#: words share one count (stylebench.metrics.dims.speed), so this matters only where that count
#: is compared with another run's (a change between different words): a run whose transcripts
#: disagree this much has a doubtful count there.
SAME_CONTENT_SYL_TOL = 0.05


def same_words(cur: dict[str, float] | Any) -> bool:
    """True when a turn's audio says the same words as the turn before it: the DTW cost of their
    spectra (``dtw_cost_prev``, :mod:`stylebench.metrics.alignment`) under
    :data:`SAME_CONTENT_COST`. ASR-free: no transcript enters, so the answer is the same on every
    CPU the ASR may run on."""
    return float(cur.get("dtw_cost_prev", math.inf)) < SAME_CONTENT_COST


#: a turn whose syllables-per-nucleus ratio lies this factor off the sample's median is doubtful
NUCLEI_RATIO_SPREAD = 1.5


def nuclei_outliers(ratios: dict[int, float], spread: float = NUCLEI_RATIO_SPREAD) -> list[int]:
    """Turns whose transcript-syllables / syllable-nuclei ratio lies more than ``spread`` times off
    the median ratio of the sample's turns (in log terms; two turns: off their geometric mean).

    The ratio is a property of a voice and a recording (how many transcript syllables each
    intensity peak carries), so across the turns of one sample it stays within about 25%
    (tempo, gain and pitch changes of real speech: docs/metrics.md); an ASR loop multiplies it
    and a dropped phrase divides it. Fewer than two turns: nothing to compare.
    """
    if len(ratios) < 2:
        return []
    logs = {k: math.log(r) for k, r in ratios.items() if r > 0}
    if len(logs) < 2:
        return []
    mid = float(np.median(list(logs.values())))
    return sorted(k for k, v in logs.items() if abs(v - mid) > math.log(spread))
