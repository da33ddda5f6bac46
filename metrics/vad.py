"""Speech-span detection: where in a reply the speech is.

The speech span feeds two scores: the speed denominator (first to last speech second) and the
volume mask (RMS over speech-active samples only).
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.metrics._common import as_wave, check_sr, resample
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="vad",
    version="4",
    outputs=(
        "span_start",
        "span_end",
        "span_s",
        "active_s",
    ),
    needs=("audio",),
    description=(
        "Speech segments from Silero VAD v6 (silero_vad_v6.onnx as faster-whisper 1.2.1 ships it, "
        "sha256 4cbf549b8326, run by "
        "onnxruntime on one thread, 32 ms chunks at 16 kHz, enter at "
        "probability >= 0.5, leave below 0.35), gaps < 0.15 s merged, segments < 0.05 s dropped, "
        "each padded by 0.03 s; edges snapped outward to the energy detector's within 0.25 s; "
        "speech-level sound (within 10 dB of the median level inside) touching a segment joins it. "
        "Cross-checked per reply: frames outside the Silero segments within "
        "10 dB of the median level inside them are missed speech; more than max(0.5 s, 25% of the "
        "active seconds) missed, or no Silero speech, switches the whole sample to the energy "
        "detector (frames within 35 dB of the loudest)."
    ),
)

SILERO_SR = 16000
SILERO_CHUNK = 512
SILERO_CONTEXT = 64  # samples of the previous chunk the v6 model sees with each chunk
SILERO_BATCH = 10000  # chunks per ONNX call (320 s); the LSTM state carries across calls
SILERO_MODEL = "silero_vad_v6.onnx"
#: the file faster-whisper 1.2.1 ships; another file under that name would change every span
SILERO_MODEL_SHA256 = "4cbf549b8326f60f80f2536d9eefeb450a9abe83365a098031c89719f1be17d2"
SILERO_HYSTERESIS = 0.15  # leave speech below threshold - 0.15, as Silero's get_speech_timestamps
ENERGY_FRAME_S = 0.020
ENERGY_HOP_S = 0.005
SILENT_PEAK_RMS = 1e-4  # loudest 20 ms frame below -80 dBFS: the file is silent
#: cross-check of a Silero span: audio outside it within this many dB of the median level inside
#: it counts as missed speech; the span is suspect when the missed seconds exceed both bounds
MISSED_LEVEL_DB = 10.0
MISSED_MIN_S = 0.5
MISSED_SHARE = 0.25
#: Silero decides per 32 ms chunk and can place an onset a few chunks late; an edge moves to the
#: energy detector's edge of the same stretch of sound when that lies at most this far out
SNAP_MAX_S = 0.25


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
    voiced: np.ndarray | None = None,
    voiced_frame_s: float = 0.005,
) -> SpeechSpan:
    """Find the speech segments of a mono waveform.

    Definitions: a Silero chunk is speech when its probability reaches ``threshold`` and stays
    speech until the probability falls below ``threshold - 0.15``; each Silero segment's edges
    then move outward to the energy detector's edges within 0.25 s (:func:`snap_edges`). An energy frame (20 ms window,
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
        voiced: optional per-frame voicing (frame i centred at ``i * voiced_frame_s``, e.g. the
            frames most F0 trackers call voiced): Silero's segments then grow only over voiced
            sound (:func:`snap_edges`, :func:`join_loud`), so noise or a breath at the
            detectors' level thresholds cannot move an edge by a quarter second.
        voiced_frame_s: the frame step of ``voiced``.

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
        gate = None if voiced is None else VoicedTimes(np.asarray(voiced, bool), voiced_frame_s)
        raw = snap_edges(
            _silero_segments(x, sr, threshold), _energy_segments(x, sr, energy_db), gate
        )
        raw = join_loud(raw, x, sr, min_silence_s, gate)
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


