"""Persistence runs end to end: the calibration rows on a tiny persistence set, resume, keys,
the scores' rules, and the one-line refusals (docs/persistence.md).

The models are the real embedded ones (espeak-ng voices, real style steps) and the features are
the real measures; only Whisper and the LLM judge are replaced by the named stand-ins of
tests/standins/judge.py (the reply's own text, and a word-overlap relevance rule).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stylebench.records import FeatureRecord, RespondRecord
from stylebench.scoring.cells import Thresholds
from stylebench.scoring.persistence import (
    PairedTurn,
    half_reversion,
    mean_after_first,
    score_persistence,
)

DIMS = ("speed", "volume")
N_TURNS = 3


@pytest.fixture(scope="module")
def pset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1 sample per (dim, direction) on speed and volume, English, 3 turns, espeak-ng voices."""
    from stylebench.dialogues.persistence import PersistenceSpec, build_persistence_set
    from stylebench.synth.espeak import EspeakSynth, voices_for

    out = tmp_path_factory.mktemp("pruns") / "set"
    spec = PersistenceSpec(dims=DIMS, langs=("en",), per_cell=1, voices_per_lang=1, n_turns=3)
    build_persistence_set(out, spec, EspeakSynth(), {"en": voices_for("en")}, jobs=1)
    return out


def _cfg(pset: Path, out: Path, model: str, **kw):
    from standins.judge import cfg_for

    return cfg_for(
        pset,
        out,
        model=model,
        dim=kw.pop("dim", "speed"),
        model_args={"tts_en": "espeak-ng"},
        **kw,
    )


@pytest.fixture(scope="module")
def runs(pset, tmp_path_factory):
    """reference, neutral and forgetful on both dims, built once."""
    from standins.judge import install_standins

    from stylebench.commands.runs import run

    root = tmp_path_factory.mktemp("pruns-out")
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        install_standins(mp, root)
        for model in ("reference", "neutral", "forgetful"):
            for dim in DIMS:
                out[(model, dim)] = run(_cfg(pset, root, model, dim=dim), progress=False)
    return out


def _persistence(report: dict) -> dict[tuple[str, int], float | None]:
    return {(c["direction"], c["turn"]): c["persistence"] for c in report["cells"]}


def _gated(report: dict) -> set[tuple[str, int]]:
    """Cells with no scored sample; each must be so because a reply failed the relevance gate
    (the stand-in judge's word-overlap rule misses a few on-topic answers)."""
    out = set()
    for c in report["cells"]:
        if c["n_ok"] == 0:
            assert c["errors"] and all("relevance: irrelevant" in r for r in c["errors"]), c
            out.add((c["direction"], c["turn"]))
    return out


@pytest.mark.parametrize("dim", DIMS)
def test_calibration_rows(runs, dim):
    ref = _persistence(runs[("reference", dim)].report)
    neu = _persistence(runs[("neutral", dim)].report)
    fgt = _persistence(runs[("forgetful", dim)].report)
    gated = _gated(runs[("reference", dim)].report)
    # the gate reads the replies' text, which the three models share: the same cells are gated
    assert gated == _gated(runs[("neutral", dim)].report) == _gated(runs[("forgetful", dim)].report)
    assert len(gated) <= 1 and ("intensify", 2) not in gated and ("attenuate", 2) not in gated
    for direction in ("intensify", "attenuate"):
        for k in range(1, N_TURNS + 1):
            if (direction, k) in gated:
                continue
            assert ref[(direction, k)] == 100.0, (dim, direction, k, ref)
            assert neu[(direction, k)] == 0.0, (dim, direction, k, neu)
            # forgetful keeps the style at turn 1 only: the drop is at turn 2
            assert fgt[(direction, k)] == (100.0 if k == 1 else 0.0), (dim, direction, k, fgt)
    fr = runs[("forgetful", dim)].report
    assert {h["turn"] for h in fr["half_reversion"]} == {2}
    assert {h["turn"] for h in runs[("reference", dim)].report["half_reversion"]} == {None}
    assert {h["turn"] for h in runs[("neutral", dim)].report["half_reversion"]} == {1}
    assert fr["mean_after_turn1"] == 0.0
    assert runs[("reference", dim)].report["mean_after_turn1"] == 100.0


