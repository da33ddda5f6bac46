"""Pitch and volume scores on real recordings follow known FFmpeg changes, without leaking.

Three clips of ``benchmarks/corpus`` (read from its manifest.json, no benchmark code imported) are
shifted by +-2 semitones (resampling: ``asetrate`` + ``atempo`` + ``aresample``), changed by +-4 dB
and sped up x1.25 (``atempo``). Each (original, copy) pair is scored as a run scores two turns of
one sample: ``analyse_reply`` per file, ``finish_sample`` over the pair (the octave guard pools
both), the score key and threshold from ``metrics/dims``. No ASR, so speed itself is not scored
here; ``benchmarks/real_speech.py`` covers it.

The low male English voice and the telephone Mandarin voice are ones on which pyworld alone tracks
a subharmonic for much of the clip (the guarded mean then read +0.9 / -0.6 st for +-2 st, and
-1.6 st for +2 st); the two-tracker agreed mean must get them right.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from real_corpus import MANIFEST, corpus_dir

#: a low male English voice and a high female Mandarin voice that pyworld halves, and a clean high
#: female Mandarin voice
CLIPS = ("en_digits", "zh_call", "zh_news")
SR = 16000
#: per-pair tolerances around the applied change
PITCH_TOL_ST = 0.5
VOLUME_TOL_DB = 0.3
SPAN_TOL = 0.08  # x1.25 tempo: VAD span of the copy / original within 0.8 +- 8%


def _resample_chain(st: float) -> tuple[str, float]:
    rate = round(SR * 2.0 ** (st / 12.0))
    return f"asetrate={rate},atempo={SR / rate:.6f},aresample={SR}", 12 * math.log2(rate / SR)


CHANGES: dict[str, tuple[str, str, float]] = {  # name -> (dim, ffmpeg -af, applied)
    "pitch_+2": ("pitch", *_resample_chain(2.0)),
    "pitch_-2": ("pitch", *_resample_chain(-2.0)),
    "gain_+4dB": ("volume", "volume=4dB", 4.0),
    "gain_-4dB": ("volume", "volume=-4dB", -4.0),
    "tempo_x1.25": ("speed", "atempo=1.25", 25.0),
}


def _manifest() -> dict[str, dict[str, Any]]:
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return {c["id"]: c for c in data["clips"]}


def _ffmpeg(src: Path, dst: Path, chain: str) -> None:
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
        str(dst),
    ]
    subprocess.run(cmd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (clip, change): each dimension's change between the pair's turns, plus the spans."""
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed")
    import numpy as np
    import soundfile as sf

    from stylebench.audio import load_audio
    from stylebench.metrics.dims.base import ScoreContext, dimension
    from stylebench.records import FeatureRecord
    from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

    root, clips, cfg, out = tmp_path_factory.mktemp("real"), _manifest(), FeatureConfig(), {}
    corpus = corpus_dir(clips[c]["file"] for c in CLIPS)
    for cid in CLIPS:
        # peak at most -6 dBFS so +4 dB cannot clip (the same copy for every change)
        x, sr = sf.read(str(corpus / clips[cid]["file"]), dtype="float64")
        orig = root / f"{cid}.wav"
        sf.write(str(orig), x * min(1.0, 0.5 / np.max(np.abs(x))), sr, subtype="FLOAT")
        base = analyse_reply(*load_audio(orig, target_sr=SR), cfg)
        for name, (_dim, chain, _applied) in CHANGES.items():
            copy = root / f"{cid}-{name}.wav"
            _ffmpeg(orig, copy, chain)
            part = analyse_reply(*load_audio(copy, target_sr=SR), cfg)
            done = finish_sample({1: base, 2: part}, {}, clips[cid]["lang"])
            feats = {
                k: FeatureRecord(cid, k, "ok", "t", values=v[0], flags=v[1])
                for k, v in done.items()
                if not isinstance(v, str)
            }
            res: dict[str, Any] = {"span_ratio": done[2][0]["span_s"] / done[1][0]["span_s"]}
            for d in ("pitch", "volume"):
                vals, _ = dimension(d).turn_values(None, feats, ScoreContext())
                a, b = vals.get(1), vals.get(2)
                ok = isinstance(a, float) and isinstance(b, float)
                res[d] = dimension(d).change(a, b) if ok else math.nan
            out[(cid, name)] = res
    return out


def _cases() -> list[Any]:
    """(clip, change, check): "amount" (or "span" for tempo), then each other dim's leakage."""
    out = []
    for cid in CLIPS:
        for name, (dim, _chain, _applied) in CHANGES.items():
            own = "span" if dim == "speed" else "amount"
            for check in (own, *(d for d in ("pitch", "volume") if d != dim)):
                out.append(pytest.param(cid, name, check, id=f"{cid}-{name}-{check}"))
    return out


@pytest.mark.parametrize(("cid", "name", "check"), _cases())
def test_real_speech_change(
    measured: dict[tuple[str, str], dict[str, Any]], cid: str, name: str, check: str
) -> None:
    from stylebench.metrics.dims.base import jnd

    dim, _chain, applied = CHANGES[name]
    res = measured[(cid, name)]
    if check == "span":  # the speed denominator follows the tempo
        assert abs(res["span_ratio"] - 1 / 1.25) <= SPAN_TOL, (
            f"VAD span ratio {res['span_ratio']:.3f}"
        )
    elif check == "amount":
        tol = PITCH_TOL_ST if dim == "pitch" else VOLUME_TOL_DB
        got = res[dim]
        assert abs(got - applied) <= tol, f"{dim} moved {got:+.2f} for {applied:+.2f} applied"
    else:  # leakage into another dimension stays below its just-noticeable change
        got = res[check]
        assert abs(got) < jnd(check), f"{name} moved {check} by {got:+.2f} (threshold {jnd(check)})"
