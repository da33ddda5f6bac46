"""What a style dimension is, and the registry of them.

A :class:`Dimension` holds everything that defines one dimension: which feature value is the
per-reply score (and its fallbacks), which quality flags concern it, the perceptual scale on
which a change between turns is measured and its unit, its just-noticeable threshold (one config
field, one default: :class:`stylebench.config.ScoreConfig` and
:class:`stylebench.scoring.cells.Thresholds` are generated from the registry), the reference
model's style step, the listening test's question and attention-check levels, the caption words
and the words reports use. Adding a dimension is one module beside this one and one line in
:data:`DIMENSIONS`; everything else loops over the registry.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np

from stylebench.metrics.dims.names import DIMENSIONS  # the registry: names only
from stylebench.records import FeatureRecord, Sample, TranscriptRecord

if TYPE_CHECKING:
    from stylebench.metrics.pitch import F0Stats


@dataclass(frozen=True)
class Shared:
    """A turn's score measured together with other turns of its sample that say the same words
    (speed: one syllable count for all of them, so a change between two of them is the ratio of
    their speech spans; :mod:`stylebench.metrics.dims.speed`).

    Attributes:
        value: the score on the dim's linear scale.
        turns: the turns that share the measurement, this one included.
        cross_error: ``None`` when the score may be compared with any turn; else why a change to
            a turn outside :attr:`turns` has no score (the shared count is doubtful: it cancels
            only between the turns that share it).
    """

    value: float
    turns: tuple[int, ...]
    cross_error: str | None = None


#: turn -> the reply's score on the dim's linear scale (plain, or :class:`Shared` with other
#: turns), or why it has none
TurnValues = dict[int, "float | Shared | str"]


def plain(v: float | Shared | str | None) -> float | str | None:
    """A turn value for a reader that compares it with no other turn of its own sample (a file
    measured alone, the control arm of another sample): a :class:`Shared` score whose count is
    doubtful outside its turns is that reason; else its number."""
    if isinstance(v, Shared):
        return v.cross_error if v.cross_error is not None else v.value
    return v


#: the :class:`stylebench.synth.base.Style` knobs every synthesiser implements (a reference step
#: on any other knob travels in ``Style.extra`` and is applied by :meth:`Dimension.transform`;
#: tests/test_dims.py checks the two lists agree)
SYNTH_KNOBS = ("rate", "gain_db", "pitch_st")


#: the flags that leave a reply without any F0-based score (pitch, and the dimensions built on
#: F0): too short, not speech, too little voicing or a whisper, the trackers disagreeing
F0_BLOCKING: tuple[str, ...] = (
    "too_short",
    "not_speech",
    "reply_truncated",
    "unvoiced_speech",
    "whispered",
    "f0_extractors_disagree",
)


class ScoredTurn(Protocol):
    """What :meth:`Dimension.run_notes` reads of a turn's score
    (:class:`stylebench.scoring.cells.TurnScore`)."""

    @property
    def sample_id(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def value(self) -> float | None: ...
    @property
    def flags(self) -> tuple[str, ...]: ...
    @property
    def error(self) -> str | None: ...
    @property
    def same_words(self) -> tuple[int, ...]: ...
    @property
    def cross_error(self) -> str | None: ...


@dataclass(frozen=True)
class ReplyFrames:
    """What the features stage hands :meth:`Dimension.reply_values` for one reply, once the
    sample's speech span is chosen and the reply's transcript read.

    Attributes:
        wave: the reply at the analysis rate (mono float32).
        sr: its sample rate.
        tracks: F0 (Hz, 0 = unvoiced) of pyworld dio + stonemask, Praat and SwiftF0 on one frame
            grid (:mod:`stylebench.metrics.pitch`).
        level_track: each frame's level in dB on that grid (the weights of the pitch score).
        frame_ms: the frame period of the tracks.
        f0_ceil: the highest F0 the trackers searched (Hz); ``None`` when not known (then no
            reply is flagged as reaching it).
        measured: the values measured for every dimension before any dimension's own: the speech
            span (``span_s``, ``active_s``), its nuclei count and rate, the transcript's
            syllables (:mod:`stylebench.stages.measure`).
        transcript: the reply's transcript record when the ASR read it (``status == "ok"``),
            else ``None``.
    """

    wave: np.ndarray
    sr: int
    tracks: tuple[np.ndarray, np.ndarray, np.ndarray]
    level_track: np.ndarray
    frame_ms: float = 5.0
    f0_ceil: float | None = None
    measured: Mapping[str, float] = field(default_factory=dict)
    transcript: TranscriptRecord | None = None

    @cached_property
    def voted(self) -> np.ndarray:
        """Frames that at least two of the three trackers call voiced."""
        from stylebench.metrics import pitch

        return pitch.voted_voiced(list(self.tracks))

    @cached_property
    def majority_f0(self) -> np.ndarray:
        """Per frame, the median F0 of the trackers that agree within 2 st (0 elsewhere)."""
        from stylebench.metrics import pitch

        return pitch.majority_f0(list(self.tracks))

    @cached_property
    def scored_f0(self) -> np.ndarray:
        """:attr:`majority_f0` with run edges trimmed and frames far under (subharmonics) or
        far over the reply's median dropped (:func:`stylebench.metrics.pitch.drop_off_voice`)."""
        from stylebench.metrics import pitch

        return pitch.drop_off_voice(pitch.trim_edges(self.majority_f0, pitch.EDGE_FRAMES))

    @cached_property
    def too_few_voted(self) -> bool:
        """Fewer than :data:`stylebench.metrics.pitch.MIN_VOICED_FRAMES` frames voted voiced: too
        few to compare the trackers on, and F0 cannot score (:attr:`f0_summary`)."""
        from stylebench.metrics import pitch

        return int(self.voted.sum()) < pitch.MIN_VOICED_FRAMES

    @cached_property
    def f0_summary(self) -> tuple[F0Stats, float, float] | str:
        """The statistics of the pitch score's frames (:attr:`scored_f0`) and the reply's own
        octave guard ``(F0Stats, lo_hz, hi_hz)``, or why F0 cannot score (the pitch dimension's
        ``no_f0`` flag): fewer than :data:`stylebench.metrics.pitch.MIN_VOICED_FRAMES` frames
        voted voiced, or too few agreed frames. The one place that rule is applied."""
        from stylebench.metrics import pitch

        if self.too_few_voted:
            n_voted = int(self.voted.sum())
            return f"no_f0: {n_voted} frames voiced by two of the three F0 trackers"
        try:
            stats = pitch.f0_stats(self.scored_f0, extractor="majority of pyworld, praat, swift")
            lo, hi = pitch.speaker_f0_range([self.scored_f0])
        except ValueError as exc:
            return f"no_f0: the trackers agree on too few frames ({exc})"
        return stats, lo, hi

    @property
    def agreed_f0(self) -> np.ndarray | None:
        """The frames every F0-based score reads (:attr:`scored_f0`), or ``None`` when F0 cannot
        score (:attr:`f0_summary` says why)."""
        return None if isinstance(self.f0_summary, str) else self.scored_f0


