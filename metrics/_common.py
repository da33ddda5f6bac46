"""Input checks and resampling shared by the metric modules (numpy and scipy only)."""

from __future__ import annotations

from math import gcd

import numpy as np


def check_sr(sr: int) -> int:
    """Return ``sr`` as an int, or raise ValueError when it is not a positive integer rate."""
    if isinstance(sr, bool) or not isinstance(sr, (int, np.integer)) or sr <= 0:
        raise ValueError(f"sample rate must be a positive integer in Hz, got {sr!r}")
    return int(sr)


def as_wave(wave: np.ndarray, *, name: str = "wave", min_samples: int = 1) -> np.ndarray:
    """Validate a mono waveform and return it as a contiguous float64 array.

    Args:
        wave: samples, float in [-1, 1] (full scale = 1.0) or any numeric dtype; 1-D, or 2-D with
            one channel axis of size 1.
        name: what to call the array in error messages.
        min_samples: fewest samples accepted.

    Raises:
        ValueError: multi-channel, empty, too short, or non-finite input.
    """
    arr = np.asarray(wave)
    if arr.ndim == 2 and 1 in arr.shape:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be mono (1-D), got shape {arr.shape}; mix down or pick one channel first"
        )
    if not np.issubdtype(arr.dtype, np.number) or np.iscomplexobj(arr):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.size < max(1, min_samples):
        raise ValueError(f"{name} has {arr.size} samples; at least {max(1, min_samples)} needed")
    out = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} contains NaN or infinite samples; the audio file is corrupt")
    return out


def resample(wave: np.ndarray, sr: int, target_sr: int) -> np.ndarray:
    """Resample with a polyphase filter (scipy ``resample_poly``); a no-op when rates match."""
    sr, target_sr = check_sr(sr), check_sr(target_sr)
    if sr == target_sr:
        return wave
    from scipy.signal import resample_poly

    g = gcd(sr, target_sr)
    return resample_poly(wave, target_sr // g, sr // g)
