"""import-ratings on hand-made rating tables: rater QC, human VSP, agreement, bad input."""

from __future__ import annotations

import csv
import gzip
import json
import re
from pathlib import Path

import pytest

from stylebench.ratings.importer import human_report_block, import_ratings, read_ratings
from stylebench.ratings.page import ANSWER_COLUMNS
from stylebench.report.sections.human import human_markdown

TEST = "Tabc"
FIELDS = ("test_id", "rater_id", "item_id", *ANSWER_COLUMNS)


def _sample(sid: str, direction: str) -> dict:
    return {
        "kind": "sample",
        "sample_id": sid,
        "dim": "emotion",
        "direction": direction,
        "lang": "en",
        "group": "happy",
        "voice": "v",
        "turns": {},
    }


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """A run folder with only what the import reads (manifest run id, the key of test Tabc)."""
    root = tmp_path / "run"
    (root / "ratings" / "keys").mkdir(parents=True)
    (root / "manifest.json").write_text(json.dumps({"run_id": "run"}))
    items = {
        "s1": _sample("emo-int-0", "intensify"),
        "s2": _sample("emo-int-1", "intensify"),
        "s3": _sample("emo-att-0", "attenuate"),
        "c1": {"kind": "check", "answers": {"1-2": "2", "2-3": "2"}},
        "c2": {"kind": "check", "answers": {"1-2": "1", "2-3": "3"}},
    }
    key = {"test_id": TEST, "run_id": "run", "n_checks": 2, "items": items}
    (root / "ratings" / "keys" / f"{TEST}.json").write_text(json.dumps(key))
    return root


def write_csv(path: Path, rows: list[tuple]) -> Path:
    """rows: (rater, item, c12, c23, i1, i2, i3) with "" for blank."""
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(FIELDS)
        for r in rows:
            w.writerow((TEST, *r))
    return path


# A: checks 4/4; B: 3/4 (exactly 75%, kept); C: 2/4 (dropped); D: no check answers (dropped).
PANEL = [
    ("A", "c1", "2", "2", "", "", ""),
    ("A", "c2", "1", "3", "", "", ""),
    ("A", "s1", "2", "3", "2", "3", "4"),
    ("A", "s2", "2", "2", "", "", ""),
    ("A", "s3", "1", "2", "", "", ""),
    ("B", "c1", "2", "2", "", "", ""),
    ("B", "c2", "2", "3", "", "", ""),
    ("B", "s1", "2", "3", "2", "4", "4"),
    ("B", "s2", "1", "3", "", "", ""),
    ("B", "s3", "1", "3", "", "", ""),
    ("C", "c1", "1", "2", "", "", ""),
    ("C", "c2", "2", "3", "", "", ""),
    ("C", "s1", "1", "2", "", "", ""),
    ("C", "s2", "1", "2", "", "", ""),
    ("C", "s3", "2", "3", "", "", ""),
    ("D", "s1", "1", "", "", "", ""),
]


