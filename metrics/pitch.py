"""Pitch score: mean F0 over the voiced frames that a majority of three trackers agree on (the
paper's mean F0 over voiced frames, ``f0_mean_agreed``); the same frames' amplitude-weighted mean
(:func:`weighted_mean_f0`, ``f0_mean_weighted``) stays beside it.

The three trackers are pyworld, Praat and SwiftF0 (:func:`swift_f0_track`), voting frame by
frame (:func:`majority_f0`). The rest of this docstring describes the two-tracker agreement
that the vote replaced, and why it was built; docs/metrics.md ("Pitch") has the current rule
and its measurements.

Definitions (DESIGN "pitch"): F0 from pyworld ``dio`` refined by ``stonemask`` (the FastSpeech2
recipe) on 5 ms frames; a frame is voiced when its F0 is > 0. On real voices dio sometimes
tracks a subharmonic (on the corpus of human recordings, up to half of the voiced frames of a low
male and of a high female telephone voice sat 0.75 octave or more below Praat's median), so
Praat's autocorrelation pitch (parselmouth) tracks the same 5 ms grid, and a frame counts when
both call it voiced and their F0 lie within 2 semitones (:data:`AGREE_TOL_ST`); the first and
last frame of every run of such frames are left out (:data:`EDGE_FRAMES`: voicing onsets and
offsets, where a tempo change alters how many unstable frames there are). The score is the mean
pyworld F0 over those frames (``f0_mean_agreed``). ``f0_agreement`` is the share of pyworld's
voiced frames that Praat confirms within the tolerance (before the edge trim): when it is low
the two trackers do not hear the same periodicity and the reply has no pitch score
(``stylebench.metrics.validity``). ``f0_octave_share`` counts frames where the trackers are an
octave apart (an octave error by one of them). The plain mean (FastSpeech2's ``f0_mean``), the
median and a per-reply octave-guarded mean stay beside it. Tolerance and edge trim were chosen
on the 11-clip corpus and checked on held-out real model replies (docs/metrics.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stylebench.metrics._common import as_wave, check_sr, resample
from stylebench.metrics.spec import MetricSpec

SPEC = MetricSpec(
    name="f0",
    version="6",
    outputs=(
        "f0_mean",
        "f0_median",
        "f0_voiced_ratio",
        "f0_mean_guarded",
        "f0_range_lo",
        "f0_range_hi",
        "praat_f0_mean",
        "swift_f0_mean",
        "f0_mean_agreed",
        "f0_mean_weighted",
        "f0_median_agreed",
        "f0_agreement",
        "f0_octave_share",
        "f0_voiced_span_share",
        "f0_voiced_share",
        "f0_pyworld_gap_st",
        "f0_ceiling_share",
    ),
    needs=("audio",),
    description=(
        "Three trackers on one 5 ms grid, 50-1100 Hz: pyworld dio + stonemask, Praat "
        "autocorrelation and SwiftF0 (a CNN, 16 ms frames, voiced at confidence >= 0.5). A frame "
        "counts when at least two are voiced within 2 semitones of each other; its F0 is the "
        "median of those (two: their mean). Run edges (1 frame) and frames an octave or more "
        "under, or two octaves or more over, the reply's median are dropped. f0_mean_agreed = the plain mean over those frames "
        "(the default score); f0_mean_weighted = their mean, each weighted by its amplitude (level "
        "of the 25 ms around it); f0_agreement = such frames / frames two trackers call voiced; "
        "f0_ceiling_share = the share of them within 2 st of the search ceiling; "
        "f0_voiced_share = voted-voiced seconds per second of detected speech; f0_mean = "
        "pyworld's plain mean over its voiced frames (FastSpeech2), f0_pyworld_gap_st = its "
        "distance from the score in semitones."
    ),
)

MIN_VOICED_FRAMES = 3
#: the F0 search range of every tracker, Hz (``--f0-floor``, ``--f0-ceil``)
F0_FLOOR_HZ = 50.0
F0_CEIL_HZ = 1100.0
#: two trackers agree on a frame when their F0 differ by at most this many semitones
AGREE_TOL_ST = 2.0
#: frames dropped at each end of a run of agreed frames (voicing onsets and offsets, where the
#: trackers' estimates are least stable and a tempo change alters how many such frames exist)
EDGE_FRAMES = 1


@dataclass(frozen=True)
class F0Stats:
    """F0 summary of one reply.

    Attributes:
        mean_hz: mean F0 over the counted voiced frames (the pitch score).
        median_hz: median F0 over the same frames (robust to octave errors).
        voiced_frames: number of frames counted.
        voiced_ratio: counted frames / all frames of the track (silence included).
        extractor: which tracker made the track, e.g. ``"pyworld"`` or ``"praat"``.
    """

    mean_hz: float
    median_hz: float
    voiced_frames: int
    voiced_ratio: float
    extractor: str


def _check_range(f0_floor: float, f0_ceil: float, frame_ms: float) -> None:
    if not 0 < f0_floor < f0_ceil:
        raise ValueError(f"need 0 < f0_floor < f0_ceil, got {f0_floor} and {f0_ceil}")
    if frame_ms <= 0:
        raise ValueError(f"frame_ms must be > 0, got {frame_ms}")


def f0_track(
    wave: np.ndarray,
    sr: int,
    *,
    frame_ms: float = 5.0,
    f0_floor: float = F0_FLOOR_HZ,
    f0_ceil: float = F0_CEIL_HZ,
) -> np.ndarray:
    """F0 contour from pyworld dio + stonemask on float64 samples.

    Returns:
        F0 in Hz per ``frame_ms`` frame (frame i centred at ``i * frame_ms``); 0 where unvoiced.

    Raises:
        ValueError: bad waveform, rate or search range.
    """
    sr = check_sr(sr)
    _check_range(f0_floor, f0_ceil, frame_ms)
    if f0_ceil >= sr / 2:
        raise ValueError(f"f0_ceil {f0_ceil} Hz must lie below the Nyquist frequency {sr / 2} Hz")
    x = as_wave(wave, min_samples=int(sr * 3 / f0_floor))
    import pyworld

    f0, times = pyworld.dio(x, sr, f0_floor=f0_floor, f0_ceil=f0_ceil, frame_period=frame_ms)
    return np.asarray(pyworld.stonemask(x, f0, times, sr), dtype=np.float64)


def praat_f0_track(
    wave: np.ndarray,
    sr: int,
    *,
    frame_ms: float = 5.0,
    f0_floor: float = F0_FLOOR_HZ,
    f0_ceil: float = F0_CEIL_HZ,
) -> np.ndarray:
    """F0 contour from Praat's autocorrelation method (parselmouth ``to_pitch``), the cross-check.

    Returns:
        F0 in Hz on the grid of :func:`f0_track` (frame i centred at ``i * frame_ms``, the same
        number of frames); 0 where Praat finds the frame unvoiced or has no frame (Praat's first
        frame lies half an analysis window in), so the two tracks compare frame by frame.

    Raises:
        ValueError: bad input, or audio shorter than Praat's analysis window (3 / f0_floor s).
    """
    sr = check_sr(sr)
    _check_range(f0_floor, f0_ceil, frame_ms)
    x = as_wave(wave, min_samples=int(sr * 3 / f0_floor) + 1)
    import parselmouth

    step = frame_ms / 1000.0
    sound = parselmouth.Sound(x, sampling_frequency=float(sr))
    pitch = sound.to_pitch(time_step=step, pitch_floor=f0_floor, pitch_ceiling=f0_ceil)
    f0 = np.nan_to_num(np.asarray(pitch.selected_array["frequency"], dtype=np.float64), nan=0.0)
    xs = np.asarray(pitch.xs(), dtype=np.float64)
    grid = np.arange(n_frames(x.size, sr, frame_ms)) * step  # pyworld's frame times
    if xs.size == 0:
        return np.zeros(grid.size)
    idx = np.clip(np.round((grid - xs[0]) / step).astype(int), 0, xs.size - 1)
    return np.where(np.abs(xs[idx] - grid) <= step / 2 + 1e-9, f0[idx], 0.0)


#: SwiftF0's fixed analysis: 16 kHz input, one frame per 256 samples (16 ms), frame j centred
#: at ``j * 16 ms`` (checked on a linear chirp: tests/test_pitch_swift.py), F0 searched within
#: 46.875-2093.75 Hz, a frame voiced when its confidence is at least 0.5 (the package's own
#: calibration; ``swift_f0.core``)
SWIFT_SR = 16000
SWIFT_HOP = 256
SWIFT_VOICED = 0.5
_SWIFT: dict[str, Any] = {}
_SWIFT_LOCK = threading.Lock()


def _swift_detector() -> Any:
    """One SwiftF0 ONNX session per process, on one thread (the same numbers whatever the
    machine's core count; one thread already runs about 100x realtime)."""
    with _SWIFT_LOCK:
        if "det" not in _SWIFT:
            try:
                from swift_f0 import SwiftF0
            except ImportError as exc:
                from stylebench.errors import MissingExtra

                raise MissingExtra(
                    "swift-f0 (the third F0 tracker) is not installed: pip install 'stylebench[signal]'"
                ) from exc
            _SWIFT["det"] = SwiftF0(threads=1, spin=False)
        return _SWIFT["det"]


def swift_f0_track(
    wave: np.ndarray,
    sr: int,
    *,
    frame_ms: float = 5.0,
    f0_floor: float = F0_FLOOR_HZ,
    f0_ceil: float = F0_CEIL_HZ,
) -> np.ndarray:
    """F0 contour from SwiftF0 (the PyPI package ``swift-f0``: a small CNN run by onnxruntime),
    the arbiter between pyworld and Praat.

    The audio goes in at 16 kHz (resampled here when it is not); SwiftF0 answers every 16 ms.
    Each frame of the :func:`f0_track` grid takes the SwiftF0 frame whose centre is nearest, and
    is 0 where that frame's confidence is under :data:`SWIFT_VOICED` or its F0 lies outside
    ``[f0_floor, f0_ceil]``.

    Returns:
        F0 in Hz per ``frame_ms`` frame, the same number of frames as :func:`f0_track`.

    Raises:
        ValueError: bad waveform, rate or search range.
        MissingExtra: swift-f0 is not installed.
    """
    sr = check_sr(sr)
    _check_range(f0_floor, f0_ceil, frame_ms)
    x = as_wave(wave, min_samples=int(sr * 3 / f0_floor))
    grid = np.arange(n_frames(x.size, sr, frame_ms)) * (frame_ms / 1000.0)
    y = resample(x, sr, SWIFT_SR).astype(np.float32)
    fmin, fmax = max(f0_floor, 46.875), min(f0_ceil, 2093.75)
    res = _swift_detector().detect(y, SWIFT_SR, fmin=fmin, fmax=fmax)
    f0 = np.where(
        (res.confidence >= SWIFT_VOICED) & (res.pitch_hz >= f0_floor) & (res.pitch_hz <= f0_ceil),
        res.pitch_hz,
        0.0,
    )
    if f0.size == 0:
        return np.zeros(grid.size)
    idx = np.round(grid / (SWIFT_HOP / SWIFT_SR)).astype(int)
    return np.where(idx < f0.size, f0[np.minimum(idx, f0.size - 1)], 0.0)


def ceiling_share(track: np.ndarray, f0_ceil: float, within_st: float) -> float:
    """Share of ``track``'s voiced frames within ``within_st`` semitones under ``f0_ceil`` (or
    above it); 0 when no frame is voiced.

    Why: the trackers do not look above the ceiling, so a voice that reaches it loses its highest
    frames, and a rise reads smaller than it is (a high voice asked to go higher).

    Raises:
        ValueError: a ceiling <= 0 or a negative distance.
    """
    if f0_ceil <= 0 or within_st < 0:
        raise ValueError(f"need f0_ceil > 0 and within_st >= 0, got {f0_ceil}, {within_st}")
    f0 = np.asarray(track, dtype=np.float64).reshape(-1)
    voiced = f0[np.isfinite(f0) & (f0 > 0)]
    if not voiced.size:
        return 0.0
    return float(np.mean(voiced >= f0_ceil * 2.0 ** (-within_st / 12.0)))


def majority_f0(tracks: Sequence[np.ndarray], tol_st: float = AGREE_TOL_ST) -> np.ndarray:
    """Per frame, the F0 a majority of trackers agree on; 0 where there is no majority.

    A tracker belongs to a frame's majority when it is voiced there and lies within ``tol_st``
    semitones of another voiced tracker; with three trackers a frame has a majority when at
    least two agree (three trackers spread wider than the tolerance pairwise have none). The
    frame's value is the median of its majority's F0s (two: their mean), so one tracker's octave
    or subharmonic error never enters, and which two trackers agree may change frame by frame.

    Raises:
        ValueError: fewer than two tracks, tracks of different lengths, a negative tolerance.
    """
    arr = [np.asarray(t, dtype=np.float64).reshape(-1) for t in tracks]
    if len(arr) < 2:
        raise ValueError("majority_f0 needs at least two F0 tracks")
    if len({a.size for a in arr}) != 1:
        raise ValueError("F0 tracks differ in length; put them on one frame grid first")
    if tol_st < 0:
        raise ValueError(f"tol_st must be >= 0, got {tol_st}")
    stack = np.vstack(arr)
    member = np.zeros(stack.shape, dtype=bool)
    for i in range(len(arr)):
        for j in range(i + 1, len(arr)):
            agree = _both_voiced(stack[i], stack[j]) & (
                np.abs(_semitones_apart(stack[i], stack[j])) <= tol_st
            )
            member[i] |= agree
            member[j] |= agree
    has = member.any(axis=0)
    values = np.where(member, stack, np.nan)
    out = np.zeros(stack.shape[1])
    if has.any():
        out[has] = np.nanmedian(values[:, has], axis=0)
    return out


def voted_voiced(tracks: Sequence[np.ndarray]) -> np.ndarray:
    """Frames that a majority of the trackers call voiced (F0 > 0), whatever F0 each reports."""
    stack = np.vstack([np.asarray(t, dtype=np.float64).reshape(-1) for t in tracks])
    return (np.isfinite(stack) & (stack > 0)).sum(axis=0) * 2 > stack.shape[0]


#: a voted frame this many semitones or more below the reply's median voted F0 is a subharmonic
#: (creak, or an octave error two trackers share), not the voice's pitch
SUBHARMONIC_ST = 12.0
#: a voted frame this many semitones or more above the reply's median voted F0 is not the voice
#: (a tone or squeak two trackers share); speech rises at most 19 st above its median on 181
#: VStyle replies
FAR_ABOVE_ST = 24.0


def drop_off_voice(
    track: np.ndarray, below_st: float = SUBHARMONIC_ST, above_st: float = FAR_ABOVE_ST
) -> np.ndarray:
    """``track`` with its voiced frames at least ``below_st`` semitones under, or at least
    ``above_st`` semitones over, the median of its voiced frames set to 0.

    Below (an octave): two trackers can share a subharmonic (a creaky phrase end, a
    period-doubled frame), and the F0 they agree on there moves with tempo (real-speech corpus,
    tempo x0.8: such frames read 178 Hz on the original and 141 Hz on the copy, beside 261 Hz
    for the voice); no voice's pitch drops an octave under its median. Above (two octaves):
    expressive speech rises far above its median (up to 19 st on real replies), but not two
    octaves; what does is a sound beside the voice (a VStyle reply of a 91 Hz voice holds 55 ms
    of a 1050 Hz tone that Praat and SwiftF0 both track, and a plain mean reads it +0.7 st
    higher). Fewer than 3 voiced frames: returned unchanged.
    """
    f0 = np.asarray(track, dtype=np.float64).reshape(-1)
    voiced = np.isfinite(f0) & (f0 > 0)
    if int(voiced.sum()) < MIN_VOICED_FRAMES:
        return f0.copy()
    median = float(np.median(f0[voiced]))
    lo, hi = median * 2.0 ** (-below_st / 12.0), median * 2.0 ** (above_st / 12.0)
    return np.where(voiced & (f0 > lo) & (f0 < hi), f0, 0.0)


def trim_edges(track: np.ndarray, edge: int = EDGE_FRAMES) -> np.ndarray:
    """``track`` with the first and last ``edge`` frames of every run of voiced frames set to 0
    (voicing onsets and offsets: the least stable estimates, and a tempo change alters how many
    such frames a reply has); runs shorter than ``2 * edge + 1`` frames go entirely."""
    f0 = np.asarray(track, dtype=np.float64).reshape(-1)
    if edge < 0:
        raise ValueError(f"edge must be >= 0, got {edge}")
    if not edge:
        return f0.copy()
    from scipy.ndimage import binary_erosion

    keep = binary_erosion(f0 > 0, structure=np.ones(2 * edge + 1, dtype=bool))
    return np.where(keep, f0, 0.0)


def n_frames(n_samples: int, sr: int, frame_ms: float) -> int:
    """How many frames :func:`f0_track` returns: pyworld's count, ``1000 * n / sr / frame_ms``
    truncated, plus one, in that order of operations (another order can round a whole-frame
    duration down and lose the last frame)."""
    return int(1000.0 * n_samples / sr / frame_ms) + 1


def agreed_frames(
    track: np.ndarray, other: np.ndarray, tol_st: float = AGREE_TOL_ST, edge: int = 0
) -> np.ndarray:
    """Boolean mask of frames both tracks call voiced with F0 within ``tol_st`` semitones.

    With ``edge`` > 0, the first and last ``edge`` frames of every run of agreed frames are
    dropped as well (a run shorter than ``2 * edge + 1`` frames goes entirely).

    Raises:
        ValueError: tracks of different lengths, or a negative tolerance or edge.
    """
    a = np.asarray(track, dtype=np.float64).reshape(-1)
    b = np.asarray(other, dtype=np.float64).reshape(-1)
    if a.size != b.size:
        raise ValueError(f"F0 tracks differ in length ({a.size} vs {b.size}); use one frame grid")
    if tol_st < 0:
        raise ValueError(f"tol_st must be >= 0, got {tol_st}")
    if edge < 0:
        raise ValueError(f"edge must be >= 0, got {edge}")
    mask = _both_voiced(a, b) & (np.abs(_semitones_apart(a, b)) <= tol_st)
    if edge:
        from scipy.ndimage import binary_erosion

        mask = binary_erosion(mask, structure=np.ones(2 * edge + 1, dtype=bool))
    return mask


def _both_voiced(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.isfinite(a) & np.isfinite(b) & (a > 0) & (b > 0)


def _semitones_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``12*log2(a/b)`` where both are voiced, 0 elsewhere."""
    both = _both_voiced(a, b)
    return np.where(both, 12.0 * np.log2(np.where(both, a, 1.0) / np.where(both, b, 1.0)), 0.0)


def octave_share(track: np.ndarray, other: np.ndarray, tol_st: float = AGREE_TOL_ST) -> float:
    """Share of ``track``'s voiced frames on which ``other`` is voiced an octave away
    (12 +- ``tol_st`` semitones above or below): one of the two trackers made an octave error
    there. 0 when ``track`` has no voiced frame.

    Raises:
        ValueError: tracks of different lengths.
    """
    a = np.asarray(track, dtype=np.float64).reshape(-1)
    b = np.asarray(other, dtype=np.float64).reshape(-1)
    if a.size != b.size:
        raise ValueError(f"F0 tracks differ in length ({a.size} vs {b.size}); use one frame grid")
    octave = _both_voiced(a, b) & (np.abs(np.abs(_semitones_apart(a, b)) - 12.0) <= tol_st)
    voiced = int(np.sum(np.isfinite(a) & (a > 0)))
    return float(octave.sum() / voiced) if voiced else 0.0


def f0_stats(
    track: np.ndarray,
    *,
    f0_range: tuple[float, float] | None = None,
    extractor: str = "pyworld",
) -> F0Stats:
    """Mean and median F0 over voiced frames.

    Voiced means F0 > 0 (and finite). With ``f0_range`` = (lo, hi), voiced frames outside
    [lo, hi] are octave-error suspects and are left out of every statistic, the voiced count and
    the ratio included (see :func:`speaker_f0_range`).

    Args:
        track: F0 per frame in Hz, 0 for unvoiced frames.
        f0_range: optional inclusive (lo, hi) range in Hz.
        extractor: name recorded in the result.

    Raises:
        ValueError: fewer than 3 counted voiced frames (unvoiced or silent reply), or a bad range.
    """
    f0 = np.asarray(track, dtype=np.float64).reshape(-1)
    if f0.size == 0:
        raise ValueError("F0 track is empty; the audio is too short to analyse")
    voiced = np.isfinite(f0) & (f0 > 0)
    if f0_range is not None:
        lo, hi = f0_range
        if not 0 < lo < hi:
            raise ValueError(f"f0_range must be (lo, hi) with 0 < lo < hi, got {f0_range}")
        voiced &= (f0 >= lo) & (f0 <= hi)
    n = int(voiced.sum())
    if n < MIN_VOICED_FRAMES:
        where = f" inside {f0_range[0]:.0f}-{f0_range[1]:.0f} Hz" if f0_range else ""
        raise ValueError(
            f"only {n} voiced frames{where} out of {f0.size}; at least {MIN_VOICED_FRAMES} "
            "needed for a pitch score (the reply is silent, unvoiced noise, or outside the "
            "speaker's range)"
        )
    values = f0[voiced]
    return F0Stats(
        mean_hz=float(values.mean()),
        median_hz=float(np.median(values)),
        voiced_frames=n,
        voiced_ratio=n / f0.size,
        extractor=extractor,
    )


#: the span of audio whose level weighs a frame in :func:`weighted_mean_f0`: 25 ms centred on
#: the frame (about three periods of a 120 Hz voice, as a level meter would read a syllable)
LEVEL_WINDOW_MS = 25.0


def frame_levels_db(
    wave: np.ndarray, sr: int, n: int, *, frame_ms: float = 5.0, window_ms: float = LEVEL_WINDOW_MS
) -> np.ndarray:
    """Level in dB (re full scale, power) of the ``window_ms`` of audio centred on each of ``n``
    frames of the :func:`f0_track` grid (frame i centred at ``i * frame_ms``); windows are cut
    at the ends of the audio. Silence reads -120 dB.

    Raises:
        ValueError: bad waveform, rate, frame count or window.
    """
    sr = check_sr(sr)
    x = as_wave(wave)
    if n < 0 or frame_ms <= 0 or window_ms <= 0:
        raise ValueError(
            f"need n >= 0, frame_ms > 0, window_ms > 0; got {n}, {frame_ms}, {window_ms}"
        )
    cum = np.concatenate([[0.0], np.cumsum(np.square(x, dtype=np.float64))])
    centre = np.round(np.arange(n) * (frame_ms / 1000.0) * sr).astype(np.int64)
    half = max(1, int(round(window_ms / 2000.0 * sr)))
    lo, hi = np.clip(centre - half, 0, x.size), np.clip(centre + half, 0, x.size)
    power = (cum[hi] - cum[lo]) / np.maximum(hi - lo, 1)
    return 10.0 * np.log10(np.maximum(power, 1e-12))


def weighted_mean_f0(track: np.ndarray, levels_db: np.ndarray) -> float:
    """Mean F0 over the voiced frames of ``track``, each weighted by its amplitude (the square
    root of its power, from :func:`frame_levels_db` on the same grid).

    Why amplitude: the frames a tempo change adds or removes in a reply's mean are its quiet,
    irregular ones (creaky phrase ends, breathy onsets, a second speaker far from the
    microphone), whose pitch the trackers read least reliably and a listener hears least. Gain
    scales every weight alike and leaves the mean unchanged. docs/metrics.md ("Pitch") has the
    rule's measurements against the plain mean.

    Raises:
        ValueError: tracks of different lengths, or fewer than :data:`MIN_VOICED_FRAMES` voiced
            frames.
    """
    f0 = np.asarray(track, dtype=np.float64).reshape(-1)
    lv = np.asarray(levels_db, dtype=np.float64).reshape(-1)
    if f0.size != lv.size:
        raise ValueError(f"F0 track ({f0.size} frames) and levels ({lv.size}) differ in length")
    voiced = np.isfinite(f0) & (f0 > 0) & np.isfinite(lv)
    if int(voiced.sum()) < MIN_VOICED_FRAMES:
        raise ValueError(
            f"only {int(voiced.sum())} voiced frames; at least {MIN_VOICED_FRAMES} needed"
        )
    db = lv[voiced]
    w = 10.0 ** ((db - db.max()) / 20.0)  # relative to the loudest frame: no overflow
    return float(np.sum(f0[voiced] * w) / np.sum(w))


def speaker_f0_range(
    tracks: Sequence[np.ndarray],
    *,
    octaves_below: float = 0.75,
    octaves_above: float = 0.75,
) -> tuple[float, float]:
    """Octave-error guard: the plausible F0 range of one speaker, from their own turns.

    Pool the voiced frames (F0 > 0) of all tracks of one speaker in one sample (the three replies),
    take the median M, and return ``(M * 2**-octaves_below, M * 2**octaves_above)``. Trackers'
    typical failure is a halved or doubled F0; with the default 0.75 octave both lie outside the
    range (M/2 < M/1.68 and 2M > 1.68M) while an instructed change of up to 9 semitones stays
    inside. Pass the range to :func:`f0_stats` to drop suspect frames. Pooling all turns keeps
    the range the same for every turn, so it cannot hide a real pitch change; a speaker who moves
    by more than 0.75 octave from the pooled median loses frames and should be flagged by the
    caller (compare ``voiced_frames`` with and without the range).

    Args:
        tracks: F0 tracks (Hz, 0 where unvoiced) of one speaker's turns.
        octaves_below: range below the median, in octaves (> 0).
        octaves_above: range above the median, in octaves (> 0).

    Raises:
        ValueError: no tracks, non-positive widths, or fewer than 3 voiced frames in all.
    """
    if octaves_below <= 0 or octaves_above <= 0:
        raise ValueError("octaves_below and octaves_above must be > 0")
    if len(tracks) == 0:
        raise ValueError("speaker_f0_range needs at least one F0 track")
    pooled = np.concatenate([np.asarray(t, dtype=np.float64).reshape(-1) for t in tracks])
    voiced = pooled[np.isfinite(pooled) & (pooled > 0)]
    if voiced.size < MIN_VOICED_FRAMES:
        raise ValueError(
            f"only {voiced.size} voiced frames across {len(tracks)} turns; cannot estimate the "
            "speaker's F0 range"
        )
    median = float(np.median(voiced))
    return median * 2.0**-octaves_below, median * 2.0**octaves_above
