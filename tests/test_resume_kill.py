"""kill -9 during respond, then re-run the same command: same scores, nothing lost or doubled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "stylebench.cli", "--no-progress", *args]


def test_sigkill_during_respond_then_resume(small_set, tmp_path):
    common = [
        "run",
        "--model",
        "reference",
        "--dim",
        "volume",
        "--lang",
        "en",
        "--asr",
        "none",
        "--vad",
        "energy",
        "--n-boot",
        "200",
        "--dialogues",
        str(small_set),
        "--format",
        "json",
    ]
    killed_out, clean_out = tmp_path / "killed", tmp_path / "clean"
    env = dict(os.environ)
    proc = subprocess.Popen(
        cli(*common, "--out", str(killed_out)),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    respond_file = None
    while time.time() < deadline:
        files = list(killed_out.glob("*/respond.jsonl"))
        if files and len(files[0].read_text().splitlines()) >= 4:
            respond_file = files[0]
            break
        time.sleep(0.05)
    assert respond_file is not None, "the run never started responding"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    n_before = len(respond_file.read_text().splitlines())
    assert n_before < 12, "the run finished before it could be killed"

    ok_before = sum(
        json.loads(x)["status"] == "ok"
        for x in respond_file.read_text().splitlines()
        if x.strip().endswith("}")
    )
    resumed = subprocess.run(
        cli(*common, "--out", str(killed_out)), env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    clean = subprocess.run(
        cli(*common, "--out", str(clean_out)), env=env, capture_output=True, text=True, timeout=300
    )
    assert clean.returncode == 0, clean.stderr

    lines = [
        json.loads(x) for x in respond_file.read_text().splitlines() if x.strip().endswith("}")
    ]
    ok_keys = Counter((d["sample_id"], d["turn"]) for d in lines if d["status"] == "ok")
    assert len(ok_keys) == 12 and max(ok_keys.values()) == 1  # none missing, none doubled
    a, b = json.loads(resumed.stdout), json.loads(clean.stdout)
    strip = lambda r: [{k: v for k, v in c.items()} for c in r["cells"]]  # noqa: E731
    assert strip(a) == strip(b)
    feats = [
        json.loads(x) for x in (respond_file.parent / "features.jsonl").read_text().splitlines()
    ]
    assert (
        Counter((d["sample_id"], d["turn"]) for d in feats if d["status"] == "ok").most_common(1)[
            0
        ][1]
        == 1
    )
    # timings: the killed invocation kept its setup line, never finished respond, and has no
    # end; the resume reused what the killed one answered and computed the rest
    timings = [
        json.loads(x) for x in (respond_file.parent / "timings.jsonl").read_text().splitlines()
    ]
    killed, resume = dict.fromkeys(t["invocation"] for t in timings)
    stages = {
        inv: {t["stage"]: t for t in timings if t["invocation"] == inv and t["kind"] == "stage"}
        for inv in (killed, resume)
    }
    assert list(stages[killed]) == ["setup"]
    assert not any(t["kind"] == "invocation" and t["invocation"] == killed for t in timings)
    respond = stages[resume]["respond"]
    assert (respond["reused"], respond["computed"], respond["failed"]) == (
        ok_before,
        12 - ok_before,
        0,
    )
    assert stages[resume]["features"]["computed"] == 12