def test_qc_vsp_and_agreement_by_hand(run, tmp_path):
    """Kept raters A and B (later = the later turn chosen as stronger; L/E = later/earlier):

        unit:  s1 1-2  s1 2-3  s2 1-2  s2 2-3  s3 1-2  s3 2-3
        A:       L       L       L       E       E       E
        B:       L       L       E       L       E       L

    Majorities: s1 L, L (intensify: valid); s2 tie, tie; s3 E (attenuate: valid), tie.
    VSP intensify 1-2 = 50 (1 of 2, one tie), 2-3 = 50; attenuate 1-2 = 100, 2-3 = 0 (tie).
    Agreement on 6 units: 3 agree -> 50%. Fleiss: P_bar = 3/6; p_L = 7/12, p_E = 5/12,
    P_e = 74/144; kappa = (72 - 74)/(144 - 74) = -2/70. Krippendorff nominal: o_LL = 4,
    o_EE = 2, o_LE = o_EL = 3, n_L = 7, n_E = 5, n = 12: alpha = 1 - 11 * 6 / 70 = 4/70.
    Intensities on s1 (A 2,3,4; B 2,4,4): pairwise 2/3 agree; interval alpha: values
    2,2,3,4,4,4 (mean 19/6, squared deviations 29/6), expected 2 * 6 * 29/6 = 58, observed 2,
    alpha = 1 - 5 * 2 / 58. Intensity change s1 1-2: A +1, B +2 -> 1.5; 2-3: A +1, B 0 -> 0.5.
    """
    s = import_ratings(run, [write_csv(tmp_path / "all.csv", PANEL)], n_boot=200)
    qc = {r["rater_id"]: (r["check_accuracy"], r["kept"]) for r in s["raters"]}
    assert qc == {"A": (1.0, True), "B": (0.75, True), "C": (0.5, False), "D": (0.0, False)}
    assert (s["n_raters"], s["n_kept"]) == (4, 2)
    cells = {(c["direction"], c["pair"]): c for c in s["cells"]}
    assert {k: c["vsp"] for k, c in cells.items()} == {
        ("intensify", "1-2"): 50.0,
        ("intensify", "2-3"): 50.0,
        ("attenuate", "1-2"): 100.0,
        ("attenuate", "2-3"): 0.0,
    }
    c = cells[("intensify", "1-2")]
    assert (c["n"], c["n_judged"], c["n_valid"], c["n_tie"], c["group"]) == (2, 2, 1, 1, "happy")
    assert c["vsp_ci"][0] <= 50.0 <= c["vsp_ci"][1]
    assert c["intensity_change_mean"] == 1.5
    assert cells[("intensify", "2-3")]["intensity_change_mean"] == 0.5
    ch, it = s["agreement"]["choice"], s["agreement"]["intensity"]
    assert ch["pairwise_agreement"] == 50.0
    assert ch["fleiss_kappa"] == pytest.approx(-2 / 70, abs=1e-4)
    assert ch["alpha_nominal"] == pytest.approx(4 / 70, abs=1e-4)
    assert (ch["n_units"], ch["n_raters"]) == (6, 2)
    assert it["pairwise_agreement"] == pytest.approx(200 / 3, abs=1e-4)
    assert it["alpha_interval"] == pytest.approx(1 - 10 / 58, abs=1e-4)
    assert it["n_units"] == 3
    # the summary file: per (sample, pair) majority for other tools, and the report block
    saved = json.loads((run / "ratings_summary.json").read_text())
    row = next(m for m in saved["majority"] if m["sample_id"] == "emo-int-1" and m["pair"] == "1-2")
    assert (row["majority"], row["valid"], row["n_later"], row["n_earlier"]) == ("tie", False, 1, 1)
    assert "majority" not in human_report_block(run)
    assert (run / "ratings" / f"{TEST}.csv").read_text().count("\n") == 1 + sum(
        sum(v != "" for v in r[2:]) for r in PANEL
    )


def test_lower_threshold_keeps_more_raters(run, tmp_path):
    # with C kept: s2 1-2 is A later, B earlier, C earlier -> earlier, not valid, and no tie
    s = import_ratings(run, [write_csv(tmp_path / "a.csv", PANEL)], min_attention=0.5, n_boot=50)
    assert s["n_kept"] == 3
    c = next(c for c in s["cells"] if c["direction"] == "intensify" and c["pair"] == "1-2")
    assert (c["vsp"], c["n_tie"]) == (50.0, 0)


def test_perfect_panel_through_import(run, tmp_path):
    rows = [(r, "c1", "2", "2", "", "", "") for r in "XYZ"] + [
        (r, "c2", "1", "3", "", "", "") for r in "XYZ"
    ]
    answers = {
        "s1": ("2", "3", "1", "3", "5"),
        "s2": ("1", "3", "2", "2", "4"),
        "s3": ("1", "2", "5", "3", "1"),
    }
    rows += [(r, i, *a) for r in "XYZ" for i, a in answers.items()]
    s = import_ratings(run, [write_csv(tmp_path / "p.csv", rows)], n_boot=50)
    ch, it = s["agreement"]["choice"], s["agreement"]["intensity"]
    assert ch["alpha_nominal"] == ch["fleiss_kappa"] == 1.0
    assert ch["pairwise_agreement"] == it["pairwise_agreement"] == 100.0
    assert it["alpha_ordinal"] == it["alpha_interval"] == 1.0


def test_several_files_merge_and_conflicts_fail(run, tmp_path):
    a = write_csv(tmp_path / "a.csv", [("A", "s1", "2", "", "3", "", "")])
    b = write_csv(tmp_path / "b.csv", [("A", "s1", "2", "3", "", "", "")])  # same, completes it
    _, answers, files = read_ratings([a, b])
    assert answers[("A", "s1")] == {"choice_1_2": "2", "choice_2_3": "3", "intensity_1": "3"}
    assert [f["rows"] for f in files] == [1, 1]
    c = write_csv(tmp_path / "c.csv", [("A", "s1", "1", "", "", "", "")])
    with pytest.raises(ValueError, match="differently"):
        read_ratings([a, c])


