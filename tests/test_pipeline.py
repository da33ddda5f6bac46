"""End-to-end runs of the embedded models on a small espeak-ng set."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from signals import speechlike

from stylebench.commands.runs import report_only, rescore, run, select_samples
from stylebench.config import make_config
from stylebench.metrics.dims.base import ScoreContext
from stylebench.model_wrappers.base import SpeechModel
from stylebench.pipeline.keys import Identity
from stylebench.pipeline.stage import run_stage
from stylebench.records import DecodeConfig, Turn
from stylebench.scoring.turns import collect_turn_scores
from stylebench.stages.features import FeaturesStage
from stylebench.stages.measure import FeatureConfig
from stylebench.stages.respond import RespondStage
from stylebench.store import RunStore

FAST = {"asr": "none", "vad": "energy", "n_boot": 200}


def untimed(path: Path) -> list[dict]:
    """A stage file's records, line by line, without ``elapsed_s`` (how long each took)."""
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert all(d["elapsed_s"] >= 0 for d in lines)
    return [{k: v for k, v in d.items() if k != "elapsed_s"} for d in lines]


def cells_by_key(report: dict) -> dict:
    return {(c["dim"], c["direction"], c["lang"], c["pair"]): c for c in report["cells"]}


@pytest.fixture(scope="module")
def calibration(small_set, tmp_path_factory):
    """reference and neutral on every acoustic dim (pitch, volume, speed: the cells of each dim
    are those of a run of that dim alone) and both languages, no ASR, built once for the module.
    Speed reads the syllables of the text channel over the VAD speech span, so pauses count (a
    floor model whose turns gain a sentence pause would show up here as "slower"); the speed
    source is read by the speed dimension only."""
    out = tmp_path_factory.mktemp("calibration")
    cfg = {"dim": "all", "dialogues": str(small_set), "out": str(out), **FAST}
    cfg["speed_source"] = "text"
    return {m: run(make_config(model=m, **cfg), progress=False) for m in ("reference", "neutral")}


@pytest.mark.parametrize("dim", ["pitch", "volume", "speed"])
def test_reference_follows_and_neutral_does_not(calibration, dim):
    ref, neu = calibration["reference"], calibration["neutral"]
    assert {c["dim"] for c in ref.report["cells"]} == {"pitch", "volume", "speed"}
    ref_cells = [c for c in ref.report["cells"] if c["dim"] == dim]
    neu_cells = [c for c in neu.report["cells"] if c["dim"] == dim]
    assert len(ref_cells) == len(neu_cells) == 8
    for c in ref_cells:
        assert c["n_ok"] == c["n"] == 2
        assert c["vsp"] == 100.0, c
    for c in neu_cells:
        assert c["vsp"] == 0.0, c
        if dim == "speed":  # turn-to-turn rate change of the floor stays under the threshold
            assert abs(c["change_mean"]) < 5.0, c
    expected_step = {"pitch": 2.0, "volume": 4.0, "speed": None}[dim]
    for c in ref_cells if expected_step else ():
        sign = 1 if c["direction"] == "intensify" else -1
        assert c["change_mean"] == pytest.approx(sign * expected_step, abs=0.35)
    manifest = ref.store.read_manifest()
    assert manifest["dialogues"]["checksum"] and manifest["model"]["name"] == "reference"
    for name in ("report.json", "report.md", "report.csv", "trajectories.png"):
        assert (ref.store.root / name).stat().st_size > 0


@pytest.fixture(scope="module")
def real_asr_runs(small_set, tmp_path_factory):
    """reference on speed, 1 sample per cell, both languages, real Whisper base: ``a`` and ``b``
    the same command twice into two folders, one reply decoded at a time; ``two`` decodes two
    replies at once on threads (``--asr-workers 2``) and has no judge."""
    out = tmp_path_factory.mktemp("real-asr")
    base = {
        "model": "reference",
        "dim": "speed",
        "limit": 1,
        "dialogues": str(small_set),
        "vad": "energy",
        "n_boot": 200,
    }
    runs = {
        name: run(make_config(out=str(out / name), asr_workers=1, **base), progress=False)
        for name in ("a", "b")
    }
    two = make_config(out=str(out / "two"), asr_workers=2, judge="none", **base)
    runs["two"] = run(two, progress=False)
    return runs


