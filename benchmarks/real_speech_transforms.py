"""Known changes applied to real recordings, for ``benchmarks/real_speech.py``.

Every change is one FFmpeg filter chain run on a clip's working copy (the clip attenuated, if
needed, so that a +4 dB copy cannot clip; the same copy is the "original" every change is compared
with). Outputs are 32-bit float WAV at 16 kHz, cached under a folder keyed by the input's sha256
and the filter text, so a rerun does no FFmpeg work. When FFmpeg lacks ``rubberband``, the
formant-preserving pitch shift is a pyworld analysis/resynthesis that scales F0 and keeps the
spectral envelope and aperiodicity. Pitch copies are then scaled to the original's whole-file RMS:
rubberband's formant-preserving mode loses 1-2 dB, which is the shifter's doing, not a leak of the
measurement.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stylebench.audio import samples_sha256

SR = 16000
#: the working copy's peak; +4 dB on top still leaves about 2 dB of headroom
WORK_PEAK_DBFS = -6.0
TRANSFORM_VERSION = "2"
CORPUS = Path(__file__).resolve().parent / "corpus"


@dataclass(frozen=True)
class Change:
    """One known change.

    Attributes:
        name: id of the changed copy, e.g. ``"pitch_resample_+2"``.
        dim: the dimension it should move (``pitch``, ``volume`` or ``speed``).
        applied: its size in the dimension's perceptual unit (st, dB, percent).
        shifter: for pitch, which shifter made it (``resample``, ``rubberband``, ``world``).
        factor: tempo factor, gain in dB, or pitch ratio, as given to the filter.
    """

    name: str
    dim: str
    applied: float
    shifter: str
    factor: float

    @property
    def direction(self) -> str:
        return "intensify" if self.applied > 0 else "attenuate"


def has_rubberband() -> bool:
    """True when this FFmpeg build lists the ``rubberband`` filter."""
    out = subprocess.run(
        ["ffmpeg", "-hide_banner", "-filters"], capture_output=True, text=True, check=False
    )
    return any(line.split()[1:2] == ["rubberband"] for line in out.stdout.splitlines())


def changes(formant_shifter: str) -> list[Change]:
    """The benchmark's eight changes; ``formant_shifter`` is ``rubberband`` or ``world``."""
    out = [
        Change("tempo_x1.25", "speed", 25.0, "", 1.25),
        Change("tempo_x0.8", "speed", -20.0, "", 0.8),
        Change("gain_+4dB", "volume", 4.0, "", 4.0),
        Change("gain_-4dB", "volume", -4.0, "", -4.0),
    ]
    for st in (2.0, -2.0):
        # asetrate takes whole hertz: the applied shift is that of the rounded rate
        rate = round(SR * 2.0 ** (st / 12.0))
        out.append(
            Change(
                f"pitch_resample_{st:+.0f}",
                "pitch",
                12 * math.log2(rate / SR),
                "resample",
                rate / SR,
            )
        )
        out.append(
            Change(
                f"pitch_{formant_shifter}_{st:+.0f}",
                "pitch",
                st,
                formant_shifter,
                2.0 ** (st / 12.0),
            )
        )
    return out


def filter_chain(change: Change, duration_s: float) -> str | None:
    """The FFmpeg ``-af`` text of a change, or None for the pyworld shifter."""
    if change.dim == "speed":
        return f"atempo={change.factor}"
    if change.dim == "volume":
        return f"volume={change.factor:+.1f}dB"
    if change.shifter == "resample":
        rate = round(SR * change.factor)
        return f"asetrate={rate},atempo={SR / rate:.6f},aresample={SR}"
    if change.shifter == "rubberband":
        # rubberband drops its last ~0.1 s: pad with silence, then cut back to the input length
        return (
            f"apad=pad_dur=0.5,rubberband=pitch={change.factor:.6f}:formant=preserved,"
            f"atrim=end={duration_s:.4f}"
        )
    return None


def audio_dirs() -> list[Path]:
    """Where corpus audio may lie, in order: every folder of ``$STYLEBENCH_REAL_SPEECH``
    (``os.pathsep``-separated), else ``benchmarks/corpus`` and ``shared/real_speech`` beside the
    checkout. The audio is not in the repository (``benchmarks/get_corpus.py`` fetches it)."""
    env = os.environ.get("STYLEBENCH_REAL_SPEECH")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [CORPUS, CORPUS.parents[2] / "shared" / "real_speech"]