@pytest.mark.parametrize(
    ("row", "match"),
    [
        (("A", "s1", "3", "", "", "", ""), "choice_1_2 must be one of 1, 2"),
        (("A", "s1", "", "", "6", "", ""), "intensity_1"),
        (("A", "zz", "1", "", "", "", ""), "not in test"),
        (("", "s1", "1", "", "", "", ""), "must not be blank"),
    ],
)
def test_bad_rows_fail_with_a_reason(run, tmp_path, row, match):
    with pytest.raises(ValueError, match=match):
        import_ratings(run, [write_csv(tmp_path / "bad.csv", [row])])


def test_wrong_test_run_or_columns(run, tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("test_id,rater_id,item_id\nT1,A,s1\n")
    with pytest.raises(ValueError, match="missing columns"):
        read_ratings([other])
    mixed = write_csv(tmp_path / "m.csv", [("A", "s1", "1", "", "", "", "")])
    mixed.write_text(mixed.read_text() + "Tother,A,s2,1,,,,\n")
    with pytest.raises(ValueError, match="2 tests"):
        read_ratings([mixed])
    ok = write_csv(tmp_path / "ok.csv", [("A", "s1", "1", "", "", "", "")])
    (run / "manifest.json").write_text(json.dumps({"run_id": "another"}))
    with pytest.raises(ValueError, match="exported from run run"):
        import_ratings(run, [ok])
    (run / "ratings" / "keys" / f"{TEST}.json").unlink()
    with pytest.raises(FileNotFoundError, match="--key"):
        import_ratings(run, [ok])
    with pytest.raises(ValueError, match="min-attention"):
        import_ratings(run, [ok], min_attention=75)


def test_markdown_section_escapes_rater_ids(run, tmp_path):
    rows = [
        ("<b>x|y", "c1", "2", "2", "", "", ""),
        ("<b>x|y", "c2", "1", "3", "", "", ""),
        ("<b>x|y", "s1", "2", "3", "", "", ""),
    ]
    import_ratings(run, [write_csv(tmp_path / "x.csv", rows)], n_boot=50)
    md = "\n".join(human_markdown(human_report_block(run)))
    # Markdown escape, not HTML entities: the tag is neutralised by a backslash
    assert "## Human ratings" in md and "\\<b>x\\|y" in md and "&lt;" not in md
    assert re.search(r"(?<!\\)<b>", md) is None
    assert "| forced choice | – (nominal) | – |" in md  # one rater: agreement undefined


def test_rater_ids_not_in_the_key_are_refused(run, tmp_path):
    key_path = run / "ratings" / "keys" / f"{TEST}.json"
    key = json.loads(key_path.read_text())
    key_path.write_text(json.dumps({**key, "raters": ["A", "B"]}))
    ok = [("A", "c1", "2", "2", "", "", ""), ("B", "s1", "2", "3", "", "", "")]
    import_ratings(run, [write_csv(tmp_path / "ok.csv", ok)], n_boot=20)
    for stranger in ("r99", "=cmd|' /C calc'!A0"):
        rows = [*ok, (stranger, "s1", "2", "3", "", "", "")]
        with pytest.raises(
            ValueError, match=r"rater ids \[.*\] are not raters of test Tabc \(its raters: A, B\)"
        ):
            import_ratings(run, [write_csv(tmp_path / "x.csv", rows)], n_boot=20)


def test_unreadable_csvs_and_a_missing_run_name_the_file(run, tmp_path):
    ok = write_csv(tmp_path / "ok.csv", [("A", "s1", "1", "", "", "", "")])
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(ok.read_bytes().replace(b"A,s1", "Å,s1".encode("latin-1")))
    with pytest.raises(ValueError, match=r"latin1.csv: not UTF-8 text"):
        import_ratings(run, [latin])
    binary = tmp_path / "binary.csv"
    binary.write_bytes(gzip.compress(ok.read_bytes()))  # a sheet still zipped
    with pytest.raises(ValueError, match=r"binary.csv: not UTF-8 text"):
        import_ratings(run, [binary])
    with pytest.raises(FileNotFoundError, match=r"nowhere is not a stylebench run folder"):
        import_ratings(tmp_path / "nowhere", [ok])