#: a stretch that a span edge may grow over must hold at least this much voiced sound
MIN_VOICED_GROWTH_S = 0.02


@dataclass(frozen=True)
class VoicedTimes:
    """Per-frame voicing on a fixed grid, asked how much voiced sound a stretch holds."""

    mask: np.ndarray
    frame_s: float

    def seconds(self, a: float, b: float) -> float:
        """Voiced seconds whose frame centres lie in ``[a, b)``."""
        lo = max(0, int(np.ceil(a / self.frame_s - 1e-9)))
        hi = min(self.mask.size, int(np.ceil(b / self.frame_s - 1e-9)))
        return float(self.mask[lo:hi].sum()) * self.frame_s if hi > lo else 0.0

    def holds_voice(self, a: float, b: float) -> bool:
        return self.seconds(a, b) >= MIN_VOICED_GROWTH_S


def snap_edges(
    segments: list[tuple[float, float]],
    energy: list[tuple[float, float]],
    voiced: VoicedTimes | None = None,
) -> list[tuple[float, float]]:
    """Move Silero segment edges outward to the energy detector's, within :data:`SNAP_MAX_S`.

    A Silero start ``a`` inside an energy segment ``(c, d)`` (``c < a <= d``) becomes ``c`` when
    ``a - c <= SNAP_MAX_S``; an end ``b`` with ``c <= b < d`` becomes ``d`` when
    ``d - b <= SNAP_MAX_S``. Measured on real speech: a loud word onset that Silero placed 0.1 s
    late held a third of the reply's energy, and cutting it moved the speech-active level by 1 dB
    between two copies of the same speech. Edges never move inward, and an energy segment far
    longer than the Silero one (a noise floor above the threshold) moves nothing. With
    ``voiced``, an edge moves only over a stretch that holds voiced sound (a late onset of a
    word), never over noise or a breath alone: where the energy edge lies then depends on
    fractions of a dB of that noise, and a pitch shift moved it by a quarter second.
    """
    out = []
    for a, b in segments:
        for c, d in energy:
            if c < a <= d and a - c <= SNAP_MAX_S and (voiced is None or voiced.holds_voice(c, a)):
                a = c
            if c <= b < d and d - b <= SNAP_MAX_S and (voiced is None or voiced.holds_voice(b, d)):
                b = d
        out.append((a, b))
    return out


def join_loud(
    segments: list[tuple[float, float]],
    x: np.ndarray,
    sr: int,
    max_gap_s: float,
    voiced: VoicedTimes | None = None,
) -> list[tuple[float, float]]:
    """Add to Silero's segments the speech-level sound that touches them.

    A stretch of frames (20 ms window, 5 ms hop) within :data:`MISSED_LEVEL_DB` of the median
    level inside the segments is speech-level sound (the same definition as
    :func:`missed_speech_s`); such a stretch that overlaps a segment or lies within
    ``max_gap_s`` of one joins it. Why: Silero can start a segment one word late. On a
    formant-preserving +2 st copy of a Mandarin news clip it began 0.22 s after its own onset on
    the original, so the first word (0.32 s at full speech level) fell outside the span and the
    copy read 9% faster and 1 dB quieter than the original. A background noise floor lies far
    below speech level and joins nothing; a sound at speech level separated from the speech by a
    pause longer than ``max_gap_s`` stays out (and counts as missed speech). With ``voiced``,
    only a stretch that holds voiced sound outside the segments joins (speech, not a noise
    burst or a breath at speech level).
    """
    if not segments:
        return segments
    power = _frame_power(x, sr)
    if float(power.max()) < SILENT_PEAK_RMS**2:
        return segments
    hop_s = max(1, int(round(ENERGY_HOP_S * sr))) / sr
    db = 10.0 * np.log10(np.maximum(power, 1e-20))
    centres = np.arange(power.size) * hop_s
    inside = np.zeros(power.size, dtype=bool)
    for a, b in segments:
        inside |= (centres >= a) & (centres < b)
    if not inside.any():
        return segments
    loud = db >= float(np.median(db[inside])) - MISSED_LEVEL_DB
    duration = x.size / sr
    stretches = [
        (max(0.0, (i - 0.5) * hop_s), min(duration, (j - 0.5) * hop_s)) for i, j in _runs(loud)
    ]
    out = _merge(list(segments), 0.0)
    while True:
        touching = [
            (c, d)
            for c, d in stretches
            if any(c <= b + max_gap_s and d >= a - max_gap_s for a, b in out)
            and not any(a <= c and d <= b for a, b in out)
            and (voiced is None or _voiced_outside(voiced, (c, d), out))
        ]
        if not touching:
            return out
        out = _merge(out + touching, max_gap_s)


