"""FFmpeg style transforms: tempo, gain and tempo-preserving pitch shift.

Each transform runs one ``ffmpeg`` process on in-memory float samples (piped as 32-bit float
PCM), so no temporary files are left behind.
"""

from __future__ import annotations

import shutil
import subprocess

import numpy as np

from stylebench.errors import UserError
from stylebench.synth.base import Audio, Style


class ToolMissingError(UserError, RuntimeError):
    """A required command-line tool is not installed."""


def require_tool(name: str, apt_package: str | None = None) -> str:
    path = shutil.which(name)
    if path is None:
        raise ToolMissingError(
            f"{name} is not installed: apt-get install {apt_package or name} (or run `make setup`)"
        )
    return path


def _atempo_chain(factor: float) -> list[str]:
    """atempo accepts [0.5, 100] per instance; chain instances for smaller factors."""
    parts: list[str] = []
    while factor < 0.5:
        parts.append("atempo=0.5")
        factor /= 0.5
    parts.append(f"atempo={factor:.6f}")
    return parts


def style_filters(style: Style, sr: int, *, include_rate: bool = True) -> list[str]:
    """The FFmpeg audio filters that realise ``style`` at sample rate ``sr``."""
    filters: list[str] = []
    if style.pitch_st:
        ratio = 2.0 ** (style.pitch_st / 12.0)
        # resampling trick: play at sr*ratio (pitch and tempo up), restore rate, undo the tempo
        filters += [f"asetrate={sr * ratio:.3f}", f"aresample={sr}"] + _atempo_chain(1.0 / ratio)
    if include_rate and style.rate != 1.0:
        filters += _atempo_chain(style.rate)
    if style.gain_db:
        filters.append(f"volume={style.gain_db:.4f}dB")
    return filters


def apply_filters(audio: Audio, filters: list[str]) -> Audio:
    """Run ``audio`` through an FFmpeg filter chain and return the result."""
    if not filters:
        return audio
    ffmpeg = require_tool("ffmpeg")
    cmd = [
        ffmpeg,
        "-hide_banner",
        "-loglevel",
        "error",
        "-f",
        "f32le",
        "-ar",
        str(audio.sr),
        "-ac",
        "1",
        "-i",
        "pipe:0",
        "-af",
        ",".join(filters),
        "-f",
        "f32le",
        "-ar",
        str(audio.sr),
        "-ac",
        "1",
        "pipe:1",
    ]
    proc = subprocess.run(
        cmd, input=audio.wave.astype("<f4").tobytes(), capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg failed ({' '.join(filters)}): {proc.stderr.decode()[-500:]}")
    out = np.frombuffer(proc.stdout, dtype="<f4").astype(np.float32)
    return Audio(out, audio.sr)


def apply_style(audio: Audio, style: Style, *, include_rate: bool = True) -> Audio:
    """Apply a style to already-synthesised audio with FFmpeg."""
    return apply_filters(audio, style_filters(style, audio.sr, include_rate=include_rate))
