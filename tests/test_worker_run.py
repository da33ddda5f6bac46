"""The worker adapter end to end: a real-style model served from a subprocess (sys.executable as
the worker python), a worker that crashes mid-run, one that hangs past the turn timeout, and what
the runner writes to a worker.

The model is ``tests/worker_models/sbtest_models.py:EchoModel``, a NAMED STAND-IN for a real
model (a plain ``SpeechModel``; the embedded calibration models run in process only), and
``FlakyEcho``, the same model crashing or hanging once. Every turn answered in the worker must
match the same model called in this process byte for byte.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from stylebench.commands.runs import run
from stylebench.config import make_config
from stylebench.dialogues.sets import load_set
from stylebench.model_wrappers.worker import protocol as wp
from stylebench.records import DecodeConfig, Turn

HELPERS = Path(__file__).resolve().parent / "worker_models"
# two samples per direction; no ASR and no relevance judge: only the model's audio matters here
FAST = dict(asr="none", vad="energy", judge="none", n_boot=200, dim="pitch", lang="en", limit=2)
#: what the answer key is made of: none of it may reach a worker
KEY_FIELDS = {"script", "content", "direction", "dim", "emotion"}


@pytest.fixture(scope="module")
def helper_env():
    """Make the test-only wrappers importable here and in the worker (it inherits the env)."""
    with pytest.MonkeyPatch.context() as mp:
        old = os.environ.get("PYTHONPATH")
        mp.setenv("PYTHONPATH", str(HELPERS) + (os.pathsep + old if old else ""))
        mp.syspath_prepend(str(HELPERS))
        yield


def worker_run(small_set: Path, out: Path, model: str = "sbtest_models:EchoModel", **kw: Any):
    args = {**FAST, **kw}
    cfg = make_config(
        model=model, dialogues=str(small_set), out=str(out), worker_python=sys.executable, **args
    )
    return run(cfg, progress=False)


@pytest.fixture(scope="module")
def clean_run(small_set, tmp_path_factory, helper_env):
    return worker_run(small_set, tmp_path_factory.mktemp("clean"))


def counts(res: Any) -> dict[str, int]:
    """The respond stage's ok / error / skipped counts."""
    return {k: res.counts["respond"][k] for k in ("ok", "error", "skipped")}


def replies(res: Any) -> dict[tuple[str, int], dict[str, Any]]:
    """The latest respond record per (sample, turn), read straight from the run folder."""
    return {(d["sample_id"], d["turn"]): d for d in res.store.iter_raw("respond")}


def cells(report: dict) -> dict:
    return {(c["dim"], c["direction"], c["lang"], c["pair"]): c for c in report["cells"]}


def worker_starts(run_dir: Path) -> list[str]:
    log = (run_dir / "worker.log").read_text(encoding="utf-8")
    return [ln for ln in log.splitlines() if "ready, pid" in ln]


def test_worker_run_equals_in_process(small_set, clean_run, helper_env):
    res = clean_run
    assert counts(res) == {"ok": 12, "error": 0, "skipped": 0}
    recs = replies(res)
    model = importlib.import_module("sbtest_models").EchoModel()
    samples, _ = load_set(small_set)
    asked = {sid for sid, _ in recs}
    for sample in (s for s in samples if s.id in asked):
        history: list[Turn] = []
        for k, ut in enumerate(sample.turns, start=1):
            user = Turn("user", ut.text, str(small_set / ut.audio), ut.sr)
            here = model.respond(tuple(history), user, DecodeConfig())
            rec = recs[(sample.id, k)]
            assert rec["status"] == "ok" and rec["sha256"] == _sha(here.audio), (sample.id, k)
            history += [user, here]
    # the stand-in raises pitch every turn: every pitch-intensify cell sees it
    ups = [c for c in res.report["cells"] if c["direction"] == "intensify"]
    assert ups and all(c["vsp"] == 100.0 for c in ups)
    # where it ran is recorded in the manifest (docs/models.md#worker), outside the cache key
    manifest = (res.store.root / "manifest.json").read_text(encoding="utf-8")
    assert json.dumps(sys.executable) in manifest
    # the effective decode settings are asked of the model in the worker (protocol settings)
    effective = json.loads(manifest)["model"]["decode_effective"]
    assert effective["greedy"] is True and effective["args"]["echo_temperature"] == 0.0
    assert effective["args"]["pid"] != os.getpid()
    assert len(worker_starts(res.store.root)) == 1


