"""The pitch range (expressiveness) of real recordings stays put under tempo and gain changes.

Every clip of the shared real-speech corpus whose audio is present (``STYLEBENCH_REAL_SPEECH``;
clips listed in the manifest but absent are left out, and the test skips with fewer than three) is slowed to x0.8, sped up to x1.25 (``atempo``) and changed by +-6 dB; each (original, copy)
pair is measured as a run measures two turns (``analyse_reply`` + ``finish_sample``) and scored by
the expressiveness dimension. A style-neutral change must move the range by less than the
dimension's threshold (the source of its default, ``metrics/dims/expressiveness.py``).

Clips of several speakers (trait ``multi_speaker``: meetings, a film scene) are left out: a model's
reply is one voice, and a tempo change there moves which talker dominates the range. They are
stress cases that ``benchmarks/real_speech.py`` reports in a table of their own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from real_corpus import MANIFEST, present_clips

SR = 16000
CHANGES = {
    "tempo_x0.8": "atempo=0.8",
    "tempo_x1.25": "atempo=1.25",
    "gain_+6dB": "volume=6dB",
    "gain_-6dB": "volume=-6dB",
}


def _ffmpeg(src: Path, dst: Path, chain: str) -> None:
    cmd = ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(src), "-af", chain]
    cmd += ["-ac", "1", "-ar", str(SR), "-c:a", "pcm_f32le", str(dst)]
    subprocess.run(cmd, check=True, capture_output=True)


def test_tempo_and_gain_do_not_move_the_pitch_range(tmp_path: Path) -> None:
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed")
    import numpy as np
    import soundfile as sf

    from stylebench.audio import load_audio
    from stylebench.metrics.dims.base import ScoreContext, dimension
    from stylebench.records import FeatureRecord
    from stylebench.stages.measure import FeatureConfig, analyse_reply, finish_sample

    listed = json.loads(MANIFEST.read_text(encoding="utf-8"))["clips"]
    single = [c for c in listed if "multi_speaker" not in c.get("speaker_traits", [])]
    corpus, clips = present_clips(single, at_least=3)  # clips whose audio is absent are left out
    print(f"{len(clips)} of {len(single)} listed single-speaker clips present in {corpus}")
    d, cfg, moved = dimension("expressiveness"), FeatureConfig(), {}
    for clip in clips:
        x, sr = sf.read(str(corpus / clip["file"]), dtype="float64")
        orig = tmp_path / f"{clip['id']}.wav"  # peak -12 dBFS so +6 dB cannot clip
        sf.write(str(orig), x * min(1.0, 0.25 / np.max(np.abs(x))), sr, subtype="FLOAT")
        base = analyse_reply(*load_audio(orig, target_sr=SR), cfg)
        for name, chain in CHANGES.items():
            copy = tmp_path / f"{clip['id']}-{name}.wav"
            _ffmpeg(orig, copy, chain)
            part = analyse_reply(*load_audio(copy, target_sr=SR), cfg)
            done = finish_sample({1: base, 2: part}, {}, clip["lang"])
            feats = {
                k: FeatureRecord(clip["id"], k, "ok", "t", values=v[0], flags=v[1])
                for k, v in done.items()
                if not isinstance(v, str)
            }
            vals, _ = d.turn_values(None, feats, ScoreContext())
            a, b = vals.get(1), vals.get(2)
            if isinstance(a, float) and isinstance(b, float):
                moved[(clip["id"], name)] = (a, d.change(a, b))
    assert len(moved) >= 3 * len(CHANGES), f"too few clips scored: {sorted(moved)}"
    for (cid, name), (a, ch) in sorted(moved.items()):
        print(f"{cid:14s} {name:12s} range {a:5.2f} st  moved {ch:+.2f} st")
    worst = max(abs(ch) for _, ch in moved.values())
    print(f"largest move {worst:.2f} st over {len(moved)} pairs; threshold {d.default_threshold}")
    assert worst < d.default_threshold