def test_signed_difference_is_in_the_dimensions_unit(runs):
    cells = runs[("reference", "volume")].report["cells"]
    for c in cells:
        if c["n_ok"] == 0:  # gated (see test_calibration_rows)
            continue
        assert c["unit"] == "dB" and c["n_ok"] == c["n"] == 1
        sign = 1 if c["direction"] == "intensify" else -1
        assert sign * c["mean_diff"] > 2.0  # one reference step is 4 dB


def test_records_of_both_dialogues_are_keyed_apart_and_resume_asks_nothing(runs, pset, tmp_path):
    from standins.judge import install_standins, latest

    from stylebench.commands.runs import run

    res = runs[("forgetful", "speed")]
    replies = latest(res.store, "respond")
    ids = {sid for sid, _ in replies}
    assert len(ids) == 4  # 2 samples, each instructed and control
    assert {sid for sid in ids if sid.endswith("-control")} == {
        sid + "-control" for sid in ids if not sid.endswith("-control")
    }
    assert {k for _, k in replies} == {1, 2, 3}
    assert all(r.status == "ok" for r in replies.values())
    judged = latest(res.store, "judge")
    assert set(judged) == set(replies)  # SRD on every turn of both dialogues, no MRD
    assert {r.kind for r in judged.values()} == {"srd"}
    # resume: nothing is asked again, the report is the same
    with pytest.MonkeyPatch.context() as mp:
        install_standins(mp, res.store.root.parent)
        again = run(_cfg(pset, res.store.root.parent, "forgetful", dim="speed"), progress=False)
    assert again.counts["respond"] == {"ok": 0, "error": 0, "skipped": 12}
    assert again.counts["features"]["ok"] == 0 and again.counts["judge"]["ok"] == 0
    assert again.report["cells"] == res.report["cells"]
    for name in ("report.json", "report.md", "report.csv", "decay.png"):
        assert (res.store.root / name).is_file()
    assert json.loads((res.store.root / "report.json").read_text())["protocol"] == "persistence"


def _pt(sid, k, inst, ctrl, reason="", direction="intensify"):
    return PairedTurn(sid, "volume", direction, "en", k, inst, ctrl, reason)


def test_scores_count_unscored_turns_apart_and_never_as_zero():
    amp = 10 ** (3 / 20)  # +3 dB
    turns = [
        _pt("a", 1, amp, 1.0),
        _pt("b", 1, amp, 1.0),
        _pt("a", 2, amp, 1.0),
        _pt("b", 2, None, None, "control: relevance: irrelevant"),
        _pt("a", 3, 1.0, 1.0),
        _pt("b", 3, 1.0, 1.0),
    ]
    cells = {c.turn: c for c in score_persistence(turns, Thresholds(), n_boot=50)}
    assert (cells[1].persistence, cells[1].n_ok, cells[1].n) == (100.0, 2, 2)
    assert (cells[2].persistence, cells[2].n_ok, cells[2].n) == (100.0, 1, 2)
    assert cells[2].errors == {"control: relevance: irrelevant": 1}
    assert cells[3].persistence == 0.0 and cells[3].mean_diff == pytest.approx(0.0)
    assert cells[1].mean_diff == pytest.approx(3.0)
    assert half_reversion(list(cells.values())) == {("volume", "intensify", "en"): (3, 3)}
    assert mean_after_first(list(cells.values())) == pytest.approx(50.0)


def test_a_change_in_the_wrong_direction_or_under_threshold_does_not_persist():
    turns = [
        _pt("a", 1, 10 ** (-3 / 20), 1.0),  # -3 dB when louder was asked
        _pt("b", 1, 10 ** (0.5 / 20), 1.0),  # +0.5 dB: under the 1 dB threshold
        _pt("c", 1, 10 ** (-3 / 20), 1.0, direction="attenuate"),
    ]
    cells = {c.direction: c for c in score_persistence(turns, Thresholds(), n_boot=50)}
    assert cells["intensify"].persistence == 0.0 and cells["intensify"].n_ok == 2
    assert cells["attenuate"].persistence == 100.0