@dataclass(frozen=True)
class ScoreContext:
    """The run settings per-reply scores depend on: each dimension's own settings (the
    :class:`stylebench.config.MeasureConfig` fields its :attr:`Dimension.settings` names, unset
    ones at the dimension's default) and the quality gate every dimension obeys."""

    #: ``(name, value)`` of the dimensions' settings the run set
    settings: tuple[tuple[str, Any], ...] = ()
    #: ``--min-quality``: a reply whose DNSMOS OVRL is under it has no score on any dimension
    #: (:func:`quality_gate`); ``None``, the default, is no gate
    min_quality: float | None = None

    @classmethod
    def of(cls, min_quality: float | None = None, **settings: Any) -> ScoreContext:
        """A context with these settings (each must be some dimension's; ``ValueError`` if not)."""
        known = setting_defaults()
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise ValueError(f"no dimension has the setting(s) {unknown}; known: {sorted(known)}")
        return cls(tuple(sorted(settings.items())), min_quality)

    def get(self, name: str) -> Any:
        """The value of setting ``name``: the run's, else its dimension's default."""
        for key, value in self.settings:
            if key == name:
                return value
        return setting_defaults()[name]


def setting_defaults() -> dict[str, Any]:
    """Every dimension's settings with their defaults (:attr:`Dimension.settings`)."""
    return {name: v for d in all_dims() for name, v in d.settings.items()}


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
    blocking: ClassVar[tuple[str, ...]] = ("too_short", "not_speech", "reply_truncated")
    #: False: scores are ratings or probabilities, taken as given (may be 0 or negative)
    positive: ClassVar[bool] = True
    #: the threshold's help text (its CLI flag and config field), naming where the default is from
    threshold_help: ClassVar[str]
    #: the per-reply score is a measured acoustic quantity (captions describe it, compare's mean
    #: VSP averages it); emotion's is an index of several cues, rated by humans
    acoustic: ClassVar[bool] = True
    #: one of StyleBench's four dimensions; False: an extension of ours, labelled so in reports
    paper: ClassVar[bool] = True
    #: ``--dim all`` runs it (the paper's acoustic dimensions); the others have their own
    #: default dialogue set
    in_all: ClassVar[bool] = True
    #: the dialogue builder's content pool (``dialogues/pools/<pool>_<lang>.jsonl``): neutral
    #: contents so that only acoustics differ, or emotion's contents that imply the emotion
    content_pool: ClassVar[str] = "neutral"
    #: the relative change (SVD's unit) and the perceptual change are the same quantity, so a
    #: report shows the change once
    change_is_relative: ClassVar[bool] = False
    #: the reference model's step per turn: a field of :class:`stylebench.synth.base.Style` and
    #: its size (a factor for ``rate``, taken as its inverse to attenuate)
    step: ClassVar[tuple[str, float] | None] = None
    #: listening test: forced-choice question and 1-5 intensity scale, and the attention check's
    #: ``Style`` field with three levels of one reply (higher level = stronger attribute)
    question_text: ClassVar[tuple[str, str] | None] = None
    check_levels: ClassVar[tuple[str, tuple[float, float, float]] | None] = None
    #: caption words: (noun, more, less) in English and Mandarin for the rule-based captioner, and
    #: the attribute as a captioning model's prompt names it
    caption_en: ClassVar[tuple[str, str, str] | None] = None
    caption_zh: ClassVar[tuple[str, str, str] | None] = None
    caption_prompt: ClassVar[str]
    #: the offline caption judge's words for a dimension outside its own tables
    #: (:mod:`stylebench.metrics.captions.lexicon`): ``en_nouns``/``zh_nouns`` (words naming the
    #: dimension) and ``en_terms``/``zh_terms`` (word -> +1 more, -1 less); a word may belong to
    #: one dimension only
    caption_lexicon: ClassVar[Mapping[str, Any] | None] = None
    #: where it comes in prose and settings (captions, the thresholds line and fields, the
    #: extractors): lower first; the registry's own order is the order of report cells
    order: ClassVar[int] = 9
    #: its samples come in named groups (the emotion a sample asks for, ``Sample.emotion``):
    #: the dialogue builder plans each group's cells from the dimension's content pool, and
    #: compare's paper tables give VSP per group and turn pair (the paper's Table 3)
    groups: ClassVar[tuple[str, ...]] = ()
    #: the automatic probe (``--emotion-probe``, a speech emotion recogniser) scores its replies
    probed: ClassVar[bool] = False
    #: people rate it in a listening test (the report's human block); the caption probe's
    #: verdicts are then compared with their majority
    rated_by_humans: ClassVar[bool] = False
    #: why ``stylebench pairs`` cannot score it from two files (said when a table names it)
    files_note: ClassVar[str] = ""
    #: the run settings its per-reply score reads (:class:`stylebench.config.MeasureConfig`
    #: fields, the same names) and their defaults; :class:`ScoreContext` carries them
    settings: ClassVar[Mapping[str, Any]] = {}

    def run_notes(self, ctx: ScoreContext, turn_scores: Sequence[ScoredTurn]) -> list[str]:
        """The report's notes on how this run scored this dimension: ``turn_scores`` are its
        turns' scores in the run (``sample_id``, ``flags``, ``error``); none by default."""
        return []

    def calibration_notes(self, model: str) -> list[str]:
        """The report's notes on what calibration model ``model`` means on this dimension (for
        a run with samples of it); none by default."""
        return []

    @abstractmethod
    def change(self, a: float, b: float) -> float:
        """Change from score ``a`` to ``b`` on the perceptual scale (inputs already checked)."""

    def relative(self, a: float, b: float) -> float:
        """Signed relative change ``100*(b-a)/a`` on the linear scale (SVD's unit)."""
        return 100.0 * (b - a) / a

    def style(
        self, direction: str, steps: int, size: float | None = None, emotion: str = ""
    ) -> dict:
        """The reference model's :class:`~stylebench.synth.base.Style` fields after ``steps``
        steps in ``direction`` (``size`` overrides :attr:`step`'s)."""
        if self.step is None:
            raise ValueError(f"the reference model has no style step for {self.name}")
        field_name, default = self.step
        size = default if size is None else size
        if field_name == "rate":
            factor = size if direction == "intensify" else 1.0 / size
            return {"rate": factor**steps}
        sign = 1.0 if direction == "intensify" else -1.0
        if field_name in SYNTH_KNOBS:
            return {field_name: sign * size * steps}
        return {"extra": ((field_name, sign * size * steps),)}

    def transform(self, wave: np.ndarray, sr: int, amount: float) -> np.ndarray:
        """Apply this dimension's own reference-step knob (``step[0]``, one no synthesiser
        implements) to a synthesised reply: ``amount`` is the signed step total. A dimension
        whose step is a synthesiser knob (:data:`SYNTH_KNOBS`) has none."""
        raise NotImplementedError(f"{self.name}: its step is a synthesiser knob")

    def reply_values(self, frames: ReplyFrames) -> tuple[dict[str, float], list[str]]:
        """Feature values this dimension measures on a reply, and flags (``no_<value>: why``):
        the features stage calls every dimension's once per reply and keeps what they return
        (the values its :meth:`turn_values` reads, with what the validity rules read of them).
        A dimension whose score is not measured from the reply's audio (emotion's ratings) adds
        only what it uses beside them."""
        return {}, []

    def question(self, emotion: str = "") -> tuple[str, str]:
        """The listening test's forced-choice question and 1-5 scale for a sample."""
        if self.question_text is None:
            raise ValueError(f"the listening test has no question for {self.name}")
        return self.question_text

    def extractor(self, cfg: Any) -> str:
        """How a reply's score is measured under run config ``cfg`` (the report's words)."""
        return ""

    def gated_turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        """:meth:`turn_values`, then the ``--min-quality`` gate (:func:`quality_gate`): what
        every scorer calls, so the gate holds on every dimension and every command."""
        values, extra = self.turn_values(sample, features, ctx)
        return quality_gate(values, features, ctx.min_quality), extra

    @abstractmethod
    def turn_values(
        self, sample: Sample | None, features: Mapping[int, FeatureRecord], ctx: ScoreContext
    ) -> tuple[TurnValues, tuple[str, ...]]:
        """Each turn's score from its ok feature record, and flags for the whole sample.

        ``features`` holds only turns whose features are ok; a turn left out of the result, or
        given a string, has no score (the string says why).
        """


