"""The synthesiser interface: ``synthesize(text, voice, style) -> Audio``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Style:
    """Acoustic style applied on top of a voice's neutral rendering.

    Attributes:
        rate: speaking-rate factor (1.0 = the voice's default; 1.25 = 25% faster).
        gain_db: level change in dB relative to the synthesiser's reference level.
        pitch_st: pitch shift in semitones (tempo preserved).
        f0_range_st: pitch-range change in semitones (the expressiveness dimension's transform,
            :func:`stylebench.metrics.dims.expressiveness.scale_f0_range`).
    """

    rate: float = 1.0
    gain_db: float = 0.0
    pitch_st: float = 0.0
    f0_range_st: float = 0.0

    def __post_init__(self) -> None:
        if not 0.25 <= self.rate <= 4.0:
            raise ValueError(f"rate factor {self.rate} is outside [0.25, 4.0]")
        if not -24.0 <= self.pitch_st <= 24.0:
            raise ValueError(f"pitch shift {self.pitch_st} semitones is outside [-24, 24]")
        if not -60.0 <= self.gain_db <= 30.0:
            raise ValueError(f"gain {self.gain_db} dB is outside [-60, 30]")
        if not -24.0 <= self.f0_range_st <= 24.0:
            raise ValueError(f"pitch-range change {self.f0_range_st} st is outside [-24, 24]")

    @property
    def is_neutral(self) -> bool:
        return (
            self.rate == 1.0
            and self.gain_db == 0.0
            and self.pitch_st == 0.0
            and self.f0_range_st == 0.0
        )


@dataclass(frozen=True)
class Audio:
    """Mono float32 samples in [-1, 1] and their rate."""

    wave: np.ndarray
    sr: int

    @property
    def duration_s(self) -> float:
        return self.wave.size / self.sr


@dataclass(frozen=True)
class Voice:
    """A speaker timbre: a stable id users see, and the backend's own voice name."""

    id: str
    lang: str
    backend_voice: str
    description: str = ""


class Synthesizer(Protocol):
    """Turns text into speech in a given voice and style."""

    name: str

    def synthesize(self, text: str, voice: Voice, style: Style = Style()) -> Audio: ...
