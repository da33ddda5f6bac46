"""Captioner and caption-judge interfaces, their registries, and the caption instructions.

A captioner describes how one reply is spoken: ``caption(CaptionRequest) -> str``. A caption
judge compares the captions of two consecutive turns for one dimension:
``compare(CompareRequest) -> CaptionVerdict`` with a label in :data:`VERDICTS`. Both describe
themselves (``describe()``: backend, model, prompt hashes, decode), which is part of every
record's fingerprint. The instructions a captioner hears are our own files
(``prompts/caption_<dim>_v1.txt``) or a user's folder of ``<dim>.txt``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, Protocol

from stylebench.errors import MissingFile
from stylebench.registry import LazyRegistry

CAPTION_PROMPT_VERSION = "v1"
#: a judge's answers; ``unparseable`` is an LLM reply that is not one of the others (its own label)
VERDICTS: tuple[str, ...] = ("increased", "decreased", "same", "cannot_tell", "unparseable")
Verdict = Literal["increased", "decreased", "same", "cannot_tell", "unparseable"]
#: the verdict that follows each instructed direction
WANTED = {"intensify": "increased", "attenuate": "decreased"}


class CaptionError(RuntimeError):
    """A captioner gave no caption (endpoint down, model not loadable); retried on resume."""


@dataclass(frozen=True)
class Instruction:
    """What a captioner is asked, for one dimension: the file's text and its sha256."""

    dim: str
    text: str
    name: str
    sha256: str
    source: str


@dataclass(frozen=True)
class CaptionRequest:
    """One reply to describe: its wav, the sample's dimension and language, the instruction,
    and (for the ``features`` captioner) the measured values of this turn and of turn 1."""

    audio: str
    dim: str
    lang: str
    instruction: Instruction
    turn: int = 1
    values: dict[str, float] = field(default_factory=dict)
    turn1_values: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class CompareRequest:
    """Two captions of consecutive turns (untrusted model text) and the instructed dimension."""

    dim: str
    lang: str
    before: str
    after: str


@dataclass(frozen=True)
class CaptionVerdict:
    """``label`` in :data:`VERDICTS`; ``levels`` are the lexicon's ordinal levels of the two
    captions (``None`` where a caption says nothing about the dimension, or for an LLM judge)."""

    label: str
    levels: tuple[float | None, float | None] = (None, None)
    reason: str = ""
    raw: str = ""

    def __post_init__(self) -> None:
        if self.label not in VERDICTS:
            raise ValueError(f"caption verdict must be one of {VERDICTS}, got {self.label!r}")


class Captioner(Protocol):
    name: str

    def caption(self, req: CaptionRequest) -> str: ...

    def describe(self) -> dict[str, Any]: ...


class CaptionJudge(Protocol):
    name: str

    def compare(self, req: CompareRequest) -> CaptionVerdict: ...

    def describe(self) -> dict[str, Any]: ...


CAPTIONERS = LazyRegistry.from_pairs(
    "captioner",
    [
        ("features", "stylebench.metrics.captions.features:FeaturesCaptioner"),
        ("openai", "stylebench.metrics.captions.openai_api:OpenAICaptioner"),
        ("transformers", "stylebench.metrics.captions.hf:TransformersCaptioner"),
    ],
)
CAPTION_JUDGES = LazyRegistry.from_pairs(
    "caption judge",
    [
        ("lexicon", "stylebench.metrics.captions.lexicon:LexiconJudge"),
        ("openai", "stylebench.metrics.captions.openai_api:OpenAICaptionJudge"),
    ],
)


def builtin_text(name: str) -> str:
    """A prompt file shipped beside this module (``prompts/<name>``)."""
    return (
        resources.files("stylebench.metrics.captions").joinpath("prompts", name).read_text("utf-8")
    )


def load_instruction(dim: str, folder: str | Path | None = None) -> Instruction:
    """The caption instruction for ``dim``: ours, or ``<folder>/<dim>.txt``.

    Raises:
        FileNotFoundError: the user's folder has no file for ``dim``.
    """
    if folder is None:
        name = f"caption_{dim}_{CAPTION_PROMPT_VERSION}.txt"
        text, source = builtin_text(name), f"builtin:{name}"
    else:
        p = Path(folder) / f"{dim}.txt"
        if not p.is_file():
            raise MissingFile(f"--caption-prompt {folder}: no {dim}.txt there")
        text, name, source = p.read_text(encoding="utf-8"), p.name, str(p)
    if not text.strip():
        raise ValueError(f"caption instruction {source} is empty")
    return Instruction(
        dim, text.strip(), name, hashlib.sha256(text.encode("utf-8")).hexdigest(), source
    )