def test_paired_turns_gate_on_each_turns_relevance(pset):
    from stylebench.dialogues.persistence import arms_of, load_persistence_set
    from stylebench.metrics.dims.base import ScoreContext
    from stylebench.scoring.persistence import paired_turns

    samples, _ = load_persistence_set(pset)
    inst, ctrl = arms_of(next(s for s in samples if s.dim == "volume"))
    replies, features, labels = {}, {}, {}
    for arm, rms in ((inst, 0.2), (ctrl, 0.1)):
        for k in arm.turn_numbers:
            replies[(arm.id, k)] = RespondRecord(arm.id, k, "ok", "fp")
            features[(arm.id, k)] = FeatureRecord(arm.id, k, "ok", "fp", values={"rms_gated": rms})
            labels[(arm.id, k)] = "relevant"
    labels[(ctrl.id, 2)] = "irrelevant"
    del labels[(inst.id, 3)]
    ctx = ScoreContext()
    out = {t.turn: t for t in paired_turns([(inst, ctrl)], replies, features, ctx, labels)}
    assert out[1].reason == "" and out[1].instructed > out[1].control
    assert out[2].reason == "control: relevance: irrelevant" and out[2].instructed is None
    assert out[3].reason == "instructed: relevance: not judged"
    ungated = paired_turns([(inst, ctrl)], replies, features, ctx, None)
    assert all(t.reason == "" for t in ungated)