def _voiced_outside(
    voiced: VoicedTimes, stretch: tuple[float, float], segments: list[tuple[float, float]]
) -> bool:
    """Whether ``stretch`` holds voiced sound outside ``segments``."""
    c, d = stretch
    inside = sum(voiced.seconds(max(a, c), min(b, d)) for a, b in segments if a < d and b > c)
    return voiced.seconds(c, d) - inside >= MIN_VOICED_GROWTH_S


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
    y = np.clip(resample(x, sr, SILERO_SR), -1.0, 1.0).astype(np.float32)
    probs = silero_probs(y)
    low = max(threshold - SILERO_HYSTERESIS, 0.01)
    speech = np.zeros(probs.size, dtype=bool)
    active = False
    for i, p in enumerate(probs):
        active = p >= threshold or (active and p >= low)
        speech[i] = active
    chunk_s = SILERO_CHUNK / SILERO_SR
    duration = x.size / sr
    return [(i * chunk_s, min(duration, j * chunk_s)) for i, j in _runs(speech)]


def silero_probs(y: np.ndarray) -> np.ndarray:
    """Silero VAD v6 speech probability of every 512-sample chunk of 16 kHz audio.

    The model (the ONNX export faster-whisper ships, ``assets/silero_vad_v6.onnx``) takes each
    chunk with the last :data:`SILERO_CONTEXT` samples of the chunk before it (zeros before the
    first) and carries its LSTM state from chunk to chunk inside one call, so every chunk of a
    file is scored in a single batched run. One intra-op and one inter-op thread: the result
    does not depend on how many cores the machine has. The tail is zero-padded to a whole chunk.
    """
    y = np.asarray(y, dtype=np.float32).reshape(-1)
    n_chunks = max(1, int(np.ceil(y.size / SILERO_CHUNK)))
    chunks = np.pad(y, (0, n_chunks * SILERO_CHUNK - y.size)).reshape(n_chunks, SILERO_CHUNK)
    context = np.zeros((n_chunks, SILERO_CONTEXT), dtype=np.float32)
    context[1:] = chunks[:-1, -SILERO_CONTEXT:]
    batch = np.ascontiguousarray(np.concatenate([context, chunks], axis=1))
    session = _silero_session()
    h = np.zeros((1, 1, 128), dtype=np.float32)
    c = np.zeros((1, 1, 128), dtype=np.float32)
    out = []
    for i in range(0, n_chunks, SILERO_BATCH):
        probs, h, c = session.run(None, {"input": batch[i : i + SILERO_BATCH], "h": h, "c": c})
        out.append(np.asarray(probs, dtype=np.float64).reshape(-1))
    return np.concatenate(out)


@functools.lru_cache(maxsize=1)
def _silero_session() -> Any:
    try:
        import onnxruntime
    except ImportError as exc:
        raise ImportError(
            "the Silero speech detector needs onnxruntime: pip install 'stylebench[signal]' "
            "(or use --vad energy)"
        ) from exc
    path = silero_model_path()
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 4
    return onnxruntime.InferenceSession(
        str(path), sess_options=opts, providers=["CPUExecutionProvider"]
    )


