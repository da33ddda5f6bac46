"""The worker adapter end to end: `reference` served from a subprocess (sys.executable as the
worker python), a worker that crashes mid-run, one that hangs past the turn timeout.

The misbehaving model is ``tests/worker_models/sbtest_models.py:FlakyReference``, a test-only
stand-in for a real model that crashes or hangs; it answers exactly like ``reference`` otherwise,
so every turn it does answer must match the in-process reference run byte for byte.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from stylebench.config import RunConfig
from stylebench.pipeline import run

HELPERS = Path(__file__).resolve().parent / "worker_models"
# two samples per direction; no ASR and no relevance judge: only the model's audio matters here
FAST = dict(asr="none", vad="energy", judge="none", n_boot=200, dim="pitch", lang="en", limit=2)


@pytest.fixture()
def helper_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the test-only wrappers importable in the worker (it inherits the environment)."""
    old = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", str(HELPERS) + (os.pathsep + old if old else ""))


@pytest.fixture(scope="module")
def in_process(small_set, tmp_path_factory):
    out = tmp_path_factory.mktemp("inproc")
    return run(
        RunConfig(model="reference", dialogues=str(small_set), out=str(out), **FAST), progress=False
    )


def cells(report: dict) -> dict:
    return {(c["dim"], c["direction"], c["lang"], c["pair"]): c for c in report["cells"]}


def worker_starts(run_dir: Path) -> list[str]:
    log = (run_dir / "worker.log").read_text(encoding="utf-8")
    return [ln for ln in log.splitlines() if "ready, pid" in ln]


def test_worker_run_equals_in_process(small_set, tmp_path, in_process):
    res = run(
        RunConfig(
            model="reference",
            dialogues=str(small_set),
            out=str(tmp_path),
            worker_python=sys.executable,
            **FAST,
        ),
        progress=False,
    )
    assert res.counts["respond"] == {"called": 12, "ok": 12, "error": 0, "skipped": 0}
    ours, theirs = res.store.load("respond"), in_process.store.load("respond")
    assert ours.keys() == theirs.keys() and len(ours) == 12
    for key, rec in ours.items():
        assert rec.status == "ok"
        assert rec.sha256 == theirs[key].sha256, key  # the same audio, byte for byte
        assert rec.fp == theirs[key].fp, key  # where it ran is not part of the cache key
    assert cells(res.report) == cells(in_process.report)
    assert all(c["vsp"] == 100.0 for c in res.report["cells"])
    worker = res.store.read_manifest()["model"]["worker"]
    assert worker["python"] == sys.executable and worker["stylebench"]
    assert len(worker_starts(res.store.root)) == 1


@pytest.mark.parametrize("mode", ["crash", "hang"])
def test_failing_worker_is_restarted_and_run_goes_on(
    small_set, tmp_path, in_process, helper_path, mode
):
    flag = tmp_path / "failed-once"
    res = run(
        RunConfig(
            model="sbtest_models:FlakyReference",
            model_args={"mode": mode, "at_call": "5", "flag": str(flag)},
            dialogues=str(small_set),
            out=str(tmp_path / "runs"),
            worker_python=sys.executable,
            turn_timeout_s=6.0,  # a normal turn takes well under 1 s; the hang is 1 h
            **FAST,
        ),
        progress=False,
    )
    assert flag.exists(), "the scripted failure never happened"
    recs = res.store.load("respond")
    base = in_process.store.load("respond")
    ids = sorted({sid for sid, _ in base})
    failed = {(ids[1], 2), (ids[1], 3)}  # call 5 = 2nd sample, turn 2; turn 3 then not asked
    assert {k for k, r in recs.items() if r.status == "error"} == failed
    first = recs[(ids[1], 2)].error
    if mode == "crash":
        assert "exited (code 3)" in first
    else:
        assert "no answer within 6 s" in first
    assert "flaky: " + mode + " now" in first  # the worker's last stderr lines are quoted
    assert recs[(ids[1], 3)].error.startswith("not asked: turn 2 failed")
    for key, rec in recs.items():  # every answered turn equals the in-process reference
        if key not in failed:
            assert rec.status == "ok" and rec.sha256 == base[key].sha256, key
    # a fresh worker started after the failure and answered the two later samples
    assert len(worker_starts(res.store.root)) == 2
    assert res.counts["respond"] == {"called": 11, "ok": 10, "error": 2, "skipped": 0}
    # scores: the failed sample is excluded from VSP and counted as not valid in vsp_all;
    # every other cell is exactly the in-process one
    mine, ref = cells(res.report), cells(in_process.report)
    changed = {k for k in mine if mine[k] != ref[k]}
    assert changed, "the failure left no trace in the scores"
    for k in changed:
        assert mine[k]["n_ok"] == ref[k]["n_ok"] - 1 and mine[k]["n"] == ref[k]["n"], k
        assert mine[k]["vsp"] == 100.0 and mine[k]["vsp_all"] == 50.0, mine[k]
        assert sum(mine[k]["errors"].values()) == 1, mine[k]
    assert len({(k[0], k[1], k[2]) for k in changed}) == 1  # one (dim, direction, lang) cell
    log = (res.store.root / "worker.log").read_text(encoding="utf-8")
    assert "library chatter on stdout" in log and "raw write to fd 1" in log
