"""Expressiveness (an extension beyond StyleBench's four): pitch range, the spread of F0 in
semitones over the voiced frames, 10th to 90th percentile, over the frames both F0 trackers agree
on (the frames the pitch score uses, :func:`stylebench.metrics.pitch.agreed_frames`, run edges
trimmed); change ``b - a`` in semitones. Intensify = livelier (a wider range), attenuate = flatter.

A percentile range ignores the few frames at the extremes where a tracker slips; a tempo change
or a gain change leaves it in place (tests/test_real_speech.py measures that on real speech),
and a pitch shift moves every frame by the same number of semitones, so the range stays.

The reference model's step scales the range: each voiced frame's F0 deviation from the reply's
median (in semitones) is multiplied by a factor, through WORLD analysis and resynthesis
(:func:`scale_f0_range`), so the range scales by it and the median pitch stays. Per turn the
factor is ``(1 + s)**k`` to widen and ``1 - s*k`` to narrow (``k`` steps, ``s`` = 40%: 1.4 and
1.96; 0.6 and 0.2). Widening compounds because the measured range of a widened voice grows
less than the factor (espeak-ng: x1.8 measured x1.7 or less); narrowing is linear so both
narrowed turns lose the same semitones and the flattest keeps a fifth of the melody: still
speech, never a held tone (a subtractive step in semitones flattened a narrow English voice past
the steady-pitch rule on turn 3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from stylebench.metrics.dims.base import (
    F0_BLOCKING,
    Dimension,
    ReplyFrames,
    ScoreContext,
    TurnValues,
    value_or_reason,
)
from stylebench.metrics.spec import MetricSpec
from stylebench.records import FeatureRecord, Sample

SPEC = MetricSpec(
    name="f0_range",
    version="1",
    outputs=("f0_range_st",),
    needs=("audio",),
    description=(
        "Pitch range: 90th minus 10th percentile, in semitones, of pyworld F0 over the frames "
        "Praat confirms within 2 st, run edges trimmed (the f0 metric's agreed frames); at least "
        "50 such frames."
    ),
)
#: the percentiles whose distance is the range
PERCENTILES = (10.0, 90.0)
#: fewer agreed voiced frames than this (5 ms each: 0.25 s) give no range
MIN_FRAMES = 50
WORLD_FRAME_MS = 5.0
#: the flattest the reference model's transform makes a reply (5% of its range)
MIN_FACTOR = 0.05


def f0_range_st(f0: np.ndarray, percentiles: tuple[float, float] = PERCENTILES) -> float:
    """Distance in semitones between two percentiles of the voiced frames of ``f0`` (Hz; 0 =
    unvoiced).

    Raises:
        ValueError: fewer than :data:`MIN_FRAMES` voiced frames.
    """
    voiced = np.asarray(f0, dtype=np.float64)
    voiced = voiced[voiced > 0]
    if voiced.size < MIN_FRAMES:
        raise ValueError(f"{voiced.size} voiced frames, need {MIN_FRAMES} for a pitch range")
    st = 12.0 * np.log2(voiced)
    lo, hi = np.percentile(st, percentiles)
    return float(hi - lo)


def scale_f0_range(wave: np.ndarray, sr: int, pct: float) -> np.ndarray:
    """Resynthesise ``wave`` with WORLD, its pitch range scaled by ``1 + pct/100`` (at least
    :data:`MIN_FACTOR`): every voiced frame's deviation from the median, in semitones, is
    multiplied by that factor, so every percentile range scales by it and the median stays.
    Spectral envelope and aperiodicity are kept; deterministic. Fewer than
    :data:`MIN_FRAMES` voiced frames: resynthesised unchanged."""
    import pyworld

    factor = max(MIN_FACTOR, 1.0 + pct / 100.0)
    x = np.ascontiguousarray(wave, dtype=np.float64)
    f0, t = pyworld.dio(x, sr, frame_period=WORLD_FRAME_MS)
    f0 = pyworld.stonemask(x, f0, t, sr)
    sp = pyworld.cheaptrick(x, f0, t, sr)
    ap = pyworld.d4c(x, f0, t, sr)
    voiced = f0 > 0
    if voiced.sum() >= MIN_FRAMES:
        ref = np.median(np.log2(f0[voiced]))
        f0 = f0.copy()
        f0[voiced] = 2.0 ** (ref + factor * (np.log2(f0[voiced]) - ref))
    y = pyworld.synthesize(f0, sp, ap, sr, WORLD_FRAME_MS)
    y = y[: wave.size]
    if y.size < wave.size:
        y = np.pad(y, (0, wave.size - y.size))
    return np.clip(y, -1.0, 1.0).astype(np.float32)


class Expressiveness(Dimension):
    name: ClassVar[str] = "expressiveness"
    unit: ClassVar[str] = "st"
    words: ClassVar[dict[str, str]] = {
        "score": "pitch range, st (10th-90th percentile of F0)",
        "change": "semitones of range",
        "svd": "% of range",
    }
    threshold_field: ClassVar[str] = "expressiveness_st"
    #: measured: on the real-speech corpus tempo x0.8/x1.25 and gain +-6 dB move the range by
    #: at most 0.45 st (tests/test_expressiveness_real_speech.py), so 1 st is above what a
    #: style-neutral change does; lenient against the perceptual literature ('t Hart 1981:
    #: excursions of two pitch movements must differ by about 1.5-2 st to be told apart)
    default_threshold: ClassVar[float] = 1.0
    threshold_help: ClassVar[str] = (
        "expressiveness: pitch-range threshold in semitones (default 1.0: above what tempo and "
        "gain move it on real speech)"
    )
    flags: ClassVar[tuple[str, ...]] = ("f0_octave_suspect", "f0_near_ceiling", "praat_unvoiced")
    blocking: ClassVar[tuple[str, ...]] = F0_BLOCKING
    paper: ClassVar[bool] = False
    in_all: ClassVar[bool] = False
    order: ClassVar[int] = 4
    #: the share by which each step widens or narrows the range (a Style.extra knob in percent,
    #: applied by :meth:`transform`; see the module text for the compounding). The default
    #: set's neutral ranges are 3.9-6.8 st, so a step moves them 1.6 st or more
    step: ClassVar[tuple[str, float]] = ("f0_range_pct", 40.0)
    question_text: ClassVar[tuple[str, str]] = (
        "Which turn sounds livelier (more melody in the voice)?",
        "Liveliness of the melody: 1 = flat, monotone, 5 = very lively",
    )
    caption_en: ClassVar[tuple[str, str, str]] = ("the pitch range", "wider", "narrower")
    caption_zh: ClassVar[tuple[str, str, str]] = ("音域", "宽", "窄")
    caption_lexicon: ClassVar[Mapping[str, Any]] = {
        "en_nouns": ("range", "melody", "inflection", "expressiveness", "liveliness"),
        "en_terms": {
            **dict.fromkeys(("wider", "livelier", "lively", "melodic", "singsong"), 1),
            **dict.fromkeys(("narrower", "flatter", "monotone", "monotonous", "droning"), -1),
        },
        "zh_nouns": ("音域", "抑扬", "起伏"),
        "zh_terms": {
            **dict.fromkeys(("宽", "抑扬顿挫", "生动"), 1),
            **dict.fromkeys(("窄", "单调", "平板", "呆板"), -1),
        },
    }
    caption_prompt: ClassVar[str] = "expressiveness (how lively or flat the melody of the voice is)"

    def change(self, a: float, b: float) -> float:
        return b - a

    def extractor(self, cfg: Any) -> str:
        return (
            "pitch range: 10th-90th percentile distance in semitones over the voiced frames both "
            "F0 trackers agree on (the pitch score's frames); an extension beyond StyleBench"
        )

    def style(
        self, direction: str, steps: int, size: float | None = None, emotion: str = ""
    ) -> dict:
        share = (self.step[1] if size is None else size) / 100.0
        if direction == "intensify":
            factor = (1.0 + share) ** steps
        else:
            factor = max(MIN_FACTOR, 1.0 - share * steps)
        return {"extra": ((self.step[0], round(100.0 * (factor - 1.0), 9)),)}

    def transform(self, wave: np.ndarray, sr: int, amount: float) -> np.ndarray:
        return scale_f0_range(wave, sr, amount)

    def reply_values(self, frames: ReplyFrames) -> tuple[dict[str, float], list[str]]:
        if frames.agreed_f0 is None:  # the pitch dimension's no_f0 flag says why
            return {}, []
        try:
            return {"f0_range_st": f0_range_st(frames.agreed_f0)}, []
        except ValueError as exc:
            return {}, [f"no_f0_range: {exc}"]

    def turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        out: TurnValues = {}
        for k, f in features.items():
            v = value_or_reason(f.values, f.flags, "f0_range_st", self.blocking)
            out[k] = "pitch range is 0 (monotone)" if isinstance(v, float) and v <= 0 else v
        return out, ()
