"""Typed records that flow between layers and into the run store.

Every record written to a stage file is one of the dataclasses below, serialised with
:func:`to_json_dict`. Records are keyed by ``(sample_id, turn)``; ``status`` is ``"ok"`` or
``"error"``, and an error record always carries the reason a user can act on.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar

Status = Literal["ok", "error"]
Key = tuple[str, int]  # (sample_id, turn) of a stage record
#: the style dimensions, one module each (stylebench.metrics.dims). Literals: records are the base
#: layer and never import metrics (docs/architecture.md#layers); tests/test_imports.py checks that
#: ``DIMS`` equals, in order, the names of ``stylebench.metrics.dims.base.DIMENSIONS`` and that
#: ``ACOUSTIC_DIMS`` (what ``--dim all`` runs: the paper's acoustic dimensions) are the ones whose
#: ``Dimension.in_all`` is set.
DIMS: tuple[str, ...] = ("speed", "volume", "pitch", "emotion", "expressiveness")
ACOUSTIC_DIMS: tuple[str, ...] = ("speed", "volume", "pitch")
EMOTIONS: tuple[str, ...] = ("happy", "sad", "angry", "surprised", "fearful", "disgusted")
DIRECTIONS: tuple[str, ...] = ("intensify", "attenuate")
LANGS: tuple[str, ...] = ("en", "zh")
TURNS: tuple[int, ...] = (1, 2, 3)
PAIRS: tuple[tuple[int, int], ...] = ((1, 2), (2, 3))
N_TURNS = len(TURNS)


@dataclass(frozen=True)
class UserTurn:
    """One user turn of a dialogue sample: what is said, and the wav that says it."""

    text: str
    audio: str  # path relative to the dialogue set folder
    sr: int
    sha256: str


@dataclass(frozen=True)
class Sample:
    """A three-turn dialogue that varies exactly one style dimension."""

    id: str
    set_version: str
    dim: str
    direction: str
    lang: str
    voice: str
    content: str
    turns: tuple[UserTurn, ...]
    emotion: str = ""

    #: the protocol whose dialogue this is (a class fact, not a field: a StyleBench sample's
    #: ``asdict``, and so every record key made from it, is unchanged by it)
    PROTOCOL: ClassVar[str] = "stylebench"
    #: relevance is judged per turn (SRD on each turn) rather than SRD on turn 1 plus MRD
    SRD_EVERY_TURN: ClassVar[bool] = False

    def __post_init__(self) -> None:
        if self.dim not in DIMS:
            raise ValueError(f"sample {self.id}: unknown dim {self.dim!r}; expected one of {DIMS}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"sample {self.id}: unknown direction {self.direction!r}")
        self._check_turns()

    def _check_turns(self) -> None:
        if len(self.turns) != N_TURNS:
            raise ValueError(f"sample {self.id}: expected {N_TURNS} turns, got {len(self.turns)}")

    @property
    def turn_numbers(self) -> tuple[int, ...]:
        """The 1-based turns of this dialogue: :data:`TURNS` for a StyleBench sample."""
        return tuple(range(1, len(self.turns) + 1))

    @property
    def instructed(self) -> bool:
        """Whether this dialogue carries style instructions (a persistence control does not)."""
        return True

    def content_of(self, turn: int) -> str:
        """What the scripted answer of ``turn`` says (a StyleBench sample: one content)."""
        return self.content

    def question_of(self, turn: int) -> str:
        """The user text a reply to ``turn`` is judged relevant to (SRD): the turn's text."""
        return self.turns[turn - 1].text

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Sample:
        turns = tuple(UserTurn(**t) for t in d["turns"])
        return Sample(**{**d, "turns": turns})


@dataclass(frozen=True)
class Turn:
    """One spoken turn in a conversation: a model's reply or a user's request.

    ``audio`` is a wav path on disk (never an encoded string); ``raw`` keeps model extras such as
    token counts or the text channel of a dual-output model.
    """

    role: Literal["user", "assistant"]
    text: str
    audio: str | None
    sr: int | None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DecodeConfig:
    """Decoding settings handed to a model wrapper; part of every response cache key."""

    temperature: float = field(
        default=0.0, metadata={"help": "sampling temperature (0 = greedy)", "commands": ("run",)}
    )
    top_p: float = field(
        default=1.0, metadata={"help": "nucleus sampling mass", "commands": ("run",)}
    )
    max_new_tokens: int = field(
        default=1024, metadata={"help": "most tokens per reply", "commands": ("run",)}
    )
    seed: int = field(
        default=0, metadata={"help": "seed for decoding and the bootstrap", "commands": ("run",)}
    )


