"""Probe-free prosodic emotion intensity: how far a reply moved along the emotion's arousal axis.

Emotion has no acoustic scale, and the automatic recognisers saturate (StyleBench found
emotion2vec's top probability above 0.95 on most synthetic turns), so this module gives a third,
fully transparent estimate from the features already measured for pitch, volume and speed.

Definition (per sample; turn 1 is the sample's own baseline):

1. Four prosodic changes of turn t against turn 1, each divided by its unit (the project's
   just-noticeable thresholds, so each term counts "JNDs"):

   - pitch level: ``12*log2(f0_t / f0_1)`` semitones of the two-tracker agreed mean F0, unit 1 st;
   - pitch spread: ``sd_t - sd_1``, the standard deviation of F0 in semitones over the same
     voiced frames (:func:`f0_spread_st`), unit 1 st;
   - level: ``dB_t - dB_1`` of the speech-active RMS in dBFS, unit 1 dB;
   - rate: ``100*(r_t/r_1 - 1)`` percent of the ASR-free syllable-nuclei rate, unit 5%.

2. The **arousal index** ``A_t`` is the mean of the four terms, so ``A_1 = 0`` and a reply one
   JND higher, wider, louder and faster has ``A = 1``.
3. The **prosodic intensity** is ``I_t = s_e * A_t`` with ``s_e = +1`` for the high-arousal
   emotions (happy, angry, surprised, fearful) and ``-1`` for sad and disgusted: a sadder
   reading is lower, narrower, softer and slower. The sign table is a declared convention (the
   usual placement of these categories on the arousal axis), not a measurement, and the index
   says nothing about *which* emotion is expressed: it is an approximation, labelled as such in
   every report. This module gives the sign and the index; the scoring layer applies them to
   each sample's turns (``stylebench.metrics.dims.emotion.prosodic_by_turn``).

A change is valid when ``I`` moves in the instructed direction by at least ``--prosody-delta``
(default 1.0: the four cues moved by one just-noticeable step on average); see
:mod:`stylebench.scoring`. On the default emotion set the ``neutral`` row's lead-in phrases and
jitter moved ``I`` by at most 0.79 per pair (its pauses lower the syllable-nuclei rate), the
``reference`` row's steps by 1.3 to 1.7 on average (docs/metrics.md, "Emotion").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from stylebench.metrics.dims.base import jnd
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="prosodic_emotion",
    version="4",
    outputs=("f0_std_st",),
    needs=("f0_track", "speech_span", "features of turn 1"),
    description=(
        "Arousal index = mean over pitch level (st), F0 spread (st of F0 SD), volume "
        "score (dB) and syllable-nuclei rate (% / 5) of turn t minus turn 1; prosodic intensity "
        "= +index for happy, angry, surprised, fearful and -index for sad, disgusted."
    ),
)

#: +1: intensity shows as higher arousal; -1: as lower arousal (declared convention)
AROUSAL_SIGN: dict[str, int] = {
    "happy": 1,
    "angry": 1,
    "surprised": 1,
    "fearful": 1,
    "sad": -1,
    "disgusted": -1,
}
#: feature value each term reads (from the features stage)
FEATURE_KEYS = {
    "pitch_st": "f0_mean_agreed",  # the default pitch score
    "spread_st": "f0_std_st",
    "level_db": "rms_gated_dbfs",  # the volume score
    "rate_pct": "nuclei_spm",
}


@dataclass(frozen=True)
class ProsodyUnits:
    """Size of one unit of each term: the just-noticeable change of the acoustic dim it belongs
    to (:func:`stylebench.metrics.dims.base.jnd`; F0 spread uses pitch's)."""

    pitch_st: float = field(default_factory=lambda: jnd("pitch"))
    spread_st: float = field(default_factory=lambda: jnd("pitch"))
    level_db: float = field(default_factory=lambda: jnd("volume"))
    rate_pct: float = field(default_factory=lambda: jnd("speed"))

    def __post_init__(self) -> None:
        for name, v in vars(self).items():
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"ProsodyUnits.{name} must be a finite number > 0, got {v!r}")


def f0_spread_st(track: np.ndarray, f0_range: tuple[float, float] | None = None) -> float:
    """Standard deviation of F0 in semitones over voiced frames (F0 > 0, inside ``f0_range``).

    Semitones are taken relative to the frames' own median, so the spread does not change when
    the whole contour is shifted (a pitch step is not a wider range).

    Raises:
        ValueError: fewer than 3 voiced frames.
    """
    f0 = np.asarray(track, dtype=np.float64).reshape(-1)
    voiced = np.isfinite(f0) & (f0 > 0)
    if f0_range is not None:
        voiced &= (f0 >= f0_range[0]) & (f0 <= f0_range[1])
    values = f0[voiced]
    if values.size < 3:
        raise ValueError(f"only {values.size} voiced frames; F0 spread needs at least 3")
    st = 12.0 * np.log2(values / np.median(values))
    return float(np.std(st))


def _term(name: str, base: Mapping[str, float], turn: Mapping[str, float]) -> float:
    key = FEATURE_KEYS[name]
    missing = [k for k, d in (("turn 1", base), ("this turn", turn)) if key not in d]
    if missing:
        raise ValueError(f"{key} missing for {' and '.join(missing)} (needed for {name})")
    a, b = float(base[key]), float(turn[key])
    if name in ("spread_st", "level_db"):
        return b - a
    if a <= 0 or b <= 0:
        raise ValueError(f"{key} must be > 0 for {name}, got {a!r} and {b!r}")
    return 12.0 * math.log2(b / a) if name == "pitch_st" else 100.0 * (b / a - 1.0)


def arousal_terms(
    base: Mapping[str, float], turn: Mapping[str, float], units: ProsodyUnits = ProsodyUnits()
) -> dict[str, float]:
    """The four terms of turn ``turn`` against turn 1 (``base``), each in units of ``units``.

    Raises:
        ValueError: a needed feature is missing or not positive where a ratio is taken.
    """
    return {name: _term(name, base, turn) / getattr(units, name) for name in FEATURE_KEYS}


def arousal_index(
    base: Mapping[str, float], turn: Mapping[str, float], units: ProsodyUnits = ProsodyUnits()
) -> float:
    """Mean of :func:`arousal_terms`; 0 for turn 1 itself."""
    terms = arousal_terms(base, turn, units)
    return sum(terms.values()) / len(terms)
