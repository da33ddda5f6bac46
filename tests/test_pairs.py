"""``stylebench pairs`` and :func:`stylebench.pairs`: pairs of files scored as a run scores a turn
pair (known gains move or do not, under the run's thresholds), pooled per group and per dim;
tables it cannot read are refused in one line naming the row and column."""

from __future__ import annotations

import csv
import json
import math

import pytest
from audio_files import FASTER_ST, db, make_files

import stylebench
from stylebench.cli import main
from stylebench.commands.pairs import CELL_COLUMNS, PAIR_COLUMNS, read_pairs_csv
from stylebench.errors import BadValue, MissingFile

#: (id, a, b, dim, direction, group): what each pair should give is in test_known_pairs
ROWS = [
    ("louder", "speech.wav", "louder.wav", "volume", "intensify", "g1"),
    ("quieter", "speech.wav", "quieter.wav", "volume", "attenuate", "g1"),
    ("wrong-way", "speech.wav", "quieter.wav", "volume", "intensify", "g1"),
    ("too-small", "speech.wav", "nudged.wav", "volume", "intensify", "g2"),
    ("pitch-up", "speech.wav", "faster.wav", "pitch", "intensify", "g2"),
    ("pitch-down", "faster.wav", "speech.wav", "pitch", "intensify", "g2"),
    ("lost", "speech.wav", "missing.wav", "pitch", "intensify", "g2"),
]


def write(path, rows, header=("id", "a", "b", "dim", "direction", "group")):
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_files(tmp_path_factory.mktemp("pairfiles"))


@pytest.fixture(scope="module")
def scored(folder):
    table = write(folder / "pairs.csv", ROWS)
    return stylebench.pairs(table, asr="none", n_boot=200)


def by_id(frames):
    return {r["id"]: r for r in frames.pairs.to_dict("records")}


def test_known_pairs(scored):
    r = by_id(scored)
    assert r["louder"]["change"] == pytest.approx(db(2.0), abs=0.05) and r["louder"]["moved"]
    assert r["quieter"]["change"] == pytest.approx(db(0.5), abs=0.05) and r["quieter"]["moved"]
    assert r["wrong-way"]["moved"] is False  # quieter, asked louder
    assert r["too-small"]["change"] == pytest.approx(db(1.05), abs=0.05)
    assert r["too-small"]["moved"] is False  # +0.42 dB, under the 1 dB threshold
    assert r["pitch-up"]["change"] == pytest.approx(FASTER_ST, abs=0.15) and r["pitch-up"]["moved"]
    assert r["pitch-down"]["moved"] is False and r["pitch-down"]["change"] < -3
    assert r["louder"]["unit"] == "dB" and r["pitch-up"]["unit"] == "st"
    lost = r["lost"]
    assert lost["moved"] is None and math.isnan(lost["change"])
    assert (
        lost["unscored"].startswith("b: features: AudioError:")
        and "missing.wav" in lost["unscored"]
    )
    assert math.isfinite(lost["score_a"])  # a was measured; only b is missing
    assert scored.unscored == {"b: features: AudioError: audio file does not exist": 1}


