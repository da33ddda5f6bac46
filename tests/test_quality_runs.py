"""Speech quality (DNSMOS) through the pipeline, with the real speechmos models: every ok reply's
features carry SIG/BAK/OVRL, the report and ``compare`` give them per model and turn with the
change from turn 1, ``stylebench measure`` prints them, and ``--min-quality`` makes a low OVRL an
unscored reason on re-scoring without re-running the model or the features. The arithmetic of
the report block is checked on known numbers (no audio)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from stylebench.cli import main
from stylebench.config import make_config
from stylebench.errors import BadValue
from stylebench.metrics.validity import REASONS
from stylebench.records import FeatureRecord, Sample
from stylebench.scoring.bootstrap import bootstrap_ci
from stylebench.scoring.quality import quality_block

KEYS = ("dnsmos_sig", "dnsmos_bak", "dnsmos_ovrl")
needs_dnsmos = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("speechmos", "librosa", "onnxruntime")),
    reason="pip install 'stylebench[voice]'",
)


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@pytest.fixture(scope="module")
def runs(small_set, tmp_path_factory):
    """reference and neutral on pitch, en, one sample per direction (6 replies each), no ASR or
    judge: the stages that carry quality, and nothing else."""
    from stylebench.commands.runs import run

    out = tmp_path_factory.mktemp("quality_runs")
    roots = {}
    for model in ("reference", "neutral"):
        cfg = make_config(
            model=model,
            dim="pitch",
            lang="en",
            limit=1,
            asr="none",
            vad="energy",
            judge="none",
            n_boot=50,
            dialogues=str(small_set),
            out=str(out),
            run_id=f"q-{model}",
        )
        roots[model] = run(cfg, progress=False).store.root
    return roots


@needs_dnsmos
def test_every_ok_reply_has_quality_and_the_report_gives_it_per_turn(runs):
    root = runs["reference"]
    feats = [r for r in _lines(root / "features.jsonl") if r["status"] == "ok"]
    assert len(feats) == 6
    for r in feats:
        assert set(KEYS) <= set(r["values"]), r["values"].keys()
        assert all(1.0 <= r["values"][k] <= 5.0 for k in KEYS)
    q = json.loads((root / "report.json").read_text())["quality"]
    assert q["measured"] == 6 and "note" not in q
    by_turn = {(t["group"], t["turn"]): t for t in q["turns"]}
    for k in (1, 2, 3):
        ovrl = [r["values"]["dnsmos_ovrl"] for r in feats if r["turn"] == k]
        assert by_turn[("all", k)]["ovrl"] == pytest.approx(np.mean(ovrl), abs=1e-3)
        assert (by_turn[("all", k)]["n_ok"], by_turn[("all", k)]["n"]) == (2, 2)
    assert {c["pair"] for c in q["changes"] if c["group"] == "all"} == {"1-2", "1-3"}
    md = (root / "report.md").read_text()
    assert "## Speech quality (DNSMOS)" in md and "Δ OVRL [CI]" in md


@needs_dnsmos
def test_min_quality_rescoring_unscores_without_recomputing(runs, tmp_path):
    import shutil

    from stylebench.commands.runs import rescore

    root = tmp_path / "ref"
    shutil.copytree(runs["reference"], root)
    before = {n: (root / n).read_bytes() for n in ("respond.jsonl", "features.jsonl")}
    ovrl = {
        (r["sample_id"], r["turn"]): r["values"]["dnsmos_ovrl"]
        for r in _lines(root / "features.jsonl")
        if r["status"] == "ok"
    }
    # a gate between the replies' scores: those under it lose their score, the rest keep it
    gate = float(np.median(sorted(ovrl.values())))
    low = {k for k, v in ovrl.items() if v < gate}
    assert 0 < len(low) < len(ovrl)
    report = rescore(root, {"min_quality": gate}, progress=False).report
    for n, data in before.items():  # neither the model nor the features ran again
        assert (root / n).read_bytes() == data, n
    scores = json.loads((root / "report.json").read_text())
    cells = [c for c in scores["cells"] if c["pair"] == "1-2"]
    bad_samples = {sid for sid, k in low if k in (1, 2)}
    assert sum(c["n"] - c["n_ok"] for c in cells) == len(bad_samples)
    assert sum(c["n"] for c in cells) == 2
    assert sum(c["errors"].get(REASONS["low_quality"], 0) for c in cells) == len(bad_samples)
    assert report["n_turns_ok"] == 6 - len(low) and report["n_turns_total"] == 6
    assert "unscored: low speech quality" in (root / "report.md").read_text()
    # no gate again: every reply scored, still nothing recomputed
    rescore(root, {"min_quality": 1.0}, progress=False)
    assert json.loads((root / "report.json").read_text())["n_turns_ok"] == 6
    assert (root / "features.jsonl").read_bytes() == before["features.jsonl"]


@needs_dnsmos
def test_compare_shows_quality_per_model_and_turn(runs, tmp_path):
    from stylebench.compare.build import compare_runs
    from stylebench.compare.html import render_html
    from stylebench.compare.load import load_run
    from stylebench.compare.md import render_md

    loaded = [load_run(runs[m]) for m in ("reference", "neutral")]
    result = compare_runs(loaded, n_boot=50)
    rows = {(r["model"], r["turn"]): r for r in result["quality"]["turns"]}
    assert set(rows) == {(m, k) for m in ("neutral", "reference") for k in (1, 2, 3)}
    feats = {r.label: r.scored.records["features"] for r in loaded}
    for (m, k), row in rows.items():
        vals = [f.values["dnsmos_ovrl"] for (_, t), f in feats[m].items() if t == k]
        assert row["ovrl"] == pytest.approx(np.mean(vals), abs=1e-3)
    md = render_md(result)
    assert "## Speech quality per model and turn" in md
    assert f"| reference | 1 | {rows[('reference', 1)]['sig']:.2f} |" in md
    # a model label with markup is escaped on the page
    evil = dataclasses.replace(loaded[1], label="<b>x</b>")
    html = render_html(compare_runs([loaded[0], evil], n_boot=50), [loaded[0], evil], tmp_path)
    part = html.split('id="quality"')[1].split("</table>")[0]
    assert "&lt;b&gt;x&lt;/b&gt;" in part and "<b>x</b>" not in part


@needs_dnsmos
def test_measure_prints_quality(runs, capsys):
    wav = sorted((runs["reference"]).rglob("*.wav"))[0]
    code = main(["--no-progress", "measure", str(wav), "--asr", "none"])
    out = capsys.readouterr().out
    assert code == 0
    code = main(["--no-progress", "measure", str(wav), "--asr", "none", "--format", "json"])
    (row,) = json.loads(capsys.readouterr().out)
    assert 1.0 <= row["dnsmos_ovrl"] <= 5.0 and row["dnsmos_sig"] is not None
    head, _, first = out.splitlines()[:3]
    assert "OVRL" in head.split() and f" {row['dnsmos_ovrl']:.2f} " in first
    assert f"SIG {row['dnsmos_sig']:.2f}, BAK {row['dnsmos_bak']:.2f}, OVRL" in out


@needs_dnsmos
def test_without_speechmos_values_are_absent_with_a_note(runs, tmp_path, monkeypatch):
    import shutil

    from stylebench.commands.runs import rescore
    from stylebench.stages import registry

    root = tmp_path / "ref"
    shutil.copytree(runs["reference"], root)
    monkeypatch.setattr("stylebench.metrics.quality.available", lambda: False)
    registry._quality_available.cache_clear()
    try:
        rescore(root, {}, progress=False)  # the features are recomputed: quality is re-keyed
    finally:
        registry._quality_available.cache_clear()
    latest = {(r["sample_id"], r["turn"]): r for r in _lines(root / "features.jsonl")}
    assert len(latest) == 6 and all(r["status"] == "ok" for r in latest.values())
    assert not any(set(KEYS) & set(r["values"]) for r in latest.values())
    report = json.loads((root / "report.json").read_text())
    assert report["n_turns_ok"] == 6  # nothing else changed
    q = report["quality"]
    assert q["measured"] == 0 and "pip install 'stylebench[voice]'" in q["note"]
    assert "speech quality not measured" in (root / "report.md").read_text()


@needs_dnsmos
def test_quality_off_or_missing_leaves_values_out_and_rekeys(monkeypatch):
    from stylebench.stages import registry

    on = registry.feature_config(make_config(model="reference"))
    off = registry.feature_config(make_config(model="reference", quality=False))
    assert on.quality and not off.quality and on.fp() != off.fp()
    registry._quality_available.cache_clear()
    monkeypatch.setattr("stylebench.metrics.quality.available", lambda: False)
    try:
        missing = registry.feature_config(make_config(model="reference"))
    finally:
        registry._quality_available.cache_clear()
    assert not missing.quality and missing.fp() == off.fp()


def _feat(sid: str, turn: int, ovrl: float | None) -> FeatureRecord:
    values = {"f0_mean_agreed": 100.0 * turn}
    if ovrl is not None:
        values.update(dnsmos_sig=0.5 * ovrl + 1.0, dnsmos_bak=4.0, dnsmos_ovrl=ovrl)
    return FeatureRecord(sid, turn, "ok", "fp", values=values)


def _sample(sid: str, direction: str = "intensify") -> Sample:
    return Sample(sid, "v1", "pitch", direction, "en", "voice", "content", ("a", "b", "c"))


def test_quality_block_on_known_numbers():
    ovrl = {
        "s1": (3.0, 2.5, 2.0),
        "s2": (3.2, 3.0, 3.4),
        "s3": (2.8, None, 2.6),
        "s4": (3.1, 3.3, 2.2),
        "s5": (2.9, 2.0, 3.05),
    }
    samples = [_sample(sid) for sid in ("s1", "s2", "s4", "s5")] + [_sample("s3", "attenuate")]
    feats = {
        (sid, k): _feat(sid, k, v) for sid, vs in ovrl.items() for k, v in enumerate(vs, start=1)
    }
    q = quality_block(samples, feats, n_boot=400, seed=3)
    t = {(r["group"], r["turn"]): r for r in q["turns"]}
    assert t[("all", 1)]["ovrl"] == pytest.approx(3.0) and t[("all", 1)]["sig"] == 2.5
    assert (t[("all", 2)]["ovrl"], t[("all", 2)]["n_ok"], t[("all", 2)]["n"]) == (2.7, 4, 5)
    assert t[("pitch attenuate", 2)]["ovrl"] is None and t[("pitch attenuate", 2)]["n_ok"] == 0
    assert t[("pitch intensify", 3)]["ovrl"] == round(float(np.mean([2.0, 3.4, 2.2, 3.05])), 3)
    c = {(r["group"], r["pair"]): r for r in q["changes"]}
    d13 = [-1.0, 0.2, -0.9, 0.15, -0.2]  # turn 3 minus turn 1, in the samples' order
    assert c[("all", "1-3")]["d_ovrl"] == round(float(np.mean(d13)), 3)
    lo, hi = bootstrap_ci(d13, n_boot=400, seed=3)
    assert c[("all", "1-3")]["d_ovrl_ci"] == [round(lo, 3), round(hi, 3)]
    assert c[("all", "1-3")]["d_sig"] == round(0.5 * float(np.mean(d13)), 3)
    assert c[("all", "1-2")]["n"] == 4 and c[("all", "1-2")]["d_bak"] == 0.0
    assert c[("all", "1-2")]["d_bak_ci"] == [0.0, 0.0]
    assert q["measured"] == 14

    from stylebench.report.sections.quality import quality_markdown

    md = "\n".join(quality_markdown(q))
    # the means -0.175 / -0.35 and the CIs above, at two decimals
    assert "| all | 1-3 | -0.17 [-0.41, 0.06] | 0.00 [0.00, 0.00] | -0.35 [-0.82, 0.12] | 5 |" in md
    assert "| all | 2 | 2.35 | 4.00 | 2.70 | 4/5 |" in md
    assert "Never a gate here" in md


def test_min_quality_gate_counts_n_ok_and_n():
    from stylebench.metrics.dims.base import ScoreContext, quality_gate
    from stylebench.scoring.cells import Thresholds, score_cells
    from stylebench.scoring.turns import collect_turn_scores

    samples = [_sample("s1"), _sample("s2"), _sample("s3")]
    ovrl = {"s1": (3.0, 3.0, 3.0), "s2": (3.0, 1.9, 3.0), "s3": (3.0, 3.0, None)}
    feats = {
        (sid, k): _feat(sid, k, v) for sid, vs in ovrl.items() for k, v in enumerate(vs, start=1)
    }
    replies = {k: type("R", (), {"status": "ok"})() for k in feats}
    assert quality_gate({1: 1.0, 2: "why"}, {1: feats[("s2", 2)]}, None) == {1: 1.0, 2: "why"}
    scores = collect_turn_scores(samples, replies, feats, ScoreContext(min_quality=2.0))
    errors = {(t.sample_id, t.turn): t.error for t in scores if t.error}
    assert errors == {("s2", 2): REASONS["low_quality"], ("s3", 3): REASONS["no_quality"]}
    cells = {
        c.pair: c
        for c in score_cells(scores, thresholds=Thresholds(), n_boot=20, seed=0)
        if c.direction == "intensify"
    }
    assert (cells["1-2"].n_decided, cells["1-2"].n) == (2, 3)
    assert cells["1-2"].errors == {REASONS["low_quality"]: 1}
    free = collect_turn_scores(samples, replies, feats, ScoreContext())
    assert not [t for t in free if t.error]


@pytest.mark.parametrize("value", [7.0, 0.5, float("nan"), "abc", True, "2.5"])
def test_bad_min_quality_is_a_user_error(value):
    with pytest.raises(BadValue, match="min.quality"):
        make_config(model="reference", min_quality=value)


@pytest.mark.parametrize(
    ("value", "says"), [("7", "between 1 and 5"), ("abc", "--min-quality must be a number")]
)
def test_bad_min_quality_flag_is_one_line(value, says, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("STYLEBENCH_CACHE", str(tmp_path / "cache"))
    code = main(["--no-progress", "run", "--model", "reference", "--min-quality", value])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("stylebench: error: ") and len(err.strip().splitlines()) == 1, err
    assert says in err and "Traceback" not in err and "internal error" not in err, err
