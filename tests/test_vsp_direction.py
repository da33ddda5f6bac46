"""The direction-only rate ``vsp_direction`` beside VSP: its definition on changes with known
signs and sizes, the unresponsive model's two readings (about 50% vs 0%), and where it shows."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest

from stylebench.compare.paper import pooled
from stylebench.compare.samples import outcomes
from stylebench.report.build import ReportMeta, build_report
from stylebench.report.render_csv import to_csv
from stylebench.report.render_md import to_markdown
from stylebench.scoring.cells import Thresholds, TurnScore, has_asked_sign, score_cells


def _sample(sid: str, direction: str, st: float, *, dim: str = "pitch") -> list[TurnScore]:
    """A pitch sample whose turn 2 is ``st`` semitones from its turn 1 (200 Hz); turn 3 = 2."""
    f2 = 200.0 * 2 ** (st / 12)
    return [TurnScore(sid, dim, direction, "en", t, v) for t, v in ((1, 200.0), (2, f2), (3, f2))]


def _cell(cells, direction: str, pair: str = "1-2"):
    return next(c for c in cells if (c.direction, c.pair) == (direction, pair))


def test_direction_counts_the_asked_sign_of_any_size_and_a_tie_as_not_moved():
    # intensify: +0.5 st (under the 1 st threshold), -3 st (wrong way), 0 (a tie), +2 st (valid)
    scores = [
        *_sample("a", "intensify", 0.5),
        *_sample("b", "intensify", -3.0),
        *_sample("c", "intensify", 0.0),
        *_sample("d", "intensify", 2.0),
        # attenuate, the same changes mirrored: -0.5 and -2 moved down, +3 up, 0 a tie
        *_sample("e", "attenuate", -0.5),
        *_sample("f", "attenuate", 3.0),
        *_sample("g", "attenuate", 0.0),
        *_sample("h", "attenuate", -2.0),
        # a failed sample: in n, not in n_ok, in neither rate
        TurnScore("x", "pitch", "intensify", "en", 1, 200.0),
        TurnScore("x", "pitch", "intensify", "en", 2, None, "too short"),
        TurnScore("x", "pitch", "intensify", "en", 3, 200.0),
    ]
    cells = score_cells(scores, n_boot=200, seed=0)
    for direction in ("intensify", "attenuate"):
        c = _cell(cells, direction)
        assert c.vsp == pytest.approx(25.0)  # only the 2 st change is valid
        assert c.vsp_direction == pytest.approx(50.0)  # the 0.5 st one has the sign too
        lo, hi = c.vsp_direction_ci
        assert 0.0 <= lo <= 50.0 <= hi <= 100.0
    assert _cell(cells, "intensify").n_decided == 4 and _cell(cells, "intensify").n == 5
    # turn 2 -> 3 is no change at all: every sample a tie, none moved
    assert _cell(cells, "intensify", "2-3").vsp_direction == 0.0
    assert has_asked_sign("pitch", "attenuate", 200.0, 190.0)
    assert not has_asked_sign("pitch", "attenuate", 200.0, 200.0)


def test_an_unresponsive_model_sits_near_half_on_direction_and_at_zero_on_vsp():
    """Turns that differ by noise of either sign, under the threshold: what the paper's Table 4
    shows for models that do not respond (about 50%) and what VSP gives them (0%)."""
    rng = random.Random(7)
    scores = [
        s
        for i in range(300)
        for s in _sample(f"s{i:03d}", "intensify" if i % 2 else "attenuate", rng.uniform(-0.6, 0.6))
    ]
    cells = [c for c in score_cells(scores, n_boot=500, seed=0) if c.pair == "1-2"]
    for c in cells:
        assert c.vsp == 0.0
        assert 40.0 < c.vsp_direction < 60.0
        assert c.vsp_direction_ci[0] < 50.0 < c.vsp_direction_ci[1]


def test_direction_reaches_report_json_csv_and_markdown():
    scores = [*_sample("a", "intensify", 0.5), *_sample("b", "intensify", 2.0)]
    meta = ReportMeta(
        model="m",
        run_id="r",
        dims=("pitch",),
        langs=("en",),
        thresholds=Thresholds(),
        extractors={},
        n_samples=2,
        n_turns_total=6,
        n_turns_ok=6,
    )
    rep = build_report(meta, score_cells(scores, n_boot=100), scores)
    first = json.loads(json.dumps(rep))["cells"][0]
    assert (first["vsp"], first["vsp_direction"]) == (50.0, 100.0)
    assert first["vsp_direction_ci"] == [100.0, 100.0]
    row = next(csv.DictReader(io.StringIO(to_csv(rep))))
    assert (row["vsp_direction"], row["vsp_direction_ci_low"], row["vsp_direction_ci_high"]) == (
        "100.0",
        "100.0",
        "100.0",
    )
    md = to_markdown(rep)
    head = next(line for line in md.splitlines() if line.startswith("| direction"))
    line = next(line for line in md.splitlines() if line.startswith("| intensify | en | 1-2"))
    cols = dict(zip(head.split("|"), line.split("|"), strict=True))
    assert cols[" direction-only % [95% CI] "].strip() == "100.0 [100.0, 100.0]"


def test_pooled_table_rows_carry_direction_from_the_same_outcomes():
    scores = [
        *_sample("a", "intensify", 0.5),
        *_sample("b", "attenuate", 0.5),
        *_sample("c", "attenuate", -2.0),
    ]
    rows = [o for per in outcomes(scores, Thresholds()).values() for o in per.values()]
    mine = [o for o in rows if o.key[3] == "1-2"]
    assert sorted((o.sample_id, o.moved, o.valid) for o in mine) == [
        ("a", True, False),
        ("b", False, False),
        ("c", True, True),
    ]
    p = pooled(mine, {"n_boot": 100, "seed": 0, "ci": 0.95})
    assert (p["vsp"], p["vsp_direction"], p["n_ok"]) == (pytest.approx(33.33), 66.67, 3)