@dataclass(frozen=True)
class RespondRecord:
    sample_id: str
    turn: int
    status: Status
    fp: str  # fingerprint of (model, revision, decode, dialogue, turn): resume key
    text: str = ""
    audio: str = ""  # path relative to the run folder
    sr: int = 0
    sha256: str = ""
    elapsed_s: float = 0.0  # the model's seconds for this turn; never in the fp
    error: str = ""
    stage: str = "respond"
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TranscriptRecord:
    sample_id: str
    turn: int
    status: Status
    fp: str
    text: str = ""
    lang: str = ""
    words: list[list[Any]] = field(default_factory=list)  # [word, start_s, end_s]
    backend: str = ""
    model: str = ""
    flags: list[str] = field(default_factory=list)
    error: str = ""
    stage: str = "transcribe"
    spoken_lang: str = ""  # the ASR's language ID (metrics/asr/transcript.py); "" = not asked
    spoken_lang_p: float = 0.0
    declared_lang_p: float = 0.0
    mean_logprob: float = 0.0  # the ASR's certainty (metrics/asr/transcript.py)
    unsure_word_share: float = 0.0
    unsure_stretch_share: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict)  # where it was computed (never in the fp)
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


@dataclass(frozen=True)
class FeatureRecord:
    sample_id: str
    turn: int
    status: Status
    fp: str
    values: dict[str, float] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    error: str = ""
    stage: str = "features"
    raw: dict[str, Any] = field(default_factory=dict)  # where it was computed (never in the fp)
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


@dataclass(frozen=True)
class JudgeRecord:
    """A relevance verdict. ``turn`` 1 holds the SRD verdict (turn-1 reply), ``turn`` 0 the MRD
    verdict of the whole sample (see ``stylebench.stages.judge``)."""

    sample_id: str
    turn: int
    status: Status
    fp: str
    kind: str = ""  # "srd" | "mrd"
    label: str = ""  # "relevant" | "irrelevant" | "unparseable"; "" on error
    score: float | None = None
    reason: str = ""
    raw: str = ""
    backend: str = ""
    model: str = ""
    cached: bool = False
    error: str = ""
    stage: str = "judge"
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


@dataclass(frozen=True)
class ProbeRecord:
    """An automatic emotion recogniser's class probabilities for one reply (``stages.probe``)."""

    sample_id: str
    turn: int
    status: Status
    fp: str
    probs: dict[str, float] = field(default_factory=dict)  # our labels, see metrics.emotion_probe
    top: str = ""
    top_prob: float = 0.0
    backend: str = ""
    model: str = ""
    error: str = ""
    stage: str = "probe"
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


@dataclass(frozen=True)
class CaptionRecord:
    """A speaking-style caption of one reply (``stages.caption``); ``prompt`` names its file."""

    sample_id: str
    turn: int
    status: Status
    fp: str
    text: str = ""
    backend: str = ""
    model: str = ""
    prompt: str = ""
    raw: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    stage: str = "caption"
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


@dataclass(frozen=True)
class CaptionVerdictRecord:
    """Caption judge verdict for the pair (turn-1, turn): increased/decreased/same/cannot_tell."""

    sample_id: str
    turn: int
    status: Status
    fp: str
    label: str = ""
    levels: list[Any] = field(default_factory=list)  # [before, after] ordinal levels or None
    reason: str = ""
    backend: str = ""
    model: str = ""
    cached: bool = False
    error: str = ""
    stage: str = "caption_judge"
    elapsed_s: float = 0.0  # seconds computing it (stage.timed); never in the fp


R = TypeVar("R")


class StageRecord(Protocol):
    """What every stage record has (the stage loop reads these): its key, status and
    fingerprint, why it failed, and the seconds computing it."""

    @property
    def sample_id(self) -> str: ...
    @property
    def turn(self) -> int: ...
    @property
    def status(self) -> Status: ...
    @property
    def fp(self) -> str: ...
    @property
    def error(self) -> str: ...
    @property
    def elapsed_s(self) -> float: ...


