"""Timings as data: each record's compute time, each invocation's time per stage in
``timings.jsonl``, ``report --timings``, old run folders, and fingerprints that ignore timings."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time

import pytest

from stylebench.cli import main
from stylebench.commands.runs import report_only, run
from stylebench.config import make_config
from stylebench.pipeline.stage import Unit, run_stage, timed
from stylebench.pipeline.timings import Invocation, timings_block
from stylebench.records import (
    FEATURES,
    FeatureRecord,
    InvocationTiming,
    RecordError,
    RespondRecord,
    StageTiming,
    TranscriptRecord,
    validate_record,
)
from stylebench.stages.features import FeaturesStage
from stylebench.stages.measure import FeatureConfig
from stylebench.store import RunStore

FAST = {"asr": "none", "vad": "energy", "n_boot": 200, "judge": "none"}
STAGES_RUN = ["setup", "respond", "features", "score", "report"]


@pytest.fixture(scope="module")
def resumed(small_set, tmp_path_factory):
    """A reference run (volume, en: 4 samples, 12 replies), then the same command again."""
    out = tmp_path_factory.mktemp("timings")
    cfg = make_config(
        model="reference", dim="volume", lang="en", dialogues=str(small_set), out=str(out), **FAST
    )
    first = run(cfg, progress=False)
    second = run(cfg, progress=False)
    assert first.store.root == second.store.root
    return first, second


def by_invocation(store: RunStore) -> dict[str, list]:
    out: dict[str, list] = {}
    for line in store.read_timings():
        out.setdefault(line.invocation, []).append(line)
    return out


def test_each_invocation_times_each_stage_and_a_resume_reuses(resumed):
    first, _ = resumed
    invs = list(by_invocation(first.store).values())
    assert len(invs) == 2  # the run and its resume, each its own invocation
    for lines in invs:
        stages = [x for x in lines if isinstance(x, StageTiming)]
        assert [x.stage for x in stages] == STAGES_RUN
        end = lines[-1]  # the invocation's own line comes last, once
        assert isinstance(end, InvocationTiming) and end.command == "run"
        assert sum(isinstance(x, InvocationTiming) for x in lines) == 1
        assert sum(x.wall_s for x in stages) <= end.wall_s
        for x in stages:
            assert 0 <= x.compute_s <= x.wall_s, x
    run_, resume = ({x.stage: x for x in lines if isinstance(x, StageTiming)} for lines in invs)
    assert (run_["respond"].computed, run_["respond"].reused, run_["respond"].failed) == (12, 0, 0)
    assert (run_["features"].computed, run_["features"].reused) == (12, 0)
    assert run_["respond"].compute_s > 0 and run_["features"].compute_s > 0
    # the resume: every record reused, nothing computed (its compute is building the stage)
    for name in ("respond", "features"):
        assert (resume[name].computed, resume[name].reused, resume[name].failed) == (0, 12, 0)
        assert resume[name].records_s == 0
    # the features stage computed what its records say they took
    feats = [json.loads(x) for x in first.store.stage_path("features").read_text().splitlines()]
    assert len(feats) == 12 and all(f["elapsed_s"] >= 0 for f in feats)
    per_sample: dict[str, float] = {}
    for f in feats:
        per_sample[f["sample_id"]] = per_sample.get(f["sample_id"], 0.0) + f["elapsed_s"]
    assert all(v > 0 for v in per_sample.values())  # each sample's measurement took its time
    assert sum(per_sample.values()) == pytest.approx(run_["features"].records_s, abs=1e-3)
    # the manifest's history names each invocation whose lines are in timings.jsonl
    history = first.store.read_manifest()["history"]
    assert [h["invocation"] for h in history] == list(by_invocation(first.store))


def test_the_block_has_shares_and_the_harness_overhead(resumed):
    first, _ = resumed
    block = timings_block(first.store.read_timings())
    run_inv = block["invocations"][0]
    assert run_inv["command"] == "run" and run_inv["wall_s"] > 0
    compute = sum(s["compute_s"] for s in run_inv["stages"])
    assert run_inv["harness_s"] == pytest.approx(run_inv["wall_s"] - compute, abs=1e-3)
    assert 0 < run_inv["harness_share"] < 1
    for st in run_inv["stages"]:
        assert st["share"] == pytest.approx(st["wall_s"] / run_inv["wall_s"], abs=1e-4)


def test_report_timings_prints_the_table_and_the_files_stay_deterministic(resumed, capsys):
    first, _ = resumed
    root = first.store.root
    files = {n: (root / n).read_bytes() for n in ("report.json", "report.md", "report.csv")}
    assert main(["--no-progress", "report", str(root), "--timings"]) == 0
    md = capsys.readouterr().out
    table = md[md.index("## Timings") :]
    assert "| stage | wall s | compute s | computed | reused | failed | share of wall |" in table
    assert table.count("| harness overhead |") == 2  # the run and the resume
    assert "| respond |" in table and "| features |" in table and "| 0 | 12 | 0 |" in table
    assert main(["--no-progress", "report", str(root), "--timings", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [inv["command"] for inv in printed["timings"]["invocations"]] == ["run", "run"]
    # the report files never carry timings; rewritten by `report`, they are the same bytes
    assert {n: (root / n).read_bytes() for n in files} == files
    assert b"Timings" not in files["report.md"] and b"timings" not in files["report.json"]
    assert {k: v for k, v in printed.items() if k != "timings"} == json.loads(files["report.json"])
    assert main(["--no-progress", "report", str(root), "--timings", "--format", "csv"]) == 2
    assert "--timings prints with --format md or json" in capsys.readouterr().err


def test_a_run_folder_from_before_timings_still_reports(resumed, tmp_path, capsys):
    first, _ = resumed
    old = tmp_path / "old"
    shutil.copytree(first.store.root, old)
    (old / "timings.jsonl").unlink()
    for name in ("respond", "features"):  # records as an older stylebench wrote them
        path = old / f"{name}.jsonl"
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        if name != "respond":
            for d in lines:
                d.pop("elapsed_s")
        path.write_text("".join(json.dumps(d, sort_keys=True) + "\n" for d in lines))
    rep = report_only(old).report
    assert rep["cells"] == json.loads((first.store.root / "report.json").read_text())["cells"]
    assert main(["--no-progress", "report", str(old), "--timings"]) == 0
    table = capsys.readouterr().out.split("## Timings")[1]
    assert "no timings recorded" in table and "| — | — | — | — | — | — | — |" in table
    assert timings_block([])["invocations"] == []


def test_fingerprints_ignore_the_records_timings(tmp_path):
    """The same inputs with other elapsed times plan the same keys, and a stored record with
    another elapsed time is the current one (reused, never recomputed)."""
    reply = RespondRecord("s", 1, "ok", "rfp", text="hi", audio="a.wav", sha256="ab", elapsed_s=1.0)
    tr = TranscriptRecord("s", 1, "ok", "tfp", text="hi", elapsed_s=0.5)

    def fps(reply, tr):
        from stylebench.records import Sample, UserTurn

        turn = UserTurn("x", "x.wav", 16000, "00")
        sample = Sample("s", "v1", "volume", "intensify", "en", "v", "c", (turn,) * 3)
        stage = FeaturesStage(
            RunStore(tmp_path), [sample], {("s", 1): reply}, {("s", 1): tr}, FeatureConfig()
        )
        return [u.fps for u in stage.plan()]

    slow = (dataclasses.replace(reply, elapsed_s=99.0), dataclasses.replace(tr, elapsed_s=42.0))
    assert fps(reply, tr) == fps(*slow)
    store = RunStore(tmp_path)
    rec = FeatureRecord("s", 1, "ok", "ffp", values={"x": 1.0}, elapsed_s=3.25)
    store.append("features", rec)
    assert store.load("features", {("s", 1): "ffp"})[("s", 1)] == rec
    assert dataclasses.replace(rec, elapsed_s=0.1).fp == rec.fp


class TwoRecordStage:
    """A stand-in stage: one unit whose first record takes at least 50 ms (a sleep), whose
    second comes at once."""

    records, name, errors, unit = FEATURES, "features", (), "sample"

    def plan(self):
        return [Unit("s", {("s", 1): "f1", ("s", 2): "f2"})]

    def compute(self, unit, done):
        if done.get(("s", 1)) is None:
            time.sleep(0.05)
            yield FeatureRecord("s", 1, "ok", "f1", values={"x": 1.0})
        if done.get(("s", 2)) is None:
            yield FeatureRecord("s", 2, "ok", "f2", values={"x": 2.0})


def test_the_loop_times_records_and_keeps_a_record_timed_where_it_was_computed(tmp_path):
    store = RunStore(tmp_path)
    res = run_stage(store, TwoRecordStage())
    assert res.counts == {"ok": 2, "error": 0, "skipped": 0}
    stored = store.load("features", {("s", 1): "f1", ("s", 2): "f2"})
    assert stored[("s", 1)].elapsed_s >= 0.05  # the first record carries the unit's work
    assert res.compute_s >= 0.05
    assert res.records_s == pytest.approx(sum(r.elapsed_s for r in stored.values()), abs=1e-3)
    again = run_stage(store, TwoRecordStage())  # a resume: reused, nothing timed
    assert again.counts["skipped"] == 2 and again.records_s == 0
    # only the time inside the iterator counts, not the consumer's (appending, fsync)
    out = []
    for rec in timed(FeatureRecord("s", k, "ok", f"f{k}") for k in (1, 2)):
        out.append(rec)
        time.sleep(0.3)
    assert all(r.elapsed_s < 0.3 for r in out)
    # a record timed already (respond's model time, a pool worker's clock) keeps its time
    worker = FeatureRecord("s", 1, "ok", "f1", elapsed_s=7.5)
    (kept,) = timed([worker])
    assert kept is worker


def test_timing_lines_are_validated_and_a_killed_invocation_reads_as_interrupted(tmp_path):
    store = RunStore(tmp_path)
    inv = Invocation("run", store)
    with inv.stage("respond") as clock:
        clock.computed = 3
    # killed here: no invocation line; the stage done is kept
    block = timings_block(store.read_timings())
    (entry,) = block["invocations"]
    assert entry["stages"][0]["stage"] == "respond" and entry["stages"][0]["computed"] == 3
    assert entry["wall_s"] is None and entry["harness_share"] is None
    with pytest.raises(RecordError):
        validate_record(StageTiming("i", "run", "x", "t", float("nan"), 0, 0, 0, 0, 0, 0))
    with store.timings_path.open("a") as fh:  # a hand-edited or foreign line is skipped
        fh.write('{"kind": "lunch", "invocation": "x"}\n{"torn": \n')
    assert len(store.read_timings()) == 1
