"""Do two replies say the same words, and how much faster or slower is the second? An ASR-free
answer from dynamic time warping of their spectra.

The speed dimension (:mod:`stylebench.metrics.dims.speed`) needs to know, without a transcript,
whether two turns carry the same words: then they share one syllable count, and the change of
their speaking rate is a ratio of durations, which no transcript error can move. Two replies are
aligned here by DTW over their MFCCs inside their speech spans (:func:`align`): the mean frame
distance along the best path (``cost``) is low when the same words are spoken (tempo, gain and
pitch changes of one recording stay low) and high for other content; the path's slope is the
tempo ratio (``tempo``: seconds of the second reply per second of the first).

MFCCs: 25 ms Hann windows every 20 ms at 16 kHz, 26 mel bands (0-8 kHz), log energies, DCT-II
coefficients 1-12 (c0, the level, left out), each coefficient standardised over the reply so
a gain or a channel difference does not count. DTW: steps (1,0), (0,1), (1,1), Euclidean frame
distance, ends pinned; cost = accumulated distance / (n + m).

Tempo: each reply's time along the path, without the stretches of speech that one reply has and
the other has not (a run of :data:`UNMATCHED_RUN` or more path steps on which one reply advances
over its own speech frames while the other stands still: 5:1 locally, more than any tempo change,
so a word or phrase only one of them says, which is not a change of pace); a pause that is longer
in one reply stays in (a pause is part of the pace, as in the paper's syllables per minute of
speech span). The tempo is the ratio of the two times between :data:`EDGE_INSET` frames inside the
first and the last matched frame, where the voice activity detector's edges, which move with level
and pitch, no longer count. Measured on the real-speech corpus (docs/metrics.md, "Speed"): tempo
and pitch copies within 2.6%, where the ratio of the detected speech spans was off by up to 6%.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stylebench.metrics._common import as_wave, check_sr
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="alignment",
    version="2",
    outputs=("dtw_cost_prev", "dtw_tempo_prev", "dtw_turn_prev"),
    needs=("audio", "speech_span"),
    description=(
        "dtw_cost_prev: mean MFCC distance (12 standardised coefficients, 20 ms frames) along "
        "the DTW path between this reply's speech span and the previous measured turn's "
        "(dtw_turn_prev); low when both say the same words, which then share one syllable count "
        "(the speed dimension). dtw_tempo_prev: seconds of this reply per second of the previous "
        "one over the words they share (the path's Theil-Sen slope, unmatched speech taken out)."
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


#: a stretch of speech one reply has and the other not: this many path steps or more (20 ms
#: each) on which one reply advances over its speech frames while the other stands still
UNMATCHED_RUN = 5
#: the tempo is read between the path points this many frames (20 ms each) inside the first and
#: the last matched frame of the first reply: where the speech spans begin and end the detector's
#: edges move with level and pitch, and so would a ratio taken from them
EDGE_INSET = 5


@dataclass(frozen=True)
class Alignment:
    """Two replies aligned: ``cost`` (mean frame distance along the DTW path) and ``tempo``
    (seconds of the second reply per second of the first over the material they share)."""

    cost: float
    tempo: float


def align(
    a: np.ndarray,
    b: np.ndarray,
    speech_a: np.ndarray | None = None,
    speech_b: np.ndarray | None = None,
) -> Alignment:
    """Align two MFCC sequences (frames x coefs): see the module text.

    ``speech_a`` / ``speech_b`` mark each frame as speech (True) or a pause (False), e.g. from
    the voice activity detector's segments; a run of steps over one reply's pause frames stays in
    the tempo. ``None``: every frame is speech.

    Raises:
        ValueError: an empty sequence, different coefficient counts, or a mask of another length.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.ndim != 2 or b.ndim != 2 or a.size == 0 or b.size == 0 or a.shape[1] != b.shape[1]:
        raise ValueError(f"cannot align MFCC sequences of shapes {a.shape} and {b.shape}")
    masks = []
    for x, m in ((a, speech_a), (b, speech_b)):
        m = np.ones(x.shape[0], bool) if m is None else np.asarray(m, bool).reshape(-1)
        if m.size != x.shape[0]:
            raise ValueError(f"speech mask has {m.size} entries for {x.shape[0]} frames")
        masks.append(m)
    ia, ib = _keep(a.shape[0]), _keep(b.shape[0])
    a, b = a[ia], b[ib]
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
    path = _backtrack(acc)
    # back in the original frames (a long reply was subsampled evenly)
    orig = np.column_stack([ia[path[:, 0]], ib[path[:, 1]]])
    clocks = _clocks(orig, masks[0], masks[1])
    return Alignment(float(acc[n, m] / (n + m)), _inset_ratio(*clocks))


