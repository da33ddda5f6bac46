"""write_reports: the files on disk, the Markdown escape (issue 9, defect 7) and the plot's
failure paths (defect 6)."""

from __future__ import annotations

import json
import re
import sys

import pytest

from stylebench.report import write as report_write
from stylebench.report.build import ReportMeta
from stylebench.report.md_text import md_escape
from stylebench.report.write import PLOT_NAME, write_reports
from stylebench.scoring.cells import Thresholds, TurnScore, score_cells

HOSTILE = "a|b <script>alert(1)</script> `x` *y* _z_ [l](u) &lt;"


def _scores(lang: str = "en") -> list[TurnScore]:
    rows = []
    for sid, vals in {"p1": [200.0, 230.0, 260.0], "p2": [200.0, 180.0, None]}.items():
        for turn, v in enumerate(vals, start=1):
            err = None if v is not None else HOSTILE
            rows.append(TurnScore(sid, "pitch", "intensify", lang, turn, v, err))
    return rows


def _meta(**kw) -> ReportMeta:
    base = dict(
        model="ref",
        run_id="run-001",
        dims=("pitch",),
        langs=("en",),
        thresholds=Thresholds(),
        extractors={"pitch": "pyworld F0, voiced = F0 > 0"},
        n_samples=2,
        n_turns_total=6,
        n_turns_ok=5,
        notes=("F0 > 0", "WER/CER > 0.3 against the text channel"),
    )
    return ReportMeta(**{**base, **kw})


def _write(tmp_path, meta=None, scores=None, **kw):
    scores = _scores() if scores is None else scores
    cells = score_cells(scores, n_boot=50)
    return write_reports(tmp_path, meta or _meta(), cells, scores, **kw)


def test_markdown_shows_comparisons_as_written(tmp_path):
    _write(tmp_path, plot=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert "- F0 > 0\n" in md and "- WER/CER > 0.3 against the text channel" in md
    assert "voiced = F0 > 0" in md
    assert "F0 &gt; 0" not in md and "&gt; 0.3" not in md


def test_model_text_cannot_break_a_table_or_inject_html(tmp_path):
    scores = _scores(lang="en|<script>x</script>")
    _write(tmp_path, _meta(model=HOSTILE, notes=(HOSTILE,)), scores, plot=False)
    md = (tmp_path / "report.md").read_text(encoding="utf-8")
    assert re.search(r"(?<!\\)<[A-Za-z/]", md) is None  # every tag opener is escaped
    for block in md.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:  # escaped pipes do not split cells: every row keeps the header's columns
            assert len({r.replace("\\|", "").count("|") for r in rows}) == 1, block
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").enable("table").render(md)
    assert "<script" not in html and "<em>" not in html and "<a " not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # JSON and CSV keep the text exactly (their own escaping is the json and csv modules')
    assert json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))["model"] == HOSTILE
    assert HOSTILE.replace('"', '""') in (tmp_path / "report.csv").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("F0 > 0", "F0 > 0"),
        ("x < 3 and 2<4", "x < 3 and 2<4"),
        ("<b>", "\\<b>"),
        ("f0_mean_guarded", "f0_mean_guarded"),
        ("_em_", "\\_em\\_"),
        ("> quote", "\\> quote"),
        ("# title", "\\# title"),
        ("- item", "\\- item"),
        ("1. one", "1\\. one"),
        ("a\nb", "a b"),
        ("back\\slash", "back\\\\slash"),
        ("&amp; & x", "\\&amp; & x"),
    ],
)
def test_md_escape(text, expected):
    assert md_escape(text) == expected


def test_stale_plot_is_removed_and_the_missing_extra_is_named(tmp_path, monkeypatch):
    (tmp_path / PLOT_NAME).write_bytes(b"\x89PNG old")
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the [plot] extra were absent
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    report = _write(tmp_path)
    assert not (tmp_path / PLOT_NAME).exists()
    assert report["plot"].startswith("no plot: matplotlib is not installed")
    assert "[plot]" in report["plot"]
    on_disk = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert on_disk["plot"] == report["plot"]
    assert "no plot: matplotlib is not installed" in (tmp_path / "report.md").read_text("utf-8")


def test_nothing_to_plot_is_reported(tmp_path):
    (tmp_path / PLOT_NAME).write_bytes(b"\x89PNG old")
    failed = [TurnScore("x", "pitch", "intensify", "en", t, None, "no speech") for t in (1, 2, 3)]
    report = _write(tmp_path, scores=failed)
    assert not (tmp_path / PLOT_NAME).exists()
    assert report["plot"].startswith("no plot: no sample has a turn-1 score")


def test_a_drawn_plot_adds_no_key(tmp_path):
    pytest.importorskip("matplotlib")
    (tmp_path / PLOT_NAME).write_bytes(b"\x89PNG old")
    report = _write(tmp_path)
    assert "plot" not in report
    data = (tmp_path / PLOT_NAME).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    assert not list(tmp_path.glob("*.tmp"))


def test_an_unexpected_plot_error_is_raised_after_the_tables(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("renderer bug")

    monkeypatch.setattr(report_write, "plot_trajectories", broken)
    with pytest.raises(RuntimeError, match="renderer bug"):
        _write(tmp_path)
    saved = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert saved["plot"] == "no plot: plotting failed (RuntimeError: renderer bug)"
