"""The captioning probe end to end, offline: features captioner + lexicon judge on the
calibration rows (reference near 100, neutral near 0: circular by construction), resume and
re-scoring without re-captioning, and the self-captioning warning."""

from __future__ import annotations

import json

import pytest
from standins.judge import cfg_for

from stylebench.commands.runs import rescore, run
from stylebench.config import make_config
from stylebench.stages.caption import self_caption_warning

OFFLINE = {
    "dim": "pitch",
    "captioner": "features",
    "caption_judge": "lexicon",
    "judge": "none",
    "asr": "none",
}


@pytest.fixture(scope="module")
def runs(small_set, tmp_path_factory):
    root = tmp_path_factory.mktemp("caption")
    return {
        m: run(cfg_for(small_set, root, model=m, **OFFLINE), progress=False)
        for m in ("reference", "neutral")
    }


def _lines(store, stage):
    return store.stage_path(stage).read_text().splitlines()


def test_reference_caption_vsp_is_100_and_neutral_0_and_labelled_circular(runs):
    for model, want in (("reference", 100.0), ("neutral", 0.0)):
        block = runs[model].report["captions"]
        assert (
            block["circular"] is True
            and block["captions"]["n_ok"] == block["captions"]["n_total"] == 6
        )
        assert [c["vsp"] for c in block["cells"]] == [want] * 4, model
        assert all(c["cannot_tell_rate"] == 0.0 for c in block["cells"])
        assert any("CIRCULAR" in n for n in runs[model].report["notes"])
        md = (runs[model].store.root / "report.md").read_text()
        assert "## Captioning probe" in md and "**CIRCULAR**" in md
    neutral = runs["neutral"].report["captions"]
    assert all(c["tie_rate"] == 1.0 for c in neutral["cells"])  # jitter stays below 1 st: "same"
    ref = runs["reference"].report["captions"]
    assert ref["agreement_acoustic"]["pitch"]["direction"]["kappa"] == 1.0
    assert ref["groundedness"]["pitch"]["rho_change_vs_turn1"] > 0.9


def test_records_resume_and_rescoring_never_recaptions(runs, tmp_path):
    import shutil

    res = runs["reference"]
    dest = tmp_path / res.store.root.name
    shutil.copytree(res.store.root, dest)
    recs = [json.loads(x) for x in _lines(res.store, "caption")]
    assert {(r["sample_id"], r["turn"]) for r in recs} and all(
        r["status"] == "ok" and r["backend"] == "features" for r in recs
    )
    assert recs[0]["prompt"] == "caption_pitch_v1.txt"
    verdicts = [json.loads(x) for x in _lines(res.store, "caption_judge")]
    assert sorted({r["turn"] for r in verdicts}) == [2, 3]
    before = {s: len(_lines(res.store, s)) for s in ("caption", "caption_judge")}
    out = rescore(
        dest, {"pitch_st": 3.0}, progress=False
    )  # new threshold: scores change, captions do not
    assert (
        out.counts["caption"]["ok"] == 0 and out.counts["caption"]["skipped"] == before["caption"]
    )
    assert out.counts["caption_judge"]["ok"] == 0
    assert {s: len((dest / f"{s}.jsonl").read_text().splitlines()) for s in before} == before


def test_a_captioner_that_is_the_subject_model_is_warned_about():
    cfg = make_config(model="qwen-omni", captioner="openai", caption_model="Qwen/Qwen2.5-Omni-7B")
    warn = self_caption_warning(cfg, {"name": "qwen-omni", "model": "Qwen/Qwen2.5-Omni-7B"})
    assert warn and "subject model" in warn and "captioner" in warn
    assert self_caption_warning(cfg, {"model": "Qwen/Qwen2-Audio-7B"}) is None
    cfg = make_config(
        model="x",
        captioner="openai",
        caption_model="cap",
        caption_judge="openai",
        caption_judge_model="/w/Qwen2.5-Omni-7B/",
    )
    assert "caption judge" in self_caption_warning(cfg, {"path": "/w/Qwen2.5-Omni-7B"})


def test_backend_options_it_does_not_take_are_refused_with_the_name():
    from stylebench.metrics.captions.base import CAPTION_JUDGES, CAPTIONERS
    from stylebench.stages.caption import build

    with pytest.raises(ValueError, match="'openai' captioner.*bogus"):
        build(CAPTIONERS, "openai", "m", "http://127.0.0.1:1/v1", {"bogus": "1"}, "captioner")
    with pytest.raises(ValueError, match="takes no --caption-model"):
        build(CAPTIONERS, "features", "m", None, {}, "captioner")
    with pytest.raises(ValueError, match="'lexicon' caption judge takes no --caption-judge-prompt"):
        build(CAPTION_JUDGES, "lexicon", None, None, {"prompt": "x.txt"}, "caption judge")
    with pytest.raises(ValueError, match="--caption-judge-model"):
        build(CAPTION_JUDGES, "openai", None, "http://127.0.0.1:1/v1", {}, "caption judge")
