"""Reading, checking and writing audio files.

Model replies, imported replies and files handed to ``stylebench measure`` are untrusted input:
a file may be missing, empty, truncated, not audio at all, full of NaNs, silent, too long, or at
an odd sample rate. :func:`load_audio` (and :func:`check_length`) turn each of these into an
:class:`AudioError` whose message says what is wrong with the file, in words that hold wherever
the file came from (a caller that knows, such as the respond stage, adds its own context), so
the features stage can record it as an error record instead of crashing the run.
"""

from __future__ import annotations

import hashlib
import os
from math import gcd
from pathlib import Path

import numpy as np

from stylebench.errors import BadValue

MIN_SR = 8000
MAX_SR = 192000
MIN_DURATION_S = 0.2
SILENCE_PEAK = 1e-4  # about -80 dBFS


class AudioError(BadValue):
    """An audio file that cannot be scored, with a reason a user can act on."""


def sha256_file(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def samples_sha256(wave: np.ndarray, sr: int) -> str:
    """sha256 of decoded audio: the samples as little-endian float32, then the sample rate.

    A cache key for "this audio", unlike a file's sha256: libsndfile writes a PEAK chunk with a
    timestamp into float WAV files, so two writes of the same samples differ in their header
    bytes (and FLAC/WAV copies of one signal differ everywhere).
    """
    x = np.ascontiguousarray(np.asarray(wave), dtype="<f4")
    h = hashlib.sha256(x.tobytes())
    h.update(f"|{x.shape}|{int(sr)}".encode())
    return h.hexdigest()


def wav_truncation(path: Path | str) -> str | None:
    """What is missing from a RIFF/WAVE file cut off mid-write, or ``None`` when it is whole.

    A wav declares its data size in its header; libsndfile reads a shorter file without
    complaint (its duration is what is left), so only the header says that data is missing.
    """
    p = Path(path)
    with open(p, "rb") as fh:
        head = fh.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        size = p.stat().st_size
        while True:
            hdr = fh.read(8)
            if len(hdr) < 8:
                return None
            cid, clen = hdr[:4], int.from_bytes(hdr[4:], "little")
            if cid == b"data":
                if clen not in (0, 0xFFFFFFFF) and fh.tell() + clen > size:
                    return f"header declares {clen} data bytes, file has {size - fh.tell()}"
                return None
            fh.seek(clen + (clen & 1), os.SEEK_CUR)


def _check_wav_truncation(path: Path) -> None:
    if why := wav_truncation(path):
        raise AudioError(
            f"{path.name}: truncated wav ({why}); the program that wrote it was probably "
            "interrupted: write the file again"
        )


def check_length(seconds: float, max_seconds: float) -> None:
    """The length guard every route shares (``--max-reply-s``): a file longer than
    ``max_seconds`` is refused before it is transcribed or measured, which bounds what one file
    costs the ASR and the features.

    Raises:
        AudioError: ``audio lasts N s, over the limit of M s (--max-reply-s)``.
    """
    if seconds > max_seconds:
        raise AudioError(
            f"audio lasts {seconds:.0f} s, over the limit of {max_seconds:g} s (--max-reply-s)"
        )


#: the mean of the channels keeps under this share of their mean power only when a channel is in
#: opposite phase to another (equal channels keep all of it, independent ones about half)
CANCELLED_POWER = 0.1


def downmix(data: np.ndarray) -> np.ndarray:
    """Mono from ``(frames, channels)``: the mean of the channels, as a listener's two ears sum
    them, except where the channels cancel.

    A channel in opposite phase to another (``R = -L``: a wiring or export mistake) is heard
    as the same sound at the same level in each ear, but its mean is silence. When the mean keeps
    under :data:`CANCELLED_POWER` of the channels' mean power, each channel whose correlation
    with the loudest one is negative is turned over before the mean, so the mono signal is what
    each ear hears (``R = -L`` gives ``L``). Every other file is mixed as before.
    """
    if data.shape[1] == 1:
        return data[:, 0]
    mean = data.mean(axis=1)
    power = np.mean(np.square(data, dtype=np.float64), axis=0)
    if float(np.mean(np.square(mean, dtype=np.float64))) >= CANCELLED_POWER * float(power.mean()):
        return mean
    ref = data[:, int(np.argmax(power))].astype(np.float64)
    signs = np.where(data.astype(np.float64).T @ ref < 0, -1.0, 1.0)
    return (data * signs.astype(data.dtype)).mean(axis=1)


def resample(wave: np.ndarray, sr: int, target_sr: int) -> np.ndarray:
    """Polyphase resampling (scipy), exact for integer ratios."""
    if sr == target_sr:
        return wave
    from scipy.signal import resample_poly

    g = gcd(sr, target_sr)
    return resample_poly(wave, target_sr // g, sr // g).astype(np.float32)


def load_audio(path: Path | str, *, target_sr: int | None = None) -> tuple[np.ndarray, int]:
    """Load a reply as mono float32 in [-1, 1], validated.

    Args:
        path: audio file (wav, flac, ogg; anything libsndfile reads).
        target_sr: resample to this rate when given.

    Returns:
        ``(wave, sr)``.

    Raises:
        AudioError: missing, empty, non-audio, truncated, NaN/Inf-filled, too short, silent, or
            at a sample rate outside [8 kHz, 192 kHz]. Channels are mixed by :func:`downmix`.
    """
    import soundfile as sf

    p = Path(path)
    if p.is_dir():
        raise AudioError(f"{p}: is a folder, not an audio file")
    if not p.is_file():
        raise AudioError(f"{p}: audio file does not exist")
    if p.stat().st_size == 0:
        raise AudioError(f"{p.name}: audio file is empty (0 bytes)")
    _check_wav_truncation(p)
    try:
        data, sr = sf.read(str(p), dtype="float32", always_2d=True)
    except Exception as exc:  # libsndfile raises several types for non-audio input
        raise AudioError(
            f"{p.name}: not a readable audio file ({type(exc).__name__}: {exc}); "
            "expected wav, flac, ogg or mp3"
        ) from None
    if not MIN_SR <= sr <= MAX_SR:
        raise AudioError(
            f"{p.name}: sample rate {sr} Hz is outside [{MIN_SR}, {MAX_SR}] Hz; resample the file"
        )
    wave = downmix(data)
    if wave.size == 0:
        raise AudioError(f"{p.name}: audio has no samples")
    if not np.all(np.isfinite(wave)):
        bad = int(np.sum(~np.isfinite(wave)))
        raise AudioError(f"{p.name}: {bad} of {wave.size} samples are NaN or infinite")
    if wave.size / sr < MIN_DURATION_S:
        raise AudioError(
            f"{p.name}: only {wave.size / sr * 1000:.0f} ms of audio (< {MIN_DURATION_S * 1000:.0f} ms)"
        )
    peak = float(np.max(np.abs(wave)))
    if peak < SILENCE_PEAK:
        raise AudioError(f"{p.name}: audio is silent (peak {peak:.1e}); there is no speech in it")
    if target_sr is not None and target_sr != sr:
        wave, sr = resample(wave, sr, target_sr), target_sr
    return wave.astype(np.float32, copy=False), sr


def wav_bytes(wave: np.ndarray, sr: int) -> bytes:
    """``wave`` as the bytes of a 16-bit PCM wav file (clipped to [-1, 1]): what
    :func:`write_wav` writes, for a worker that hands a file's bytes to the one that writes it."""
    import io

    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, np.clip(wave, -1.0, 1.0), sr, subtype="PCM_16", format="WAV")
    return buf.getvalue()


def write_wav(path: Path | str, wave: np.ndarray, sr: int) -> str:
    """Write 16-bit PCM atomically (temp file + rename) and return its sha256."""
    from stylebench.atomic import write_bytes

    return sha256_file(write_bytes(path, wav_bytes(wave, sr)))
