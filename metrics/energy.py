"""Volume score: RMS amplitude over speech-active samples, linear and in dBFS.

Definitions (DESIGN "volume"): RMS = sqrt(mean(x**2)) of the waveform samples (full scale = 1.0),
taken over the samples inside the VAD speech segments; the whole-file RMS is kept beside it because
leading and trailing silence would otherwise bias the score. dBFS = 20 * log10(RMS) with full scale
1.0, so a full-scale sine is -3.01 dBFS (the RMS convention, not AES-17's +3 dB sine reference).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from stylebench.metrics._common import as_wave
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="rms",
    version="1",
    outputs=(
        "duration_s",
        "rms_active",
        "rms_active_dbfs",
        "rms_file",
        "rms_file_dbfs",
    ),
    needs=("audio", "speech_span"),
    description=(
        "RMS amplitude (full scale 1.0) over the samples inside the VAD speech segments, and over "
        "the whole file; each also as dBFS = 20*log10(RMS) (a full-scale sine is -3.01 dBFS)."
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
    x = as_wave(wave)
    if np.issubdtype(np.asarray(wave).dtype, np.integer):
        raise ValueError(
            "wave holds integer PCM; scale it to float in [-1, 1] first (e.g. int16 / 32768)"
        )
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
