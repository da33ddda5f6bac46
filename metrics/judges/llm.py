"""Shared machinery of the LLM judges (``openai``, ``transformers``, ``vllm``).

An LLM judge renders our prompt for a request (:func:`stylebench.metrics.judges.prompting.render`), asks its
model for a completion, and parses the reply strictly (:func:`~stylebench.metrics.judges.prompting.parse_verdict`).
A backend implements one method, :meth:`ChatJudge.complete`; it may override
:meth:`ChatJudge.complete_many` to batch or run requests concurrently. Its ``__init__`` names only
its own options and hands the ones every LLM judge takes on as ``**shared``
(:func:`shared_options`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from stylebench.errors import BadValue
from stylebench.metrics.judges.base import JudgeError, JudgeRequest, Verdict
from stylebench.metrics.judges.prompting import (
    ChatMessage,
    PromptSet,
    load_prompts,
    parse_verdict,
    render,
)


@dataclass(frozen=True)
class JudgeDecode:
    """Decoding settings of an LLM judge; part of every cache key.

    ``temperature`` 0 means greedy decoding. ``max_new_tokens`` bounds the reply (a verdict
    needs about 40 tokens; a reply cut short parses as ``unparseable``).
    """

    temperature: float = 0.0
    max_new_tokens: int = 128
    seed: int = 0

    def __post_init__(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"judge temperature must be >= 0, got {self.temperature}")
        if self.max_new_tokens < 1:
            raise ValueError(f"judge max_new_tokens must be >= 1, got {self.max_new_tokens}")


def chat_dicts(messages: Sequence[ChatMessage]) -> list[dict[str, str]]:
    """The chat as ``{"role", "content"}`` dicts, the form chat templates and APIs take."""
    return [{"role": m.role, "content": m.content} for m in messages]


class ChatJudge:
    """Base of the LLM judges: prompt rendering, strict parsing, ``judge_many``."""

    name = ""

    def __init__(
        self,
        model: str | None = None,
        *,
        prompts: PromptSet | None = None,
        temperature: float = 0.0,
        max_new_tokens: int = 128,
        seed: int = 0,
    ) -> None:
        if not model:
            raise BadValue(
                f"the {self.name} judge needs a model: pass --judge-model "
                "(e.g. Qwen/Qwen3-4B-Instruct-2507, the paper's judge, or a local path)"
            )
        self.model = str(model)
        self.prompts = prompts or load_prompts()
        self.decode = JudgeDecode(float(temperature), int(max_new_tokens), int(seed))

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        """The model's reply text to one chat; raise :class:`JudgeError` when there is none."""
        raise NotImplementedError

    def complete_many(self, chats: Sequence[Sequence[ChatMessage]]) -> list[str | JudgeError]:
        """Replies to many chats, aligned with them; a failed call becomes its ``JudgeError``."""
        out: list[str | JudgeError] = []
        for chat in chats:
            try:
                out.append(self.complete(chat))
            except JudgeError as exc:
                out.append(exc)
        return out

    def messages(self, req: JudgeRequest) -> tuple[ChatMessage, ...]:
        return render(self.prompts.for_kind(req.kind), req)

    def judge(self, req: JudgeRequest) -> Verdict:
        return parse_verdict(self.complete(self.messages(req)))

    def judge_many(self, reqs: Sequence[JudgeRequest]) -> list[Verdict | JudgeError]:
        """Verdicts aligned with ``reqs``; a backend failure is returned, not raised."""
        replies = self.complete_many([self.messages(r) for r in reqs])
        return [r if isinstance(r, JudgeError) else parse_verdict(r) for r in replies]

    def extra_describe(self) -> dict[str, Any]:
        """Backend-specific identity (revision, endpoint, versions)."""
        return {}

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model,
            "prompts": self.prompts.describe(),
            "decode": asdict(self.decode),
            **self.extra_describe(),
        }


_Init = TypeVar("_Init", bound=Callable[..., None])


def shared_options(init: _Init) -> _Init:
    """Decorate a backend's ``__init__(self, model, ..., *, <own options>, **shared)``.

    ``**shared`` stands for the keyword options of :meth:`ChatJudge.__init__` (``prompts``,
    ``temperature``, ``max_new_tokens``, ``seed``), which the backend passes on unchanged. The
    judge stage reads a backend's signature to refuse options it does not take, so the signature
    this gives ``init`` names them, before the backend's own keyword options, instead of
    ``**shared``.
    """
    kw_only, var_kw = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD
    shared = [
        p for p in inspect.signature(ChatJudge.__init__).parameters.values() if p.kind is kw_only
    ]
    sig = inspect.signature(init)
    *own, last = sig.parameters.values()
    if last.kind is not var_kw:
        raise TypeError(f"{init.__qualname__} must end with **shared")
    at = next((i for i, p in enumerate(own) if p.kind is kw_only), len(own))
    sig = sig.replace(parameters=[*own[:at], *shared, *own[at:]])
    init.__signature__ = sig  # type: ignore[attr-defined]
    return init
