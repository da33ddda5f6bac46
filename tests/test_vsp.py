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


def test_acoustic_human_and_caption_cells_share_one_shape() -> None:
    """Five samples, pair 1-2: three moved as asked, one the other way, one without a verdict;
    each kind's own builder gives the same shared fields, and stores them under the names
    ``STORED_AS`` lists."""
    from stylebench.ratings.importer import summarize
    from stylebench.records import CaptionVerdictRecord, Sample, UserTurn
    from stylebench.scoring.captions import caption_cells
    from stylebench.scoring.cells import TurnScore, cell_dict, score_cells
    from stylebench.scoring.vsp import STORED_AS, VspCell

    ids = [f"s{i}" for i in range(5)]
    moved = {"s0": 1, "s1": 1, "s2": -1, "s3": 1}  # s4: no verdict
    boot = {"n_boot": 300, "seed": 3}
    # acoustic: +2 st or -2 st from turn 1 to 2; s4 lacks turn 2
    scores = [TurnScore(s, "pitch", "intensify", "en", 1, 200.0) for s in ids]
    scores += [
        TurnScore(s, "pitch", "intensify", "en", 2, 200.0 * 2 ** (2 * m / 12))
        for s, m in moved.items()
    ]
    scores += [TurnScore(s, "pitch", "intensify", "en", 3, 200.0) for s in ids]
    (acoustic,) = [c for c in score_cells(scores, **boot) if c.pair == "1-2"]
    # human: one rater choosing the later (2) or the earlier (1) turn as stronger
    key = {
        "items": {
            f"i{s}": {"kind": "sample", "sample_id": s, "dim": "pitch", "direction": "intensify"}
            | {"lang": "en", "group": ""}
            for s in ids
        }
    }
    answers = {("r1", f"i{s}"): {"choice_1_2": "2" if m > 0 else "1"} for s, m in moved.items()}
    (human,) = [c for c in summarize(key, answers, ["r1"], **boot)["cells"] if c["pair"] == "1-2"]
    # caption: the judge's verdict on turn 2 against turn 1 (s4: given, but cannot tell)
    t = UserTurn("x", "x.wav", 16000, "0")
    samples = [Sample(s, "1", "pitch", "intensify", "en", "v", "c", (t, t, t)) for s in ids]
    label = {1: "increased", -1: "decreased"}
    verdicts = {
        (s, 2): CaptionVerdictRecord(s, 2, "ok", "f", label=label[m]) for s, m in moved.items()
    }
    verdicts[("s4", 2)] = CaptionVerdictRecord("s4", 2, "ok", "f", label="cannot_tell")
    (caption,) = [c for c in caption_cells(samples, verdicts, **boot) if c["pair"] == "1-2"]

    assert isinstance(acoustic, VspCell)
    stored = {"acoustic": cell_dict(acoustic), "human": human, "caption": caption}
    shared = {
        kind: tuple(
            d[STORED_AS[kind].get(f, f)] for f in ("n", "n_decided", "n_valid", "vsp", "vsp_ci")
        )
        for kind, d in stored.items()
    }
    assert shared["acoustic"][:4] == (5, 4, 3, 75.0)
    assert shared["acoustic"] == shared["human"] == shared["caption"]
    assert "n_decided" not in stored["acoustic"] and "n_judged" in stored["human"]
    assert caption["n_ok"] == 5  # the caption cell's own count: every verdict given
