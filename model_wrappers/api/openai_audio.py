"""``openai-audio``: any OpenAI-compatible chat-completions endpoint that hears and speaks.

GPT-4o audio models on the OpenAI API, or Qwen2.5-Omni, Qwen3-Omni and Kimi-Audio served by
vLLM-Omni (``flavour=``, :mod:`.flavours`: the servers differ in the length field, the voice
field, the reply's choices and the history forms they accept). Per turn it POSTs
``{base_url}/chat/completions`` with ``modalities: ["text", "audio"]``. The conversation is sent
whole each turn (the API keeps no state):

- user turns: one ``input_audio`` content part, the request's wav in base64 (no text: the model
  must hear the request);
- earlier assistant turns, by flavour: the OpenAI audio id while valid (else the transcript),
  the transcript only, or the transcript plus the reply wav as content parts; ``history=text``
  always sends transcripts; ``history=audio`` (Qwen flavours, opt-in) re-sends the reply wav
  although the model was not trained on it. A reply whose text came back empty goes back as
  an empty text message (the Kimi renderer refuses reply audio without its transcript).

The reply's base64 wav is written to a scratch file; its transcript becomes ``Turn.text``.
Retries with exponential backoff on 429, 5xx and connection errors (``Retry-After`` honoured);
other 4xx fail at once with the server's own message. Only the standard library is used.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import http.client
import json
import logging
import os
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from stylebench.errors import BadValue, UserError
from stylebench.model_wrappers.api.flavours import (
    AUDIO_ID,
    TEXT_AUDIO,
    flavour,
    reply_parts,
    request_body,
    system_message,
    voice_report,
    wav_part,
)
from stylebench.model_wrappers.base import SpeechModel
from stylebench.model_wrappers.common import scratch_wav
from stylebench.model_wrappers.weights import AVAILABLE
from stylebench.records import DecodeConfig, Turn

log = logging.getLogger(__name__)
MAX_BACKOFF_S = 60.0
#: the most one reply body may hold (base64 wav + JSON): 120 s of 48 kHz stereo 16-bit audio
#: is about 31 MiB in base64, so this only stops a server that streams without end
MAX_REPLY_BYTES = 256 * 2**20
ID_MARGIN_S = 60  # treat an audio id as expired this long before the server says it is
HISTORY_ARGS = ("auto", "text", "audio")


class EndpointError(UserError, RuntimeError):
    """The endpoint refused the request, kept failing, or sent a reply that is not usable.

    A user error: the message names the endpoint and what it sent; the fix is on the server's
    side or in ``--model-arg`` (base_url, model, timeout_s), never in stylebench.
    """


def _number(name: str, value: Any, kind: type) -> Any:
    """``--model-arg timeout_s=abc`` as a one-line error naming the argument."""
    try:
        return kind(value)
    except (TypeError, ValueError):
        what = "a number" if kind is float else "a whole number"
        raise BadValue(f"openai-audio: --model-arg {name}={value} must be {what}") from None


class OpenAIAudioModel(SpeechModel):
    """Any OpenAI-compatible chat endpoint with audio in and audio out (GPT-4o audio, vLLM)."""

    name = "openai-audio"

    def __init__(
        self,
        base_url: str = "https://api.openai.com/v1",
        model: str = "gpt-4o-audio-preview",
        voice: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_concurrency: int | str = 4,
        timeout_s: float | str = 120.0,
        retries: int | str = 4,
        backoff_s: float | str = 1.0,
        history: str = "auto",
        system: str | None = None,
        flavour: str = "openai",
    ) -> None:
        """Configure the endpoint; numbers may come as strings from ``--model-arg``.

        Args:
            base_url: the server's ``/v1`` root, e.g. ``http://127.0.0.1:8000/v1`` for vLLM.
            model: the served model name.
            voice: the output voice (OpenAI: alloy, the default, ash, ...; vLLM-Omni Qwen: a
                ``speaker`` such as Chelsie or Ethan, the model's default when not given).
            api_key_env: environment variable holding the API key; no header when it is unset.
            max_concurrency: requests in flight at once from one instance (the local runner
                asks one turn at a time; this bounds threaded callers).
            timeout_s: seconds per HTTP request.
            retries: extra attempts after a 429, a 5xx or a connection error.
            backoff_s: first retry delay in seconds, doubled per attempt (capped at 60).
            history: ``auto`` (the flavour's form: audio id when known, else transcript; the
                transcript; or transcript + wav), ``text``, or ``audio`` (Qwen flavours only:
                transcript + wav, a form the model was not trained on; its own history kind).
            system: system prompt (recorded in the manifest). Default: none, except the model
                card's prompt for ``vllm-omni-qwen2.5``; ``vllm-omni-kimi`` takes none.
            flavour: ``openai``, ``vllm-omni-qwen2.5``, ``vllm-omni-qwen3`` or
                ``vllm-omni-kimi`` (see :mod:`.flavours`).
        """
        fl = self.flavour = _flavour(flavour)
        voice = fl.default_voice if voice is None else voice
        system = fl.default_system if system is None else system
        if voice and not fl.voice_field:
            raise BadValue(f"openai-audio: flavour {fl.name} has no voice selection")
        if system and not fl.system_allowed:
            raise BadValue(f"openai-audio: flavour {fl.name} takes no system message")
        if history not in HISTORY_ARGS:
            raise BadValue(f"openai-audio: history must be auto, text or audio, got {history!r}")
        if history == "audio" and not fl.audio_opt_in:
            raise BadValue(
                f"openai-audio: history must be auto or text for flavour {fl.name}; history=audio "
                "is for the vllm-omni-qwen flavours (openai: assistant content parts are text "
                "only; kimi: auto re-sends the audio already)"
            )
        if not base_url.startswith(("http://", "https://")):
            raise BadValue(f"openai-audio: base_url must start with http(s)://, got {base_url!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.voice, self.api_key_env = model, voice, api_key_env
        self.timeout_s = _number("timeout_s", timeout_s, float)
        self.retries = _number("retries", retries, int)
        self.backoff_s = _number("backoff_s", backoff_s, float)
        self.history, self.system = history, system
        max_concurrency = _number("max_concurrency", max_concurrency, int)
        if self.retries < 0 or self.timeout_s <= 0 or self.backoff_s < 0 or max_concurrency < 1:
            raise BadValue(
                "openai-audio: --model-arg needs retries >= 0, timeout_s > 0, backoff_s >= 0, "
                "max_concurrency >= 1"
            )
        self._slots = threading.BoundedSemaphore(int(max_concurrency))
        self._ids: dict[str, tuple[str, float | None]] = {}  # reply wav sha256 -> audio id
        self._ids_lock = threading.Lock()

    @classmethod
    def check(cls) -> tuple[str, str]:
        return (
            AVAILABLE,
            "stdlib HTTP client; needs an endpoint (--model-arg base_url=... model=...)",
        )

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "endpoint": self.url,
            "model": self.model,
            "voice": self.voice,
            "audio_format": "wav",
            "flavour": self.flavour.name,
            "history": f"{self.history}: {self.flavour.history_words(self.history)}",
            "history_kind": self.flavour.history_kind(self.history),
            "system": self.system,
            **({"voice_note": self.flavour.voice_note} if self.flavour.voice_note else {}),
        }

    # -- messages --------------------------------------------------------------------------
    def messages(self, history: Sequence[Turn], user_turn: Turn) -> list[dict[str, Any]]:
        """The ``messages`` array for one request (see the module docstring for the forms)."""
        out: list[dict[str, Any]] = []
        if self.system:
            out.append(system_message(self.flavour, self.system))
        auto = self.history == "auto"
        resend = (auto and self.flavour.history == TEXT_AUDIO) or self.history == "audio"
        for turn in (*history, user_turn):
            if turn.role == "user":
                out.append({"role": "user", "content": [_audio_part(turn)]})
                continue
            audio_id = self._known_id(turn) if auto and self.flavour.history == AUDIO_ID else None
            if audio_id:
                out.append({"role": "assistant", "audio": {"id": audio_id}})
            elif resend and not turn.text.strip():
                # vLLM-Omni's Kimi renderer refuses reply audio without its transcript (HTTP
                # 400): a reply that came back without text goes back as an empty text turn
                out.append({"role": "assistant", "content": ""})
            elif resend:
                if not turn.audio or not os.path.isfile(turn.audio):
                    raise ValueError(
                        "openai-audio: an earlier reply's wav is missing; it is sent back"
                    )
                parts = [{"type": "text", "text": turn.text}, wav_part(turn.audio)]
                out.append({"role": "assistant", "content": parts})
            else:
                out.append({"role": "assistant", "content": turn.text})
        return out

    def _known_id(self, turn: Turn) -> str | None:
        if not turn.audio or not os.path.isfile(turn.audio):
            return None
        with open(turn.audio, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
        with self._ids_lock:
            known = self._ids.get(digest)
        if known is None:
            return None
        audio_id, expires_at = known
        if expires_at is not None and expires_at - ID_MARGIN_S < time.time():
            return None
        return audio_id

    # -- one turn ----------------------------------------------------------------------------
    def decode_settings(self, decode: DecodeConfig) -> dict[str, Any]:
        body = request_body(self.flavour, self.model, self.voice, [], decode)
        return {k: body[k] for k in ("temperature", "top_p", "seed", self.flavour.length_field)}

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        msgs = self.messages(history, user_turn)
        body = request_body(self.flavour, self.model, self.voice, msgs, decode)
        with self._slots:
            data = self._post(body)
        try:
            text, audio = reply_parts(data)
        except ValueError as exc:
            raise EndpointError(f"{self.url}: malformed reply: {exc}") from None
        if not isinstance(data, dict) or not data.get("choices"):
            raise EndpointError(f"{self.url}: no choices[].message in {str(data)[:300]}")
        if audio is None and _empty_audio(data):
            raise EndpointError(
                f"{self.url}: the reply's audio.data is empty (the audio field is there, with no "
                "bytes); the server produced no sound for this turn"
            )
        if audio is None:
            raise EndpointError(
                f"{self.url}: the reply has no audio (does {self.model!r} support audio output?); "
                f"text was {text[:200]!r}"
            )
        try:
            wav = base64.b64decode(audio["data"], validate=True)
        except binascii.Error as exc:
            raise EndpointError(
                f"{self.url}: malformed reply: audio.data is not base64 ({exc})"
            ) from None
        path = scratch_wav(self.name)
        try:
            path.write_bytes(wav)
            sr = _wav_rate(path, self.url, len(wav))
        except BaseException:  # a refused reply leaves no scratch file behind
            path.unlink(missing_ok=True)
            raise
        if audio.get("id"):
            with self._ids_lock:
                self._ids[hashlib.sha256(wav).hexdigest()] = (audio["id"], audio.get("expires_at"))
        raw = {
            "audio_id": audio.get("id"),
            "served_model": data.get("model"),
            "system_fingerprint": data.get("system_fingerprint"),
            "usage": data.get("usage"),
            "history_forms": [_form(m) for m in msgs if m["role"] == "assistant"],
        }
        raw.update(self._voice_report(data))
        return Turn("assistant", text, str(path), sr, raw=raw)

    def _voice_report(self, data: Any) -> dict[str, Any]:
        """:func:`voice_report`, with a warning when the reply names another voice than the one
        asked for (a server that does not read the field: the run's voice is not the one set)."""
        report = voice_report(self.flavour, self.voice, data)
        if report.get("voice_ignored"):
            log.warning(
                "openai-audio: asked for %s %r, the server's reply names %r: it ignored the "
                "voice field (%s)",
                self.flavour.voice_field,
                self.voice,
                report["voice_served"],
                self.flavour.voice_note or "check the server version",
            )
        return report

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        payload = json.dumps(body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        last, delay = "", self.backoff_s
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(delay)
            delay = min(self.backoff_s * 2**attempt, MAX_BACKOFF_S)
            req = urllib.request.Request(self.url, data=payload, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    body = resp.read(MAX_REPLY_BYTES + 1)
                    declared = _declared_length(resp)
                if declared is not None and len(body) < declared <= MAX_REPLY_BYTES:
                    raise http.client.IncompleteRead(body, declared - len(body))
            except urllib.error.HTTPError as exc:
                detail = _server_message(exc)
                if exc.code == 429 or exc.code >= 500:
                    last = f"HTTP {exc.code}: {detail}"
                    delay = _retry_after(exc, delay)
                    log.info("openai-audio: %s (attempt %d), retrying", last, attempt + 1)
                    continue
                hint = f"; is ${self.api_key_env} set?" if exc.code in (401, 403) else ""
                raise EndpointError(f"{self.url}: HTTP {exc.code}: {detail}{hint}") from None
            except http.client.IncompleteRead as exc:  # the server closed the body early
                got, left = len(exc.partial), exc.expected
                total = f" of {got + left:,} declared" if left is not None else ""
                last = f"the connection closed after {got:,}{total} bytes of the reply"
                log.info("openai-audio: %s (attempt %d), retrying", last, attempt + 1)
                continue
            except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out
                reason = getattr(exc, "reason", exc)
                if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
                    last = (
                        f"no reply within {self.timeout_s:g} s (raise it with --model-arg "
                        "timeout_s=SECONDS)"
                    )
                else:
                    last = f"{type(exc).__name__}: {reason}"
                log.info("openai-audio: %s (attempt %d), retrying", last, attempt + 1)
                continue
            if len(body) > MAX_REPLY_BYTES:
                raise EndpointError(
                    f"{self.url}: the reply is over {MAX_REPLY_BYTES:,} bytes; refused"
                )
            try:
                return json.loads(body.decode("utf-8"))
            except UnicodeDecodeError as exc:
                raise EndpointError(
                    f"{self.url}: reply is not UTF-8 JSON ({exc.reason} at byte {exc.start})"
                ) from None
            except json.JSONDecodeError:
                raise EndpointError(f"{self.url}: reply is not JSON: {body[:200]!r}") from None
        raise EndpointError(f"{self.url}: gave up after {self.retries + 1} attempts; last: {last}")


_flavour = flavour  # the argument of __init__ shadows the function's name


def _audio_part(turn: Turn) -> dict[str, Any]:
    if not turn.audio:
        raise ValueError("openai-audio: a user turn without audio cannot be sent")
    return wav_part(turn.audio)


def _form(message: dict[str, Any]) -> str:
    """How one assistant message carries the earlier reply: audio_id, text, text+audio, or
    empty (the reply came back without text: sent as an empty text turn, its audio not)."""
    if "audio" in message:
        return "audio_id"
    if message.get("content") == "":
        return "empty"
    return "text+audio" if isinstance(message.get("content"), list) else "text"


def _wav_rate(path: os.PathLike, url: str, n_bytes: int) -> int:
    """The sample rate of the reply's wav; an unreadable one names the endpoint, not the file."""
    import soundfile as sf

    try:
        return int(sf.info(str(path)).samplerate)
    except RuntimeError as exc:
        reason = str(exc).rsplit(":", 1)[-1].strip() or "unknown format"
        raise EndpointError(
            f"{url}: the reply's audio ({n_bytes:,} bytes) is not a readable wav ({reason})"
        ) from None


def _empty_audio(data: Any) -> bool:
    """A reply whose ``message.audio`` is present with ``data: ""`` (not a missing audio field)."""
    for choice in data.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        audio = message.get("audio") if isinstance(message, dict) else None
        if isinstance(audio, dict) and audio.get("data") == "":
            return True
    return False


def _declared_length(resp: Any) -> int | None:
    """The reply's Content-Length, or None when it has none (chunked) or a malformed one."""
    try:
        value = resp.headers.get("Content-Length")
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _server_message(exc: urllib.error.HTTPError) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's start."""
    try:
        body = exc.read().decode("utf-8", "replace")
    except OSError:
        return exc.reason or ""
    try:
        err = json.loads(body).get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])[:500]
        if isinstance(err, str):
            return err[:500]
    except (json.JSONDecodeError, AttributeError):
        pass
    return body[:500] or str(exc.reason)


def _retry_after(exc: urllib.error.HTTPError, default: float) -> float:
    value = exc.headers.get("Retry-After") if exc.headers else None
    try:
        return min(max(float(value), 0.0), MAX_BACKOFF_S) if value else default
    except ValueError:
        return default
