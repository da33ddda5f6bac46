"""``--executor ray`` on a local Ray (2 CPUs, started once for this module): the same records as
the serial executor, a sample's turns on one actor, a dying worker, a killed driver."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

from stylebench.config import make_config  # noqa: E402
from stylebench.model_wrappers.base import Script, ScriptedModel  # noqa: E402
from stylebench.records import DecodeConfig, Turn  # noqa: E402

FAST = {"asr": "none", "vad": "energy", "n_boot": 200, "judge": "none", "dim": "pitch", "limit": 1}


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    # the workers cannot import this test module: its classes travel by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    from stylebench.executors.ray_executor import LOCAL_RAY_SYSTEM_CONFIG

    # as the executor starts a local Ray: workers at the driver's priority (Ray's default,
    # niceness 15, let a loaded machine stall the dying-worker test for many minutes)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _system_config=LOCAL_RAY_SYSTEM_CONFIG,
    )
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


def wav_hashes(root: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / "audio").glob("*.wav"))
    }


def stored(root: Path, stage: str = "respond") -> list[dict]:
    return [json.loads(line) for line in (root / f"{stage}.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def serial_run(small_set, tmp_path_factory):
    from stylebench.commands.runs import run

    out = tmp_path_factory.mktemp("serial")
    return run(
        make_config(dialogues=str(small_set), out=str(out), run_id="r", **FAST), progress=False
    )


def test_ray_run_equals_the_serial_run(small_set, tmp_path, serial_run):
    from stylebench.commands.runs import run

    res = run(
        make_config(
            dialogues=str(small_set),
            out=str(tmp_path),
            run_id="r",
            executor="ray",
            workers=2,
            **FAST,
        ),
        progress=False,
    )
    assert res.counts["respond"] == {"ok": 12, "error": 0, "skipped": 0}
    assert (res.store.root / "report.json").read_text() == (
        serial_run.store.root / "report.json"
    ).read_text()
    assert wav_hashes(res.store.root) == wav_hashes(serial_run.store.root)
    recs = stored(res.store.root)
    actors = defaultdict(set)
    for r in recs:
        where = r["raw"]["executor"]
        assert where["kind"] == "ray" and where["node"] and where["pid"] > 0 and where["gpus"] == []
        actors[r["sample_id"]].add(where["actor"])
    assert all(len(a) == 1 for a in actors.values())  # a sample's three turns: one actor
    assert len(set().union(*actors.values())) == 2  # and both actors worked
    # provenance is never part of a key: the records match the serial ones field for field
    plain = {
        (r["sample_id"], r["turn"]): (r["fp"], r["sha256"], r["text"])
        for r in stored(serial_run.store.root)
    }
    assert {(r["sample_id"], r["turn"]): (r["fp"], r["sha256"], r["text"]) for r in recs} == plain
    assert all("executor" in f["raw"] for f in stored(res.store.root, "features"))
    from stylebench.commands.runs import rescore

    again = rescore(
        res.store.root, {"executor": "ray", "vad": "silero"}, progress=False
    )  # score on Ray
    assert again.counts["features"] == {"ok": 12, "error": 0, "skipped": 0}  # new VAD: remeasured
    assert {f["raw"]["executor"]["role"] for f in stored(res.store.root, "features")} == {"task"}


class DyingReference(ScriptedModel):
    """The reference model, except that the process answering ``die_on`` (a sample id) at turn
    2 exits on the spot, once per ``flag`` file: a worker lost mid-sample."""

    name = "dying-reference"

    def __init__(self, die_on: str, flag: str) -> None:
        from stylebench.model_wrappers.embedded.reference import ReferenceModel

        self.inner, self.die_on, self.flag = ReferenceModel(), die_on, Path(flag)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def respond_scripted(
        self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig, script: Script
    ) -> Turn:
        if script.turn == 2 and self.die_on in user_turn.audio and not self.flag.exists():
            self.flag.write_text(str(os.getpid()))
            os._exit(3)
        return self.inner.respond_scripted(history, user_turn, decode, script)


@dataclass(frozen=True)
class DyingSpec:
    die_on: str
    flag: str

    def __call__(self) -> DyingReference:
        return DyingReference(self.die_on, self.flag)


def test_a_worker_that_dies_mid_sample_gives_error_records_and_the_rerun_retries(
    small_set, tmp_path, serial_run
):
    from stylebench.commands.runs import load_dialogues, select_samples
    from stylebench.executors.ray_executor import RayExecutor
    from stylebench.pipeline.keys import Identity
    from stylebench.pipeline.stage import run_stage
    from stylebench.stages.respond import RespondStage
    from stylebench.store import RunStore

    cfg = make_config(dialogues=str(small_set), executor="ray", workers=2, **FAST)
    samples = select_samples(load_dialogues(cfg)[0], cfg)
    victim = samples[1].id
    spec = DyingSpec(victim, str(tmp_path / "died"))
    store = RunStore(tmp_path / "run")
    identity = Identity.of(spec().describe(), cfg.decode)

    def respond() -> Any:
        with RayExecutor(cfg.executor) as ex:
            return run_stage(
                store,
                RespondStage(store, samples, small_set, identity, model_spec=spec),
                executor=ex,
            )

    first = respond()
    assert (tmp_path / "died").exists()  # the actor process really exited
    assert first.counts == {"ok": 9, "error": 3, "skipped": 0}
    errors = {k: r.error for k, r in first.records.items() if r.status == "error"}
    assert set(errors) == {(victim, 1), (victim, 2), (victim, 3)}
    assert all("WorkerLost" in e and "died" in e for e in errors.values())
    again = respond()  # the restarted actors answer; only the lost sample is asked again
    assert again.counts == {"ok": 3, "error": 0, "skipped": 9}
    assert wav_hashes(store.root) == wav_hashes(serial_run.store.root)


def test_killing_the_driver_then_rerunning_gives_the_same_report(
    small_set, tmp_path, serial_run, local_ray
):
    import psutil

    args = [
        sys.executable,
        "-m",
        "stylebench.cli",
        "--no-progress",
        "run",
        "--executor",
        "ray",
        "--ray-address",
        local_ray,
        "--workers",
        "2",
        "--dialogues",
        str(small_set),
        "--out",
        str(tmp_path),
        "--run-id",
        "r",
        "--format",
        "json",
    ]
    for k, v in FAST.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    log = open(tmp_path / "driver.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    respond = tmp_path / "r" / "respond.jsonl"
    # a generous bound: on a loaded machine Ray's start and the first replies take minutes
    deadline = time.time() + 600
    while time.time() < deadline and proc.poll() is None:
        if respond.exists() and len(respond.read_text().splitlines()) >= 4:
            break
        time.sleep(0.05)
    assert proc.poll() is None, (tmp_path / "driver.log").read_text()[-2000:]
    assert respond.exists(), (
        "no reply recorded in 600 s: " + (tmp_path / "driver.log").read_text()[-2000:]
    )
    children = psutil.Process(proc.pid).children(recursive=True)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    for c in children:  # anything the killed driver started itself (none when joining a cluster)
        if c.is_running():
            c.kill()
    done_before = len(respond.read_text().splitlines())
    assert 4 <= done_before < 12
    rerun = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert (tmp_path / "r" / "report.json").read_text() == (
        serial_run.store.root / "report.json"
    ).read_text()
    assert wav_hashes(tmp_path / "r") == wav_hashes(serial_run.store.root)
    ok = [(r["sample_id"], r["turn"]) for r in stored(tmp_path / "r") if r["status"] == "ok"]
    assert len(ok) == len(set(ok)) == 12  # no key kept twice


def test_a_local_ray_runs_its_workers_at_the_drivers_priority():
    """Ray starts workers at niceness 15; a local Ray of ours gives them the driver's priority,
    else a run's compute gets only what other work on the machine leaves (in its own process:
    this module's Ray was started without the executor)."""
    code = (
        "import os, ray\n"
        "from stylebench.executors.config import ExecutorConfig\n"
        "from stylebench.executors.ray_executor import RayExecutor\n"
        "nice = ray.remote(lambda: os.getpriority(os.PRIO_PROCESS, 0))\n"
        "with RayExecutor(ExecutorConfig(executor='ray'), num_cpus=1) as ex:\n"
        "    print('worker', ex.get(nice.remote()), 'driver', os.getpriority(os.PRIO_PROCESS, 0))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True
    )
    assert out.stdout.split()[-4:] == ["worker", "0", "driver", "0"], out.stdout + out.stderr