def test_the_runner_sends_no_answer_key_to_a_worker(small_set, tmp_path, helper_env, monkeypatch):
    """Defect 2 of issue 9: every line written to the worker is free of the dialogue script."""
    sent: list[bytes] = []
    encode = wp.encode

    def capture(msg: Any) -> bytes:
        line = encode(msg)
        sent.append(line)
        return line

    monkeypatch.setattr(wp, "encode", capture)
    res = worker_run(small_set, tmp_path, dim="all", lang="all", limit=1)
    leaked = {key for line in sent for key in _keys(json.loads(line))} & KEY_FIELDS
    assert not leaked, f"sent to the worker: {sorted(leaked)}"
    done = counts(res)
    assert done["error"] == 0 and done["ok"] > 12
    kinds = [json.loads(line)["kind"] for line in sent]
    assert kinds[0] == "init" and kinds.count("respond") == done["ok"]


@pytest.mark.parametrize("mode", ["crash", "hang"])
def test_failing_worker_is_restarted_and_run_goes_on(small_set, tmp_path, clean_run, mode):
    flag = tmp_path / "failed-once"
    res = worker_run(
        small_set,
        tmp_path / "runs",
        "sbtest_models:FlakyEcho",
        model_args={"mode": mode, "at_call": "5", "flag": str(flag)},
        turn_timeout_s=6.0,  # a normal turn takes well under 1 s; the hang is 1 h
    )
    assert flag.exists(), "the scripted failure never happened"
    recs = replies(res)
    base = replies(clean_run)
    ids = sorted({sid for sid, _ in base})
    failed = {(ids[1], 2), (ids[1], 3)}  # call 5 = 2nd sample, turn 2; turn 3 then not asked
    assert {k for k, r in recs.items() if r["status"] == "error"} == failed
    first = recs[(ids[1], 2)]["error"]
    if mode == "crash":
        assert "exited (code 3)" in first
    else:
        assert "no answer within 6 s" in first
    assert "flaky: " + mode + " now" in first  # the worker's last stderr lines are quoted
    assert recs[(ids[1], 3)]["error"].startswith("not asked: turn 2 failed")
    for key, rec in recs.items():  # every answered turn equals the clean run's
        if key not in failed:
            assert rec["status"] == "ok" and rec["sha256"] == base[key]["sha256"], key
    # a fresh worker started after the failure and answered the two later samples
    assert len(worker_starts(res.store.root)) == 2
    assert counts(res) == {"ok": 10, "error": 2, "skipped": 0}
    # scores: the failed sample is excluded from VSP; every other cell is the clean run's
    mine, ref = cells(res.report), cells(clean_run.report)
    changed = {k for k in mine if mine[k] != ref[k]}
    assert changed, "the failure left no trace in the scores"
    for k in changed:
        assert mine[k]["n_ok"] == ref[k]["n_ok"] - 1 and mine[k]["n"] == ref[k]["n"], k
        assert sum(mine[k]["errors"].values()) == 1, mine[k]
    assert len({(k[0], k[1], k[2]) for k in changed}) == 1  # one (dim, direction, lang) cell
    log = (res.store.root / "worker.log").read_text(encoding="utf-8")
    assert "library chatter on stdout" in log and "raw write to fd 1" in log


def _keys(value: Any) -> set[str]:
    """Every dict key anywhere in a decoded JSON value."""
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def _sha(path: str) -> str:
    from stylebench.audio import sha256_file

    return sha256_file(path)
