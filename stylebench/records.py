"""Typed records that flow between layers and into the run store.

Every record written to a stage file is one of the dataclasses below, serialised with
:func:`to_json_dict`. Records are keyed by ``(sample_id, turn)``; ``status`` is ``"ok"`` or
``"error"``, and an error record always carries the reason a user can act on.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "error"]
DIMS: tuple[str, ...] = ("speed", "volume", "pitch", "emotion")
ACOUSTIC_DIMS: tuple[str, ...] = ("speed", "volume", "pitch")
EMOTIONS: tuple[str, ...] = ("happy", "sad", "angry", "surprised", "fearful", "disgusted")
DIRECTIONS: tuple[str, ...] = ("intensify", "attenuate")
LANGS: tuple[str, ...] = ("en", "zh")
N_TURNS = 3


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

    def __post_init__(self) -> None:
        if self.dim not in DIMS:
            raise ValueError(f"sample {self.id}: unknown dim {self.dim!r}; expected one of {DIMS}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"sample {self.id}: unknown direction {self.direction!r}")
        if len(self.turns) != N_TURNS:
            raise ValueError(f"sample {self.id}: expected {N_TURNS} turns, got {len(self.turns)}")

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

    temperature: float = 0.0
    top_p: float = 1.0
    max_new_tokens: int = 1024
    seed: int = 0


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
    elapsed_s: float = 0.0
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


RECORD_TYPES: dict[str, type] = {
    "respond": RespondRecord,
    "transcribe": TranscriptRecord,
    "features": FeatureRecord,
    "judge": JudgeRecord,
    "probe": ProbeRecord,
}


def to_json_dict(record: Any) -> dict[str, Any]:
    """Serialise a record dataclass to a JSON-ready dict."""
    return dataclasses.asdict(record)


def from_json_dict(stage: str, d: dict[str, Any]) -> Any:
    """Rebuild the typed record of ``stage`` from its JSON dict, ignoring unknown keys."""
    cls = RECORD_TYPES[stage]
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in d.items() if k in names})
