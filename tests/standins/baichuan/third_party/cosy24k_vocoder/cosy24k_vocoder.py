"""Stand-in for third_party/cosy24k_vocoder/cosy24k_vocoder.py: Cosy24kVocoder.from_pretrained."""

from __future__ import annotations

CALLS: list[tuple] = []


class Cosy24kVocoder:
    @classmethod
    def from_pretrained(cls, model_path):
        CALLS.append(("from_pretrained", model_path))
        return cls()

    def to(self, device):
        CALLS.append(("to", device))
        return self
