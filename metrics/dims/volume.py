"""Volume: RMS amplitude over speech-active samples (VAD), linear; change in dB ``20*log10(b/a)``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from stylebench.metrics.dims.base import Dimension, ScoreContext, TurnValues, value_or_reason


class Volume(Dimension):
    name: ClassVar[str] = "volume"
    unit: ClassVar[str] = "dB"
    words: ClassVar[dict[str, str]] = {"score": "RMS amplitude", "change": "dB", "svd": "% of RMS"}
    threshold_field: ClassVar[str] = "volume_db"
    default_threshold: ClassVar[float] = 1.0
    flags: ClassVar[tuple[str, ...]] = ("vad_energy_fallback",)

    def change(self, a: float, b: float) -> float:
        return 20.0 * math.log10(b / a)

    def turn_values(
        self, sample: Any, features: Mapping[int, Any], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        key = "rms_active"
        return {
            k: value_or_reason(f.values, f.flags, key, self.blocking) for k, f in features.items()
        }, ()
