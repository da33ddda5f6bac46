"""Speech-like test signals: what a reply must look like to be scored at all.

A pure tone is not speech (stylebench.metrics.validity leaves it unscored on every dimension),
so tests that need a *scored* reply with a known pitch and level use :func:`speechlike`: a
harmonic voice whose F0 glides by +-2 semitones around ``f0`` (the same glide in every call, so
two calls differ only by their F0 and level) and whose level rises and falls four times a second
like syllables. Its mean F0 over voiced frames is ``f0`` within a few percent, and the ratio of
two calls' means is the ratio of their ``f0`` exactly.
"""

from __future__ import annotations

import io

import numpy as np


def speechlike(sr: int, seconds: float = 1.5, f0: float = 160.0, amp: float = 0.3) -> np.ndarray:
    """Mono float32 samples of the speech-like signal (module docstring)."""
    t = np.arange(int(sr * seconds)) / sr
    inst = f0 * 2 ** (2 * np.sin(2 * np.pi * 0.7 * t) / 12)
    phase = 2 * np.pi * np.cumsum(inst) / sr
    voice = sum(np.sin(h * phase) / h for h in range(1, 8)) / 2.6
    env = np.clip(np.sin(2 * np.pi * 4 * t + np.pi / 2), 0, None) ** 0.7
    return (amp * voice * env).astype(np.float32)


def speechlike_wav(sr: int, seconds: float = 1.5, f0: float = 160.0, amp: float = 0.3) -> bytes:
    """:func:`speechlike` as 16-bit WAV bytes."""
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, speechlike(sr, seconds, f0, amp), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()
