"""``openai``: a judge behind any OpenAI-compatible chat-completions endpoint (stdlib HTTP).

For example the paper's judge served locally::

    vllm serve Qwen/Qwen3-4B-Instruct-2507 --port 8000
    stylebench score runs/<id> --judge openai --judge-model Qwen/Qwen3-4B-Instruct-2507 \\
        --judge-url http://127.0.0.1:8000/v1

The API key is read from the environment variable named by ``api_key_env`` (default
``OPENAI_API_KEY``) when the judge is built; it may be unset or empty for a local server, and it
is never written to a manifest or cache key. Calls run on a bounded thread pool
(``concurrency``); each has a ``timeout_s``; 429, 5xx, timeouts and dropped or refused
connections are retried ``retries`` times with exponential backoff (``backoff_s`` x 2^attempt,
or the server's ``Retry-After`` when shorter than 60 s); other 4xx answers fail at once with the
server's message.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from stylebench.errors import BadValue
from stylebench.metrics.judges.base import JudgeError
from stylebench.metrics.judges.llm import ChatJudge, chat_dicts, shared_options
from stylebench.metrics.judges.prompting import ChatMessage

log = logging.getLogger(__name__)
DEFAULT_URL = "http://127.0.0.1:8000/v1"
_HINT_4XX = {
    400: "the server rejected the request body; check --judge-model and the decode settings",
    401: "unauthorised: put the key in the environment variable named by api_key_env",
    403: "forbidden: the key has no access to this model",
    404: "not found: --judge-url should end in /v1 and --judge-model name a served model",
}


class OpenAIJudge(ChatJudge):
    """LLM judge over HTTP (OpenAI chat-completions wire format)."""

    name = "openai"
    #: what the endpoint is called in errors, and how to start one (subclasses say their own)
    what = "judge"
    serve_hint = "e.g. `vllm serve Qwen/Qwen3-4B-Instruct-2507` and --judge-url http://HOST:8000/v1"

    @shared_options
    def __init__(
        self,
        model: str | None = None,
        url: str | None = None,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout_s: float = 60.0,
        retries: int = 4,
        backoff_s: float = 1.0,
        **shared: Any,
    ) -> None:
        super().__init__(model, **shared)
        self.url = (url or DEFAULT_URL).rstrip("/")
        if not self.url.startswith(("http://", "https://")):
            raise BadValue(f"--judge-url must start with http:// or https://, got {self.url!r}")
        self.api_key_env = api_key_env
        self._api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self.concurrency = max(1, int(concurrency))
        self.timeout_s = float(timeout_s)
        self.retries = max(0, int(retries))
        self.backoff_s = float(backoff_s)

    def extra_describe(self) -> dict[str, Any]:
        return {"url": self.url, "api_key_env": self.api_key_env}

    def body(self, messages: Sequence[ChatMessage]) -> dict[str, Any]:
        """The chat-completions request body for one chat."""
        return {
            "model": self.model,
            "messages": chat_dicts(messages),
            "temperature": self.decode.temperature,
            "max_tokens": self.decode.max_new_tokens,
            "seed": self.decode.seed,
            "n": 1,
            "stream": False,
        }

    def complete(self, messages: Sequence[ChatMessage]) -> str:
        return _content(self.post(self.body(messages)), self.url + "/chat/completions")

    def post(self, body: dict[str, Any]) -> bytes:
        """POST one chat-completions body; the raw answer (retries, timeouts, errors as above).

        Subclasses that send other bodies (the audio captioner, FLEUR's logprobs) share this.
        """
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        endpoint = self.url + "/chat/completions"
        last = ""
        for attempt in range(self.retries + 1):
            wait = self.backoff_s * 2**attempt
            req = urllib.request.Request(endpoint, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    return resp.read()
            except urllib.error.HTTPError as exc:
                detail = _error_text(exc)
                if exc.code == 429 or exc.code >= 500:
                    last = f"HTTP {exc.code} {detail}"
                    wait = _retry_after(exc, wait)
                else:
                    hint = _HINT_4XX.get(exc.code, "the request was refused")
                    raise JudgeError(
                        f"{self.what} endpoint {endpoint} answered HTTP {exc.code}: {detail} ({hint})"
                    ) from None
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                if isinstance(reason, (TimeoutError, socket.timeout)):
                    last = f"no answer within {self.timeout_s:g} s"
                else:
                    last = f"{type(reason).__name__}: {reason}"
            if attempt < self.retries:
                log.debug(
                    "%s call failed (%s); retry %d in %.2f s", self.what, last, attempt + 1, wait
                )
                time.sleep(wait)
        tries = f"{self.retries + 1} {'try' if self.retries == 0 else 'tries'}"
        raise JudgeError(
            f"{self.what} endpoint {endpoint} failed after {tries} ({last}); is the server up? {self.serve_hint}"
        )

    def complete_many(self, chats: Sequence[Sequence[ChatMessage]]) -> list[str | JudgeError]:
        if len(chats) <= 1 or self.concurrency == 1:
            return super().complete_many(chats)

        def one(chat: Sequence[ChatMessage]) -> str | JudgeError:
            try:
                return self.complete(chat)
            except JudgeError as exc:
                return exc

        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(chats))) as pool:
            return list(pool.map(one, chats))


def first_choice(raw: bytes, endpoint: str) -> dict[str, Any]:
    """The first choice of a chat completion; a body that is not one is a :class:`JudgeError`."""
    try:
        choice = json.loads(raw.decode("utf-8"))["choices"][0]
        if not isinstance(choice, dict):
            raise TypeError("choice is not an object")
        choice["message"]  # noqa: B018 - a choice without a message is malformed
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as exc:
        snippet = raw[:200].decode("utf-8", "replace")
        raise JudgeError(
            f"endpoint {endpoint} sent a malformed chat completion "
            f"({type(exc).__name__}): {snippet!r}"
        ) from None
    return choice


def _content(raw: bytes, endpoint: str) -> str:
    """The first choice's message content; a body that is not a chat completion is an error."""
    msg = first_choice(raw, endpoint)["message"]
    content = msg.get("content") if isinstance(msg, dict) else None
    return content if isinstance(content, str) else ""  # null content parses as unparseable


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        body = exc.read()[:300].decode("utf-8", "replace")
    except OSError:
        body = ""
    try:
        err = json.loads(body).get("error")
        body = err.get("message", body) if isinstance(err, dict) else str(err or body)
    except (ValueError, AttributeError):
        pass
    return " ".join(f"{exc.reason} {body}".split())[:300]


def _retry_after(exc: urllib.error.HTTPError, default: float) -> float:
    try:
        value = float(exc.headers.get("Retry-After", ""))
    except (TypeError, ValueError):
        return default
    return value if 0 <= value < 60 else default