def silero_model_path() -> Path:
    """Where the Silero v6 ONNX file lies (inside the installed faster-whisper package)."""
    import importlib.util

    spec = importlib.util.find_spec("faster_whisper")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the Silero speech detector's model ships with faster-whisper: "
            "pip install 'stylebench[signal]' (or use --vad energy)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / SILERO_MODEL
    if not path.is_file():
        raise ImportError(
            f"{path} is missing: faster-whisper >= 1.2.1 ships {SILERO_MODEL}; "
            "pip install -U 'stylebench[signal]' (or use --vad energy)"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SILERO_MODEL_SHA256:
        raise ImportError(
            f"{path} is not the Silero model stylebench was validated with (sha256 {digest[:12]}, "
            f"expected {SILERO_MODEL_SHA256[:12]}): install faster-whisper==1.2.1 "
            "or use --vad energy"
        )
    return path


def missed_speech_s(wave: np.ndarray, sr: int, span: SpeechSpan | None) -> float:
    """Seconds of speech-level audio outside ``span``'s segments: the VAD cross-check.

    Frames (20 ms window, 5 ms hop) outside the segments whose level lies within
    :data:`MISSED_LEVEL_DB` of the median level of the frames inside them count as speech the
    detector missed. A background noise floor sits far below speech level and does not count;
    an undetected stretch of a voice does. With no span (the detector found nothing), every
    frame within 35 dB of the loudest counts.

    Raises:
        ValueError: bad waveform or rate.
    """
    sr = check_sr(sr)
    x = as_wave(wave)
    power = _frame_power(x, sr)
    hop_s = max(1, int(round(ENERGY_HOP_S * sr))) / sr
    if float(power.max()) < SILENT_PEAK_RMS**2:
        return 0.0
    db = 10.0 * np.log10(np.maximum(power, 1e-20))
    centres = np.arange(power.size) * hop_s
    inside = np.zeros(power.size, dtype=bool)
    for a, b in span.segments if span is not None else ():
        inside |= (centres >= a) & (centres < b)
    if not inside.any():
        return float(np.sum(db >= db.max() - 35.0) * hop_s)
    level = float(np.median(db[inside]))
    return float(np.sum(~inside & (db >= level - MISSED_LEVEL_DB)) * hop_s)


def span_is_suspect(missed_s: float, span: SpeechSpan | None) -> bool:
    """True when the missed seconds exceed :data:`MISSED_MIN_S` and :data:`MISSED_SHARE` of the
    span's active seconds (or the span is missing and anything was missed)."""
    if span is None:
        return missed_s > 0
    return missed_s > max(MISSED_MIN_S, MISSED_SHARE * span.active_s)


def _frame_power(x: np.ndarray, sr: int) -> np.ndarray:
    """Mean power of 20 ms frames every 5 ms; frame i is centred on sample ``i * hop``."""
    win = max(1, int(round(ENERGY_FRAME_S * sr)))
    hop = max(1, int(round(ENERGY_HOP_S * sr)))
    padded = np.pad(x, (win // 2, win // 2))
    starts = np.arange(0, max(1, padded.size - win + 1), hop)
    csum = np.concatenate([[0.0], np.cumsum(padded**2)])
    ends = np.minimum(starts + win, padded.size)
    return (csum[ends] - csum[starts]) / win


def _energy_segments(x: np.ndarray, sr: int, energy_db: float) -> list[tuple[float, float]]:
    hop = max(1, int(round(ENERGY_HOP_S * sr)))
    power = _frame_power(x, sr)
    peak = float(power.max())
    if peak < SILENT_PEAK_RMS**2:
        return []
    speech = power >= peak * 10.0 ** (energy_db / 10.0)
    duration = x.size / sr
    hop_s = hop / sr
    return [
        (max(0.0, (i - 0.5) * hop_s), min(duration, (j - 0.5) * hop_s)) for i, j in _runs(speech)
    ]