@dataclass(frozen=True)
class RecordKind(Generic[R]):
    """A stage's records: its file (``<name>.jsonl``), its key in a run's records, and its type.

    ``RunRecords.of(FEATURES)`` is a ``dict[Key, FeatureRecord]`` to a type checker, so a stage
    that hands transcripts where features are expected fails the check (scripts/typecheck.py).
    """

    name: str
    type: type[R]


RESPONSES = RecordKind("respond", RespondRecord)
TRANSCRIPTS = RecordKind("transcribe", TranscriptRecord)
FEATURES = RecordKind("features", FeatureRecord)
JUDGEMENTS = RecordKind("judge", JudgeRecord)
PROBE_SCORES = RecordKind("probe", ProbeRecord)
CAPTIONS = RecordKind("caption", CaptionRecord)
CAPTION_VERDICTS = RecordKind("caption_judge", CaptionVerdictRecord)
#: the built-in stages' records, in the order they run; a stage may declare its own kind (and
#: record type) in its module instead (``stages/loudness.py``): the store and the stage loop take
#: a ``RecordKind``, so a kind needs no entry here
RECORD_KINDS: tuple[RecordKind[Any], ...] = (
    RESPONSES,
    TRANSCRIPTS,
    FEATURES,
    JUDGEMENTS,
    PROBE_SCORES,
    CAPTIONS,
    CAPTION_VERDICTS,
)
RECORD_TYPES: dict[str, type] = {k.name: k.type for k in RECORD_KINDS}


class RunRecords(dict[str, dict[Key, Any]]):
    """A run's current records by stage name; :meth:`of` reads one stage's, typed."""

    def of(self, kind: RecordKind[R]) -> dict[Key, R]:
        """The records of ``kind``'s stage (``KeyError`` when this holds none for it: a stage
        that reads records it did not declare as an input fails at once)."""
        return self[kind.name]


@dataclass(frozen=True)
class StageTiming:
    """Where one invocation's time went in one stage: a line of the run folder's
    ``timings.jsonl`` (``stylebench.pipeline.timings``). Never part of a fingerprint or a cell.

    ``wall_s`` is the stage's whole time in the driver (building its backend, planning, loading,
    computing, appending); ``compute_s`` the part spent computing units or waiting for the
    workers that compute them; ``records_s`` the sum of the computed records' ``elapsed_s``
    (above ``compute_s`` when units ran in parallel); ``cpu_s`` this process's CPU time (not a
    pool's or Ray's workers'). ``computed`` counts the ok records written, ``failed`` the error
    records, ``reused`` the records already ok from an earlier invocation.
    """

    invocation: str
    command: str
    stage: str
    started_at: str
    wall_s: float
    compute_s: float
    records_s: float
    cpu_s: float
    computed: int
    reused: int
    failed: int
    kind: Literal["stage"] = "stage"


@dataclass(frozen=True)
class InvocationTiming:
    """The end of one invocation (``run``, ``score``): its wall and CPU time. A killed invocation
    has stage lines but no such line."""

    invocation: str
    command: str
    started_at: str
    wall_s: float
    cpu_s: float
    kind: Literal["invocation"] = "invocation"


#: the lines of ``timings.jsonl`` by their ``kind``
TIMING_TYPES: dict[str, type] = {"stage": StageTiming, "invocation": InvocationTiming}


class RecordError(ValueError):
    """A record that does not match its schema (wrong type, NaN, unknown status)."""


_SCALARS: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), bool: (bool,)}


def _kind(hint: Any) -> str:
    """How a field of type ``hint`` is checked (resolved once per record type)."""
    origin = typing.get_origin(hint)
    if hint in _SCALARS:
        return "scalar"
    if hint is float:
        return "float"
    if origin is typing.Union or str(hint) == "float | None":
        return "optional float"
    if origin is Literal:
        return "literal"
    if origin in (dict, list):
        return "container"
    return "any"


