"""Report shapes: JSON keys, Markdown escaping, CSV rows, and the trajectory PNG."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re

import pytest

from stylebench.report.build import CELL_KEYS, ReportMeta, build_report
from stylebench.report.plots import plot_trajectories
from stylebench.report.render_csv import to_csv
from stylebench.report.render_json import to_json
from stylebench.report.render_md import to_markdown
from stylebench.scoring.cells import Thresholds, TurnScore, score_cells


def _scores():
    rows = []
    table = {
        ("p1", "pitch", "intensify", "en"): [200.0, 230.0, 260.0],
        ("p2", "pitch", "intensify", "en"): [200.0, 180.0, None],
        ("p3", "pitch", "attenuate", "zh"): [220.0, 200.0, 180.0],
        ("v1", "volume", "intensify", "en"): [0.05, 0.08, 0.1],
        ("v2", "volume", "intensify", "en"): [0.05, 0.06, 0.09],
    }
    for (sid, dim, direction, lang), vals in table.items():
        for turn, v in enumerate(vals, start=1):
            err = None if v is not None else "empty reply | retry\nlater"
            rows.append(TurnScore(sid, dim, direction, lang, turn, v, err))
    return rows


def _meta(model="ref|model\nv2", **kw):
    return ReportMeta(
        model=model,
        run_id="run-001",
        dims=("pitch", "volume"),
        langs=("en", "zh"),
        thresholds=Thresholds(emotion_delta=0.0),  # the fixed report of the digest test
        extractors={"pitch": "pyworld dio+stonemask", "volume": "VAD RMS", "asr": "whisper|base"},
        n_samples=5,
        n_turns_total=15,
        n_turns_ok=14,
        notes=("reference: oracle row", "pipe | and\nnewline"),
        **kw,
    )


def _report(**kw):
    scores = _scores()
    return build_report(_meta(**kw), score_cells(scores, n_boot=200), scores)


def test_json_shape():
    rep = _report(extra={"srd": 0.9, "eligible": True})
    loaded = json.loads(to_json(rep))
    for key in (
        "model",
        "run_id",
        "cells",
        "per_turn",
        "thresholds",
        "extractors",
        "n_samples",
        "n_turns_total",
        "n_turns_ok",
        "notes",
        "srd",
        "eligible",
    ):
        assert key in loaded
    assert loaded["model"] == "ref|model\nv2" and loaded["srd"] == 0.9
    assert loaded["thresholds"]["pitch_st"] == 1.0
    assert len(loaded["cells"]) == 6
    for c in loaded["cells"]:
        assert set(c) == set(CELL_KEYS)
        assert c["vsp_ci"] is None or (isinstance(c["vsp_ci"], list) and len(c["vsp_ci"]) == 2)
    first = loaded["cells"][0]
    assert (first["dim"], first["direction"], first["pair"]) == ("volume", "intensify", "1-2")
    assert first["vsp"] == 100.0 and first["n_ok"] == 2
    p23 = next(
        c
        for c in loaded["cells"]
        if (c["dim"], c["direction"], c["pair"]) == ("pitch", "intensify", "2-3")
    )
    assert (p23["n"], p23["n_ok"], p23["svd"], p23["svd_ci"]) == (2, 1, 13.043, [13.043, 13.043])
    assert p23["errors"] == {"empty reply | retry\nlater": 1}
    turns = [r for r in loaded["per_turn"] if r["dim"] == "pitch" and r["direction"] == "intensify"]
    assert [(r["turn"], r["mean"], r["n_ok"], r["n"]) for r in turns] == [
        (1, 200.0, 2, 2),
        (2, 205.0, 2, 2),
        (3, 260.0, 1, 2),
    ]
    assert set(turns[0]) == {"dim", "direction", "lang", "group", "turn", "mean", "n_ok", "n"}
    assert len(build_report(_meta(), [], _scores(), exclude={"p1", "p2", "p3"})["per_turn"]) == 3


def test_extra_cannot_overwrite_keys():
    with pytest.raises(ValueError, match="cells"):
        _report(extra={"cells": []})


def test_markdown_escapes_outside_text():
    md = to_markdown(_report())
    title = md.splitlines()[0]
    assert title.startswith("# ") and "ref\\|model v2" in title and "run-001" in title
    assert "Thresholds: pitch 1.0 st, volume 1.0 dB, speed 5.0%" in md
    assert "pyworld dio+stonemask" in md and "whisper\\|base" in md
    assert "empty reply \\| retry later (1)" in md
    assert "| 2-3 | 100.0 [100.0, 100.0]; all 50.0 |" in md  # VSP over all samples shown beside
    assert md.rstrip().endswith("- pipe \\| and newline")
    assert md.index("## pitch") < md.index("## volume") < md.index("## Notes")
    # Every table row keeps the header's column count (escaped pipes do not split cells).
    for block in md.split("\n\n"):
        rows = [r for r in block.splitlines() if r.startswith("|")]
        if rows:
            counts = {r.replace("\\|", "").count("|") for r in rows}
            assert len(counts) == 1, block
    html = to_markdown(build_report(_meta(model="<b>x</b>"), [], []))
    assert re.search(r"(?<!\\)<", html) is None and "\\<b>x\\</b>" in html


def test_csv_rows():
    rep = _report()
    rows = list(csv.DictReader(io.StringIO(to_csv(rep))))
    assert len(rows) == len(rep["cells"]) == 6
    assert rows[0]["model"] == "ref|model\nv2" and rows[0]["vsp"] == "100.0"
    p23 = next(
        r for r in rows if (r["dim"], r["direction"], r["pair"]) == ("pitch", "intensify", "2-3")
    )
    assert (p23["svd_ci_low"], p23["svd_ci_high"], p23["n_ok"]) == ("13.043", "13.043", "1")
    assert json.loads(p23["errors"]) == {"empty reply | retry\nlater": 1}
    failed = [TurnScore("f", "speed", "intensify", "en", t, None, "no speech") for t in (1, 2, 3)]
    frows = list(
        csv.DictReader(io.StringIO(to_csv(build_report(_meta(), score_cells(failed), failed))))
    )
    assert len(frows) == 2 and frows[0]["vsp"] == "" and frows[0]["vsp_ci_low"] == ""
    assert frows[0]["vsp_all"] == "0.0"


def test_plot_writes_png(tmp_path):
    out = plot_trajectories(_scores(), tmp_path / "plots" / "traj.png", title="ref")
    data = out.read_bytes()
    assert out.exists() and data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    with pytest.raises(ValueError, match="turn-1"):
        plot_trajectories(
            [TurnScore("x", "pitch", "intensify", "en", 1, None, "fail")], tmp_path / "empty.png"
        )


def test_renderers_unchanged_by_the_move():
    """The JSON and CSV of a fixed report are byte-identical to those before the report package."""
    rep = _report(extra={"srd": 0.9, "eligible": True})
    digest = {f.__name__: hashlib.sha256(f(rep).encode()).hexdigest() for f in (to_json, to_csv)}
    assert digest == {
        # thresholds gained expressiveness_st (the fifth dimension), cells vsp_direction and its
        # CI (the direction-only rate); nothing else changed
        "to_json": "a3d33011296233e089bbdd21b73eee9e9a809df833a4bed5e247efe1743be548",
        "to_csv": "fac07198849878ec63ef35f824ffc17a24b7550b4989ae2d5ed53c6f6debe086",
    }
    # without the direction-only rate, the JSON is the bytes it was before it came
    before = {
        **rep,
        "cells": [
            {k: v for k, v in c.items() if not k.startswith("vsp_direction")} for c in rep["cells"]
        ],
    }
    assert hashlib.sha256(to_json(before).encode()).hexdigest() == (
        "1ed5348e719f76ca0cf36eb8dbb92eec9660b4d3e069bf4f59248bca6bdaa21f"
    )


def test_every_report_section_resolves_and_shows_only_with_its_block() -> None:
    from stylebench.report.sections import SECTIONS

    for sec in SECTIONS:
        assert sec.markdown({"notes": [], "cells": []}) == [] or sec.key is None, sec.render
    notes = next(s for s in SECTIONS if s.render.endswith(":notes_markdown"))
    assert notes.markdown({"notes": ["a < b"]})[:2] == ["## Notes", ""]
    timing = next(s for s in SECTIONS if s.key == "timings")
    assert timing.when_present and not timing.whole


def test_cell_columns_are_named_once_and_reach_every_flat_output():
    """report.csv, the API frames and compare's tables take their cell columns from the groups in
    scoring/cells.py: a column added to a group reaches each output, split where it is a CI."""
    from stylebench import api
    from stylebench.compare import files
    from stylebench.report import render_csv
    from stylebench.scoring import cells

    assert render_csv.COLUMNS is cells.CSV_COLUMNS and api.CELL_COLUMNS is cells.FRAME_COLUMNS
    assert files.CELL_COLUMNS is cells.COMPARE_COLUMNS
    flat = set(cells.split_ci(cells.CELL_KEYS))
    assert (
        flat == set(cells.FRAME_COLUMNS) == set(cells.CSV_COLUMNS) - {"model", "run_id", "eligible"}
    )
    assert cells.split_ci(("vsp_ci", "n")) == ("vsp_ci_low", "vsp_ci_high", "n")
    assert set(cells.COMPARE_COLUMNS) <= set(cells.CELL_KEYS)
    header = to_csv(_report()).splitlines()[0].split(",")
    assert header == list(cells.CSV_COLUMNS) and header[:2] == ["model", "run_id"]
