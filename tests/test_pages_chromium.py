"""compare.html with 3 and 10 runs, and a run's report.html, in headless Chromium (Debian's, driven
by Playwright as the listening-test page is): no console error, every figure loaded, every audio
link resolves, model text stays text.

The runs: one real neutral run on the small set (pitch, English, 1 sample per cell, no ASR), with
markup in one reply; ``compare`` runs reference and shuffled beside it (3 runs). The 10 runs are
copies of those three folders loaded under ten labels: the pages only need run folders with
replies and audio, not ten different models, so no more pipeline runs are made.
"""

from __future__ import annotations

import dataclasses
import shutil
import urllib.parse
from pathlib import Path

import pytest

from stylebench.commands.runs import run as run_pipeline
from stylebench.compare.build import compare_runs
from stylebench.compare.command import compare_command, write_comparison
from stylebench.compare.load import load_run
from stylebench.config import make_config
from stylebench.ratings.export import run_replies

pytest.importorskip("statsmodels")
pytest.importorskip("matplotlib")
XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"
FIGURES = ("vsp.svg", "vsp_direction.svg", "change-pitch.svg")


@pytest.fixture(scope="module")
def pages(small_set, tmp_path_factory):
    out = tmp_path_factory.mktemp("pages")
    cfg = make_config(
        model="neutral",
        dim="pitch",
        lang="en",
        limit=1,
        asr="none",
        vad="energy",
        judge="offline",
        n_boot=50,
        dialogues=str(small_set),
        out=str(out),
    )
    store = run_pipeline(cfg, progress=False).store
    first = min(run_replies(store)[1].values(), key=lambda r: (r.sample_id, r.turn))
    store.append("respond", dataclasses.replace(first, text=XSS + " " + first.text))
    from stylebench.commands.runs import report_only

    report_only(store.root)  # the page again, with the markup in its reply
    _, _, three = compare_command([store.root], out=out / "cmp3", n_boot=50)
    rows = sorted(p for p in out.iterdir() if (p / "manifest.json").is_file())
    assert len(rows) == 3
    copies = []
    for k in range(10):
        dst = out / "ten" / f"run-{k}"
        shutil.copytree(rows[k % 3], dst)
        copies.append(load_run(dst, label=f"model-{k}" if k else XSS))
    result = compare_runs(copies, n_boot=50)
    _, ten = write_comparison(result, copies, out / "cmp10")
    return {
        "three": three / "compare.html",
        "ten": ten / "compare.html",
        "report": store.root / "report.html",
        "shots": out,
    }


def _check_page(page_path: Path, chromium: str, shot: Path) -> dict:
    """Open the page; every figure and every audio file loaded; what the page shows."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(page_path.as_uri())
        images = page.evaluate(
            """() => Array.from(document.images).map(i => ({
                name: i.getAttribute('data-figure'), ok: i.complete && i.naturalWidth > 0 }))"""
        )
        sources = page.evaluate(
            "() => Array.from(document.querySelectorAll('audio')).map(a => a.getAttribute('src'))"
        )
        loaded = page.evaluate(
            """() => Promise.all(Array.from(document.querySelectorAll('audio')).map(a =>
                new Promise(done => {
                  a.addEventListener('loadedmetadata', () => done(a.duration), {once: true});
                  a.addEventListener('error', () => done(-1), {once: true});
                  a.preload = 'metadata'; a.load(); })))"""
        )
        page.screenshot(path=str(shot), full_page=False)
        text = page.text_content("body") or ""
        scripts = page.locator("script").count()
        browser.close()
    return {
        "errors": errors,
        "images": images,
        "sources": sources,
        "loaded": loaded,
        "text": text,
        "scripts": scripts,
    }


def _audio_on_disk(page_path: Path, sources: list[str]) -> list[str]:
    return [s for s in sources if not (page_path.parent / urllib.parse.unquote(s)).is_file()]


@pytest.mark.parametrize("which", ["three", "ten"])
def test_comparison_page_loads_every_figure_and_audio(pages, which, chromium_path):
    path = pages[which]
    seen = _check_page(path, chromium_path, pages["shots"] / f"{which}.png")
    assert seen["errors"] == []
    figures = [i for i in seen["images"] if i["name"]]
    assert {i["name"] for i in figures} >= set(FIGURES)
    assert all(i["ok"] for i in seen["images"]), seen["images"]
    assert all((path.parent / "figures" / i["name"]).is_file() for i in figures)
    n_models = 3 if which == "three" else 10
    # each model's samples: 2 cells (pitch, both directions) x 2 pairs x 1 sample x 2 turns
    assert len(seen["sources"]) == n_models * 2 * 2 * 2
    assert _audio_on_disk(path, seen["sources"]) == []
    assert min(seen["loaded"]) > 0.5  # every file decoded: seconds of speech, none failed
    assert XSS in seen["text"] and seen["scripts"] == 1


def test_run_page_shows_its_figure_tables_and_audio(pages, chromium_path):
    path = pages["report"]
    seen = _check_page(path, chromium_path, pages["shots"] / "report.png")
    assert seen["errors"] == []
    assert [i["name"] for i in seen["images"]] == ["trajectories.png"]
    assert all(i["ok"] for i in seen["images"])
    assert len(seen["sources"]) == 2 * 2 * 2  # 2 cells x 2 pairs x 2 turns
    assert _audio_on_disk(path, seen["sources"]) == []
    assert min(seen["loaded"]) > 0.5
    assert XSS in seen["text"] and seen["scripts"] == 1
    assert "direction-only % [95% CI]" in seen["text"]
