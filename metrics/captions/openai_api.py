"""OpenAI-compatible backends of the captioning probe: the audio captioner, the LLM caption judge
and FLEUR's digit probabilities. All three reuse the relevance judge's HTTP client
(:class:`stylebench.metrics.judges.openai_api.OpenAIJudge`: bounded thread pool ``concurrency``,
``timeout_s``, ``retries`` with backoff on 429/5xx/timeouts, API key from ``api_key_env``).

- :class:`OpenAICaptioner` sends the reply's wav as an ``input_audio`` part beside the instruction
  text, e.g. to ``vllm serve Qwen/Qwen3-Omni-30B-A3B-Captioner`` (or Qwen2.5-Omni / Qwen2-Audio).
- :class:`OpenAICaptionJudge` sends the two captions fenced as one JSON document
  (:func:`stylebench.metrics.judges.prompting.fence_json`) and parses the reply strictly: exactly
  ``{"verdict": ..., "reason": ...}``, else ``unparseable``.
- :class:`OpenAIFleur` asks for a 0.0-1.0 rating with ``logprobs``/``top_logprobs`` and turns the
  digit probabilities into FLEUR (:func:`stylebench.metrics.captions.caf.fleur`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from stylebench.errors import BadValue
from stylebench.metrics.captions.base import (
    CaptionError,
    CaptionRequest,
    CaptionVerdict,
    CompareRequest,
    builtin_text,
)
from stylebench.metrics.dims.base import dimension
from stylebench.metrics.judges.base import JudgeError
from stylebench.metrics.judges.openai_api import OpenAIJudge, first_choice
from stylebench.metrics.judges.prompting import (
    LANGUAGE_NAMES,
    fence_json,
    fill,
    parse_prompt,
    strict_object,
)
from stylebench.paths import named_file

LABELS = ("increased", "decreased", "same", "cannot_tell")


def audio_part(path: str | Path) -> dict[str, Any]:
    """The ``input_audio`` content part of a wav file (base64)."""
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


def _pool(fn: Any, items: Sequence[Any], n: int) -> list[Any]:
    if len(items) <= 1 or n == 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(max_workers=min(n, len(items))) as pool:
        return list(pool.map(fn, items))


class OpenAICaptioner(OpenAIJudge):
    """A served audio LLM describes each reply (``--captioner openai``)."""

    what = "captioner"
    #: a served model name is required (checked before any work)
    needs_model = True
    serve_hint = "e.g. `vllm serve Qwen/Qwen3-Omni-30B-A3B-Captioner --port 8001` and --caption-url http://HOST:8001/v1"

    def __init__(
        self,
        model: str | None = None,
        url: str | None = None,
        *,
        max_new_tokens: int = 256,
        **kw: Any,
    ) -> None:
        if not model:
            raise BadValue("the openai captioner needs --caption-model (the served model name)")
        super().__init__(model, url, max_new_tokens=int(max_new_tokens), **kw)

    def caption_body(self, req: CaptionRequest) -> dict[str, Any]:
        text = req.instruction.text.replace("{{language}}", LANGUAGE_NAMES.get(req.lang, req.lang))
        content = [audio_part(req.audio), {"type": "text", "text": text}]
        return {
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": self.decode.temperature,
            "max_tokens": self.decode.max_new_tokens,
            "seed": self.decode.seed,
            "n": 1,
            "stream": False,
        }

    def caption(self, req: CaptionRequest) -> str:
        try:
            raw = self.post(self.caption_body(req))
            msg = first_choice(raw, self.url)["message"]
        except JudgeError as exc:
            raise CaptionError(str(exc)) from None
        text = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise CaptionError(f"captioner {self.model} returned an empty caption")
        return text.strip()

    def caption_many(self, reqs: Sequence[CaptionRequest]) -> list[str | BaseException]:
        def one(req: CaptionRequest) -> str | BaseException:
            try:
                return self.caption(req)
            except (CaptionError, OSError) as exc:
                return exc

        return _pool(one, reqs, self.concurrency)

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d.pop(
            "prompts", None
        )  # the relevance prompts play no part; the instruction's hash is in the key
        return d


class OpenAICaptionJudge(OpenAIJudge):
    """An LLM compares two captions (``--caption-judge openai``); our prompt or ``prompt=PATH``."""

    what = "caption judge"
    #: a served model name is required (checked before any work)
    needs_model = True

    def __init__(
        self,
        model: str | None = None,
        url: str | None = None,
        *,
        prompt: str | None = None,
        **kw: Any,
    ) -> None:
        if not model:
            raise BadValue("the openai caption judge needs --caption-judge-model")
        super().__init__(model, url, **kw)
        if prompt is None:
            name, text, source = (
                "compare_v1.txt",
                builtin_text("compare_v1.txt"),
                "builtin:compare_v1.txt",
            )
        else:
            p = named_file(prompt, "--caption-judge-prompt")
            name, text, source = p.name, p.read_text(encoding="utf-8"), str(p)
        self.compare_prompt = parse_prompt(text, "compare", name, source, slots=("dimension",))

    def compare_messages(self, req: CompareRequest) -> Any:
        begin, data, end = fence_json({"before": req.before, "after": req.after}, "CAPTIONS")
        return fill(
            self.compare_prompt,
            {
                "fence_begin": begin,
                "data": data,
                "fence_end": end,
                "dimension": dimension(req.dim).caption_prompt,
                "language": LANGUAGE_NAMES.get(req.lang, req.lang),
            },
        )

    def compare(self, req: CompareRequest) -> CaptionVerdict:
        return parse_compare(self.complete(self.compare_messages(req)))

    def compare_many(self, reqs: Sequence[CompareRequest]) -> list[CaptionVerdict | JudgeError]:
        replies = self.complete_many([self.compare_messages(r) for r in reqs])
        return [r if isinstance(r, JudgeError) else parse_compare(r) for r in replies]

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        p = self.compare_prompt
        d["prompts"] = {"compare": {"name": p.name, "sha256": p.sha256, "source": p.source}}
        return d


def parse_compare(text: str | None) -> CaptionVerdict:
    """Exactly ``{"verdict": one of LABELS, "reason": str}``; anything else is ``unparseable``."""
    raw = text or ""
    obj, why = strict_object(raw, ("verdict", "reason"))
    if obj is None:
        return CaptionVerdict("unparseable", reason=why, raw=raw[:2000])
    if obj["verdict"] not in LABELS or not isinstance(obj["reason"], str):
        return CaptionVerdict(
            "unparseable",
            reason=f"verdict must be one of {LABELS} and reason a string, got {str(obj['verdict'])[:40]!r}",
            raw=raw[:2000],
        )
    return CaptionVerdict(obj["verdict"], reason=obj["reason"][:500], raw=raw[:2000])


class OpenAIFleur(OpenAIJudge):
    """FLEUR from a served audio LLM's digit ``top_logprobs`` (``score(audio, caption)``)."""

    what = "FLEUR scorer"

    def __init__(
        self,
        model: str | None = None,
        url: str | None = None,
        *,
        top_logprobs: int = 20,
        max_new_tokens: int = 8,
        **kw: Any,
    ) -> None:
        if not model:
            raise ValueError("FLEUR needs the served audio LLM's model name")
        super().__init__(model, url, max_new_tokens=int(max_new_tokens), **kw)
        self.top_logprobs = int(top_logprobs)
        self.prompt = parse_prompt(
            builtin_text("fleur_v1.txt"), "fleur", "fleur_v1.txt", "builtin:fleur_v1.txt"
        )

    def body_for(self, audio: str | Path, caption: str) -> dict[str, Any]:
        begin, data, end = fence_json({"caption": caption}, "CAPTION")
        (msg,) = fill(self.prompt, {"fence_begin": begin, "data": data, "fence_end": end})
        return {
            "model": self.model,
            "temperature": 0.0,
            "max_tokens": self.decode.max_new_tokens,
            "seed": self.decode.seed,
            "n": 1,
            "stream": False,
            "logprobs": True,
            "top_logprobs": self.top_logprobs,
            "messages": [
                {
                    "role": "user",
                    "content": [audio_part(audio), {"type": "text", "text": msg.content}],
                }
            ],
        }

    def score(self, audio: str | Path, caption: str) -> dict[str, Any]:
        """``{"fleur", "raw_text", "raw_score", "digits"}``; a reply without digit logprobs is a
        :class:`JudgeError` (never a score of 0)."""
        from stylebench.metrics.captions.caf import decimal_digit_probs, fleur

        choice = first_choice(self.post(self.body_for(audio, caption)), self.url)
        content = (choice.get("logprobs") or {}).get("content")
        if not isinstance(content, list) or not content:
            raise JudgeError(f"{self.model} returned no logprobs; serve it with logprobs enabled")
        digits, text = decimal_digit_probs(content)
        try:
            raw_score = float(text.strip())
        except ValueError:
            raw_score = None
        return {
            "fleur": fleur(digits),
            "raw_text": text,
            "raw_score": raw_score,
            "digits": json.loads(json.dumps(digits)),
        }
