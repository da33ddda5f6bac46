"""The paper's tables on hand-made scores: which emotion source is used, pooled VSP, retention."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from stylebench.compare.paper import paper_tables
from stylebench.compare.samples import outcomes
from stylebench.ratings.importer import SUMMARY_NAME, read_majority
from stylebench.scoring.cells import Thresholds, TurnScore
from stylebench.scoring.emotion import ProbeScores

pytest.importorskip("statsmodels")
BOOT = {"n_boot": 100, "seed": 0, "ci": 0.95}
# prosodic index per turn: e0 and e3 rise twice, e1 rises then holds, e2 stays flat
PROSODIC = {"e0": (1, 3, 5), "e1": (1, 3, 3), "e2": (1, 1, 1), "e3": (1, 3, 5)}


def _scores(values, dim="emotion"):
    return [
        TurnScore(sid, dim, "intensify", "en", t, float(v[t - 1]), group="happy")
        for sid, v in values.items()
        for t in (1, 2, 3)
    ]


def _run(tmp_path, label, *, human=False, probe=False):
    root = tmp_path / label
    root.mkdir()
    if human:  # majorities for pair 1-2 only: e0 and e3 valid, e1 not, e2 a tie
        rows = [
            {
                "sample_id": sid,
                "pair": "1-2",
                "dim": "emotion",
                "direction": "intensify",
                "lang": "en",
                "group": "happy",
                "valid": valid,
            }
            for sid, valid in (("e0", True), ("e1", False), ("e2", None), ("e3", True))
        ]
        (root / SUMMARY_NAME).write_text(
            json.dumps({"majority": rows, "cells": []}), encoding="utf-8"
        )
    probe_scores = (
        ProbeScores(
            tuple(_scores({s: (0.1, 0.2, 0.3) for s in PROSODIC})),
            (),
            Thresholds(emotion_delta=0.05),
        )
        if probe
        else None
    )
    # a stand-in of a ScoredRun: what the tables read of one
    scored = SimpleNamespace(
        human={"cells": []} if human else None,
        majority=read_majority(root),
        probe=probe_scores,
        exclude=frozenset(),
        relevance={"srd": None, "mrd": None, "eligible": None},
    )
    return SimpleNamespace(label=label, root=root, scored=scored)


def test_emotion_table_takes_human_then_probe_then_prosodic(tmp_path):
    runs = [
        _run(tmp_path, "a", human=True, probe=True),
        _run(tmp_path, "b", probe=True),
        _run(tmp_path, "c"),
    ]
    per_out = {r.label: outcomes(_scores(PROSODIC), Thresholds(emotion_delta=1.0)) for r in runs}
    tables = paper_tables(runs, per_out, set(PROSODIC), BOOT)
    emo = {(r["model"], r["pair"]): r for r in tables["emotion"]}
    # a: human majority on 1-2 (2 valid of 3 decided; the tie is not ok), probe on 2-3
    assert (emo[("a", "1-2")]["source"], emo[("a", "1-2")]["vsp"]) == ("human", 66.67)
    assert (emo[("a", "1-2")]["n_ok"], emo[("a", "1-2")]["n"]) == (3, 4)
    assert emo[("a", "1-2")]["svd"] is None  # a vote has no magnitude
    assert (emo[("a", "2-3")]["source"], emo[("a", "2-3")]["vsp"]) == ("probe", 100.0)
    assert [emo[("b", p)]["source"] for p in ("1-2", "2-3")] == ["probe", "probe"]
    # c: prosodic, 3 of 4 valid over 1-2 and 2 of 4 over 2-3
    assert [(emo[("c", p)]["source"], emo[("c", p)]["vsp"]) for p in ("1-2", "2-3")] == [
        ("prosodic", 75.0),
        ("prosodic", 50.0),
    ]
    dims = {(r["model"], r["pair"]): r for r in tables["dims"]}
    assert dims[("c", "1-2")]["source"] == "prosodic" and dims[("c", "2-3")]["vsp"] == 50.0
    ret = {r["model"]: r for r in tables["retention"]}["c"]
    # e1 lost the style at turn 3: 75 -> 50, one discordant sample, McNemar p = 1
    assert (ret["n"], ret["vsp_12"], ret["vsp_23"], ret["diff"], ret["mcnemar_p"]) == (
        4,
        75.0,
        50.0,
        -25.0,
        1.0,
    )


def test_dims_table_pools_directions_and_langs(tmp_path):
    # volume, levels in RMS: +6 dB steps are valid for intensify; an attenuate sample going down
    # is valid too; pooled VSP counts both directions over their ok samples
    up = [TurnScore("v0", "volume", "intensify", "en", t, 0.1 * 2 ** (t - 1)) for t in (1, 2, 3)]
    down = [TurnScore("v1", "volume", "attenuate", "zh", t, 0.4 / 2 ** (t - 1)) for t in (1, 2, 3)]
    flat = [TurnScore("v2", "volume", "attenuate", "en", t, 0.2, error=None) for t in (1, 2)]
    flat.append(TurnScore("v2", "volume", "attenuate", "en", 3, None, error="features: silent"))
    run = _run(tmp_path, "m")
    per_out = {"m": outcomes(up + down + flat, Thresholds())}
    rows = {r["pair"]: r for r in paper_tables([run], per_out, {"v0", "v1", "v2"}, BOOT)["dims"]}
    assert (rows["1-2"]["vsp"], rows["1-2"]["n_ok"], rows["1-2"]["n"]) == (66.67, 3, 3)
    assert (rows["2-3"]["vsp"], rows["2-3"]["n_ok"], rows["2-3"]["n"]) == (100.0, 2, 3)
    assert rows["1-2"]["svd"] == pytest.approx((100.0 + 50.0) / 2, abs=1e-3)  # |relative| of valid
