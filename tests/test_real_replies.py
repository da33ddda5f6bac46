"""``benchmarks/real_replies.py``: FFmpeg's loudness as its volume reference, and its per-file
measurement on a few real VStyle replies (``$STYLEBENCH_REAL_REPLIES``, default
``../shared/real_replies/vstyle``; skipped when absent, the audio is not in the repository).

The benchmark runs as a command (its modules import each other as scripts do); the reference
module imports nothing of its own and is loaded by path.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
#: the 0.55 s one-syllable reply, the 0.77 s Mandarin fragment, and an English pair (50: very low
#: pitch, 60: very high)
FILES = (
    "en/replies/acoustic_properties-pitch-50-Step-Audio.mp3",
    "zh/replies/acoustic_properties-pitch-50-Baichuan-Audio.mp3",
    "en/replies/acoustic_properties-pitch-50-Baichuan-Audio.mp3",
    "en/replies/acoustic_properties-pitch-60-Baichuan-Audio.mp3",
)


def _refs():
    spec = importlib.util.spec_from_file_location(
        "real_replies_refs", BENCH / "real_replies_refs.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


needs_ffmpeg = pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg not installed")


def _tone(path: Path, gain_db: float) -> Path:
    cmd = [
        "ffmpeg",
        "-nostdin",
        "-v",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "sine=f=1000:d=4:sample_rate=48000",
        "-af",
        f"volume={gain_db}dB",
        "-ac",
        "1",
        str(path),
    ]
    subprocess.run(cmd, check=True, capture_output=True)
    return path


@needs_ffmpeg
def test_integrated_loudness_follows_a_known_gain(tmp_path: Path):
    refs = _refs()
    ref = refs.integrated_loudness(_tone(tmp_path / "a.wav", -6.0))
    quieter = refs.integrated_loudness(_tone(tmp_path / "b.wav", -16.0))
    # FFmpeg's sine source peaks at 1/8: RMS -21.1 dBFS, -27.1 after -6 dB; at 1 kHz the K-weighting
    # gain (+0.69 dB) and BS.1770's -0.691 offset cancel, so LUFS reads the RMS level
    assert ref == pytest.approx(-27.1, abs=0.2)
    assert quieter - ref == pytest.approx(-10.0, abs=0.1)


@needs_ffmpeg
def test_integrated_loudness_of_silence_is_none(tmp_path: Path):
    f = tmp_path / "s.wav"
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "anullsrc=d=2", str(f)]
    subprocess.run(cmd, check=True, capture_output=True)
    assert _refs().integrated_loudness(f) is None


def test_loudness_parser_reads_the_summary_not_the_frames():
    log = (
        "[Parsed_ebur128_0 @ 0x1] t: 0.4 TARGET:-23 LUFS M: -20.1 S:-120.7 I: -19.5 LUFS\n"
        "[Parsed_ebur128_0 @ 0x1] Summary:\n\n  Integrated loudness:\n    I:         -17.4 LUFS\n"
        "    Threshold: -28.9 LUFS\n"
    )
    refs = _refs()
    assert refs.parse_integrated_loudness(log) == -17.4
    with pytest.raises(ValueError, match="Integrated loudness"):
        refs.parse_integrated_loudness("Conversion failed!")


def _bench(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    cmd = [sys.executable, str(BENCH / "real_replies.py"), *args]
    env = {**os.environ, **(env or {})}
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_absent_folder_is_one_line_and_exit_2(tmp_path: Path):
    res = _bench(tmp_path, env={"STYLEBENCH_REAL_REPLIES": str(tmp_path / "absent")})
    assert res.returncode == 2
    assert (
        res.stderr.strip().startswith("real_replies: ")
        and len(res.stderr.strip().splitlines()) == 1
    )


@needs_ffmpeg
def test_per_file_measurement_on_real_replies(tmp_path: Path):
    try:
        folder = _refs().data_dir()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "r.json"
    res = _bench(
        tmp_path,
        "--files",
        ",".join(FILES),
        "--no-asr",
        "--json",
        str(out),
        env={"STYLEBENCH_REAL_REPLIES": str(folder)},
    )
    assert res.returncode == 0, res.stderr[-2000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(r["file"] for r in data["replies"]) == sorted(FILES)
    for r in data["replies"]:
        # every dimension has a score or the reason it has none
        assert set(r["result"]["scores"]) == {"pitch", "volume", "speed"}
        assert all(
            isinstance(v, float | str) for s in r["result"]["scores"].values() for v in s.values()
        )
        assert r["refs"]["lufs"] is None or -70 < r["refs"]["lufs"] < 0
    assert len(data["pairs"]) == 1 and data["pairs"][0]["dimension"] == "pitch"
    assert {p["probe"] for p in data["probes"]} >= {
        "square_150Hz_3s",
        "white_noise_3s",
        "sine_220Hz_3s",
    }
    assert "(a) per reply" in res.stdout and "(h) non-speech probes" in res.stdout
