"""The comparison's statistics against hand-computed cases and simulation (stylebench.compare.paired)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stylebench.compare.paired import (
    cochran_q,
    holm,
    inseparable_groups,
    mcnemar_exact,
    paired_bootstrap_diff,
)

pytest.importorskip("statsmodels")


def test_mcnemar_exact_on_a_hand_computed_table():
    # 2x2: both valid 10, only A 2, only B 8, neither 5. Exact McNemar = two-sided binomial test of
    # min(2, 8) = 2 of 10 discordant pairs at 1/2: 2 * (C(10,0) + C(10,1) + C(10,2)) / 2**10
    a = [1] * 10 + [1] * 2 + [0] * 8 + [0] * 5
    b = [1] * 10 + [0] * 2 + [1] * 8 + [0] * 5
    res = mcnemar_exact(a, b)
    assert (res.n, res.n10, res.n01) == (25, 2, 8)
    assert res.p_value == pytest.approx(2 * (1 + 10 + 45) / 1024)  # 0.109375
    assert mcnemar_exact(b, a).p_value == res.p_value and mcnemar_exact(b, a).n10 == 8
    # six discordant pairs, all one way: 2 / 2**6 = 0.03125, the smallest n under 0.05
    assert mcnemar_exact([1] * 6, [0] * 6).p_value == pytest.approx(0.03125)
    assert mcnemar_exact([1] * 5, [0] * 5).p_value == pytest.approx(0.0625)
    assert mcnemar_exact([1, 0, 1], [1, 0, 1]).p_value == 1.0  # no discordant pair
    with pytest.raises(ValueError, match="equal-length"):
        mcnemar_exact([1, 0], [1])


def test_cochran_q_on_a_hand_computed_example():
    # 12 samples x 3 models: 2 x (1,1,1), 4 x (1,1,0), 4 x (1,0,0), 2 x (0,0,0).
    # Column totals C = (10, 6, 2), N = 18, sum C^2 = 140, row totals sum R^2 = 2*9 + 4*4 + 4*1 = 38.
    # Q = (k-1) (k sum C^2 - N^2) / (k N - sum R^2) = 2 (420 - 324) / (54 - 38) = 12,
    # and chi-square with 2 df has survival exp(-Q/2) = exp(-6).
    table = [[1, 1, 1]] * 2 + [[1, 1, 0]] * 4 + [[1, 0, 0]] * 4 + [[0, 0, 0]] * 2
    res = cochran_q(table)
    assert (res.n, res.k) == (12, 3)
    assert res.statistic == pytest.approx(12.0)
    assert res.p_value == pytest.approx(math.exp(-6.0))
    assert cochran_q([[1, 1, 1], [0, 0, 0]]).p_value == 1.0  # no sample differs between models
    with pytest.raises(ValueError, match=">= 3 models"):
        cochran_q([[1, 0]])


def test_holm_matches_the_step_down_by_hand():
    # sorted p: 0.01*3 = 0.03; max(0.03, 0.03*2) = 0.06; max(0.06, 0.04*1) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == []


def test_holm_gives_statsmodels_numbers():
    """The same adjusted p-values as ``multipletests(method="holm")``, exactly: ties, ones,
    a p-value that adjusts past 1, one test alone, and random families."""
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(0)
    families = [[0.5], [1.0, 1.0, 0.2], [0.01, 0.01, 0.04, 0.6], [0.3, 0.9, 0.02]]
    families += [list(rng.random(n) ** 3) for n in (2, 5, 24, 100)]
    for ps in families:
        assert holm(ps) == [float(x) for x in multipletests(ps, method="holm")[1]], ps


def test_holm_is_statsmodels_arithmetic_without_its_garbage_collection(monkeypatch):
    # statsmodels' multipletests(method="holm") calls gc.collect() every time: a comparison of
    # ten paper-size runs (two families per cell, millions of live objects) spent minutes there
    import gc

    import statsmodels.stats.multitest as mt

    rng = np.random.default_rng(0)
    cases = [list(rng.random(int(rng.integers(1, 60))) ** 3) for _ in range(200)]
    cases += [[0.2] * 5, [0.01, 0.01, 0.5, 0.5], [float(x) for x in np.round(rng.random(40), 2)]]
    # statsmodels' own collections are skipped while it computes the expected values: in a test
    # process holding a whole suite's objects, its 203 collections took minutes
    with monkeypatch.context() as m:
        m.setattr(gc, "collect", lambda *args: 0)
        expected = [[float(p) for p in mt.multipletests(c, method="holm")[1]] for c in cases]

    def no_collect(*args: object) -> int:
        raise AssertionError("holm ran a garbage collection")

    monkeypatch.setattr(gc, "collect", no_collect)
    assert [holm(c) for c in cases] == expected


def test_bootstrap_of_whole_numbers_is_the_indexed_bootstrap_exactly():
    # 0/100 indicators (and their paired differences) are summed over each resample from shared
    # counts (scoring.bootstrap.resampled_sums); the CIs are the very floats of indexing each draw
    from stylebench.scoring.bootstrap import bootstrap_ci, resample_counts

    def indexed(a, b, clusters, n_boot, seed):
        d = np.asarray(b, float) - np.asarray(a, float)
        if clusters is None:
            sums, counts = d, np.ones_like(d)
        else:
            _, inv = np.unique(np.asarray(clusters), return_inverse=True)
            sums, counts = np.bincount(inv, weights=d), np.bincount(inv).astype(float)
        idx = np.random.default_rng(seed).integers(0, sums.size, size=(n_boot, sums.size))
        stats = sums[idx].sum(axis=1) / counts[idx].sum(axis=1)
        lo, hi = np.percentile(stats, [50.0 * (1.0 - 0.95), 50.0 * (1.0 + 0.95)])
        return (float(lo), float(hi))

    rng = np.random.default_rng(1)
    for i in range(60):
        n = int(rng.integers(2, 900))
        a = (rng.random(n) < 0.5) * 100.0
        b = (rng.random(n) < rng.random()) * 100.0 if i % 3 else rng.normal(size=n)
        labels = [f"c{x}" for x in rng.integers(0, max(2, n // 4), size=n)] if i % 2 else None
        seed, n_boot = i % 4, (2000, 7)[i % 2]
        assert paired_bootstrap_diff(a, b, labels, n_boot=n_boot, seed=seed) == indexed(
            a, b, labels, n_boot, seed
        )
        idx = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        lo, hi = np.percentile(b[idx].mean(axis=1), [50.0 * (1.0 - 0.95), 50.0 * (1.0 + 0.95)])
        assert bootstrap_ci(b, n_boot=n_boot, seed=seed) == (float(lo), float(hi))
    counts = resample_counts(5, 3, 0)
    assert counts.shape == (5, 3) and counts.sum(axis=0).tolist() == [5.0] * 3
    assert not counts.flags.writeable


def test_inseparable_groups():
    differ_ac = lambda x, y: {x, y} == {"A", "C"}  # noqa: E731
    assert inseparable_groups(["A", "B", "C"], differ_ac) == [["A", "B"], ["B", "C"]]
    assert inseparable_groups(["A", "B", "C"], lambda x, y: False) == [["A", "B", "C"]]
    assert inseparable_groups(["A", "B", "C"], lambda x, y: True) == [["A"], ["B"], ["C"]]


def _paired_sample(rng, n):
    """b copies a with probability 0.6, else is its own Bernoulli(0.7): E[b] - E[a] = 0.08."""
    a = rng.random(n) < 0.5
    b = np.where(rng.random(n) < 0.6, a, rng.random(n) < 0.7)
    return 100.0 * a, 100.0 * b


def test_paired_bootstrap_ci_covers_the_true_difference_about_95_percent():
    # 400 simulated studies of 150 paired samples; true difference 8 points. The binomial standard
    # error of a 95% coverage over 400 studies is sqrt(.95*.05/400) = 1.1 points, so 3.5 of them
    # (3.8 points) bound the Monte Carlo error; the percentile bootstrap's own undercoverage at this
    # n is about 1 point (measured: 93.75% here, 93.25% at n = 80).
    rng = np.random.default_rng(123)
    sims, hits = 400, 0
    for i in range(sims):
        a, b = _paired_sample(rng, 150)
        lo, hi = paired_bootstrap_diff(a, b, n_boot=400, seed=i)
        hits += lo <= 8.0 <= hi
    assert abs(hits / sims - 0.95) <= 0.038, hits / sims


def test_pairing_makes_the_ci_narrower_than_independent_resampling():
    rng = np.random.default_rng(5)
    a, b = _paired_sample(rng, 200)
    lo, hi = paired_bootstrap_diff(a, b, n_boot=2000, seed=1)
    # resampling each model on its own ids ignores the positive correlation: wider
    ra, rb = rng.integers(0, 200, (2000, 200)), rng.integers(0, 200, (2000, 200))
    ind = np.percentile(b[rb].mean(1) - a[ra].mean(1), [2.5, 97.5])
    assert hi - lo < 0.8 * (ind[1] - ind[0])


def test_cluster_bootstrap_is_wider_on_clustered_data_and_equal_without_clusters():
    # 20 contents x 6 samples: whether B beats A is mostly decided per content, so samples of one
    # content are not independent and the plain bootstrap understates the uncertainty
    rng = np.random.default_rng(7)
    a, b, labels = [], [], []
    for c in range(20):
        p_b = rng.choice([0.1, 0.9])
        for _ in range(6):
            a.append(0.0)
            b.append(100.0 * (rng.random() < p_b))
            labels.append(f"content-{c}")
    plain = paired_bootstrap_diff(a, b, n_boot=2000, seed=3)
    clustered = paired_bootstrap_diff(a, b, labels, n_boot=2000, seed=3)
    assert clustered[1] - clustered[0] > 1.6 * (plain[1] - plain[0])
    # one cluster per sample (labels in sample order) is the plain bootstrap, draw for draw
    own = [f"{i:04d}" for i in range(len(a))]
    assert paired_bootstrap_diff(a, b, own, n_boot=500, seed=3) == paired_bootstrap_diff(
        a, b, n_boot=500, seed=3
    )


def test_bootstrap_edge_cases():
    assert paired_bootstrap_diff([], []) is None
    assert paired_bootstrap_diff([0, 100], [100, 200]) == (100.0, 100.0)
    with pytest.raises(ValueError, match="label every sample"):
        paired_bootstrap_diff([0, 100], [100, 0], ["x"])


def test_missing_statsmodels_names_the_extra(monkeypatch):
    import sys

    from stylebench.registry import MissingExtraError

    for name in [m for m in sys.modules if m.split(".")[0] == "statsmodels"] + ["statsmodels"]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(MissingExtraError, match=r"pip install 'stylebench\[compare\]'"):
        mcnemar_exact([1, 0, 1], [0, 1, 1])
