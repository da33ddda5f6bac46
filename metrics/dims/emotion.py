"""Emotion: a probe-free prosodic intensity index per turn, in JND units, vs turn 1; change
``b - a``. Humans rate emotion (the listening test); this index and the probes sit beside them.

The index (:func:`stylebench.metrics.prosody.arousal_index`) averages pitch level (st), F0 spread
(st), the volume score (dB) and syllable-nuclei rate (%/5) against turn 1, signed by the
emotion's arousal side (+ for happy, angry, surprised, fearful; - for sad, disgusted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from stylebench.errors import BadValue
from stylebench.metrics.dims.base import (
    F0_BLOCKING,
    Dimension,
    ReplyFrames,
    ScoreContext,
    TurnValues,
    blocking_reason,
)
from stylebench.records import EMOTIONS, FeatureRecord, Sample

#: the index is made of pitch, level and rate: a reply blocked for any of them has no index
BLOCKING = F0_BLOCKING


def prosodic_by_turn(sample: Sample | None, features: Mapping[int, FeatureRecord]) -> TurnValues:
    """Prosodic intensity of each turn with ok features, or the reason it has none (a reply
    scored outside a sample, ``sample=None``, has no emotion asked of it, so no index)."""
    from stylebench.metrics.prosody import AROUSAL_SIGN, arousal_index

    ok = {k: f.values for k, f in features.items()}
    if 1 not in ok:
        return dict.fromkeys(ok, "prosodic: turn 1 (the baseline) has no features")
    blocked = {
        k: why
        for k, f in features.items()
        if (why := blocking_reason(f.values, f.flags, BLOCKING)) is not None
    }
    if 1 in blocked:
        return dict.fromkeys(ok, f"prosodic: turn 1 (the baseline) {blocked[1]}")
    emotion = "" if sample is None else sample.emotion
    if emotion not in AROUSAL_SIGN:
        return dict.fromkeys(ok, f"prosodic: unknown emotion {emotion!r}")
    out: TurnValues = {}
    for k, values in ok.items():
        if k in blocked:
            out[k] = blocked[k]
            continue
        try:
            out[k] = AROUSAL_SIGN[emotion] * arousal_index(ok[1], values)
        except ValueError as exc:
            out[k] = f"prosodic: {exc}"
    return out


class Emotion(Dimension):
    name: ClassVar[str] = "emotion"
    unit: ClassVar[str] = "pt"
    words: ClassVar[dict[str, str]] = {
        # emotion cells hold the prosodic index (JND units); probe cells a probability; human a
        # rating (see the report's emotion_scores block, stylebench.scoring.emotion)
        "score": "prosodic index (JND units) or probability",
        "change": "points",
        "svd": "points (absolute)",
    }
    #: the prosodic index is in JND units (each cue divided by its own dimension's default
    #: threshold, metrics.prosody.IndexUnits), so one JND is the default step; the probe's
    #: probability threshold is --probe-delta, the human ratings' their own
    threshold_field: ClassVar[str] = "emotion_delta"
    default_threshold: ClassVar[float] = 1.0
    threshold_help: ClassVar[str] = (
        "emotion: prosodic index threshold, JND units (default one JND per cue)"
    )
    flags: ClassVar[tuple[str, ...]] = ("f0_octave_suspect",)
    blocking: ClassVar[tuple[str, ...]] = BLOCKING
    positive: ClassVar[bool] = False
    acoustic: ClassVar[bool] = False
    in_all: ClassVar[bool] = False
    content_pool: ClassVar[str] = "emotion"
    change_is_relative: ClassVar[bool] = True
    order: ClassVar[int] = 3
    caption_prompt: ClassVar[str] = "intensity of the expressed emotion"
    groups: ClassVar[tuple[str, ...]] = EMOTIONS
    probed: ClassVar[bool] = True
    rated_by_humans: ClassVar[bool] = True
    files_note: ClassVar[str] = (
        "emotion is scored from ratings or a probe, not from a file's features"
    )

    def calibration_notes(self, model: str) -> list[str]:
        """What the calibration rows mean on emotion."""
        if model == "reference":
            return [
                "reference on emotion is a prosodic approximation: it changes only rate (x1.1), "
                "level (3 dB) and pitch (1.5 st) per turn, on the emotion's arousal side; it is "
                "not emotional speech, so its prosodic VSP is near 100% by construction"
            ]
        if model == "neutral":
            return ["neutral on emotion: its prosodic VSP is the index's false-positive rate"]
        return []

    def style(
        self, direction: str, steps: int, size: float | None = None, emotion: str = ""
    ) -> dict:
        """Expressed through its prosodic correlates (pitch, rate and loudness), on the
        emotion's arousal side; an unnamed emotion counts as high-arousal."""
        from stylebench.metrics.prosody import AROUSAL_SIGN

        sign = (1 if direction == "intensify" else -1) * AROUSAL_SIGN.get(emotion, 1)
        return {
            "rate": 1.1 ** (sign * steps),
            "gain_db": 3.0 * sign * steps,
            "pitch_st": 1.5 * sign * steps,
        }

    def question(self, emotion: str = "") -> tuple[str, str]:
        if not emotion:
            raise BadValue("an emotion sample has no emotion label; rebuild the dialogue set")
        return (
            f"Which turn sounds more {emotion}?",
            f"How {emotion} does it sound: 1 = not at all, 5 = extremely",
        )

    def reply_values(self, frames: ReplyFrames) -> tuple[dict[str, float], list[str]]:
        """The F0 spread the prosodic index reads (``f0_std_st``, semitones of F0 SD over the
        pitch score's frames; :data:`stylebench.metrics.prosody.SPEC`); the other cues are the
        pitch, volume and nuclei values measured for their own dimensions."""
        from stylebench.metrics.prosody import f0_spread_st

        if frames.agreed_f0 is None:  # the pitch dimension's no_f0 flag says why
            return {}, []
        return {"f0_std_st": f0_spread_st(frames.agreed_f0)}, []

    def extractor(self, cfg: Any) -> str:
        ec = cfg.emotion
        probe = "" if ec.emotion_probe == "none" else f"; probe {ec.emotion_probe} {ec.probe_model}"
        return (
            "prosodic index: mean of pitch level (st), F0 spread (st), the volume score "
            "(dB) and syllable-nuclei rate (%/5) vs turn 1, signed by the emotion's arousal side"
            + probe
        )

    def change(self, a: float, b: float) -> float:
        return b - a

    def relative(self, a: float, b: float) -> float:
        return b - a  # a probability or index may be 0: the absolute change

    def turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        return prosodic_by_turn(sample, features), ()
