"""Speed: syllables per minute over the speech span; change in percent ``100*(b/a-1)``.

The paper's score counts the syllables of an ASR transcript (:mod:`stylebench.metrics.rate`).
Which estimate scores a sample is chosen once per sample (:func:`speed_key`), so one estimator
serves all three of its turns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from stylebench.metrics.dims.base import Dimension, ScoreContext, TurnValues, value_or_reason

#: transcript flags that make the ASR syllable count untrustworthy for a whole sample
ASR_UNRELIABLE = frozenset(
    {"asr_empty", "asr_repetition", "asr_redecoded", "asr_low_confidence"}
)
SOURCES = {"asr": "spm", "text": "text_spm", "nuclei": "nuclei_spm"}


def speed_key(
    feats: Sequence[Any], source: str = "auto", max_error: float = 0.3
) -> tuple[str, tuple[str, ...]]:
    """Which rate estimate scores one sample's speed, and the flags that say so.

    ``asr`` (the paper's definition), ``text`` (syllables of the model's own text channel) and
    ``nuclei`` (ASR-free) are used as asked. ``auto`` uses the ASR rate unless a turn of the
    sample has no transcript rate, an unreliable transcript (:data:`ASR_UNRELIABLE`), or a
    transcript whose error rate against the model's text channel exceeds ``max_error``
    (``asr_text_er``, :mod:`stylebench.metrics.fidelity`); then, when every turn has a
    text-channel rate, the whole sample is scored from the text channel (flag
    ``speed_from_text``, plus ``asr_text_mismatch`` when a mismatch was among the reasons).
    """
    from stylebench.metrics.fidelity import is_faithful

    if source in SOURCES:
        return SOURCES[source], () if source == "asr" else (f"speed_from_{source}",)
    if source != "auto":
        raise ValueError(f"speed source must be auto, asr, text or nuclei, got {source!r}")
    ok = [f for f in feats if f is not None and f.status == "ok"]
    mismatch = any(not is_faithful(f.values.get("asr_text_er", math.nan), max_error) for f in ok)
    unreliable = mismatch or any("spm" not in f.values or ASR_UNRELIABLE & set(f.flags) for f in ok)
    if ok and unreliable and all("text_spm" in f.values for f in ok):
        return "text_spm", ("speed_from_text",) + (("asr_text_mismatch",) if mismatch else ())
    return "spm", ()


class Speed(Dimension):
    name: ClassVar[str] = "speed"
    unit: ClassVar[str] = "%"
    words: ClassVar[dict[str, str]] = {"score": "syllables/min", "change": "percent", "svd": "% of SPM"}
    threshold_field: ClassVar[str] = "speed_pct"
    default_threshold: ClassVar[float] = 5.0
    flags: ClassVar[tuple[str, ...]] = (
        "asr_repetition", "asr_empty", "asr_redecoded", "asr_low_confidence", "vad_energy_fallback",
    )  # fmt: skip

    def change(self, a: float, b: float) -> float:
        return 100.0 * (b / a - 1.0)

    def turn_values(
        self, sample: Any, features: Mapping[int, Any], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        key, extra = speed_key(list(features.values()), ctx.speed_source, ctx.transcript_max_error)
        return {k: value_or_reason(f.values, f.flags, key) for k, f in features.items()}, extra
