"""The one VSP totaller: known verdicts give known percents, CIs and counts."""

from __future__ import annotations

from stylebench.scoring.vsp import round_vsp, total_vsp


def test_known_verdicts() -> None:
    t = total_vsp([True, False, True, True], n_boot=500, seed=1)
    assert (t.vsp, t.n_decided, t.n_valid) == (75.0, 4, 3)
    assert t.indicator == (100.0, 0.0, 100.0, 100.0)
    lo, hi = t.vsp_ci
    assert 0.0 <= lo <= 75.0 <= hi <= 100.0 and lo < hi
    assert total_vsp([True, False, True, True], n_boot=500, seed=1) == t  # seeded


def test_nothing_decided_and_unanimous() -> None:
    empty = total_vsp([], n_boot=100, seed=0)
    assert (empty.vsp, empty.vsp_ci, empty.n_decided, empty.n_valid) == (None, None, 0, 0)
    assert round_vsp(empty) == (None, None)
    all_valid = total_vsp(iter([True] * 3), n_boot=100, seed=0)  # any iterable
    assert round_vsp(all_valid) == (100.0, [100.0, 100.0])


def test_rounding_is_the_json_form() -> None:
    t = total_vsp([True, False, False], n_boot=200, seed=0)
    vsp, ci = round_vsp(t)
    assert vsp == 33.33 and isinstance(ci, list) and all(round(x, 2) == x for x in ci)
