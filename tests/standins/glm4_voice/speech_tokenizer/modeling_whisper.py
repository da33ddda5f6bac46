"""Stand-in for speech_tokenizer/modeling_whisper.py: WhisperVQEncoder.from_pretrained."""

from __future__ import annotations

CALLS: list[tuple] = []


class WhisperVQEncoder:
    """StandInWhisperVQEncoder."""

    @classmethod
    def from_pretrained(cls, path: str) -> WhisperVQEncoder:
        CALLS.append(("from_pretrained", path))
        return cls()

    def eval(self) -> WhisperVQEncoder:
        return self

    def to(self, device: str) -> WhisperVQEncoder:
        CALLS.append(("to", device))
        return self
