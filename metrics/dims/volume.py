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
    threshold_help: ClassVar[str] = "volume threshold in dB"
    step: ClassVar[tuple[str, float]] = ("gain_db", 4.0)
    question_text: ClassVar[tuple[str, str]] = (
        "Which turn is louder?",
        "Loudness: 1 = very quiet, 5 = very loud",
    )
    check_levels: ClassVar[tuple[str, tuple[float, float, float]]] = ("gain_db", (0.0, -8.0, -16.0))
    caption_en: ClassVar[tuple[str, str, str]] = ("the loudness", "louder", "quieter")
    caption_zh: ClassVar[tuple[str, str, str]] = ("音量", "大", "小")
    order: ClassVar[int] = 1
    caption_prompt: ClassVar[str] = "loudness"

    def extractor(self, cfg: Any) -> str:
        vad = cfg.measure.vad
        return (
            f"RMS over speech-active samples ({vad} VAD"
            + (", energy fallback per sample when it misses speech" if vad == "silero" else "")
            + "), linear amplitude; whole-file RMS beside it"
        )

    def change(self, a: float, b: float) -> float:
        return 20.0 * math.log10(b / a)

    def turn_values(
        self, sample: Any, features: Mapping[int, Any], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        key = "rms_active"
        return {
            k: value_or_reason(f.values, f.flags, key, self.blocking) for k, f in features.items()
        }, ()