def test_pools_per_group_and_per_dim(scored):
    pools = {
        (p["scope"], p["dim"], p["direction"], p["group"]): p
        for p in scored.pools.to_dict("records")
    }
    g1_up = pools[("group", "volume", "intensify", "g1")]
    assert (g1_up["n"], g1_up["n_ok"], g1_up["n_moved"], g1_up["vsp"]) == (2, 2, 1, 50.0)
    assert g1_up["vsp_ci_low"] <= 50.0 <= g1_up["vsp_ci_high"]
    # SVD: mean relative change of the pairs that moved: louder only, +100 % of RMS
    assert g1_up["svd"] == pytest.approx(100.0, abs=0.5)
    # toward the instruction: +6.02 and -6.02 dB, mean 0
    assert g1_up["toward_mean"] == pytest.approx(0.0, abs=0.05)
    g1_down = pools[("group", "volume", "attenuate", "g1")]
    assert g1_down["toward_mean"] == pytest.approx(-db(0.5), abs=0.05) and g1_down["vsp"] == 100.0
    pitch = pools[("group", "pitch", "intensify", "g2")]
    assert (pitch["n"], pitch["n_ok"], pitch["n_moved"]) == (3, 2, 1)
    assert pitch["n_unscored"] == 1 and sum(pitch["unscored"].values()) == 1
    volume_all = pools[("dim", "volume", "all", "all")]  # both directions, both groups
    assert (volume_all["n"], volume_all["n_ok"], volume_all["n_moved"]) == (4, 4, 2)
    assert volume_all["vsp"] == 50.0 and volume_all["lang"] == "en"
    toward = [db(2.0), -db(0.5), db(0.5), db(1.05)]
    assert volume_all["toward_mean"] == pytest.approx(sum(toward) / 4, abs=0.05)
    assert volume_all["toward_ci_low"] < volume_all["toward_mean"] < volume_all["toward_ci_high"]
    order = [(p["dim"], p["direction"], p["group"]) for p in scored.pools.to_dict("records")]
    assert order == [  # pitch first (report order); per dim its pools, then the dim over all
        ("pitch", "intensify", "g2"),
        ("pitch", "intensify", "all"),
        ("volume", "intensify", "g1"),
        ("volume", "intensify", "g2"),
        ("volume", "attenuate", "g1"),
        ("volume", "all", "all"),
    ]


def test_thresholds_are_the_run_flags(folder):
    table = write(folder / "small.csv", [ROWS[3]])
    assert not stylebench.pairs(table, asr="none").pairs.loc[0, "moved"]
    lower = stylebench.pairs(table, asr="none", volume_db=0.3).pairs
    assert lower.loc[0, "moved"] and lower.loc[0, "threshold"] == 0.3


def test_without_a_group_column_pools_are_per_dim_and_direction(folder):
    rows = [r[1:5] for r in ROWS[:3]]
    table = write(folder / "nogroup.csv", rows, header=("a", "b", "dim", "direction"))
    got = stylebench.pairs(table, asr="none", n_boot=50)
    keys = [(p["scope"], p["direction"], p["group"]) for p in got.pools.to_dict("records")]
    assert keys == [("group", "intensify", ""), ("group", "attenuate", ""), ("dim", "all", "all")]
    assert list(got.pairs["id"]) == ["pair1", "pair2", "pair3"]


