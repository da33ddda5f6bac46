"""The judge stage, SRD/MRD, the gate and their wiring into run / score / report.

Two named stand-ins keep these tests fast and about the plumbing, not about any judge's quality:
``TextASRStandIn`` (instead of Whisper: returns the text each reply was synthesised from) and
``OverlapJudgeStandIn`` (instead of an LLM judge: word/character overlap rules, stated below).
The offline judge's own end-to-end gate test is in test_judge_gate_offline.py.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from standins.judge import (
    OverlapJudgeStandIn,
    TextASRStandIn,
    cfg_for,
    copy_of,
    latest,
)

from stylebench.commands.runs import rescore, run
from stylebench.metrics.asr.transcript import Transcript
from stylebench.metrics.judges.base import JudgeError
from stylebench.stages.judge import MRD_TURN, SRD_TURN


def test_stage_keys_report_and_resume(small_set, tmp_path, standins, reference_run):
    res, calls = reference_run
    recs = latest(res.store, "judge")
    ids = {k[0] for k in recs}
    assert len(ids) == 2 and len(recs) == 4
    assert {recs[(i, SRD_TURN)].kind for i in ids} == {"srd"}
    assert {recs[(i, MRD_TURN)].kind for i in ids} == {"mrd"}
    assert all(r.label == "relevant" and r.backend == "overlap-standin" for r in recs.values())
    rep = res.report
    assert (rep["srd"], rep["mrd"], rep["eligible"]) == (100.0, 100.0, True)
    assert rep["srd_ci"] == [100.0, 100.0] and rep["judge"]["backend"] == "overlap-standin"
    assert rep["relevance"]["mrd"]["n_judged"] == 2 and res.counts["judge"]["ok"] == 4
    assert res.store.read_manifest()["judge"] == {
        "backend": "overlap-standin",
        "model": "overlap-v1",
    }
    assert any("approximation of the paper's judge (Qwen3-4B-Instruct)" in n for n in rep["notes"])
    assert calls == 4
    copy_of(res, tmp_path)
    again = run(cfg_for(small_set, tmp_path), progress=False)  # resume the copy: nothing to judge
    assert again.counts["judge"]["skipped"] == 4 and again.counts["judge"]["ok"] == 0
    assert OverlapJudgeStandIn.calls == 0 and again.report["mrd"] == 100.0


def test_rejudge_changes_only_judge_records_and_never_calls_the_model(
    tmp_path, standins, monkeypatch, reference_run
):
    from stylebench.model_wrappers.embedded import reference
    from stylebench.stages import transcribe

    first = SimpleNamespace(
        store=copy_of(reference_run[0], tmp_path), report=reference_run[0].report
    )
    frozen = {
        s: first.store.stage_path(s).read_bytes() for s in ("respond", "transcribe", "features")
    }
    judged = first.store.stage_path("judge").read_bytes()

    def boom(*a, **k):
        raise AssertionError("a model or the ASR was called while re-judging")

    monkeypatch.setattr(reference.ReferenceModel, "respond_scripted", boom)
    monkeypatch.setattr(transcribe, "make_asr", boom)
    again = rescore(
        first.store.root, {"judge": "overlap-standin", "judge_model": "overlap-v2"}, progress=False
    )
    assert {s: first.store.stage_path(s).read_bytes() for s in frozen} == frozen
    after = first.store.stage_path("judge").read_bytes()
    assert after.startswith(judged) and len(after.splitlines()) == 8  # 4 new records appended
    assert again.report["judge"]["model"] == "overlap-v2" and again.counts["judge"]["ok"] == 4
    assert again.report["cells"] == first.report["cells"]  # style scores untouched
    back = rescore(first.store.root, {"judge_model": "overlap-v1"}, progress=False)
    assert back.counts["judge"]["ok"] == 0  # v1's verdicts are still in the run folder


def test_cli_rejudges_with_the_http_backend(tmp_path, standins, monkeypatch, capsys, reference_run):
    """`stylebench score RUN --judge openai ...` against a loopback chat server, then `report`."""
    from test_judge_openai import ChatServer

    from stylebench.cli import main
    from stylebench.model_wrappers.embedded import reference

    first = SimpleNamespace(
        store=copy_of(reference_run[0], tmp_path), report=reference_run[0].report
    )
    frozen = {
        s: first.store.stage_path(s).read_bytes() for s in ("respond", "transcribe", "features")
    }
    monkeypatch.setattr(reference.ReferenceModel, "respond_scripted", lambda *a, **k: 1 / 0)
    srv = ChatServer()
    srv.content = '{"label": "irrelevant", "reason": "stand-in server says so"}'
    try:
        argv = [
            "--no-progress",
            "score",
            str(first.store.root),
            "--judge",
            "openai",
            "--judge-model",
            "standin-judge",
            "--judge-url",
            srv.url,
            "--format",
            "json",
        ]
        assert main(argv) == 0
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()
    assert len(srv.bodies) == 4  # 2 samples x (SRD, MRD)
    capsys.readouterr()
    assert main(["report", str(first.store.root), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["judge"]["backend"] == "openai" and rep["judge"]["model"] == "standin-judge"
    assert (rep["srd"], rep["mrd"], rep["srd_ci"], rep["mrd_ci"], rep["eligible"]) == (
        0.0,
        0.0,
        [0.0, 0.0],
        [0.0, 0.0],
        False,
    )
    assert {s: first.store.stage_path(s).read_bytes() for s in frozen} == frozen
    assert rep["cells"] == first.report["cells"]
    manifest = first.store.read_manifest()
    assert manifest["judge"]["prompts"]["srd"]["name"] == "srd_v1.txt"
    assert manifest["judge"]["url"] == srv.url and "api_key" not in json.dumps(manifest).replace(
        "api_key_env", ""
    )


def test_shuffled_is_not_eligible_and_its_cells_are_marked(small_set, tmp_path, standins):
    res = run(cfg_for(small_set, tmp_path, model="shuffled"), progress=False)
    rep = res.report
    assert rep["eligible"] is False and rep["mrd"] == 0.0 and rep["srd"] == 100.0
    assert all(c["eligible"] is False for c in rep["relevance"]["by_cell"])
    assert len(rep["cells"]) == 4 and all(c["n_ok"] == c["n"] == 1 for c in rep["cells"])
    md = (res.store.root / "report.md").read_text(encoding="utf-8")
    assert "Not eligible for style scores" in md.split("## volume")[0]
    rows = [
        r
        for r in md.split("## volume")[1].split("##")[0].splitlines()
        if r.startswith("| ") and ("intensify" in r or "attenuate" in r)
    ]
    assert len(rows) == 4 and all(
        r.count("✗") == 3 for r in rows
    )  # VSP, its direction-only rate, SVD
    assert "## Relevance (judge)" in md and "NOT eligible" in md
    csv = (res.store.root / "report.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].endswith(",eligible") and all(r.endswith(",false") for r in csv[1:])
    filtered = rescore(res.store.root, {"filter_mrd": True}, progress=False).report
    assert filtered["relevance"]["n_excluded"] == 2 and filtered["cells"] == []
    assert json.loads((res.store.root / "report.json").read_text())["eligible"] is False


def test_unparseable_and_failed_verdicts_are_counted_apart(
    small_set, tmp_path, standins, monkeypatch
):
    from stylebench.stages import transcribe

    class Marking(TextASRStandIn):
        """Marks the 1st transcript GARBLE and the 4th OUTAGE (call order: sample 1's turn 1,
        then sample 2's turn 1): one unparseable and one failed verdict for SRD and for MRD."""

        n = 0

        def transcribe(self, wave, sr, lang):
            tr = super().transcribe(wave, sr, lang)
            self.n += 1
            mark = {1: " GARBLE", 4: " OUTAGE"}.get(self.n, "")
            return Transcript(tr.text + mark, lang, (), "x", "y", ())

    monkeypatch.setattr(transcribe, "make_asr", lambda b, m, **options: Marking(tmp_path))
    res = run(cfg_for(small_set, tmp_path), progress=False)
    recs = latest(res.store, "judge")
    for turn, kind in ((SRD_TURN, "srd"), (MRD_TURN, "mrd")):
        got = res.report["relevance"][kind]
        mine = [r for r in recs.values() if r.turn == turn]
        n_garbled = sum(r.label == "unparseable" for r in mine)
        n_out = sum(r.status == "error" for r in mine)
        assert (got["n_unparseable"], got["n_error"]) == (n_garbled, n_out)
        assert got["n_judged"] == got["n"] - n_garbled - n_out == len(mine) - n_garbled - n_out
    errors = [r for r in recs.values() if r.status == "error"]
    unparseable = [r for r in recs.values() if r.label == "unparseable"]
    assert (len(errors), len(unparseable)) == (2, 2)  # see Marking
    assert all(r.error.startswith("JudgeError") for r in errors)
    assert all(r.label == "" for r in errors)
    before = len(res.store.stage_path("judge").read_text().splitlines())
    # failures are retried on resume, unparseable verdicts kept; here the retried ones all fail
    # again, which the stage treats as a systematic failure and stops on
    with pytest.raises(JudgeError, match="every request of the first batch failed"):
        rescore(res.store.root, {}, progress=False)
    assert len(res.store.stage_path("judge").read_text().splitlines()) == before + len(errors)
