"""Integrated loudness of a mono signal, ITU-R BS.1770-4 (the measure of EBU R128), in LUFS.

The signal is K-weighted (a high shelf of about +4 dB above 1.5 kHz, the head's effect, then a
high-pass near 38 Hz, the "RLB" curve), cut into 400 ms blocks every 100 ms (75 % overlap), and
each block's loudness is ``-0.691 + 10*log10(mean square)``. Two gates decide which blocks count:
an absolute gate at -70 LUFS (silence), then a relative gate 10 LU below the loudness of the
blocks that passed the first. The integrated loudness is the loudness of the mean power of the
blocks that pass both.

The two K-weighting filters are designed for the signal's own rate by the bilinear transform of
their analogue prototypes (the parameters libebur128 publishes); at 48 kHz they give the
coefficients tabulated in BS.1770-4 (tests/test_loudness.py checks both, and the whole measure
against FFmpeg's ``ebur128`` filter). A 0 dBFS 997 Hz sine reads -3.01 LUFS, as the
recommendation requires. Mono only: a reply is one channel (``stylebench.audio.load_audio``).
"""

from __future__ import annotations

import math

import numpy as np

from stylebench.metrics._common import as_wave, check_sr

#: the pre-filter (head effect): a high shelf, f0 Hz, gain dB, Q
SHELF_F0, SHELF_GAIN_DB, SHELF_Q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
#: the RLB high-pass: f0 Hz, Q
HIGHPASS_F0, HIGHPASS_Q = 38.13547087602444, 0.5003270373238773
#: gating blocks: 400 ms long, a new one every 100 ms
BLOCK_S, HOP_S = 0.4, 0.1
#: the absolute gate (LUFS) and the relative gate (LU below the absolutely gated loudness)
ABSOLUTE_GATE_LUFS, RELATIVE_GATE_LU = -70.0, -10.0
#: the offset that makes a 997 Hz sine read its RMS level after K-weighting
OFFSET_DB = -0.691


def k_weighting(sr: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The two K-weighting biquads for rate ``sr``: ``((b, a) shelf, (b, a) high-pass)``."""
    k = math.tan(math.pi * SHELF_F0 / sr)
    vh = 10.0 ** (SHELF_GAIN_DB / 20.0)
    vb = vh**0.4996667741545416
    a0 = 1.0 + k / SHELF_Q + k * k
    shelf_b = (
        np.array([vh + vb * k / SHELF_Q + k * k, 2.0 * (k * k - vh), vh - vb * k / SHELF_Q + k * k])
        / a0
    )
    shelf_a = np.array([1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / SHELF_Q + k * k) / a0])
    k = math.tan(math.pi * HIGHPASS_F0 / sr)
    a0 = 1.0 + k / HIGHPASS_Q + k * k
    hp_b = np.array([1.0, -2.0, 1.0])
    hp_a = np.array([1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / HIGHPASS_Q + k * k) / a0])
    return (shelf_b, shelf_a), (hp_b, hp_a)


def block_powers(wave: np.ndarray, sr: int) -> np.ndarray:
    """Mean square of the K-weighted signal in each 400 ms gating block (100 ms apart); empty
    when the signal is shorter than one block."""
    from scipy.signal import lfilter

    sr = check_sr(sr)
    x = as_wave(wave, min_samples=1)
    for b, a in k_weighting(sr):
        x = lfilter(b, a, x)
    n, hop = int(round(BLOCK_S * sr)), int(round(HOP_S * sr))
    if x.size < n:
        return np.zeros(0)
    csum = np.concatenate(([0.0], np.cumsum(x * x)))
    starts = np.arange(0, x.size - n + 1, hop)
    return np.maximum((csum[starts + n] - csum[starts]) / n, 0.0)


def _lufs(power: float) -> float:
    return OFFSET_DB + 10.0 * math.log10(power)


def integrated_loudness(wave: np.ndarray, sr: int) -> float | None:
    """Integrated loudness in LUFS; ``None`` when no 400 ms block passes the absolute gate
    (the signal is shorter than one block, or silent).

    Raises:
        ValueError: bad waveform or rate.
    """
    z = block_powers(wave, sr)
    z = z[z > 0]
    if z.size == 0:
        return None
    loud = OFFSET_DB + 10.0 * np.log10(z)
    kept = z[loud > ABSOLUTE_GATE_LUFS]
    if kept.size == 0:
        return None
    relative = _lufs(float(np.mean(kept))) + RELATIVE_GATE_LU
    kept = z[(loud > ABSOLUTE_GATE_LUFS) & (loud > relative)]
    return _lufs(float(np.mean(kept)))