def test_the_cli_prints_what_the_api_returns(folder, scored, capsys, tmp_path):
    table = folder / "pairs.csv"
    args = ["--no-progress", "pairs", str(table), "--asr", "none", "--n-boot", "200"]
    assert main([*args, "--format", "json", "--per-pair"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["settings"]["thresholds"]["volume"] == 1.0 and out["settings"]["asr"] is None
    assert len(out["pools"]) == len(scored.pools) and len(out["pairs"]) == len(ROWS)
    for cli, api in ((out["pools"], scored.pools), (out["pairs"], scored.pairs)):
        for c, a in zip(cli, api.to_dict("records"), strict=True):
            for k, v in c.items():
                if isinstance(v, float):
                    assert a[k] == pytest.approx(v, rel=1e-12), k
                elif v is not None:
                    assert a[k] == v, k
    per_pair = tmp_path / "per_pair.csv"
    assert main([*args, "--per-pair-out", str(per_pair)]) == 0
    text = capsys.readouterr().out
    assert "per group" in text and "per dim, every group and direction" in text
    assert "7 pairs: 6 scored, 1 unscored" in text and "1/2" in text
    got = list(csv.DictReader(open(per_pair)))
    assert list(got[0]) == list(PAIR_COLUMNS) and [r["moved"] for r in got][:3] == [
        "True",
        "True",
        "False",
    ]
    assert main([*args, "--format", "csv"]) == 0
    pools = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert list(pools[0]) == list(CELL_COLUMNS) and len(pools) == len(scored.pools)
    assert main([*args, "--format", "csv", "--per-pair"]) == 2
    assert "one CSV holds one table" in capsys.readouterr().err


def test_a_dataframe_reads_paths_from_root(folder):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        [dict(zip(("id", "a", "b", "dim", "direction", "group"), r, strict=True)) for r in ROWS[:2]]
    )
    df["lang"] = [None, "en"]  # a missing optional value is the default
    got = stylebench.pairs(df, root=folder, asr="none", n_boot=50)
    assert list(got.pairs["moved"]) == [True, True] and list(got.pairs["lang"]) == ["en", "en"]
    with pytest.raises(
        BadValue, match="the pairs DataFrame row 0, column a: .* allow_outside=True"
    ):
        stylebench.pairs(df.assign(a="../speech.wav"), root=folder, asr="none")


@pytest.mark.parametrize(
    "header, row, words",
    [
        (("a", "b", "dim"), ("x.wav", "y.wav", "pitch"), "no column direction"),
        (
            ("a", "b", "dim", "direction"),
            ("x.wav", "y.wav", "loudness", "intensify"),
            "line 2, column dim: 'loudness' is not one of pitch, volume, speed",
        ),
        (
            ("a", "b", "dim", "direction"),
            ("x.wav", "y.wav", "emotion", "intensify"),
            "emotion is scored from ratings",
        ),
        (
            ("a", "b", "dim", "direction"),
            ("x.wav", "y.wav", "pitch", "up"),
            "line 2, column direction: 'up'",
        ),
        (
            ("a", "b", "dim", "direction", "lang"),
            ("x.wav", "y.wav", "pitch", "intensify", "fr"),
            "line 2, column lang: 'fr'",
        ),
        (
            ("a", "b", "dim", "direction"),
            ("", "y.wav", "pitch", "intensify"),
            "line 2, column a: the path is empty",
        ),
        (
            ("a", "b", "dim", "direction"),
            ("x.wav", "/etc/passwd", "pitch", "intensify"),
            "line 2, column b: '/etc/passwd' is an absolute path",
        ),
        (
            ("a", "b", "dim", "direction"),
            ("../x.wav", "y.wav", "pitch", "intensify"),
            "line 2, column a: '../x.wav' leads outside",
        ),
        (
            ("a", "b", "dim", "direction"),
            ("sub/../../x.wav", "y.wav", "pitch", "intensify"),
            "leads outside",
        ),
    ],
)
def test_a_table_it_cannot_read_is_refused_naming_the_row_and_column(
    tmp_path, capsys, header, row, words
):
    table = write(tmp_path / "bad.csv", [row], header=header)
    with pytest.raises(BadValue, match=None) as err:
        read_pairs_csv(table)
    assert words in str(err.value) and str(table) in str(err.value)
    assert main(["pairs", str(table), "--asr", "none"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stylebench: error: ") and words in lines[0]


def test_duplicate_ids_and_empty_tables_are_refused(tmp_path):
    table = write(tmp_path / "dup.csv", [("p", "x.wav", "y.wav", "pitch", "intensify", "")] * 2)
    with pytest.raises(BadValue, match="line 3, column id: 'p' is also the id of line 2"):
        read_pairs_csv(table)
    with pytest.raises(BadValue, match="has no pairs"):
        read_pairs_csv(write(tmp_path / "none.csv", []))
    with pytest.raises(MissingFile, match="does not exist"):
        read_pairs_csv(tmp_path / "absent.csv")


def test_paths_inside_the_folder_and_outside_when_allowed(tmp_path):
    (tmp_path / "sub").mkdir()
    rows = [("sub/../x.wav", "sub/y.wav", "pitch", "intensify")]
    (pair,) = read_pairs_csv(write(tmp_path / "t.csv", rows, header=("a", "b", "dim", "direction")))
    assert pair.path_a == tmp_path / "x.wav" and pair.path_b == tmp_path / "sub" / "y.wav"
    outside = write(
        tmp_path / "sub" / "o.csv",
        [("../x.wav", "/abs/y.wav", "pitch", "intensify")],
        header=("a", "b", "dim", "direction"),
    )
    (pair,) = read_pairs_csv(outside, allow_outside=True)
    assert pair.path_a == tmp_path / "x.wav" and str(pair.path_b) == "/abs/y.wav"
    assert (
        pair.lang == "en" and read_pairs_csv(outside, allow_outside=True, lang="zh")[0].lang == "zh"
    )
