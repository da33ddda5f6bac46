"""``vllm``: the judge model run in process by vLLM's offline ``LLM`` engine (GPU machines).

vLLM 0.33 pins its own torch, ``transformers<5.21`` and CUDA-only packages, so it cannot share
stylebench's main environment. Two routes work:

- serve the judge and use the ``openai`` backend (recommended)::

      vllm serve Qwen/Qwen3-4B-Instruct-2507 --port 8000
      stylebench score runs/<id> --judge openai --judge-model Qwen/Qwen3-4B-Instruct-2507 \\
          --judge-url http://127.0.0.1:8000/v1

- or install stylebench into a separate environment that holds vLLM and use ``--judge vllm``.

The engine starts on the first verdict; all pending requests of a batch go to one
``LLM.chat`` call (vLLM schedules them itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stylebench.metrics.judges.base import JudgeError
from stylebench.metrics.judges.llm import ChatJudge, chat_dicts, shared_options
from stylebench.metrics.judges.prompting import ChatMessage
from stylebench.registry import MissingExtraError

MISSING = (
    "vllm is not installed in this environment (it pins its own torch and transformers<5.21): "
    "run `vllm serve MODEL` and use --judge openai --judge-url http://HOST:8000/v1, "
    "or install stylebench into a separate environment with vllm"
)


def _need_vllm() -> Any:
    try:
        import vllm
    except ImportError:
        raise MissingExtraError(MISSING) from None
    return vllm


class VLLMJudge(ChatJudge):
    """LLM judge run by vLLM in this process."""

    name = "vllm"
    #: the file a weights folder holds (``--judge-model`` is looked up before any work)
    weights_marker = "config.json"

    @shared_options
    def __init__(
        self,
        model: str | None = None,
        *,
        revision: str | None = None,
        gpu_memory_utilization: float = 0.85,
        max_model_len: int = 8192,
        **shared: Any,
    ) -> None:
        super().__init__(model, **shared)
        self.revision = revision
        self.gpu_memory_utilization = float(gpu_memory_utilization)
        self.max_model_len = int(max_model_len)
        self._llm: Any = None

    def extra_describe(self) -> dict[str, Any]:
        return {"revision": self.revision, "max_model_len": self.max_model_len}

    def _engine(self) -> tuple[Any, Any]:
        vllm = _need_vllm()
        if self._llm is None:
            self._llm = vllm.LLM(
                model=self.model,
                revision=self.revision,
                seed=self.decode.seed,
                gpu_memory_utilization=self.gpu_memory_utilization,
                max_model_len=self.max_model_len,
            )
        params = vllm.SamplingParams(
            temperature=self.decode.temperature,
            max_tokens=self.decode.max_new_tokens,
            seed=self.decode.seed,
        )
        return self._llm, params

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        reply = self.complete_many([messages])[0]
        if isinstance(reply, JudgeError):
            raise reply
        return reply

    def complete_many(self, chats: Sequence[Sequence[ChatMessage]]) -> list[str | JudgeError]:
        if not chats:
            return []
        llm, params = self._engine()
        conversations = [chat_dicts(chat) for chat in chats]
        try:
            outputs = llm.chat(conversations, sampling_params=params, use_tqdm=False)
        except (RuntimeError, ValueError) as exc:
            err = JudgeError(f"vllm failed on a batch of {len(chats)}: {exc}")
            return [err] * len(chats)
        out: list[str | JudgeError] = []
        for o in outputs:
            texts = [c.text for c in getattr(o, "outputs", [])]
            out.append(texts[0] if texts else JudgeError("vllm returned no completion"))
        if len(out) != len(chats):
            err = JudgeError(f"vllm returned {len(out)} outputs for {len(chats)} chats")
            return [err] * len(chats)
        return out