def test_speed_with_real_asr_is_reproducible(real_asr_runs):
    """Real Whisper base on both languages, twice into two folders: the same transcripts and the
    same report, byte for byte (decoding is deterministic; nothing random is left unseeded)."""
    runs = [real_asr_runs["a"], real_asr_runs["b"]]
    res = runs[0]
    for c in res.report["cells"]:
        assert c["n_ok"] == 1 and c["vsp"] == 100.0, c
    feats = [json.loads(line) for line in res.store.stage_path("features").read_text().splitlines()]
    assert feats and all(r["values"]["spm"] > 60 for r in feats)
    a, b = (r.store.root for r in runs)
    assert len(feats) == 12
    for name in ("report.json", "report.csv"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    for name in ("transcribe.jsonl", "features.jsonl"):  # all but each record's compute time
        assert untimed(a / name) == untimed(b / name), name


def test_replies_decoded_at_once_are_the_ones_decoded_one_by_one(real_asr_runs):
    """Whisper base on real synthesised replies (English and Mandarin): two workers on threads
    write the transcribe file of one worker, line for line (tests/test_asr_workers.py tests the
    threads themselves)."""
    one, two = real_asr_runs["a"], real_asr_runs["two"]
    assert one.counts["transcribe"]["ok"] == two.counts["transcribe"]["ok"] > 0
    langs = {r["lang"] for r in untimed(one.store.stage_path("transcribe"))}
    assert langs == {"en", "zh"}
    assert untimed(two.store.stage_path("transcribe")) == untimed(
        one.store.stage_path("transcribe")
    )


def test_rescore_never_calls_the_model(small_set, tmp_path, monkeypatch):
    res = run(
        make_config(
            model="reference",
            dim="volume",
            lang="en",
            dialogues=str(small_set),
            out=str(tmp_path),
            **FAST,
        ),
        progress=False,
    )
    before = res.store.stage_path("respond").read_bytes()
    from stylebench.model_wrappers.embedded import reference

    def boom(*a, **k):
        raise AssertionError("the model was called during re-scoring")

    monkeypatch.setattr(reference.ReferenceModel, "respond_scripted", boom)
    again = rescore(res.store.root, {"volume_db": 5.0}, progress=False)
    assert res.store.stage_path("respond").read_bytes() == before
    assert all(c["vsp"] == 0.0 for c in again.report["cells"])  # 4 dB steps < 5 dB threshold
    assert again.report["thresholds"]["volume_db"] == 5.0
    rep = report_only(res.store.root).report
    assert json.loads(json.dumps(rep))["model"] == "reference"


class BadAudioModel(SpeechModel):
    """Writes a different kind of broken reply for some samples; fine audio otherwise."""

    name = "bad-audio"
    KINDS = ["empty", "silent", "nan", "truncated", "text", "rate4k"]

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.n = 0

    def respond(self, history, user_turn, decode):
        self.n += 1
        path = self.tmp / f"r{self.n}.wav"
        sr = 16000
        x = speechlike(sr, 1.5, 140.0)  # a pure tone would be unscored (not speech)
        x *= 1 + 0.3 * len(history)  # louder each turn
        kind = (
            self.KINDS[(self.n - 1) // 3]
            if self.n <= 3 * len(self.KINDS) and self.n % 3 == 2
            else "ok"
        )
        if kind == "empty":
            path.write_bytes(b"")
        elif kind == "silent":
            sf.write(str(path), np.zeros(sr, np.float32), sr)
        elif kind == "nan":
            sf.write(str(path), np.full(sr, np.nan, np.float32), sr, subtype="FLOAT")
        elif kind == "truncated":
            sf.write(str(path), x, sr)
            path.write_bytes(path.read_bytes()[:4000])
        elif kind == "text":
            path.write_text("I am not audio")
        elif kind == "rate4k":
            sf.write(str(path), x[::4], 4000)
        else:
            sf.write(str(path), x, sr)
        return Turn("assistant", "hello there, how are you", str(path), sr)


def respond(store, samples, model, set_root, decode=DecodeConfig()):
    stage = RespondStage(store, samples, set_root, Identity.of(model.describe(), decode), model)
    return run_stage(store, stage)


def test_bad_replies_become_error_records(small_set, tmp_path):
    from stylebench.dialogues.sets import load_set

    samples, _ = load_set(small_set)
    cfg = make_config(dim="volume", dialogues=str(small_set))
    samples = select_samples(samples, cfg)[:8]
    store = RunStore(tmp_path / "run")
    model = BadAudioModel(tmp_path)
    replies = respond(store, samples, model, small_set)
    # audio that cannot be measured is refused when the reply arrives, as import-replies refuses
    # such a file (a re-run asks again; docs/import.md, "Which replies are errors")
    refused = sorted(
        r.error
        for r in replies.records.values()
        if r.status == "error" and "not asked" not in r.error
    )
    # each kind breaks turn 2, so turn 3 of that sample is not asked
    assert len(refused) == 6 and sum("not a readable sound file" in e for e in refused) == 2, (
        refused
    )
    assert sum("truncated wav" in e for e in refused) == 1, refused
    for needle in ("silent", "NaN", "sample rate 4000 Hz"):
        assert sum(needle in e for e in refused) == 1, (needle, refused)
    feats = run_stage(
        store, FeaturesStage(store, samples, replies.records, {}, FeatureConfig(vad="energy"))
    ).records
    errors = sorted(r.error for r in feats.values() if r.status == "error")
    assert errors == [], errors
    scores = collect_turn_scores(samples, replies.records, feats, ScoreContext())
    ok = [s for s in scores if s.value is not None]
    not_replied = sum(r.status != "ok" for r in replies.records.values())  # refused + not asked
    assert all(s.error is None for s in ok) and len(ok) == 24 - not_replied


class CrashingModel(SpeechModel):
    name = "crashy"

    def respond(self, history, user_turn, decode):
        if history:
            raise RuntimeError("CUDA out of memory (simulated)")
        raise TimeoutError("no reply within 300 s (simulated)")


def test_model_crash_is_recorded_and_retried(small_set, tmp_path):
    from stylebench.dialogues.sets import load_set

    samples, _ = load_set(small_set)
    samples = samples[:2]
    store = RunStore(tmp_path / "run")
    first = respond(store, samples, CrashingModel(), small_set)
    assert first.counts["error"] == 6
    recs = first.records
    assert "TimeoutError" in recs[(samples[0].id, 1)].error
    assert "not asked: turn 1 failed" in recs[(samples[0].id, 2)].error
    again = respond(store, samples, CrashingModel(), small_set)
    assert again.counts["error"] == 2 and again.counts["skipped"] == 0  # retried on resume


def test_unknown_model_and_bad_dim():
    with pytest.raises(ValueError, match="--dim"):
        make_config(dim="loudness")
    with pytest.raises(KeyError, match="did you mean"):
        run(make_config(model="referense"), progress=False)