def test_user_errors_are_one_line(pset, tmp_path, capsys):
    from stylebench.cli import main as cli_main

    base = ["--no-progress", "run", "--model", "neutral", "--out", str(tmp_path), "--lang", "en"]
    for extra, says in (
        (["--set", str(pset), "--dialogues", "default"], "--set and --dialogues"),
        (["--set", str(pset), "--dim", "pitch"], "no samples for dim=pitch"),
        (["--set", str(pset), "--captioner", "features"], "--captioner"),
    ):
        assert cli_main([*base, *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err


def test_export_and_import_round_trip_scores_the_same_cells(runs, pset, tmp_path):
    """export-set writes both dialogues of every sample; replies copied from a run and imported
    score the same cells as the run itself."""
    import shutil

    from standins.judge import install_standins

    from stylebench.commands.export_set import export_set
    from stylebench.commands.importing import import_replies

    res = runs[("forgetful", "speed")]
    folder = tmp_path / "exported"
    cfg = _cfg(pset, tmp_path / "imported", "copied-forgetful", dim="speed")
    exported = export_set(cfg, folder)
    assert exported.n_samples == 4  # 2 samples x (instructed, control)
    card = json.loads((folder / "set.json").read_text())
    assert card["protocol"] == "persistence"
    assert {s["arm"] for s in card["samples"]} == {"instructed", "control"}
    for s in card["samples"]:
        assert len(s["turns"]) == N_TURNS
        for k in range(1, N_TURNS + 1):
            assert (folder / s["id"] / f"user{k}.wav").is_file()
            rec = next(
                json.loads(line)
                for line in (res.store.root / "respond.jsonl").read_text().splitlines()
                if json.loads(line)["sample_id"] == s["id"] and json.loads(line)["turn"] == k
            )
            shutil.copy(res.store.root / rec["audio"], folder / s["id"] / f"turn{k}.wav")
            (folder / s["id"] / f"turn{k}.txt").write_text(rec["text"], encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        install_standins(mp, tmp_path)
        imported = import_replies(cfg, folder, progress=False)
    assert (imported.n_ok, imported.n_total) == (12, 12)
    assert imported.report["protocol"] == "persistence"
    assert imported.report["cells"] == res.report["cells"]


def test_compare_ranks_by_persistence_after_turn_one_and_tests_each_turn(
    runs, tmp_path, capsys, standins
):
    from stylebench.cli import main as cli_main

    dirs = [str(runs[(m, "volume")].store.root) for m in ("neutral", "forgetful", "reference")]
    assert cli_main(["compare", *dirs, "--out", str(tmp_path / "cmp"), "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    board = [row["model"] for row in result["leaderboard"]]
    assert board[0] == "reference"
    scores = {row["model"]: row for row in result["leaderboard"]}
    assert scores["reference"]["mean_persistence_turns_2_on"] == 100.0
    assert scores["forgetful"]["mean_persistence_turns_2_on"] == 0.0
    assert scores["forgetful"]["by_turn"]["1"] == 100.0
    by = {(t["turn"], t["a"], t["b"]): t for t in result["tests"]}
    # forgetful and reference agree at turn 1 and part from turn 2
    assert by[(1, "forgetful", "reference")]["b_only"] == 0
    assert by[(2, "forgetful", "reference")]["b_only"] == by[(2, "forgetful", "reference")]["n"] > 0
    assert (tmp_path / "cmp" / "decay.png").is_file()
    # a persistence run and a StyleBench run are not compared
    sb = tmp_path / "sb"
    sb.mkdir()
    (sb / "manifest.json").write_text("{}")
    assert cli_main(["compare", dirs[0], str(sb)]) == 2


def test_report_and_score_read_a_stored_persistence_run(runs, capsys, tmp_path, standins):
    from stylebench.cli import main as cli_main

    res = runs[("reference", "volume")]
    assert cli_main(["--no-progress", "report", str(res.store.root), "--format", "json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["protocol"] == "persistence" and again["cells"] == res.report["cells"]
    # a StyleBench-only command names the protocol in one line
    assert cli_main(["export-ratings", str(res.store.root), "--out", str(tmp_path / "x")]) == 2
    assert "is a persistence run" in capsys.readouterr().err


def test_srd_judges_each_turn_against_its_bare_question(pset):
    """Instructed turn 1 carries the style request; the judge asks whether the reply answers the
    question, the same text the control's turn 1 is judged against."""
    from stylebench.dialogues.persistence import arms_of, load_persistence_set
    from stylebench.stages.judge import plan_requests

    samples, _ = load_persistence_set(pset)
    inst, ctrl = arms_of(samples[0])
    text = {k: f"reply {k}" for k in inst.turn_numbers}
    inputs = {inst.id: ("text", text), ctrl.id: ("text", text)}
    plan = plan_requests([inst, ctrl], inputs, {"judge": "x"})
    asked = {key: req.turns[0][0] for key, (_, req) in plan.items()}
    assert inst.turns[0].text != ctrl.turns[0].text  # turn 1 does carry the request
    for k in inst.turn_numbers:
        assert asked[(inst.id, k)] == asked[(ctrl.id, k)] == ctrl.turns[k - 1].text


def test_compare_adds_the_calibration_rows_it_lacks(runs, tmp_path, capsys, standins):
    """One model compared alone: reference and forgetful are run beside it with its stored
    settings; a second comparison resumes them and computes nothing new."""
    from stylebench.cli import main as cli_main

    one = str(runs[("neutral", "volume")].store.root)
    cal = tmp_path / "cal"
    argv = ["--no-progress", "compare", one, "--calibration-out", str(cal), "--format", "json"]
    assert cli_main([*argv, "--out", str(tmp_path / "c1")]) == 0
    first = json.loads(capsys.readouterr().out)
    assert sorted(first["models"]) == ["forgetful", "neutral", "reference"]
    assert any(n.startswith("calibration rows run") for n in first["notes"]), first["notes"]
    rows = {row["model"]: row for row in first["leaderboard"]}
    assert rows["forgetful"]["by_turn"]["1"] == 100.0
    assert rows["forgetful"]["mean_persistence_turns_2_on"] == 0.0
    assert cli_main([*argv, "--out", str(tmp_path / "c2")]) == 0
    again = json.loads(capsys.readouterr().out)
    assert any(n.startswith("calibration rows reused") for n in again["notes"])
    assert again["leaderboard"] == first["leaderboard"]
    assert cli_main([*argv[:3], "--no-calibration", "--out", str(tmp_path / "c3")]) == 2
    assert "at least two" in capsys.readouterr().err


def test_runs_measured_or_judged_differently_are_not_compared():
    from stylebench.compare.persistence import settings_differences

    a = {"measure": {"asr_model": "base", "vad": "silero"}, "judge": {"judge_cache": True}}
    b = {"measure": {"asr_model": "large-v3", "vad": "silero"}, "judge": {"judge_cache": False}}
    assert settings_differences({"a": a, "b": b}) == [
        "measure.asr_model (a: 'base', b: 'large-v3')"
    ]
    assert settings_differences({"a": a, "c": a}) == []
