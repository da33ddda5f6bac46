"""compare.html with 3 and 10 runs, and a run's report.html, in headless Chromium (Debian's, driven
by Playwright as the listening-test page is): no console error, every figure loaded, every audio
link resolves, model text stays text. compare.html holds no audio: each cell's value links to a
page of that cell's samples (``samples/``), and every one of those pages is opened and checked.

The runs: the calibration comparison that tests/test_compare.py reads (tests/calibration_runs.py,
built once per session, read-only): one real neutral run on the small set (every acoustic dim,
English, 1 sample per cell, no ASR) with markup in one reply, reference and shuffled run beside it
by ``compare`` (3 runs). The 10 runs are copies of those three folders loaded under ten labels: the
pages only need run folders with replies and audio, not ten different models, so no more pipeline
runs are made.
"""

from __future__ import annotations

import shutil
import urllib.parse
from pathlib import Path

import pytest
from calibration_runs import XSS, load_comparison

from stylebench.compare.build import compare_runs
from stylebench.compare.command import write_comparison
from stylebench.compare.load import load_run
from stylebench.records import ACOUSTIC_DIMS

pytest.importorskip("statsmodels")
pytest.importorskip("matplotlib")
FIGURES = ("vsp.svg", "vsp_direction.svg", *(f"change-{dim}.svg" for dim in ACOUSTIC_DIMS))
#: the cells of each run: every acoustic dim, both directions, English
N_CELLS = len(ACOUSTIC_DIMS) * 2


@pytest.fixture(scope="module")
def pages(calibration_comparison, tmp_path_factory):
    shared = load_comparison(calibration_comparison)
    out = tmp_path_factory.mktemp("pages")  # the ten copies and the screenshots
    rows = sorted(p for p in shared["out"].iterdir() if (p / "manifest.json").is_file())
    assert len(rows) == 3
    copies = []
    for k in range(10):
        dst = out / "ten" / f"run-{k}"
        shutil.copytree(rows[k % 3], dst)
        copies.append(load_run(dst, label=f"model-{k}" if k else XSS))
    result = compare_runs(copies, n_boot=50)
    _, ten = write_comparison(result, copies, out / "cmp10")
    return {
        "three": shared["folder"] / "compare.html",
        "ten": ten / "compare.html",
        "report": shared["neutral"] / "report.html",
        "shots": out,
    }


def _check_page(page_path: Path, chromium: str, shot: Path | None) -> dict:
    """Open the page; every figure and every audio file loaded; what the page shows."""
    return _check_pages([page_path], chromium, shot)[0]


def _check_pages(paths: list[Path], chromium: str, shot: Path | None = None) -> list[dict]:
    """Open each page in one browser (a screenshot of the first into ``shot``): its console
    errors, images, audio sources and their decoded durations, links, text and scripts."""
    from playwright.sync_api import sync_playwright

    seen = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        # one tab opens every page in turn (a tab per page cost more than the pages' checks)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        for n, page_path in enumerate(paths):
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
            links = page.evaluate(
                "() => Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"
            )
            if shot is not None and n == 0:
                page.screenshot(path=str(shot), full_page=False)
            seen.append(
                {
                    "errors": list(errors),
                    "images": images,
                    "sources": sources,
                    "loaded": loaded,
                    "links": links,
                    "text": page.text_content("body") or "",
                    "scripts": page.locator("script").count(),
                }
            )
            errors.clear()
        page.close()
        browser.close()
    return seen


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
    assert seen["sources"] == [] and seen["scripts"] == 1
    assert (XSS in seen["text"]) == (which == "ten")  # a model's label; replies: sample pages
    # each model's samples: 6 cells (3 dims, both directions) x 2 pairs, a page each
    sample_pages = sorted({h for h in seen["links"] if h.startswith("samples/")})
    assert len(sample_pages) == n_models * N_CELLS * 2
    paths = [path.parent / urllib.parse.unquote(h) for h in sample_pages]
    assert all(p.is_file() for p in paths)
    shot = pages["shots"] / f"{which}-samples.png"
    sources, texts = [], []
    for page_path, sub in zip(paths, _check_pages(paths, chromium_path, shot), strict=True):
        assert sub["errors"] == [] and sub["scripts"] == 0, page_path
        assert len(sub["sources"]) == 1 * 2  # 1 sample x 2 turns
        assert _audio_on_disk(page_path, sub["sources"]) == []
        assert min(sub["loaded"]) > 0.5  # every file decoded: seconds of speech, none failed
        sources += sub["sources"]
        texts.append(sub["text"])
    assert len(sources) == n_models * N_CELLS * 2 * 2
    assert any(XSS in t for t in texts)  # the reply with markup, shown as text


def test_run_page_shows_its_figure_tables_and_audio(pages, chromium_path):
    path = pages["report"]
    seen = _check_page(path, chromium_path, pages["shots"] / "report.png")
    assert seen["errors"] == []
    assert [i["name"] for i in seen["images"]] == ["trajectories.png"]
    assert all(i["ok"] for i in seen["images"])
    assert len(seen["sources"]) == N_CELLS * 2 * 2  # 6 cells x 2 pairs x 2 turns
    assert _audio_on_disk(path, seen["sources"]) == []
    assert min(seen["loaded"]) > 0.5
    assert XSS in seen["text"] and seen["scripts"] == 1
    assert "direction-only % [95% CI]" in seen["text"]
