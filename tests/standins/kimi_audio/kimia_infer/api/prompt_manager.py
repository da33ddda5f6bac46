"""Stand-in for kimia_infer/api/prompt_manager.py: the message checks of get_prompt.

Mirrors the official ``KimiAPromptManager.tokenize_message`` after the multi-turn change
(PR #103): message types "text", "audio" (a wav path) and "audio-text" (``[wav, text]``).
"""

from __future__ import annotations

from pathlib import Path

MESSAGE_TYPES = ("text", "audio", "audio-text")


def check_messages(messages: list[dict]) -> None:
    """Raise as the official prompt manager would on a malformed conversation."""
    for m in messages:
        assert m["role"] in ("user", "assistant"), m["role"]
        kind = m["message_type"]
        if kind not in MESSAGE_TYPES:
            raise NotImplementedError(f"message_type: {kind}")
        if kind == "audio":
            assert Path(m["content"]).is_file(), m["content"]
        if kind == "audio-text":
            audio_path, text = m["content"]
            assert Path(audio_path).is_file() and isinstance(text, str)
