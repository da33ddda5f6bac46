"""Reference measures and inputs of ``benchmarks/real_replies.py``: where the replies lie, FFmpeg's
EBU R128 integrated loudness, Praat's and pyworld harvest's mean F0 on their own, and the
synthetic non-speech probes.

The references are deliberately independent of stylebench's scores: loudness is FFmpeg's
(K-weighted, gated, over the whole file), Praat runs alone at its usual 75-500 Hz range, harvest is
pyworld's other F0 tracker (stylebench's score uses dio + stonemask cross-checked with Praat).
This module imports only numpy and the standard library at import time, so a test can load it by
path.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ENV = "STYLEBENCH_REAL_REPLIES"
DEFAULT = ROOT.parent / "shared" / "real_replies" / "vstyle"
#: Praat's usual speaking-voice range for the Praat-only reference
PRAAT_FLOOR_HZ, PRAAT_CEIL_HZ = 75.0, 500.0
#: FFmpeg reports this when no 400 ms block passes the absolute gate (nothing to measure)
LUFS_FLOOR = -70.0
_I_LINE = re.compile(r"Integrated loudness:\s*\n\s*I:\s*(-?\d+(?:\.\d+)?)\s*LUFS")


def data_dir() -> Path:
    """The VStyle replies folder: ``$STYLEBENCH_REAL_REPLIES``, else
    ``../shared/real_replies/vstyle`` beside the checkout (the audio is not in the repository).

    Raises:
        FileNotFoundError: the folder or its manifest.json / pairs.json is absent.
    """
    env = os.environ.get(ENV)
    folder = Path(env).expanduser() if env else DEFAULT
    missing = [n for n in ("manifest.json", "pairs.json") if not (folder / n).is_file()]
    if missing:
        raise FileNotFoundError(
            f"the VStyle real replies are not in {folder} (no {', '.join(missing)}); "
            f"set {ENV} to the folder holding manifest.json and pairs.json"
        )
    return folder


def load_inputs(folder: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The reply entries of ``manifest.json`` (spoken prompts left out) and ``pairs.json``.

    Raises:
        FileNotFoundError: a listed audio file is missing.
    """
    entries = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    replies = [e for e in entries if e.get("role", "reply") == "reply"]
    pairs = json.loads((folder / "pairs.json").read_text(encoding="utf-8"))
    missing = [e["file"] for e in replies if not (folder / e["file"]).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{len(missing)} listed replies missing in {folder}, e.g. {missing[0]}"
        )
    return replies, pairs


def parse_integrated_loudness(log: str) -> float:
    """The integrated loudness (LUFS) in the summary FFmpeg's ``ebur128`` filter prints.

    Raises:
        ValueError: no summary in ``log``.
    """
    found = _I_LINE.findall(log)
    if not found:
        raise ValueError("no 'Integrated loudness: I: ... LUFS' summary in the FFmpeg log")
    return float(found[-1])


def integrated_loudness(path: Path | str) -> float | None:
    """EBU R128 integrated loudness of a file (LUFS), or None when nothing passes the gate.

    ``framelog=verbose`` keeps the per-frame lines out of the default log level (FFmpeg 5 has
    no ``framelog=quiet``).

    Raises:
        ValueError: FFmpeg failed or printed no summary.
    """
    cmd = [
        "ffmpeg",
        "-nostdin",
        "-hide_banner",
        "-nostats",
        "-i",
        str(path),
        "-af",
        "ebur128=framelog=verbose",
        "-f",
        "null",
        "-",
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        tail = res.stderr.strip().splitlines()[-1:] or ["no output"]
        raise ValueError(f"ffmpeg ebur128 failed on {path}: {tail[0]}")
    lufs = parse_integrated_loudness(res.stderr)
    return None if lufs <= LUFS_FLOOR else lufs


def praat_mean_f0(wave: np.ndarray, sr: int) -> float | None:
    """Praat's mean F0 (Hz) over its voiced frames at 75-500 Hz, or None when none is voiced."""
    import parselmouth

    if wave.size / sr < 3.0 / PRAAT_FLOOR_HZ:
        return None
    snd = parselmouth.Sound(wave.astype(np.float64), sampling_frequency=sr)
    f0 = snd.to_pitch(pitch_floor=PRAAT_FLOOR_HZ, pitch_ceiling=PRAAT_CEIL_HZ).selected_array[
        "frequency"
    ]
    voiced = f0[f0 > 0]
    return float(voiced.mean()) if voiced.size else None


def harvest_mean_f0(wave: np.ndarray, sr: int) -> float | None:
    """pyworld harvest's mean F0 (Hz) over its voiced frames at 75-500 Hz, or None."""
    import pyworld

    f0, _t = pyworld.harvest(
        wave.astype(np.float64),
        sr,
        f0_floor=PRAAT_FLOOR_HZ,
        f0_ceil=PRAAT_CEIL_HZ,
        frame_period=5.0,
    )
    voiced = f0[f0 > 0]
    return float(voiced.mean()) if voiced.size else None


def st(a: float | None, b: float | None) -> float | None:
    """Semitones from ``a`` to ``b`` (None unless both are positive)."""
    return 12.0 * math.log2(b / a) if a and b and a > 0 and b > 0 else None


def probes(crop: np.ndarray | None, sr: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Non-speech controls, each 0.3 peak: a 150 Hz square wave and white noise (3 s), a steady
    220 Hz sine (3 s), and ``crop`` (a 0.4 s one-syllable cut of a real reply) when given."""
    t = np.arange(int(3.0 * sr)) / sr
    out = {
        "square_150Hz_3s": 0.3 * np.sign(np.sin(2 * np.pi * 150.0 * t)),
        "white_noise_3s": 0.3 * np.random.default_rng(seed).uniform(-1.0, 1.0, t.size),
        "sine_220Hz_3s": 0.3 * np.sin(2 * np.pi * 220.0 * t),
    }
    if crop is not None:
        out["syllable_crop_0.4s"] = crop
    return {k: v.astype(np.float32) for k, v in out.items()}


def syllable_crop(wave: np.ndarray, sr: int, start_s: float, length_s: float = 0.4) -> np.ndarray:
    """``length_s`` of ``wave`` from ``start_s`` with 10 ms fades (no click reads as an onset)."""
    a = int(start_s * sr)
    seg = wave[a : a + int(length_s * sr)].astype(np.float32).copy()
    n = min(int(0.01 * sr), seg.size // 2)
    if n:
        ramp = np.linspace(0.0, 1.0, n, dtype=np.float32)
        seg[:n] *= ramp
        seg[-n:] *= ramp[::-1]
    return seg
