"""The synthesiser interface: ``synthesize(text, voice, style) -> Audio``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from stylebench.errors import BadValue


@dataclass(frozen=True)
class Style:
    """Acoustic style applied on top of a voice's neutral rendering.

    Attributes:
        rate: speaking-rate factor (1.0 = the voice's default; 1.25 = 25% faster).
        gain_db: level change in dB relative to the synthesiser's reference level.
        pitch_st: pitch shift in semitones (tempo preserved).
        extra: knobs no synthesiser implements, as ``(name, amount)`` pairs: a dimension's
            own reference step (e.g. ``("f0_range_pct", -40.0)``), applied after synthesis by
            the dimension that owns the knob
            (:meth:`stylebench.metrics.dims.base.Dimension.transform`), so a new dimension
            needs no new field here.
    """

    rate: float = 1.0
    gain_db: float = 0.0
    pitch_st: float = 0.0
    extra: tuple[tuple[str, float], ...] = ()

    def __post_init__(self) -> None:
        if not 0.25 <= self.rate <= 4.0:
            raise ValueError(f"rate factor {self.rate} is outside [0.25, 4.0]")
        if not -24.0 <= self.pitch_st <= 24.0:
            raise ValueError(f"pitch shift {self.pitch_st} semitones is outside [-24, 24]")
        if not -60.0 <= self.gain_db <= 30.0:
            raise ValueError(f"gain {self.gain_db} dB is outside [-60, 30]")
        # as a tuple of pairs, so the style stays hashable; a record's ``{"name": amount}`` and a
        # JSON round trip's lists are taken too; a knob at 0 is no knob (turn 1 of the
        # reference model is the synthesiser's own rendering)
        pairs = self.extra.items() if isinstance(self.extra, Mapping) else self.extra
        extra = tuple((str(k), float(v)) for k, v in pairs if float(v) != 0.0)
        object.__setattr__(self, "extra", extra)

    def shown(self) -> dict[str, object]:
        """The style as a record shows it: the three knobs, and ``extra`` as a mapping when
        there is one (``Style(**style.shown())`` gives the style back)."""
        out: dict[str, object] = {"rate": self.rate, "gain_db": self.gain_db}
        out["pitch_st"] = self.pitch_st
        if self.extra:
            out["extra"] = dict(self.extra)
        return out

    @property
    def is_neutral(self) -> bool:
        return (
            self.rate == 1.0
            and self.gain_db == 0.0
            and self.pitch_st == 0.0
            and not any(v for _, v in self.extra)
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


def synthesize_draw(synth: Synthesizer, text: str, voice: Voice, draw: int) -> Audio:
    """``text`` in ``voice``, noise draw ``draw``: a synthesiser whose noise comes from a seed
    (``seeded_draws`` true: piper, offline) gives other samples for another draw and the same
    ones for the same draw; any other is called as it is (a deterministic one says the same
    again, one with unseeded noise draws anew)."""
    if getattr(synth, "seeded_draws", False):
        return synth.synthesize(text, voice, draw=draw)  # type: ignore[call-arg]
    return synth.synthesize(text, voice)


def number_arg(
    synth: str, name: str, value: Any, *, low: float, high: float, whole: bool = False
) -> Any:
    """A synthesiser's numeric argument, given as text on the command line (``--synth-arg``) or
    as a number from Python, checked against ``[low, high]``.

    Raises:
        BadValue: not a number (not a whole one when ``whole``), or outside the range.
    """
    try:
        number = float(value)
        if whole and not number.is_integer():
            raise ValueError
    except (TypeError, ValueError):
        kind = "a whole number" if whole else "a number"
        raise BadValue(f"--synth-arg {name}={value}: {synth} needs {kind}") from None
    if not low <= number <= high:
        raise BadValue(f"--synth-arg {name}={value}: {synth} takes {low:g} to {high:g}")
    return int(number) if whole else number


def flag_arg(synth: str, name: str, value: Any) -> bool:
    """A synthesiser's yes/no argument: a bool, or ``true``/``false``/``1``/``0`` as text.

    Raises:
        BadValue: any other value.
    """
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0", "yes", "no"):
        raise BadValue(f"--synth-arg {name}={value}: {synth} takes true or false")
    return text in ("true", "1", "yes")