def audio_dir(clips: list[dict[str, Any]]) -> Path:
    """The first of :func:`audio_dirs` that holds every clip of ``clips``.

    Raises:
        FileNotFoundError: no candidate folder holds every clip.
    """
    candidates = audio_dirs()
    for folder in candidates:
        if all((folder / c["file"]).is_file() for c in clips):
            return folder
    raise FileNotFoundError(
        f"the real-speech corpus audio is not in {', '.join(map(str, candidates))}: run "
        "`python benchmarks/get_corpus.py` (needs GitHub) or set STYLEBENCH_REAL_SPEECH"
    )


def load_manifest(path: Path = CORPUS / "manifest.json") -> list[dict[str, Any]]:
    """The corpus clips (manifest entries) whose audio is present in one of
    :func:`audio_dirs`, each with ``path`` added; a listed clip whose audio is nowhere yet (a
    clip added to the manifest before its audio was fetched) is left out and named on stderr.

    Raises:
        FileNotFoundError: not one clip's audio is present.
    """
    clips = json.loads(path.read_text(encoding="utf-8"))["clips"]
    folders = audio_dirs()
    found, missing = [], []
    for c in clips:
        where = next((f for f in folders if (f / c["file"]).is_file()), None)
        if where is None:
            missing.append(c["id"])
            continue
        found.append({**c, "path": str(where / c["file"])})
    if not found:
        audio_dir(clips)  # raises with the folders it looked in
    if missing:
        print(
            f"real-speech corpus: {len(missing)} of {len(clips)} clips have no audio here yet "
            f"and are left out ({', '.join(missing)}); folders: {', '.join(map(str, folders))}",
            file=sys.stderr,
        )
    return found


def vstyle_folder() -> Path:
    """The VStyle real-replies folder: ``$STYLEBENCH_REAL_REPLIES``, else
    ``shared/real_replies/vstyle`` beside the checkout (not in the repository).

    Raises:
        FileNotFoundError: the folder or its manifest is absent.
    """
    env = os.environ.get("STYLEBENCH_REAL_REPLIES")
    folder = Path(env) if env else CORPUS.parents[2] / "shared" / "real_replies" / "vstyle"
    if not (folder / "manifest.json").is_file():
        raise FileNotFoundError(
            f"the VStyle real replies are not in {folder} (no manifest.json); set "
            "STYLEBENCH_REAL_REPLIES to the folder that holds them"
        )
    return folder


AUDIO_SUFFIXES = (".wav", ".flac", ".mp3", ".ogg")


def load_folder(folder: Path, lang: str) -> list[dict[str, Any]]:
    """Every audio file of ``folder`` (sorted by name) as a corpus entry in language ``lang``:
    the same known changes on any speech, e.g. a synthesiser's (docs/synth.md).

    Raises:
        FileNotFoundError: no audio file in ``folder``.
    """
    import soundfile as sf

    files = sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in AUDIO_SUFFIXES)
    if not files:
        raise FileNotFoundError(f"no audio file ({', '.join(AUDIO_SUFFIXES)}) in {folder}")
    return [
        {
            "id": p.stem[:48],
            "lang": lang,
            "sex": "unknown",
            "f0_class": "",
            "style": "folder",
            "duration_s": sf.info(str(p)).frames / sf.info(str(p)).samplerate,
            "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
            "path": str(p),
            "resample": True,
        }
        for p in files
    ]


def load_vstyle(min_s: float = 2.0, every: int = 1) -> list[dict[str, Any]]:
    """Held-out clips: real model replies of the VStyle page (``vstyle_folder()``), as corpus
    entries, so the same known changes can be applied to speech no rule was tuned on.

    Replies shorter than ``min_s`` seconds are left out (too short for a tempo copy to mean
    anything); ``every`` keeps every n-th of the rest in manifest order (a fixed subset).
    """
    folder = vstyle_folder()
    entries = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    replies = [e for e in entries if e.get("role") != "user_prompt" and e["duration_s"] >= min_s]
    clips = []
    for e in replies[:: max(1, every)]:
        stem = Path(e["file"]).stem.replace("acoustic_properties-", "").replace("Instruction-", "")
        clips.append(
            {
                "id": f"{e['lang']}_{stem}"[:48],
                "lang": e["lang"],
                "sex": "unknown",
                "f0_class": "",
                "style": e["model"].split(" ")[0],
                "duration_s": e["duration_s"],
                "sha256": e["sha256"],
                "path": str(folder / e["file"]),
                "resample": True,
            }
        )
    return clips


def _key(*parts: str) -> str:
    return hashlib.sha256("\x1f".join((TRANSFORM_VERSION, *parts)).encode()).hexdigest()[:24]


