"""Volume score: RMS amplitude over speech-active frames, linear and in dBFS.

Definitions (DESIGN "volume"): RMS = sqrt(mean(x**2)) of the waveform samples (full scale = 1.0).
The score (:func:`gated_rms`) takes it over the frames that a relative level gate calls active:
100 ms frames no more than 20 dB below the reply's mean frame power. Beside it every record keeps
the RMS over the samples inside the VAD speech segments (``rms_active``, the score until rms
spec 2) and over the whole file. Why the gate and not the VAD's segments: docs/metrics.md, "Volume:
a relative gate" (the segments a detector draws move under a tempo change, and with them the
level, by up to 3 dB on real replies). dBFS = 20 * log10(RMS) with full scale 1.0, so a full-scale
sine is -3.01 dBFS (the RMS convention, not AES-17's +3 dB sine reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from stylebench.metrics._common import as_wave
from stylebench.metrics.spec import MetricSpec

#: the volume score's frames: 100 ms long, 25 ms apart
GATE_WINDOW_S = 0.1
#: frames more than this far below the mean frame power are left out of the volume score
GATE_DROP_DB = 20.0

SPEC = MetricSpec(
    name="rms",
    version="2",
    outputs=(
        "duration_s",
        "rms_gated",
        "rms_gated_dbfs",
        "rms_active",
        "rms_active_dbfs",
        "rms_file",
        "rms_file_dbfs",
    ),
    needs=("audio", "speech_span"),
    description=(
        "RMS amplitude (full scale 1.0) over the reply's 100 ms frames (25 ms hop) no more than "
        "20 dB below their mean power (the score; a reply with no speech detected has none), over "
        "the samples inside the VAD speech segments, and over the whole file; each also as "
        "dBFS = 20*log10(RMS) (a full-scale sine is -3.01 dBFS)."
    ),
)


@dataclass(frozen=True)
class RmsStats:
    """RMS of one reply.

    Attributes:
        rms_active: RMS over speech-active samples (the volume score), linear amplitude.
        rms_active_dbfs: the same in dBFS.
        rms_file: RMS over every sample of the file.
        rms_file_dbfs: the same in dBFS.
    """

    rms_active: float
    rms_active_dbfs: float
    rms_file: float
    rms_file_dbfs: float


def _float_wave(wave: np.ndarray) -> np.ndarray:
    """The wave as float samples; integer PCM is refused (it must be scaled first)."""
    if np.issubdtype(np.asarray(wave).dtype, np.integer):
        raise ValueError(
            "wave holds integer PCM; scale it to float in [-1, 1] first (e.g. int16 / 32768)"
        )
    return as_wave(wave)


def dbfs(rms: float) -> float:
    """20 * log10(rms) with full scale 1.0.

    Raises:
        ValueError: ``rms`` is not > 0 (digital silence has no finite level).
    """
    if not rms > 0 or not math.isfinite(rms):
        raise ValueError(f"RMS must be finite and > 0 to express in dBFS, got {rms}")
    return 20.0 * math.log10(rms)


def rms_stats(wave: np.ndarray, *, mask: np.ndarray | None = None) -> RmsStats:
    """RMS over speech-active samples and over the whole file.

    Args:
        wave: mono samples, full scale 1.0 (int PCM must be scaled to [-1, 1] first).
        mask: boolean per sample, True where speech is active (see
            :func:`stylebench.metrics.vad.active_mask`); None treats the whole file as active,
            so ``rms_active == rms_file``.

    Raises:
        ValueError: bad waveform, a mask of the wrong length or dtype, no active samples, or
            speech-active samples that are all zero.
    """
    x = _float_wave(wave)
    rms_file = float(np.sqrt(np.mean(x * x)))
    if mask is None:
        rms_active = rms_file
    else:
        m = np.asarray(mask)
        if m.dtype != np.bool_:
            raise ValueError(f"mask must be boolean, got dtype {m.dtype}")
        if m.shape != x.shape:
            raise ValueError(f"mask has shape {m.shape} but wave has {x.shape}; they must match")
        if not m.any():
            raise ValueError("mask marks no speech-active samples; nothing to measure")
        active = x[m]
        rms_active = float(np.sqrt(np.mean(active * active)))
    if rms_active <= 0:
        raise ValueError("the speech-active samples are all zero (digital silence); no volume")
    return RmsStats(
        rms_active=rms_active,
        rms_active_dbfs=dbfs(rms_active),
        rms_file=rms_file,
        rms_file_dbfs=dbfs(rms_file),
    )


def gated_rms(
    wave: np.ndarray,
    sr: int,
    *,
    mask: np.ndarray | None = None,
    drop_db: float = GATE_DROP_DB,
    window_s: float = GATE_WINDOW_S,
) -> float:
    """RMS over the frames no more than ``drop_db`` below the mean frame power: a relative gate
    in the manner of ITU-R BS.1770, on plain (unweighted) power. The volume score.

    Frames are ``window_s`` long with a hop of a quarter of that; with ``mask``, only frames whose
    centre sample is inside it count. Digitally silent frames (power 0) are left out before the
    mean, as BS.1770's absolute gate leaves out near-silence. The result is the square root of
    the kept frames' mean power. Scaling the wave by g scales it by exactly |g|; quiet frames
    that a detector or a tempo change adds or drops (a pause's edges, a far voice, breath)
    fall under the gate and do not dilute the level.

    Raises:
        ValueError: bad waveform or mask, or no frame with any power.
    """
    from stylebench.metrics._common import check_sr

    sr = check_sr(sr)
    x = _float_wave(wave)
    if not (drop_db > 0 and window_s > 0):
        raise ValueError(f"drop_db and window_s must be > 0, got {drop_db} and {window_s}")
    win = min(x.size, max(1, int(round(window_s * sr))))
    hop = max(1, win // 4)
    starts = np.arange(0, x.size - win + 1, hop)
    csum = np.concatenate([[0.0], np.cumsum(x * x)])
    power = (csum[starts + win] - csum[starts]) / win
    if mask is not None:
        m = np.asarray(mask)
        if m.dtype != np.bool_ or m.shape != x.shape:
            raise ValueError(f"mask must be boolean with the wave's shape {x.shape}")
        power = power[m[starts + win // 2]]
    power = power[power > 0]
    if power.size == 0:
        raise ValueError("no frame has any power (digital silence); no volume")
    kept = power[power >= np.mean(power) * 10.0 ** (-drop_db / 10.0)]
    return float(np.sqrt(np.mean(kept)))