def blocking_reason(
    values: Mapping[str, float], flags: Sequence[str], blocking: Sequence[str]
) -> str | None:
    """Why a reply has no score, when a flag of ``blocking`` is among its ``flags``: the reason
    (:data:`stylebench.metrics.validity.REASONS`) of the first, in ``blocking``'s order, with
    one exception. A reply with at least ``MIN_SPEECH_S`` of detected sound that is flagged both
    too short and not speech is called not speech: its shortness is then only its syllable
    count, and sound that is not speech has no syllables (30 minutes of noise, a square wave:
    an empty transcript is not a short reply). Every scorer's reason comes from here, so a file
    measured alone and a run's reply are said the same way."""
    from stylebench.metrics.validity import MIN_SPEECH_S, REASONS

    hit = [f for f in blocking if f in flags]
    long_enough = values.get("active_s", 0.0) >= MIN_SPEECH_S
    if long_enough and "not_speech" in hit and "too_short" in hit:
        hit.remove("too_short")
    return REASONS[hit[0]] if hit else None


def value_or_reason(
    values: Mapping[str, float], flags: list[str], key: str, blocking: tuple[str, ...] = ()
) -> float | str:
    """``values[key]``, or why it is missing: the reason of its blocking flags
    (:func:`blocking_reason`), else the feature's ``no_*`` flags."""
    if (reason := blocking_reason(values, flags, blocking)) is not None:
        return reason
    if key in values:
        return values[key]
    why = [f for f in flags if f.startswith(("no_", "asr_empty"))]
    return f"{key} unavailable: " + ("; ".join(why) or "not measured")


