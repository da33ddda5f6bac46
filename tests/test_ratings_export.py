"""export-ratings on a real run: blinding, determinism, per-rater shuffles, attention checks."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stylebench.cli import main
from stylebench.commands.runs import run as run_pipeline
from stylebench.config import make_config
from stylebench.ratings.export import check_answers, export_ratings, run_replies
from stylebench.store import RunStore

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"


@pytest.fixture(scope="module")
def rating_run(small_set, tmp_path_factory) -> Path:
    """Reference model on volume, en, 2 samples per direction; one reply text holds markup."""
    out = tmp_path_factory.mktemp("ratings_runs")
    cfg = make_config(
        model="reference",
        dim="volume",
        lang="en",
        limit=2,
        asr="none",
        vad="energy",
        judge="none",
        n_boot=50,
        dialogues=str(small_set),
        out=str(out),
    )
    store = run_pipeline(cfg, progress=False).store
    first = min(run_replies(store)[1].values(), key=lambda r: (r.sample_id, r.turn))
    store.append("respond", dataclasses.replace(first, text=XSS + " =cmd|calc " + first.text))
    return store.root


def files_text(folder: Path) -> str:
    return "\n".join(
        p.read_text(encoding="utf-8")
        for p in sorted(folder.iterdir())
        if p.suffix in (".html", ".csv")
    )


def test_export_is_blinded(rating_run, tmp_path):
    key = export_ratings(rating_run, tmp_path / "t", raters=2, checks=1)
    store = RunStore(rating_run)
    secrets = {"reference", store.root.name, "intensify", "attenuate", "volume-", "en-f1", "en-m1"}
    secrets |= {r.sample_id for r in run_replies(store)[1].values()}
    secrets |= {Path(r.audio).stem for r in run_replies(store)[1].values()}
    shown = files_text(tmp_path / "t").lower()
    names = " ".join(p.name for p in (tmp_path / "t" / "audio").iterdir()).lower()
    for s in secrets:
        assert s.lower() not in shown and s.lower() not in names, s
    # ...while the private key knows everything needed to unblind
    samples = [it for it in key["items"].values() if it["kind"] == "sample"]
    assert {it["sample_id"] for it in samples} == {
        r.sample_id for r in run_replies(store)[1].values()
    }
    assert key["model"] == "reference" and key["run_id"] == store.root.name
    assert (rating_run / "ratings" / "keys" / f"{key['test_id']}.json").read_text() == (
        tmp_path / "t" / "key.json"
    ).read_text()
    html = (tmp_path / "t" / "rater_r01.html").read_text()
    assert "key.json" not in html and "<script>alert" not in html and "\\u003cscript" in html
    # formula-looking text is neutralised in the offline sheet (the reply text starts with "<")
    sheet = list(csv.DictReader((tmp_path / "t" / "sheet_r01.csv").open(encoding="utf-8")))
    assert all(not row[c].startswith(("=", "+", "-", "@")) for row in sheet for c in row)


def test_export_is_deterministic_and_shuffled_per_rater(rating_run, tmp_path):
    a = export_ratings(rating_run, tmp_path / "a", raters=4, seed=7, checks=1)
    assert export_ratings(rating_run, tmp_path / "b", raters=4, seed=7, checks=1) == a
    for name in ("rater_r01.html", "rater_r04.html", "sheet_r02.csv", "key.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    digest = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (tmp_path / "a" / "audio").iterdir()
    }
    assert digest == {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (tmp_path / "b" / "audio").iterdir()
    }
    orders = list(a["orders"].values())
    assert all(sorted(o) == sorted(a["items"]) for o in orders)  # each rater rates every item
    assert len({tuple(o) for o in orders}) > 1  # ...in different orders
    c = export_ratings(rating_run, tmp_path / "c", raters=4, seed=8, checks=1)
    assert c["test_id"] != a["test_id"] and set(c["items"]).isdisjoint(a["items"])
    with pytest.raises(FileExistsError):
        export_ratings(rating_run, tmp_path / "a", raters=1)


def test_attention_checks_have_audible_known_answers(rating_run, tmp_path):
    key = export_ratings(rating_run, tmp_path / "t", raters=1, checks=3)
    checks = {it["transform"]: it for it in key["items"].values() if it["kind"] == "check"}
    assert sorted(checks) == ["pitch", "speed", "volume"]

    def measure(it: dict, what: str) -> list[float]:
        out = []
        for t in ("1", "2", "3"):
            wave, sr = sf.read(tmp_path / "t" / "audio" / it["turns"][t]["audio"])
            out.append(float(np.sqrt(np.mean(wave**2))) if what == "rms" else len(wave) / sr)
        return out

    rms = measure(checks["volume"], "rms")  # louder = higher RMS
    assert check_answers(rms) == checks["volume"]["answers"]
    dur = measure(checks["speed"], "duration")  # faster = shorter
    assert check_answers([-d for d in dur]) == checks["speed"]["answers"]
    assert check_answers([0.0, 2.0, 1.0]) == {"1-2": "2", "2-3": "2"}


def test_export_options_and_errors(rating_run, tmp_path):
    key = export_ratings(rating_run, tmp_path / "e", raters=1, per_cell=1, embed_audio=True)
    assert sum(it["kind"] == "sample" for it in key["items"].values()) == 2  # 1 per direction
    assert key["n_checks"] == 2  # the default minimum
    html = (tmp_path / "e" / "rater_r01.html").read_text()
    assert html.count("data:audio/wav;base64,") == 3 * len(key["items"])
    assert '"src": "audio/' not in html
    with pytest.raises(ValueError, match="raters"):
        export_ratings(rating_run, tmp_path / "x", raters=0)
    assert main(["export-ratings", str(rating_run), "--out", str(tmp_path / "e")]) == 2


def test_cli_round_trip_into_report(rating_run, tmp_path, capsys):
    """Offline sheets filled in by two raters -> import-ratings -> the run's report."""
    assert (
        main(
            [
                "export-ratings",
                str(rating_run),
                "--out",
                str(tmp_path / "t"),
                "--raters",
                "2",
                "--checks",
                "1",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    key = json.loads((tmp_path / "t" / "key.json").read_text())
    filled = []
    for rid in ("r01", "r02"):
        path = tmp_path / "t" / f"sheet_{rid}.csv"
        rows = list(csv.DictReader(path.open(encoding="utf-8")))
        for row in rows:
            it = key["items"][row["item_id"]]
            if it["kind"] == "check":
                row.update(choice_1_2=it["answers"]["1-2"], choice_2_3=it["answers"]["2-3"])
            else:
                later = it["direction"] == "intensify"
                row.update(choice_1_2="2" if later else "1", choice_2_3="3" if later else "2")
        out = tmp_path / f"filled_{rid}.csv"
        with out.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        filled.append(str(out))
    capsys.readouterr()
    assert main(["import-ratings", str(rating_run), *filled, "--n-boot", "100"]) == 0
    assert "## Human ratings" in capsys.readouterr().out
    report = json.loads((rating_run / "report.json").read_text())
    assert report["human"]["n_kept"] == 2
    assert all(c["vsp"] == 100.0 for c in report["human"]["cells"])
    assert report["human"]["agreement"]["choice"]["pairwise_agreement"] == 100.0
    assert "## Human ratings" in (rating_run / "report.md").read_text()


def _answers(key: dict, item_id: str, honest: bool) -> dict[str, str]:
    """A scripted rater: correct checks (or all wrong), instructed direction heard on samples."""
    it = key["items"][item_id]
    if it["kind"] == "check":
        a, b = it["answers"]["1-2"], it["answers"]["2-3"]
        if not honest:
            a, b = ("1" if a == "2" else "2"), ("2" if b == "3" else "3")
        return {
            "choice_1_2": a,
            "choice_2_3": b,
            "intensity_1": "3",
            "intensity_2": "3",
            "intensity_3": "3",
        }
    up = it["direction"] == "intensify"
    levels = ("2", "3", "4") if up else ("4", "3", "2")
    return {
        "choice_1_2": "2" if up else "1",
        "choice_2_3": "3" if up else "2",
        **{f"intensity_{t}": v for t, v in zip((1, 2, 3), levels, strict=True)},
    }


def test_rater_completes_the_page_in_chromium(rating_run, tmp_path):
    """Headless Chromium: answer, reload midway, download the CSV, import it back; text stays text."""
    import shutil

    from stylebench.ratings.importer import import_ratings

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -e '.[dev]'")
    if chromium is None:
        pytest.fail("chromium is not installed: apt-get install chromium (or run `make setup`)")
    key = export_ratings(rating_run, tmp_path / "t", raters=2, checks=1, seed=5)
    export_ratings(rating_run, tmp_path / "e", raters=1, checks=1, per_cell=1, embed_audio=True)
    n = len(key["items"])
    dialogs: list[str] = []
    errors: list[str] = []
    csvs = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_context(
            accept_downloads=True, viewport={"width": 1000, "height": 900}
        ).new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))

        def radio(item_id: str, field: str, value: str):
            return page.locator(f"input[name='{item_id}-{field}'][value='{value}']")

        for rid, honest in (("r01", True), ("r02", False)):
            page.goto((tmp_path / "t" / f"rater_{rid}.html").as_uri())
            assert page.text_content("#progress") == f"0 of {n} items complete"  # own storage
            order = key["orders"][rid]
            half = n // 2
            for pos, item_id in enumerate(order):
                if pos == half:
                    # Chromium hands localStorage writes to its storage process asynchronously; on
                    # a loaded machine a reload can race them, so allow a few reloads (a page that
                    # never saves still fails every time)
                    for _ in range(4):
                        page.reload()
                        if page.text_content("#progress") == f"{half} of {n} items complete":
                            break
                        page.wait_for_timeout(500)
                    assert page.text_content("#progress") == f"{half} of {n} items complete"
                    for done in order[:half]:
                        for field, value in _answers(key, done, honest).items():
                            assert radio(done, field, value).is_checked()
                for field, value in _answers(key, item_id, honest).items():
                    radio(item_id, field, value).check()
            assert page.text_content("#progress") == f"{n} of {n} items complete"
            with page.expect_download() as dl:
                page.click("#download")
            assert dl.value.suggested_filename == f"ratings_{key['test_id']}_{rid}.csv"
            csvs.append(tmp_path / f"{rid}.csv")
            dl.value.save_as(csvs[-1])
        body = page.inner_text("body")
        assert "<script>alert(1)</script><img src=x onerror=alert(2)>" in body
        assert page.locator("script").count() == 2 and page.locator("img").count() == 0
        page.goto((tmp_path / "e" / "rater_r01.html").as_uri())  # embedded audio decodes
        duration = page.evaluate(
            """() => new Promise(done => { const a = document.querySelector('audio');
            a.addEventListener('loadedmetadata', () => done(a.duration));
            a.addEventListener('error', () => done(-1)); a.preload = 'auto'; a.load(); })"""
        )
        assert duration > 1.0
        browser.close()
    assert dialogs == [] and errors == []
    summary = import_ratings(rating_run, csvs, n_boot=100)
    qc = {r["rater_id"]: (r["check_accuracy"], r["kept"]) for r in summary["raters"]}
    assert qc == {"r01": (1.0, True), "r02": (0.0, False)}
    assert [c["vsp"] for c in summary["cells"]] == [100.0] * 4
    assert all(
        c["intensity_change_mean"] == (1.0 if c["direction"] == "intensify" else -1.0)
        for c in summary["cells"]
    )


def test_unreadable_reply_audio_is_skipped_with_its_reason(rating_run, tmp_path):
    """Reply audio is read by stylebench.audio.load_audio: a silent reply is not put to raters."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(rating_run, run)
    store = RunStore(run)
    victim = min(run_replies(store)[1].values(), key=lambda r: (r.sample_id, r.turn))
    sf.write(run / victim.audio, np.zeros(16000, dtype=np.float32), 16000)
    key = export_ratings(run, tmp_path / "test", raters=1, checks=0)
    assert "silent" in key["skipped"][victim.sample_id]
    assert victim.sample_id not in {it.get("sample_id") for it in key["items"].values()}