def _ffmpeg(src: Path, dst: Path, chain: str) -> None:
    tmp = dst.with_suffix(".part.wav")
    cmd = [
        "ffmpeg",
        "-nostdin",
        "-v",
        "error",
        "-y",
        "-i",
        str(src),
        "-af",
        chain,
        "-ac",
        "1",
        "-ar",
        str(SR),
        "-c:a",
        "pcm_f32le",
        str(tmp),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise RuntimeError(f"ffmpeg failed on {src.name} with -af {chain!r}: {res.stderr.strip()}")
    tmp.replace(dst)


def world_shift(wave: np.ndarray, sr: int, ratio: float) -> np.ndarray:
    """Formant-preserving pitch shift: pyworld (harvest, cheaptrick, d4c), F0 x ``ratio``,
    same spectral envelope and aperiodicity, resynthesised at the same length."""
    import pyworld

    x = np.asarray(wave, dtype=np.float64)
    f0, t = pyworld.harvest(x, sr, f0_floor=50.0, f0_ceil=800.0, frame_period=5.0)
    sp = pyworld.cheaptrick(x, f0, t, sr)
    ap = pyworld.d4c(x, f0, t, sr)
    y = pyworld.synthesize(f0 * ratio, sp, ap, sr, frame_period=5.0)
    return y[: x.size]


def _match_rms(ref: Path, path: Path) -> None:
    """Scale ``path`` in place to the whole-file RMS of ``ref`` (plain numpy, not stylebench's)."""
    import soundfile as sf

    x, _ = sf.read(str(ref), dtype="float64")
    y, _ = sf.read(str(path), dtype="float64")
    gain = math.sqrt(float(np.mean(x**2)) / max(float(np.mean(y**2)), 1e-20))
    sf.write(str(path), y * gain, SR, subtype="FLOAT")


def working_copy(clip: dict[str, Any], cache: Path) -> tuple[Path, float]:
    """The clip at 16 kHz, attenuated so its peak is at most ``WORK_PEAK_DBFS``.

    Returns:
        (path of the float WAV, gain applied in dB, <= 0).
    """
    import soundfile as sf

    if clip.get("resample"):  # held-out replies (mp3, any rate): stylebench's own decoder
        from stylebench.audio import load_audio

        wave, _ = load_audio(clip["path"], target_sr=SR)
        x = np.asarray(wave, dtype=np.float64)
    else:
        data, sr = sf.read(clip["path"], dtype="float64", always_2d=True)
        if sr != SR:
            raise ValueError(f"{clip['id']}: corpus clips are stored at {SR} Hz, got {sr}")
        x = data.mean(axis=1)
    peak_db = 20 * math.log10(max(float(np.max(np.abs(x))), 1e-9))
    gain_db = min(0.0, WORK_PEAK_DBFS - peak_db)
    dst = cache / f"{clip['id']}-orig-{_key(clip['sha256'], f'{gain_db:.3f}')}.wav"
    if not dst.exists():
        sf.write(str(dst), x * 10.0 ** (gain_db / 20.0), SR, subtype="FLOAT")
    return dst, gain_db


def make_versions(
    clip: dict[str, Any], todo: list[Change], cache: Path
) -> tuple[dict[str, Path], dict[str, float]]:
    """The working copy (``"orig"``) and one changed copy per change, made or found in ``cache``.

    Returns:
        ({version: path}, {"gain_db": ..., "<version>_peak": peak of the copy}).
    """
    import soundfile as sf

    cache.mkdir(parents=True, exist_ok=True)
    if shutil.which("ffmpeg") is None:
        raise RuntimeError("ffmpeg is not on PATH; install it (make setup) to run this benchmark")
    src, gain_db = working_copy(clip, cache)
    x, _ = sf.read(str(src), dtype="float32")
    src_sha = samples_sha256(x, SR)  # not the file's bytes: libsndfile's PEAK chunk has a timestamp
    duration = sf.info(str(src)).frames / SR
    paths, info = {"orig": src}, {"gain_db": gain_db}
    for ch in todo:
        chain = filter_chain(ch, duration)
        dst = (
            cache / f"{clip['id']}-{ch.name}-{_key(src_sha, chain or f'world {ch.factor:.6f}')}.wav"
        )
        if not dst.exists():
            if chain is None:
                x, _ = sf.read(str(src), dtype="float64")
                sf.write(str(dst), world_shift(x, SR, ch.factor), SR, subtype="FLOAT")
            else:
                _ffmpeg(src, dst, chain)
            if ch.dim == "pitch":
                _match_rms(src, dst)
        paths[ch.name] = dst
    for name, p in paths.items():
        y, _ = sf.read(str(p), dtype="float64")
        info[f"{name}_peak"] = float(np.max(np.abs(y)))
    return paths, info
