"""Pitch: mean F0 over voiced frames (pyworld dio + stonemask, FastSpeech2 recipe), in Hz;
change in semitones ``12*log2(b/a)``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from stylebench.metrics.dims.base import (
    F0_BLOCKING,
    Dimension,
    ScoreContext,
    TurnValues,
    value_or_reason,
)

#: --pitch-stat -> the feature value that is the score
STAT_KEYS = {
    "weighted_mean": "f0_mean_weighted",
    "agreed_mean": "f0_mean_agreed",
    "guarded_mean": "f0_mean_guarded",
    "mean": "f0_mean",
    "median": "f0_median",
}

STAT_WORDS = {
    "weighted_mean": "amplitude-weighted mean over the frames where at least two of pyworld, "
    "Praat and SwiftF0 lie within 2 st (their median), run edges and subharmonic frames dropped "
    "(three-tracker vote)",
    "agreed_mean": "mean over the frames where at least two of pyworld, Praat and SwiftF0 lie "
    "within 2 st (their median), run edges and subharmonic frames dropped (three-tracker vote), unweighted",
    "guarded_mean": "mean over voiced frames inside the reply's own F0 range (octave guard)",
    "mean": "mean over voiced frames",
    "median": "median over voiced frames",
}


class Pitch(Dimension):
    name: ClassVar[str] = "pitch"
    unit: ClassVar[str] = "st"
    words: ClassVar[dict[str, str]] = {"score": "Hz", "change": "semitones", "svd": "% of Hz"}
    threshold_field: ClassVar[str] = "pitch_st"
    default_threshold: ClassVar[float] = 1.0
    flags: ClassVar[tuple[str, ...]] = ("f0_octave_suspect", "praat_unvoiced")
    blocking: ClassVar[tuple[str, ...]] = F0_BLOCKING
    threshold_help: ClassVar[str] = "pitch threshold in semitones"
    step: ClassVar[tuple[str, float]] = ("pitch_st", 2.0)
    question_text: ClassVar[tuple[str, str]] = (
        "Which turn has the higher voice?",
        "Voice pitch: 1 = very low, 5 = very high",
    )
    check_levels: ClassVar[tuple[str, tuple[float, float, float]]] = ("pitch_st", (-4.0, 0.0, 4.0))
    caption_en: ClassVar[tuple[str, str, str]] = ("the pitch", "higher", "lower")
    caption_zh: ClassVar[tuple[str, str, str]] = ("音高", "高", "低")
    order: ClassVar[int] = 0
    caption_prompt: ClassVar[str] = "pitch (how high or low the voice is)"

    def extractor(self, cfg: Any) -> str:
        return f"F0 on 5 ms frames (pyworld dio+stonemask, Praat, SwiftF0), {STAT_WORDS[cfg.measure.pitch_stat]}"

    def change(self, a: float, b: float) -> float:
        return 12.0 * math.log2(b / a)

    def turn_values(
        self, sample: Any, features: Mapping[int, Any], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        key = STAT_KEYS[ctx.pitch_stat]
        return {
            k: value_or_reason(f.values, f.flags, key, self.blocking) for k, f in features.items()
        }, ()
