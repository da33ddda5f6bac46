"""Server flavours of ``openai-audio``: what each server accepts and how it answers.

The OpenAI chat-completions wire format is shared, but the servers differ in four places that
change what the model hears or how long it may speak (evidence in docs/models.md#openai-audio):

- ``openai``: the OpenAI API. One choice holds text and audio (``audio.transcript``); an earlier
  reply may go back as ``{"role": "assistant", "audio": {"id": ...}}`` while its id is valid;
  length is ``max_completion_tokens``; the voice is ``audio.voice``.
- ``vllm-omni-qwen2.5`` / ``vllm-omni-qwen3``: vLLM-Omni serving Qwen2.5-Omni or Qwen3-Omni.
  Text and audio come back as *separate* choices (the audio choice's transcript is empty);
  the stage-0 sampling override reads ``max_tokens``, not ``max_completion_tokens``; vLLM's
  message parser reads an assistant message's ``content`` only, so an ``audio.id`` reference
  would reach the model as an empty reply: earlier replies go back as text. The voice is the
  top-level ``speaker``. Qwen2.5-Omni's talker needs the model card's system prompt, which is
  the default of its flavour.
- ``vllm-omni-kimi``: vLLM-Omni's Kimi-Audio renderer. Separate choices as above; it rejects
  ``max_completion_tokens`` and takes ``max_tokens`` plus ``chat_template_kwargs.output_type``;
  it takes no ``audio.id`` history, so an earlier reply is re-sent as its transcript and its
  audio (``text`` + ``input_audio`` content parts): the model hears its own voice. No system
  message, no voice selection. The renderer refuses an assistant audio part without its
  transcript, so a reply whose text came back empty goes back as an empty text message.

``history=audio`` (the Qwen flavours only, opt-in) re-sends an earlier reply the Kimi way, its
transcript and its wav as ``text`` + ``input_audio`` parts of the assistant message. Qwen2.5-
and Qwen3-Omni were not trained on audio in assistant turns (their chat templates and the
model cards put audio in user turns only), so this is its own history kind,
``own audio + text (untrained form)``, never to be compared with a model that was.

The Qwen flavours' voice (top-level ``speaker``) is read by vLLM-Omni since PR #1963
(merged 2026-03, vllm-project/vllm-omni issue #1845); older servers ignore it without a word,
and an unknown speaker falls back to the default silently (issue #2395). A client cannot hear
which voice came back; where a reply names the voice it used (``audio.voice``, ``speaker`` or
``voice``), :func:`voice_report` compares it with the one asked for.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stylebench.model_wrappers.common import (
    HISTORY_OWN_AUDIO,
    HISTORY_OWN_AUDIO_UNTRAINED,
    HISTORY_TEXT,
)
from stylebench.model_wrappers.hf.qwen25_omni import CARD_SYSTEM_PROMPT

#: how earlier replies go back: an OpenAI audio id (else the transcript), the transcript only,
#: or the transcript and the reply audio as content parts
AUDIO_ID, TEXT, TEXT_AUDIO = "audio-id", "text", "text+audio"


@dataclass(frozen=True)
class Flavour:
    """One server's dialect of the chat-completions request and reply."""

    name: str
    length_field: str  # the request field that bounds the reply length
    history: str  # AUDIO_ID | TEXT | TEXT_AUDIO
    voice_field: str = "audio.voice"  # "audio.voice", "speaker" or "" (no voice selection)
    default_voice: str = ""
    default_system: str = ""
    system_allowed: bool = True
    system_as_parts: bool = False  # send the system prompt as [{"type": "text", ...}]
    audio_opt_in: bool = False  # history=audio: re-send reply wavs although untrained
    voice_note: str = ""  # what a user must know about the voice field (describe())
    extra: Mapping[str, Any] = field(default_factory=dict)

    def history_kind(self, history_arg: str) -> str:
        """What the model hears of its earlier replies (one of ``HISTORY_KINDS``).

        ``openai`` counts as own audio + text: the id is sent whenever the server gave one
        that is still valid; a turn that fell back to the transcript says so in its
        ``raw.history_forms``.
        """
        if history_arg == "audio":
            return HISTORY_OWN_AUDIO_UNTRAINED
        if history_arg == "text" or self.history == TEXT:
            return HISTORY_TEXT
        return HISTORY_OWN_AUDIO

    def history_words(self, history_arg: str) -> str:
        """The same, in words, for the manifest's ``history``."""
        if history_arg == "audio":
            return (
                "earlier replies re-sent as transcript + wav content parts of the assistant "
                "message, a form the model was not trained on (opt-in)"
            )
        if history_arg == "text" or self.history == TEXT:
            return "earlier replies as their transcript; user turns as audio"
        if self.history == TEXT_AUDIO:
            return "earlier replies re-sent as transcript + wav content parts"
        return "earlier replies as the server's audio id while valid, else the transcript"


