"""Stand-ins for a synthesiser and an ASR (NOT speech, NOT Whisper), for dialogue-set builds.

:class:`TextTone` writes the text and the voice into the first samples of a wave (one byte a
sample) and a short tone after them; :class:`ReadsTextTone` reads them back, so the
intelligibility check hears exactly what was said, in any process (a Ray actor too), unless it
is told to garble a text in a voice. Deterministic: the same text and voice give the same bytes.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from stylebench.synth.base import Audio, Style, Voice

SR = 16000


@dataclass
class TextTone:
    """Stand-in synthesiser; ``calls`` counts its syntheses (in this process) and ``threads``
    names the threads they ran on, ``fail_on`` makes a synthesis of that text raise,
    ``stop_after`` raises KeyboardInterrupt at that call (a build cut short)."""

    name: str = "text-tone"
    calls: list[str] = field(default_factory=list)
    fail_on: str | None = None
    stop_after: int | None = None
    threads: set[str] = field(default_factory=set)

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio:
        if self.stop_after is not None and len(self.calls) >= self.stop_after:
            raise KeyboardInterrupt("the build is cut short here")
        self.calls.append(text)
        self.threads.add(threading.current_thread().name)
        if text == self.fail_on:
            raise RuntimeError(f"cannot say {text!r}")
        data = f"{voice.id}|{text}".encode()
        head = np.frombuffer(data, dtype=np.uint8).astype(np.float32) / 512.0
        t = np.arange(int(0.3 * SR)) / SR
        tone = 0.1 * np.sin(2 * np.pi * 220 * t)
        wave = np.concatenate([head, [-0.9], tone]).astype(np.float32)
        return Audio(wave, SR)

    def version(self) -> str:
        return "text-tone 1"


@dataclass(frozen=True)
class Heard:
    text: str


@dataclass
class ReadsTextTone:
    """Stand-in ASR for :class:`TextTone`: hears the text, except ``garble`` in ``voice``."""

    garble: str | None = None
    voice: str | None = None
    name: str = "reads-text-tone"

    def transcribe(self, wave: np.ndarray, sr: int, lang: str) -> Heard:
        w = np.asarray(wave, dtype=np.float64)
        end = int(np.argmax(w < -0.5))
        data = bytes(np.round(w[:end] * 512).astype(np.uint8))
        voice, _, text = data.decode("utf-8", errors="replace").partition("|")
        if text == self.garble and self.voice in (None, voice):
            return Heard("banana orchestra umbrella")
        return Heard(text)
