"""The relevance judge interface: ``judge(JudgeRequest) -> Verdict``.

Two questions are asked of every reply set (DESIGN, "Relevance gating"):

- ``srd`` (single-turn relevance): does the turn-1 reply answer the turn-1 request?
- ``mrd`` (multi-turn consistency): do the turn-2 and turn-3 replies keep the content of turn 1
  while responding to the new (style) request? The judge sees all three exchanges.

A verdict is ``relevant``, ``irrelevant`` or ``unparseable``; an unparseable verdict is its own
label, kept for judge replies that cannot be parsed, and is never counted as either of the
others. A request holding an empty reply is answered ``irrelevant`` without asking any backend
(:func:`empty_reply_verdict`): a reply that says nothing answers nothing, whoever judges it.

The backends live beside this module (``embed``, ``openai_api``, ``hf``, ``vllm_engine``) and are
named in :data:`JUDGES`; prompts and strict parsing of LLM replies are in :mod:`.prompting`.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Any, Literal, Protocol

from stylebench.errors import UserError
from stylebench.registry import LazyRegistry

JudgeKind = Literal["srd", "mrd"]
Label = Literal["relevant", "irrelevant", "unparseable"]
LABELS: tuple[str, ...] = ("relevant", "irrelevant", "unparseable")
KINDS: tuple[str, ...] = ("srd", "mrd")
EMPTY_REPLY = "empty reply"


@dataclass(frozen=True)
class JudgeRequest:
    """What the judge is asked about one sample.

    Attributes:
        kind: ``"srd"`` (one exchange) or ``"mrd"`` (the three exchanges of a sample).
        lang: ``"en"`` or ``"zh"``.
        turns: ``(user request text, reply transcript)`` pairs, oldest first. Reply transcripts
            are untrusted model output.
    """

    kind: JudgeKind
    lang: str
    turns: tuple[tuple[str, str], ...]
    #: what the judge should know about each reply beyond its text, one entry per exchange
    #: ("" for none): e.g. that speech recognition heard another language than ``lang``, so the
    #: transcript is a translation
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        want = {"srd": 1, "mrd": 3}.get(self.kind)
        if want is None:
            raise ValueError(f"judge kind must be 'srd' or 'mrd', got {self.kind!r}")
        if len(self.turns) != want:
            raise ValueError(
                f"a {self.kind} request needs {want} exchange(s), got {len(self.turns)}"
            )
        if self.notes and len(self.notes) != want:
            raise ValueError(f"a {self.kind} request needs {want} note(s) or none")

    def fields(self) -> dict[str, Any]:
        """The request as a dict for keys and fingerprints; without ``notes`` when no exchange
        has one, so requests made before notes existed keep their keys."""
        # asdict's deep copy, for each of a run's 29K requests, only to be hashed: its fields
        # are strings and tuples of strings, which JSON writes as asdict's copies
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in dataclass_fields(self)}
        if not any(self.notes):
            out.pop("notes")
        return out


@dataclass(frozen=True)
class Verdict:
    """The judge's answer.

    Attributes:
        label: ``relevant``, ``irrelevant`` or ``unparseable``.
        score: the backend's confidence that the answer is ``relevant`` in [0, 1], if it has one.
        reason: a short reason (from the judge, or why the reply could not be parsed).
        raw: the backend's raw output, kept for audit.
    """

    label: Label
    score: float | None = None
    reason: str = ""
    raw: str = ""

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"verdict label must be one of {LABELS}, got {self.label!r}")


class JudgeError(UserError, RuntimeError):
    """A judge backend could not give a verdict (unreachable, HTTP error, broken response).

    Unlike an ``unparseable`` verdict this is a failure: the judge stage records it as an error
    and retries it on resume.
    """


class Judge(Protocol):
    """A relevance judge backend."""

    name: str

    def judge(self, req: JudgeRequest) -> Verdict: ...

    def describe(self) -> dict[str, Any]:
        """Backend, model, revision, prompt hashes, decode settings: part of every cache key."""
        ...


JUDGES = LazyRegistry.from_pairs(
    "judge",
    [
        ("offline", "stylebench.metrics.judges.embed:EmbeddingJudge"),
        ("openai", "stylebench.metrics.judges.openai_api:OpenAIJudge"),
        ("transformers", "stylebench.metrics.judges.hf:TransformersJudge"),
        ("vllm", "stylebench.metrics.judges.vllm_engine:VLLMJudge"),
    ],
)


def empty_reply_verdict(req: JudgeRequest) -> Verdict | None:
    """``irrelevant`` when a reply of ``req`` is empty (only whitespace), else ``None``.

    An empty reply does not answer its request (SRD), and an empty turn-1 or later reply leaves
    nothing kept or carried over (MRD), so the answer is known without a backend. Giving it here,
    once for every backend, keeps ``unparseable`` for judge replies that cannot be parsed and
    spares an LLM call. ``score`` is 0: there is no chance that the reply is relevant.
    """
    empty = [k for k, (_, reply) in enumerate(req.turns, 1) if not reply.strip()]
    if not empty:
        return None
    where = "" if req.kind == "srd" else f" (turn {', '.join(map(str, empty))})"
    return Verdict("irrelevant", 0.0, f"{EMPTY_REPLY}{where}")