def alignment_cost(a: np.ndarray, b: np.ndarray) -> float:
    """Mean frame distance along the DTW path between two MFCC sequences (:func:`align`)."""
    return align(a, b).cost


def _keep(n: int) -> np.ndarray:
    """The frame indices that enter the DTW: all, or :data:`MAX_FRAMES` evenly spaced."""
    if n <= MAX_FRAMES:
        return np.arange(n)
    return np.linspace(0, n - 1, MAX_FRAMES).round().astype(int)


def _backtrack(acc: np.ndarray) -> np.ndarray:
    """The DTW path (pairs of 0-based frame indices) from the accumulated-cost matrix, ties
    resolved diagonal first, then a step in the first sequence."""
    i, j = acc.shape[0] - 1, acc.shape[1] - 1
    out = [(i - 1, j - 1)]
    while i > 1 or j > 1:
        if i == 1:
            j -= 1
        elif j == 1:
            i -= 1
        else:
            c = (acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
            k = int(np.argmin(c))
            i, j = (i - 1, j - 1) if k == 0 else (i - 1, j) if k == 1 else (i, j - 1)
        out.append((i - 1, j - 1))
    return np.array(out[::-1])


def _clocks(
    path: np.ndarray, speech_a: np.ndarray, speech_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each reply's time along the path (frames), without the stretches of speech only it has
    (runs of at least :data:`UNMATCHED_RUN` steps where it advances over speech frames while the
    other reply stands still)."""
    step = np.diff(path, axis=0)
    adv = [step[:, 0].astype(float), step[:, 1].astype(float)]
    speech = (speech_a, speech_b)
    for side in (0, 1):
        other = 1 - side
        alone = (step[:, side] > 0) & (step[:, other] == 0)
        t = 0
        while t < alone.size:
            if not alone[t]:
                t += 1
                continue
            end = t
            while end < alone.size and alone[end]:
                end += 1
            frames = path[t + 1 : end + 1, side]
            if end - t >= UNMATCHED_RUN and speech[side][frames].mean() > 0.5:
                adv[side][t:end] = 0.0
            t = end
    return (
        np.concatenate([[0.0], np.cumsum(adv[0])]),
        np.concatenate([[0.0], np.cumsum(adv[1])]),
    )


def _inset_ratio(ca: np.ndarray, cb: np.ndarray) -> float:
    """``b``'s time per ``a``'s time between the path points where ``a``'s clock is
    :data:`EDGE_INSET` frames in from its first and last matched frame (the whole clocks when
    the span is too short for that); 1.0 when ``a``'s clock does not move."""
    lo = int(np.searchsorted(ca, EDGE_INSET))
    hi = int(np.searchsorted(ca, ca[-1] - EDGE_INSET))
    if hi <= lo or ca[hi] - ca[lo] < EDGE_INSET:
        lo, hi = 0, ca.size - 1
    da = ca[hi] - ca[lo]
    return float((cb[hi] - cb[lo]) / da) if da > 0 else 1.0


def speech_frames(n: int, start_s: float, segments: Sequence[tuple[float, float]]) -> np.ndarray:
    """Which of ``n`` MFCC frames (the first centred near ``start_s``, :data:`HOP_S` apart) lie
    inside the voice activity detector's ``segments`` (seconds)."""
    t = start_s + HOP_S * np.arange(n) + WIN_S / 2
    out = np.zeros(n, bool)
    for lo, hi in segments:
        out |= (t >= lo) & (t < hi)
    return out
