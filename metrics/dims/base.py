"""What a style dimension is, and the registry of the four.

A :class:`Dimension` holds everything that defines one dimension: which feature value is the
per-reply score (and its fallbacks), which quality flags concern it, the perceptual scale on
which a change between turns is measured and its unit, the config field holding its
just-noticeable threshold, and the words reports use. Adding a dimension is one module beside
this one and one line in :data:`DIMENSIONS`.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

#: turn -> the reply's score on the dim's linear scale, or why it has none
TurnValues = dict[int, "float | str"]


@dataclass(frozen=True)
class ScoreContext:
    """The settings a dimension's per-reply score depends on (from the run config)."""

    pitch_stat: str = "agreed_mean"
    speed_source: str = "auto"
    transcript_max_error: float = 0.3


class Dimension(ABC):
    """One style dimension. Subclasses set the class attributes and the two scales."""

    name: ClassVar[str]
    #: short unit of the perceptual change between turns (tables), and the report's words for a
    #: reply's score, the change and SVD (``{"score": ..., "change": ..., "svd": ...}``)
    unit: ClassVar[str]
    words: ClassVar[dict[str, str]]
    #: the ``Thresholds`` field of its just-noticeable change, and that change's default size
    threshold_field: ClassVar[str]
    default_threshold: ClassVar[float]
    #: feature flags shown beside a reply's score on this dimension (informational)
    flags: ClassVar[tuple[str, ...]] = ()
    #: feature flags that leave a reply unscored on this dimension (the reason is
    #: ``metrics.validity.REASONS[flag]``): a doubtful measurement has no score
    blocking: ClassVar[tuple[str, ...]] = ("too_short", "not_speech")
    #: False: scores are ratings or probabilities, taken as given (may be 0 or negative)
    positive: ClassVar[bool] = True

    @abstractmethod
    def change(self, a: float, b: float) -> float:
        """Change from score ``a`` to ``b`` on the perceptual scale (inputs already checked)."""

    def relative(self, a: float, b: float) -> float:
        """Signed relative change ``100*(b-a)/a`` on the linear scale (SVD's unit)."""
        return 100.0 * (b - a) / a

    @abstractmethod
    def turn_values(
        self, sample: Any, features: Mapping[int, Any], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        """Each turn's score from its ok feature record, and flags for the whole sample.

        ``features`` holds only turns whose features are ok; a turn left out of the result, or
        given a string, has no score (the string says why).
        """


def value_or_reason(
    values: Mapping[str, float], flags: list[str], key: str, blocking: tuple[str, ...] = ()
) -> float | str:
    """``values[key]``, or why it is missing: the first of ``blocking`` among the reply's
    flags (:data:`stylebench.metrics.validity.REASONS`), else the feature's ``no_*`` flags."""
    from stylebench.metrics.validity import REASONS

    for flag in blocking:
        if flag in flags:
            return REASONS[flag]
    if key in values:
        return values[key]
    why = [f for f in flags if f.startswith(("no_", "asr_empty"))]
    return f"{key} unavailable: " + ("; ".join(why) or "not measured")


DIMENSIONS: dict[str, str] = {
    "speed": "stylebench.metrics.dims.speed:Speed",
    "volume": "stylebench.metrics.dims.volume:Volume",
    "pitch": "stylebench.metrics.dims.pitch:Pitch",
    "emotion": "stylebench.metrics.dims.emotion:Emotion",
}
_LOADED: dict[str, Dimension] = {}


def jnd(name: str) -> float:
    """The default just-noticeable change of dimension ``name``, in its perceptual unit (the one
    source of these defaults: thresholds, config and the prosodic index's units read it)."""
    return dimension(name).default_threshold


def dimension(name: str) -> Dimension:
    """The dimension called ``name``.

    Raises:
        ValueError: an unknown name, with the known ones.
    """
    if name not in DIMENSIONS:
        raise ValueError(f"unknown dim {name!r}; expected one of {tuple(DIMENSIONS)}")
    if name not in _LOADED:
        module, cls = DIMENSIONS[name].split(":")
        _LOADED[name] = getattr(importlib.import_module(module), cls)()
    return _LOADED[name]