def quality_gate(
    values: TurnValues, features: Mapping[int, FeatureRecord], min_quality: float | None
) -> TurnValues:
    """``values`` with each scored turn whose reply's DNSMOS OVRL is under ``min_quality``
    replaced by the ``low_quality`` reason, and each scored turn with no OVRL (quality not
    measured) by the ``no_quality`` reason (:data:`stylebench.metrics.validity.REASONS`). A turn
    already unscored keeps its own reason; ``min_quality=None`` changes nothing."""
    if min_quality is None:
        return values
    from stylebench.metrics.validity import REASONS

    out = dict(values)
    for k, v in values.items():
        f = features.get(k)
        if isinstance(v, str) or f is None:
            continue
        ovrl = f.values.get("dnsmos_ovrl")
        if ovrl is None:
            out[k] = REASONS["no_quality"]
        elif ovrl < min_quality:
            out[k] = REASONS["low_quality"]  # stable text: reports count reasons
    return out


_LOADED: dict[str, Dimension] = {}


def all_dims() -> tuple[Dimension, ...]:
    """Every registered dimension, in registry order."""
    return tuple(dimension(n) for n in DIMENSIONS)


def in_order() -> tuple[Dimension, ...]:
    """Every registered dimension by :attr:`Dimension.order` (pitch, volume, speed, emotion, ...)."""
    return tuple(sorted(all_dims(), key=lambda d: d.order))


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


def owner_of_knob(knob: str) -> Dimension:
    """The dimension whose reference step is the ``Style.extra`` knob ``knob``.

    Raises:
        ValueError: no dimension steps that knob.
    """
    for dim in all_dims():
        if dim.step is not None and dim.step[0] == knob:
            return dim
    raise ValueError(f"no dimension has a reference step on the style knob {knob!r}")
