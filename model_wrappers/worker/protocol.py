"""The messages the runner and a model worker exchange, one JSON object per line.

Runner -> worker: :class:`Init` once, then :class:`Respond` per turn, then :class:`Shutdown`.
Worker -> runner: :class:`Ready` (or :class:`Error`) after ``Init``; :class:`Reply` (or
:class:`Error`) after each ``Respond``. Audio travels as wav file paths, never inline: both sides
run on one machine and share the file system.

No message carries the dialogue's answer key (the script only the embedded calibration models
may read, and they never run in a worker): :class:`Respond` refuses turns that hold one.

Every message is a frozen dataclass; :func:`encode` adds its ``kind`` and :func:`decode` rebuilds
it, rejecting unknown kinds and fields so that a runner and worker from different stylebench
versions fail loudly instead of misreading each other.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from stylebench.records import DecodeConfig, Turn

PROTOCOL_VERSION = 2  # 2: settings / settled


@dataclass(frozen=True)
class Init:
    """Load the model ``model`` (a registry name or ``module:Class``) with ``model_args``."""

    model: str
    model_args: dict[str, str] = field(default_factory=dict)
    protocol: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class Ready:
    """The model is loaded; ``describe`` is its :meth:`SpeechModel.describe`."""

    describe: dict[str, Any]
    pid: int
    python: str
    python_version: str
    stylebench: str
    protocol: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class Respond:
    """One call of ``respond(history, user_turn, decode)``.

    Raises:
        ValueError: a turn carries the dialogue script (``raw["script"]``).
    """

    history: tuple[Turn, ...]
    user_turn: Turn
    decode: DecodeConfig

    def __post_init__(self) -> None:
        for turn in (*self.history, self.user_turn):
            if "script" in turn.raw:
                raise ValueError(
                    "worker protocol: a turn carries the dialogue script; the answer key never "
                    "goes to a worker"
                )


@dataclass(frozen=True)
class Reply:
    """The assistant turn ``respond`` returned (``audio`` is a wav path)."""

    turn: Turn


@dataclass(frozen=True)
class Error:
    """An exception raised in the worker: its class name, message and formatted traceback."""

    type: str
    message: str
    traceback: str = ""


@dataclass(frozen=True)
class Settings:
    """Ask what the model's decoder gets for ``decode`` (:meth:`SpeechModel.decode_settings`)."""

    decode: DecodeConfig


@dataclass(frozen=True)
class Settled:
    """The answer to :class:`Settings` (None: the wrapper does not say)."""

    settings: dict[str, Any] | None


@dataclass(frozen=True)
class Shutdown:
    """Finish and exit."""


Message = Init | Ready | Respond | Reply | Error | Settings | Settled | Shutdown
KINDS: dict[str, type] = {
    "init": Init,
    "ready": Ready,
    "respond": Respond,
    "reply": Reply,
    "error": Error,
    "settings": Settings,
    "settled": Settled,
    "shutdown": Shutdown,
}
_KIND_OF = {cls: kind for kind, cls in KINDS.items()}


def _turn(d: dict[str, Any]) -> Turn:
    return Turn(d["role"], d["text"], d["audio"], d["sr"], dict(d.get("raw") or {}))


def encode(msg: Message) -> bytes:
    """One line of UTF-8 JSON (newline included) for ``msg``.

    Arrays and numpy numbers in a model's ``raw`` extras travel as their values (lists,
    numbers); other values JSON cannot hold are written as their ``repr``.
    """
    body = {"kind": _KIND_OF[type(msg)], **dataclasses.asdict(msg)}
    return (json.dumps(body, ensure_ascii=False, default=_plain) + "\n").encode("utf-8")


def _plain(value: Any) -> Any:
    tolist = getattr(value, "tolist", None)  # numpy arrays and scalars, torch tensors
    if callable(tolist):
        try:
            return tolist()
        except Exception:  # noqa: BLE001 - a tolist that fails: fall back to the text
            pass
    return repr(value)


def decode(line: bytes | str) -> Message:
    """Rebuild the message in ``line``; malformed input raises ValueError naming the problem."""
    try:
        body = json.loads(line)
    except json.JSONDecodeError as exc:
        text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
        raise ValueError(f"worker protocol: not a JSON line: {text[:200]!r}") from exc
    if not isinstance(body, dict) or body.get("kind") not in KINDS:
        raise ValueError(f"worker protocol: unknown message {str(body)[:200]!r}")
    cls = KINDS[body.pop("kind")]
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(body) - names)
    if unknown:
        raise ValueError(f"worker protocol: {cls.__name__} has no fields {unknown}")
    try:
        if cls is Respond:
            body["history"] = tuple(_turn(t) for t in body["history"])
            body["user_turn"] = _turn(body["user_turn"])
            body["decode"] = DecodeConfig(**body["decode"])
        elif cls is Settings:
            body["decode"] = DecodeConfig(**body["decode"])
        elif cls is Reply:
            body["turn"] = _turn(body["turn"])
        return cls(**body)
    except (TypeError, KeyError, AttributeError) as exc:
        raise ValueError(
            f"worker protocol: bad {cls.__name__}: {type(exc).__name__}: {exc}"
        ) from exc
