"""The judge stage's inputs: no ASR, the text channel, the auto fallback, an unreachable judge.

Uses the named stand-ins of tests/standins/judge.py (not Whisper, not an LLM judge).
"""

from __future__ import annotations

import pytest
from standins.judge import (
    cfg_for,
    copy_of,
    latest,
)

from stylebench.commands.runs import report_only, rescore, run
from stylebench.config import make_config


def test_asr_none_skips_a_transcript_judge_with_a_note(small_set, tmp_path, standins):
    res = run(cfg_for(small_set, tmp_path, asr="none", judge_input="transcript"), progress=False)
    rep = res.report
    assert rep["eligible"] is None and rep["mrd"] is None and "judge" not in res.counts
    assert "--asr none" in rep["judge"]["skipped"]
    assert any("relevance gate not applied" in n for n in rep["notes"])
    assert not res.store.stage_path("judge").exists()
    assert "Eligibility unknown" in (res.store.root / "report.md").read_text(encoding="utf-8")
    assert report_only(res.store.root).report["eligible"] is None
    # the default (auto) judges the text channel when there is no ASR, and says so
    auto = run(cfg_for(small_set, tmp_path / "auto", asr="none"), progress=False).report
    assert auto["eligible"] is True and auto["judge"]["sources"] == {"text": 2}
    assert any("no ASR (--asr none)" in n for n in auto["notes"])


def test_auto_input_falls_back_to_the_text_channel_for_unfaithful_transcripts(
    tmp_path, standins, reference_run
):
    from stylebench.config import resolve_config
    from stylebench.dialogues.sets import load_set
    from stylebench.records import TranscriptRecord
    from stylebench.stages.judge import sample_inputs

    store = copy_of(reference_run[0], tmp_path)
    cfg = resolve_config({}, base=store.read_manifest()["config"])
    replies = latest(store, "respond")
    replied = {sid for sid, _ in replies}
    samples = [s for s in load_set(cfg.dialogues)[0] if s.id in replied]
    assert len(samples) == 2
    heard = latest(store, "transcribe")
    assert {src for src, _ in sample_inputs(samples, replies, heard, 0.3).values()} == {
        "transcript"
    }
    # the ASR mishears turn 3 of the first sample: a later record for the same reply wins
    sid = samples[0].id
    old = heard[(sid, 3)]
    store.append(
        "transcribe", TranscriptRecord(sid, 3, "ok", old.fp, text="bananas in pyjamas", lang="en")
    )
    heard = latest(store, "transcribe")
    texts = {k: r.text for (s_, k), r in replies.items() if s_ == sid}
    auto = sample_inputs(samples, replies, heard, 0.3)
    assert auto[sid] == ("text_fallback", texts) and auto[samples[1].id][0] == "transcript"
    assert (
        sample_inputs(samples, replies, heard)[sid][1][3] == "bananas in pyjamas"
    )  # transcript mode
    rep = rescore(store.root, {"judge_input": "auto"}, progress=False).report
    assert rep["judge"]["sources"] == {"text_fallback": 1, "transcript": 1}
    assert any("text channel for 1 whose transcripts disagreed" in n for n in rep["notes"])
    assert rep["mrd"] == 100.0  # judged on what the model wrote, not on the misheard transcript
    forced = rescore(store.root, {"judge_input": "transcript"}, progress=False).report
    assert forced["mrd"] == 50.0  # the overlap stand-in sees the misheard turn 3


def test_unreachable_judge_stops_with_a_clear_cli_error(tmp_path, standins, capsys, reference_run):
    import socket

    from stylebench.cli import main

    store = copy_of(reference_run[0], tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    argv = [
        "--no-progress",
        "score",
        str(store.root),
        "--judge",
        "openai",
        "--judge-model",
        "m",
        "--judge-url",
        f"http://127.0.0.1:{port}/v1",
        "--judge-arg",
        "retries=0",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "every request of the first batch failed" in err and "Traceback" not in err
    recs = [r for r in store.iter_raw("judge") if r["backend"] == "openai"]
    assert len(recs) == 4 and all(
        r["status"] == "error" and "failed after 1 try" in r["error"] for r in recs
    )


def test_text_channel_input_needs_no_asr(small_set, tmp_path, standins):
    res = run(cfg_for(small_set, tmp_path, asr="none", judge_input="text"), progress=False)
    rep = res.report
    assert (rep["srd"], rep["mrd"], rep["eligible"]) == (100.0, 100.0, True)
    assert rep["judge"]["input"] == "text" and not res.store.stage_path("transcribe").exists()
    assert any("text channel" in n for n in rep["notes"])
    texts = {(r.sample_id, r.turn): r.text for r in latest(res.store, "respond").values()}
    req_fp = {k: r.fp for k, r in latest(res.store, "judge").items()}
    assert len(req_fp) == 4 and all((sid, 1) in texts for sid, _ in req_fp)
    with pytest.raises(ValueError, match="judge-input"):
        make_config(judge_input="audio")
