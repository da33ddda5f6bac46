"""Stand-in for Freeze-Omni models/decoder/llm2tts.py: llm2TTS(model_path)."""

from __future__ import annotations

CALLS: list[tuple] = []


class llm2TTS:  # noqa: N801 - the official class name
    def __init__(self, model_path):
        CALLS.append(("init", model_path))