SPEAKER_NOTE = (
    "speaker is read by vLLM-Omni since PR #1963 (2026-03); older servers ignore it silently "
    "and an unknown speaker falls back to the default (issue #2395): check the served voice"
)
VLLM_OMNI_QWEN = {
    "length_field": "max_tokens",
    "history": TEXT,
    "voice_field": "speaker",
    "audio_opt_in": True,
    "voice_note": SPEAKER_NOTE,
}
FLAVOURS: dict[str, Flavour] = {
    "openai": Flavour("openai", "max_completion_tokens", AUDIO_ID, default_voice="alloy"),
    "vllm-omni-qwen2.5": Flavour(
        "vllm-omni-qwen2.5",
        **VLLM_OMNI_QWEN,
        default_system=CARD_SYSTEM_PROMPT,
        system_as_parts=True,
    ),
    "vllm-omni-qwen3": Flavour("vllm-omni-qwen3", **VLLM_OMNI_QWEN, system_as_parts=True),
    "vllm-omni-kimi": Flavour(
        "vllm-omni-kimi",
        "max_tokens",
        TEXT_AUDIO,
        voice_field="",
        system_allowed=False,
        extra={"chat_template_kwargs": {"output_type": "both"}},
    ),
}


def flavour(name: str) -> Flavour:
    """The named flavour (BadValue lists the known ones)."""
    if name not in FLAVOURS:
        from stylebench.errors import BadValue

        raise BadValue(f"openai-audio: flavour must be one of {', '.join(FLAVOURS)}, got {name!r}")
    return FLAVOURS[name]


def wav_part(path: str) -> dict[str, Any]:
    """One ``input_audio`` content part holding a wav file in base64."""
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}


def system_message(fl: Flavour, text: str) -> dict[str, Any]:
    content: Any = [{"type": "text", "text": text}] if fl.system_as_parts else text
    return {"role": "system", "content": content}


def request_body(
    fl: Flavour, model: str, voice: str, messages: list[dict[str, Any]], decode: Any
) -> dict[str, Any]:
    """The JSON body of one request in this flavour's dialect."""
    audio: dict[str, Any] = {"format": "wav"}
    body: dict[str, Any] = {"model": model, "modalities": ["text", "audio"], "messages": messages}
    if voice and fl.voice_field == "audio.voice":
        audio = {"voice": voice, "format": "wav"}
    elif voice and fl.voice_field == "speaker":
        body["speaker"] = voice
    body["audio"] = audio
    body.update(
        temperature=decode.temperature,
        top_p=decode.top_p,
        seed=decode.seed,
        **{fl.length_field: decode.max_new_tokens},
    )
    body.update({k: dict(v) if isinstance(v, Mapping) else v for k, v in fl.extra.items()})
    return body


def reply_parts(data: Any) -> tuple[str, dict[str, Any] | None]:
    """``(text, audio object)`` from a reply, whether one choice holds both or each has one.

    The text is the first non-empty ``message.content`` or ``audio.transcript``; the audio is
    the first ``message.audio`` carrying ``data``. A reply without choices gives ``("", None)``.

    Raises:
        ValueError: a field of the reply has the wrong type (a numeric transcript, a string
            ``expires_at``, NaN), naming the field and its value.
    """
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list):
        return "", None
    text, audio = "", None
    for i, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        where = f"choices[{i}].message"
        _check(message, "content", "string or list of parts", where)
        _check(message, "audio", "object", where)
        part = message.get("audio") or {}
        for name in ("data", "transcript", "id"):
            _check(part, name, "string", f"{where}.audio")
        _check(part, "expires_at", "finite number", f"{where}.audio")
        if audio is None and part.get("data"):
            audio = part
        content = message.get("content")
        text = text or (content if isinstance(content, str) else "") or part.get("transcript") or ""
    return text.strip(), audio


def _check(obj: dict[str, Any], name: str, kind: str, where: str) -> None:
    """``obj[name]`` is absent, null or of the JSON ``kind`` (a number: finite, not a bool)."""
    value = obj.get(name)
    if value is None or _KINDS[kind](value):
        return
    raise ValueError(f"{where}.{name} must be a {kind}, got {value!r}"[:300])


_KINDS = {
    "string": lambda v: isinstance(v, str),
    "string or list of parts": lambda v: isinstance(v, (str, list)),
    "object": lambda v: isinstance(v, dict),
    "finite number": lambda v: (
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    ),
}


def voice_report(fl: Flavour, voice: str, data: Any) -> dict[str, Any]:
    """What a reply says about the voice: the one it names, and whether that is not the one
    asked for (``voice_ignored``; None when nothing was asked or the reply names none)."""
    if not fl.voice_field or not isinstance(data, dict):
        return {}
    served = None
    places = [data]
    for choice in data.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            places += [message, message.get("audio")]
    for place in places:
        if not isinstance(place, dict):
            continue
        for key in ("speaker", "voice"):
            if isinstance(place.get(key), str) and place[key].strip():
                served = place[key].strip()
                break
        if served:
            break
    ignored = None
    if voice and served is not None:
        ignored = served.lower() != voice.strip().lower()
    return {"voice_requested": voice or None, "voice_served": served, "voice_ignored": ignored}
