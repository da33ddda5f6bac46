"""Volume: RMS amplitude over the speech-active frames by a relative level gate (100 ms frames
within 20 dB of the mean frame power; :func:`stylebench.metrics.energy.gated_rms`), linear;
change in dB ``20*log10(b/a)``. A reply in which the VAD finds no speech has no volume."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

from stylebench.metrics.dims.base import (
    Dimension,
    ReplyFrames,
    ScoreContext,
    TurnValues,
    value_or_reason,
)
from stylebench.records import FeatureRecord, Sample


class Volume(Dimension):
    name: ClassVar[str] = "volume"
    unit: ClassVar[str] = "dB"
    words: ClassVar[dict[str, str]] = {"score": "RMS amplitude", "change": "dB", "svd": "% of RMS"}
    threshold_field: ClassVar[str] = "volume_db"
    default_threshold: ClassVar[float] = 1.0
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
        from stylebench.metrics.energy import GATE_DROP_DB, GATE_WINDOW_S

        return (
            f"RMS over the {GATE_WINDOW_S * 1000:g} ms frames within {GATE_DROP_DB:g} dB of the "
            f"mean frame power (a relative gate; speech must be found by the {cfg.measure.vad} VAD)"
            ", linear amplitude; the RMS inside the VAD's segments and the whole file's beside it"
        )

    def reply_values(self, frames: ReplyFrames) -> tuple[dict[str, float], list[str]]:
        """The gated RMS of the whole reply (``rms_gated``, and in dBFS), when the sample's
        speech span detector found speech in it (else the reply has no volume: ``no_speech_span``
        says why; digital silence has none either)."""
        from stylebench.metrics import energy

        if "span_s" not in frames.measured:
            return {}, []
        try:
            gated = energy.gated_rms(frames.wave, frames.sr)
        except ValueError:  # digital silence
            return {}, []
        return {"rms_gated": gated, "rms_gated_dbfs": energy.dbfs(gated)}, []

    def change(self, a: float, b: float) -> float:
        return 20.0 * math.log10(b / a)

    def turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        key = "rms_gated"
        return {
            k: value_or_reason(f.values, f.flags, key, self.blocking) for k, f in features.items()
        }, ()
