"""scripts/gpu_whisper_throughput.py on CPU: a tiny random Whisper through the batched first
pass, so the GPU measurement is ready to run when a device is lent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "gpu_whisper_throughput.py"


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": ""}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600, env=env
    )


def test_a_tiny_random_whisper_reports_each_batch_size(tmp_path):
    pytest.importorskip("transformers", reason="the random model is built with transformers")
    out = tmp_path / "w.tsv"
    r = run(
        "--device",
        "cpu",
        "--size",
        "tiny",
        "--batches",
        "1,2",
        "--replies",
        "3",
        "--max-new-tokens",
        "4",
        "--out",
        str(out),
    )
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert rows[0] == ["model", "device", "batch", "replies", "audio_s", "wall_s", "x_realtime"]
    assert [row[2] for row in rows[1:]] == ["1", "2"]
    for row in rows[1:]:
        assert row[0] == "random-tiny" and row[3] == "3"
        assert float(row[4]) == pytest.approx(4.2 + 5.8 + 6.9, abs=0.05)
        assert float(row[6]) > 0
    assert r.stdout.splitlines() == out.read_text().splitlines()


def test_without_a_cuda_device_it_says_so_before_building_anything():
    r = run("--device", "cuda")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("skipped: CTranslate2 sees no CUDA device")


def test_the_clips_are_voiced_and_as_long_as_asked():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from gpu_whisper_throughput import SR, reply_like
    finally:
        sys.path.remove(str(SCRIPT.parent))
    from stylebench.metrics.pitch import f0_track

    x = reply_like(5.0, 0)
    assert len(x) == 5 * SR and np.max(np.abs(x)) == pytest.approx(0.3, rel=1e-3)
    f0 = f0_track(x.astype(np.float64), SR)
    voiced = f0[f0 > 0]
    assert len(voiced) > 0.3 * len(f0)  # speech-like: mostly voiced, with pauses
    assert 90 < np.median(voiced) < 220