def _check_number(cls: type, name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RecordError(f"{cls.__name__}.{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise RecordError(f"{cls.__name__}.{name} must be finite, got {value!r}")


def _check_field(cls: type, name: str, hint: Any, value: Any, kind: str = "") -> None:
    kind = kind or _kind(hint)
    if kind == "scalar":
        if not isinstance(value, _SCALARS[hint]) or (hint is int and isinstance(value, bool)):
            raise RecordError(
                f"{cls.__name__}.{name} must be {hint.__name__}, got {type(value).__name__}"
            )
    elif kind == "float":
        _check_number(cls, name, value)
    elif kind == "optional float":
        if value is not None:
            _check_number(cls, name, value)
    elif kind == "literal":
        if value not in typing.get_args(hint):
            raise RecordError(
                f"{cls.__name__}.{name} must be one of {typing.get_args(hint)}, got {value!r}"
            )
    elif kind == "container":
        origin = typing.get_origin(hint)
        if not isinstance(value, origin):
            raise RecordError(
                f"{cls.__name__}.{name} must be a {origin.__name__}, got {type(value).__name__}"
            )
        if not value:  # empty: plain JSON (most flags and raw fields; read 43K times a run)
            return
        if name == "values":  # feature values: finite numbers by name
            for k, v in value.items():
                if type(v) is not float or not math.isfinite(v):  # the common case, fast
                    _check_number(cls, f"values[{k!r}]", v)
            if all(type(k) is str for k in value):  # finite numbers by text: plain JSON
                return
        try:  # nested data must be plain JSON: no NaN/inf, no objects
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise RecordError(f"{cls.__name__}.{name} is not plain JSON: {exc}") from None


@functools.cache
def _schema(cls: type) -> tuple[tuple[str, Any, str], ...]:
    """Each field's name, resolved type hint and how it is checked, once per class: resolving
    the hints (string annotations) took most of the time of validating a record, on every
    append and every read."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name], _kind(hints[f.name])) for f in dataclasses.fields(cls))


def validate_record(record: Any) -> Any:
    """Check every field of a stage record against its declared type; returns the record.

    Raises:
        RecordError: a field of the wrong type, a non-finite number, an unknown status, or nested
            data that is not plain JSON (what a hostile or broken model reply can carry).
    """
    cls = type(record)
    for name, hint, kind in _schema(cls):
        _check_field(cls, name, hint, getattr(record, name), kind)
    return record


def to_json_dict(record: Any) -> dict[str, Any]:
    """Serialise a record dataclass to a JSON-ready dict (validated first).

    Shallow: nested values (a transcript's words, feature values, ``raw``) are the record's own,
    validated as plain JSON, to be dumped, not changed (``dataclasses.asdict`` copied them
    deeply for every record appended, for nothing).
    """
    validate_record(record)
    return {name: getattr(record, name) for name, _, _ in _schema(type(record))}


def kind_of(stage: RecordKind[R] | str) -> RecordKind[R]:
    """``stage`` itself, or the built-in kind of that name (:data:`RECORD_KINDS`).

    Raises:
        KeyError: a name no built-in kind has (a stage with its own kind passes the kind).
    """
    if isinstance(stage, RecordKind):
        return stage
    for kind in RECORD_KINDS:
        if kind.name == stage:
            return kind
    raise KeyError(f"no built-in record kind {stage!r}; pass the stage's RecordKind")


def from_json_dict(stage: RecordKind[R] | str, d: dict[str, Any]) -> R:
    """Rebuild the typed record of ``stage`` (its kind, or a built-in kind's name) from its JSON
    dict, ignoring unknown keys.

    Raises:
        RecordError: the dict does not make a valid record of that stage.
    """
    return _build(kind_of(stage).type, d)


def timing_from_json(d: dict[str, Any]) -> Any:
    """Rebuild a line of ``timings.jsonl`` (:data:`TIMING_TYPES`, by its ``kind``).

    Raises:
        RecordError: an unknown kind, or the dict does not make a valid line of its kind.
    """
    kind = d.get("kind")
    if kind not in TIMING_TYPES:
        raise RecordError(f"not a timing line: kind {kind!r}")
    return _build(TIMING_TYPES[kind], d)


@functools.cache
def _names(cls: type) -> frozenset[str]:
    return frozenset(name for name, _, _ in _schema(cls))


def _build(cls: type, d: dict[str, Any]) -> Any:
    names = _names(cls)
    try:
        record = cls(**{k: v for k, v in d.items() if k in names})
    except TypeError as exc:
        raise RecordError(f"not a {cls.__name__}: {exc}") from None
    return validate_record(record)


def error_record(stage: RecordKind[R] | str, key: Key, fp: str, message: str) -> R:
    """An error record of ``stage`` (its kind, or a built-in kind's name) for ``key``, e.g. for a
    stored line that no longer loads."""
    make: Any = kind_of(stage).type  # every record type starts (sample_id, turn, status, fp)
    return make(key[0], key[1], "error", fp, error=message)
