"""Pitch: mean F0 over voiced frames (pyworld dio + stonemask, FastSpeech2 recipe), in Hz;
change in semitones ``12*log2(b/a)``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from stylebench.metrics.dims.base import Dimension, ScoreContext, TurnValues, value_or_reason

#: --pitch-stat -> the feature value that is the score
STAT_KEYS = {
    "agreed_mean": "f0_mean_agreed",
    "guarded_mean": "f0_mean_guarded",
    "mean": "f0_mean",
    "median": "f0_median",
}


class Pitch(Dimension):
    name: ClassVar[str] = "pitch"
    unit: ClassVar[str] = "st"
    words: ClassVar[dict[str, str]] = {"score": "Hz", "change": "semitones", "svd": "% of Hz"}
    threshold_field: ClassVar[str] = "pitch_st"
    default_threshold: ClassVar[float] = 1.0
    flags: ClassVar[tuple[str, ...]] = ("f0_octave_suspect", "praat_unvoiced")
    blocking: ClassVar[tuple[str, ...]] = ("too_short", "not_speech", "f0_extractors_disagree")

    def change(self, a: float, b: float) -> float:
        return 12.0 * math.log2(b / a)

    def turn_values(
        self, sample: Any, features: Mapping[int, Any], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        key = STAT_KEYS[ctx.pitch_stat]
        return {
            k: value_or_reason(f.values, f.flags, key, self.blocking) for k, f in features.items()
        }, ()
