"""Do two replies say the same thing? An ASR-free check by dynamic time warping of their spectra.

The speed cross-check (:mod:`stylebench.metrics.dims.speed`) needs to know, without a transcript,
whether two turns carry the same words: then their syllable counts must match, and a transcript
count that changes between them is an ASR error (a dropped phrase, a loop), not a change of
speaking rate. Two replies are aligned here by DTW over their MFCCs inside their speech spans;
the mean frame distance along the best path (:func:`alignment_cost`) is low when the same words
are spoken (tempo, gain and pitch changes of one recording stay low) and high for other content.

MFCCs: 25 ms Hann windows every 20 ms at 16 kHz, 26 mel bands (0-8 kHz), log energies, DCT-II
coefficients 1-12 (c0, the level, left out), each coefficient standardised over the reply so
a gain or a channel difference does not count. DTW: steps (1,0), (0,1), (1,1), Euclidean frame
distance, ends pinned; cost = accumulated distance / (n + m).
"""

from __future__ import annotations

import numpy as np

from stylebench.metrics._common import as_wave, check_sr
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="alignment",
    version="2",
    outputs=("dtw_cost_prev", "dtw_prev_turn"),
    needs=("audio", "speech_span"),
    description=(
        "dtw_cost_prev: mean MFCC distance (12 standardised coefficients, 20 ms frames) along "
        "the DTW path between this reply's speech span and the previous measured turn's "
        "(dtw_prev_turn); low when both say the same words, which then share one syllable count "
        "(the speed dimension)."
    ),
)

HOP_S = 0.02
WIN_S = 0.025
N_MELS = 26
N_COEF = 12
#: at most this many frames per reply enter the DTW (longer spans are subsampled evenly), so
#: a long reply costs at most MAX_FRAMES^2 distance cells
MAX_FRAMES = 1500


def _mel_filterbank(sr: int, n_fft: int) -> np.ndarray:
    def hz_to_mel(f: np.ndarray) -> np.ndarray:
        return 2595.0 * np.log10(1.0 + f / 700.0)

    mels = np.linspace(0.0, float(hz_to_mel(np.array(sr / 2.0))), N_MELS + 2)
    hz = 700.0 * (10.0 ** (mels / 2595.0) - 1.0)
    bins = np.floor((n_fft + 1) * hz / sr).astype(int)
    fb = np.zeros((N_MELS, n_fft // 2 + 1))
    for i in range(N_MELS):
        lo, mid, hi = bins[i], bins[i + 1], max(bins[i + 2], bins[i + 1] + 1)
        fb[i, lo:mid] = (np.arange(lo, mid) - lo) / max(1, mid - lo)
        fb[i, mid:hi] = (hi - np.arange(mid, hi)) / max(1, hi - mid)
    return fb


def mfcc(wave: np.ndarray, sr: int, start: float = 0.0, end: float | None = None) -> np.ndarray:
    """Standardised MFCCs (frames x 12) of ``wave`` between ``start`` and ``end`` seconds.

    Raises:
        ValueError: bad audio, or a span shorter than three frames.
    """
    from scipy.fft import dct

    sr = check_sr(sr)
    x = as_wave(wave).astype(np.float64)
    seg = x[int(max(0.0, start) * sr) : int(end * sr) if end is not None else None]
    win, hop = int(WIN_S * sr), int(HOP_S * sr)
    n = 1 + (seg.size - win) // hop if seg.size >= win else 0
    if n < 3:
        raise ValueError(f"span of {seg.size / sr:.3f} s is too short for an alignment")
    idx = np.arange(win)[None, :] + hop * np.arange(n)[:, None]
    frames = seg[idx] * np.hanning(win)[None, :]
    n_fft = 1 << (win - 1).bit_length()
    power = np.abs(np.fft.rfft(frames, n=n_fft, axis=1)) ** 2
    logmel = np.log(power @ _mel_filterbank(sr, n_fft).T + 1e-10)
    coef = dct(logmel, type=2, axis=1, norm="ortho")[:, 1 : N_COEF + 1]
    sd = coef.std(axis=0)
    return (coef - coef.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def alignment_cost(a: np.ndarray, b: np.ndarray) -> float:
    """Mean frame distance along the DTW path between two MFCC sequences (frames x coefs).

    Raises:
        ValueError: an empty sequence or different coefficient counts.
    """
    a, b = _subsample(np.asarray(a, float)), _subsample(np.asarray(b, float))
    if a.size == 0 or b.size == 0 or a.shape[1] != b.shape[1]:
        raise ValueError(f"cannot align MFCC sequences of shapes {a.shape} and {b.shape}")
    sq = (a**2).sum(1)[:, None] + (b**2).sum(1)[None, :] - 2.0 * a @ b.T
    dist = np.sqrt(np.maximum(sq, 0.0))
    n, m = dist.shape
    acc = np.full((n + 1, m + 1), np.inf)
    acc[0, 0] = 0.0
    # anti-diagonals: every cell of diagonal d depends only on diagonals d-1 and d-2
    for d in range(2, n + m + 1):
        i = np.arange(max(1, d - m), min(n, d - 1) + 1)
        j = d - i
        best = np.minimum(np.minimum(acc[i - 1, j], acc[i, j - 1]), acc[i - 1, j - 1])
        acc[i, j] = dist[i - 1, j - 1] + best
    return float(acc[n, m] / (n + m))


def _subsample(x: np.ndarray) -> np.ndarray:
    if x.ndim != 2 or x.shape[0] <= MAX_FRAMES:
        return x
    return x[np.linspace(0, x.shape[0] - 1, MAX_FRAMES).round().astype(int)]
