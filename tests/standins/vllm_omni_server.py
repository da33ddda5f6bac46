"""STAND-IN of a vLLM-Omni ``/v1/chat/completions`` endpoint on 127.0.0.1 (no model, no GPU).

It answers the way vLLM-Omni does, as read in its source and docs (our reading, not its code):

- text and audio are *separate* choices, both ``index`` 0: the text choice has ``content`` and
  ``audio: null``; the audio choice has ``content: null`` and ``audio {id, data, expires_at,
  transcript: ""}`` with a 24 kHz wav (vllm-project/vllm-omni, be81443c,
  vllm_omni/entrypoints/openai/serving_chat.py lines 556-571 and 860-904);
- the thinker's length is overridden only by ``max_tokens`` (lines 423-431: the override set has
  ``max_tokens``, not ``max_completion_tokens``); otherwise the stage default stands;
- an assistant message is heard through its ``content`` only: vLLM's parser reads content, tool
  calls and reasoning, not ``audio`` (vllm-project/vllm, vllm/entrypoints/chat_utils.py,
  ``_parse_chat_message_content``), so an ``audio.id`` reference is heard as nothing;
- ``kimi``: the renderer rejects ``max_completion_tokens``, ``audio.id`` history and system
  messages, and reads ``chat_template_kwargs.output_type`` (examples/online_serving/kimi_audio/
  README.md at 1bd0a973); ``qwen3``: the voice is the top-level ``speaker`` (lower-cased;
  examples/online_serving/qwen3_omni/README.md, "Speaker selection", at 04a1a2fe);
- ``kimi``: an assistant message with an audio part and no transcript is refused with HTTP 400,
  "assistant audio history requires its transcript" (the README's "send the audio content again
  with its transcript", as the issue reports the server answering).

Hostile options (tests/test_openai_vllm_omni.py's corpus): ``empty_text_replies`` (reply numbers,
1-based, whose text choice comes back with empty ``content``); ``speaker="ignored"``: a server
from before vLLM-Omni PR #1963, which drops the ``speaker`` field without a word (issue #1845);
``speaker="names-default"``: such a server whose reply also names the voice it used
(``audio.voice``), a HYPOTHETICAL reply field standing for any reply that shows the voice.

Each request is recorded with what the stand-in model *heard* (``heard``: per message, the
role, its text and the sha256 of each audio part). The reply tone rises 2 semitones per earlier
reply heard as audio or text, so a scorer sees a steady intensification.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SR = 24000
STAGE_DEFAULT_MAX_TOKENS = 2048


def tone_wav(hz: float, seconds: float = 1.5, sr: int = SR) -> bytes:
    """A speech-like reply at ``hz`` (tests/signals.py): a pure tone would be unscored."""
    from signals import speechlike_wav

    return speechlike_wav(sr, seconds, hz)


class RendererError(ValueError):
    """What the server turns into HTTP 400 with an OpenAI-style error body."""


def heard(messages: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """What the model receives of each message: text and audio parts of ``content`` only."""
    out = []
    for m in messages:
        if kind == "kimi" and m["role"] == "system":
            raise RendererError("Kimi-Audio chat: system messages are not supported")
        if kind == "kimi" and m["role"] == "assistant" and "audio" in m:
            raise RendererError("Kimi-Audio chat: audio.id references are not supported")
        content = m.get("content")
        if kind == "kimi" and m["role"] == "assistant" and isinstance(content, list):
            has_audio = any(p["type"] == "input_audio" for p in content)
            text = "".join(p.get("text", "") for p in content if p["type"] == "text")
            if has_audio and not text.strip():
                raise RendererError("assistant audio history requires its transcript")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        texts, audio = [], []
        for p in parts:
            if p["type"] == "text":
                texts.append(p["text"])
            elif p["type"] == "input_audio":
                audio.append(hashlib.sha256(base64.b64decode(p["input_audio"]["data"])).hexdigest())
        out.append({"role": m["role"], "text": "".join(texts), "audio": audio})
    return out


class VllmOmniStandIn:
    """The loopback server; ``kind`` is ``qwen`` (Qwen2.5/3-Omni) or ``kimi``."""

    def __init__(
        self, kind: str, *, empty_text_replies: tuple[int, ...] = (), speaker: str = "read"
    ) -> None:
        self.kind = kind
        self.empty_text_replies = set(empty_text_replies)
        self.speaker_mode = speaker  # "read", "ignored" or "names-default"
        self.requests: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []  # per reply: text, wav sha256, max_tokens, speaker
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    status, payload = 200, outer.answer(body)
                except RendererError as exc:
                    status = 400
                    payload = {"error": {"message": str(exc), "type": "BadRequestError"}}
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.kind == "kimi":
            if "max_completion_tokens" in body:
                raise RendererError("Kimi-Audio chat: use max_tokens, not max_completion_tokens")
            kwargs = body.get("chat_template_kwargs") or {}
            if kwargs.get("output_type", "both") != "both":
                raise RendererError("output_type text cannot return audio")
        ears = heard(body["messages"], self.kind)
        self.requests.append({"body": body, "heard": ears})
        max_tokens = body.get("max_tokens") or STAGE_DEFAULT_MAX_TOKENS
        n_prior = sum(m["role"] == "assistant" and bool(m["text"] or m["audio"]) for m in ears)
        wav = tone_wav(180.0 * 2 ** (2 * n_prior / 12))
        text = f"reply number {n_prior + 1}"
        if len(self.sent) + 1 in self.empty_text_replies:
            text = ""
        speaker = body.get("speaker") if self.speaker_mode == "read" else None
        self.sent.append(
            {
                "text": text,
                "sha256": hashlib.sha256(wav).hexdigest(),
                "max_tokens": max_tokens,
                "speaker": speaker.lower().strip() if isinstance(speaker, str) else None,
            }
        )
        bare = {"refusal": None, "annotations": None, "function_call": None, "tool_calls": []}
        audio = {
            "id": f"audio-{uuid.uuid4().hex[:16]}",
            "data": base64.b64encode(wav).decode(),
            "expires_at": int(time.time()) + 24 * 3600,
            "transcript": "",
        }
        if self.speaker_mode == "names-default":
            audio["voice"] = "Ethan"  # hypothetical: the reply names the voice it used
        choices = [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": text,
                    "audio": None,
                    "reasoning_content": None,
                    **bare,
                },
                "logprobs": None,
                "finish_reason": "stop",
                "stop_reason": None,
            },
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "audio": audio,
                    "reasoning_content": None,
                    **bare,
                },
                "logprobs": None,
                "finish_reason": "stop",
                "stop_reason": None,
            },
        ]
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": choices,
            "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
        }
