"""Executors without Ray: the feature process pool, repeated deliveries, the executor options."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from stylebench.audio import write_wav
from stylebench.commands.runs import run, select_samples
from stylebench.config import make_config
from stylebench.dialogues.sets import load_set
from stylebench.executors import serial
from stylebench.model_wrappers.base import SpeechModel
from stylebench.pipeline.keys import Identity
from stylebench.pipeline.stage import run_stage
from stylebench.records import DecodeConfig, Turn
from stylebench.stages.features import FeaturesStage
from stylebench.stages.measure import FeatureConfig
from stylebench.stages.respond import RespondStage
from stylebench.store import RunStore

FAST = {"asr": "none", "vad": "energy", "n_boot": 200, "judge": "none"}


def lines(path: Path) -> list[dict]:
    """A stage file's records, line by line, without ``elapsed_s`` (timed where computed)."""
    out = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert all(d["elapsed_s"] >= 0 for d in out)
    return [{k: v for k, v in d.items() if k != "elapsed_s"} for d in out]


def test_feature_pool_writes_the_same_records_as_one_process(small_set, tmp_path):
    base = {"dim": "pitch", "dialogues": str(small_set), "limit": 1, "run_id": "r", **FAST}
    one = run(make_config(out=str(tmp_path / "one"), feature_workers=1, **base), progress=False)
    two = run(make_config(out=str(tmp_path / "two"), feature_workers=2, **base), progress=False)
    assert two.counts["features"] == one.counts["features"] == {"ok": 12, "error": 0, "skipped": 0}
    # line for line: the pool's results come back in unit order and carry no provenance (each
    # record's compute time differs; it is timed in the process that computed it)
    assert lines(two.store.stage_path("features")) == lines(one.store.stage_path("features"))
    assert json.loads((two.store.root / "report.json").read_text()) == json.loads(
        (one.store.root / "report.json").read_text()
    )


def test_pool_size_rule(monkeypatch):
    monkeypatch.setattr(serial, "cores", lambda: 2)
    assert serial.pool_size(0, 7) == 1  # a small stage stays in process
    assert serial.pool_size(0, 8) == 2  # 4 units per core: one process per core
    assert serial.pool_size(3, 100) == 3
    assert serial.pool_size(3, 2) == 2  # never more processes than units


class ChangingModel(SpeechModel):
    """Answers every call with different audio (a sampling model), so a repeat is visible."""

    name = "changing-standin"

    def __init__(self, root: Path) -> None:
        self.root, self.calls = root, 0

    def respond(self, history: Sequence[Turn], user_turn: Turn, decode: DecodeConfig) -> Turn:
        self.calls += 1
        t = np.arange(16000) / 16000
        path = self.root / f"reply{self.calls}.wav"
        write_wav(path, 0.3 * np.sin(2 * np.pi * (150 + self.calls) * t), 16000)
        return Turn("assistant", f"call {self.calls}", str(path), 16000)


class TwiceExecutor:
    """Delivers every unit twice, both jobs packed before either result is kept: what a
    retried task or a resubmitted unit does to the driver."""

    def map(self, stage, units, done):
        for u in units:
            first, again = stage.job(u, done), stage.job(u, done)
            model = getattr(stage, "model", None)
            yield u, stage.accept(u, first.run(model), done)
            yield u, stage.accept(u, again.run(model), done)


def test_a_repeated_delivery_changes_nothing(small_set, tmp_path):
    samples = select_samples(load_set(small_set)[0], make_config(dim="pitch", lang="en", limit=1))
    store = RunStore(tmp_path / "run")
    (tmp_path / "scratch").mkdir()
    model = ChangingModel(tmp_path / "scratch")
    stage = RespondStage(
        store, samples, small_set, Identity.of(model.describe(), DecodeConfig()), model
    )
    res = run_stage(store, stage, executor=TwiceExecutor())
    n = 3 * len(samples)
    assert model.calls == 2 * n  # every turn really was computed twice
    # turn 1 repeats the stored key; turns 2-3 of the repeat heard another turn 1: dropped too
    assert res.counts == {"ok": n, "error": 0, "skipped": 0, "repeated": len(samples)}
    stored = lines(store.stage_path("respond"))
    assert len(stored) == n and len({(r["sample_id"], r["turn"]) for r in stored}) == n
    # the first delivery of each sample stands: its texts, and the wavs their sha256 name
    assert [r["text"] for r in stored] == [
        f"call {6 * i + k}" for i in range(len(samples)) for k in (1, 2, 3)
    ]
    for r in stored:
        assert hashlib.sha256((store.root / r["audio"]).read_bytes()).hexdigest() == r["sha256"]
    feats = run_stage(
        store,
        FeaturesStage(store, samples, res.records, {}, FeatureConfig(vad="energy")),
        executor=TwiceExecutor(),
    )
    assert feats.counts["repeated"] == n and len(lines(store.stage_path("features"))) == n
    again = run_stage(store, stage, executor=TwiceExecutor())  # and a re-run asks nothing
    assert again.counts == {"ok": 0, "error": 0, "skipped": n} and model.calls == 2 * n


def test_executor_ray_without_ray_names_the_extra(small_set, tmp_path, monkeypatch, capsys):
    from stylebench.cli import main

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    code = main(
        [
            "run",
            "--executor",
            "ray",
            "--dialogues",
            str(small_set),
            "--out",
            str(tmp_path),
            "--asr",
            "none",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "pip install 'stylebench[ray]'" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # refused before any work


def test_executor_options_are_flags_and_checked():
    from stylebench.cli import parse_args

    args = parse_args(
        [
            "score",
            "runs/x",
            "--executor",
            "ray",
            "--workers",
            "3",
            "--gpus-per-worker",
            "0.25",
            "--asr-batch-size",
            "16",
        ]
    )
    assert (args.executor, args.workers, args.gpus_per_worker, args.asr_batch_size) == (
        "ray",
        3,
        0.25,
        16,
    )
    for bad in (
        {"workers": 0},
        {"gpus_per_worker": -1.0},
        {"asr_batch_size": 0},
        {"executor": "dask"},
    ):
        with pytest.raises(ValueError):
            make_config(**bad)


def test_where_a_run_ran_is_not_passed_on_to_score(small_set, tmp_path):
    from stylebench.commands.runs import open_stored

    cfg = make_config(
        dim="pitch",
        lang="en",
        limit=1,
        dialogues=str(small_set),
        out=str(tmp_path),
        run_id="r",
        **FAST,
    )
    res = run(cfg, progress=False)
    manifest = json.loads(res.store.manifest_path.read_text())
    manifest["config"]["executor"].update(
        executor="ray", workers=7, asr_batch_size=8, asr_workers=3
    )
    res.store.write_manifest(manifest)
    ex = open_stored(res.store.root).cfg.executor
    # the ASR's key stays; how many replies it decoded at once changes no transcript
    assert (ex.executor, ex.workers, ex.asr_batch_size, ex.asr_workers) == ("serial", 2, 8, 0)
