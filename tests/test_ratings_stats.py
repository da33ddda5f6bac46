"""Agreement statistics against hand-computed and published values."""

from __future__ import annotations

import numpy as np
import pytest

from stylebench.ratings.stats import (
    category_counts,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_agreement,
    transpose,
)

N = None


def test_small_table_by_hand():
    """Three raters, four units, binary values (units x raters):

        u1: 1 1 1    u2: 0 0 0    u3: 1 1 0    u4: 0 0 1

    Fleiss: n = 3 ratings per unit, P_i = (sum_j n_ij^2 - 3) / 6: u1 = u2 = (9 - 3)/6 = 1,
    u3 = u4 = (4 + 1 - 3)/6 = 1/3, so P_bar = (1 + 1 + 1/3 + 1/3)/4 = 2/3. The marginal shares are
    p_0 = p_1 = 6/12, P_e = 1/4 + 1/4 = 1/2; kappa = (2/3 - 1/2)/(1 - 1/2) = 1/3.

    Krippendorff (nominal): each unit has m_u = 3 values, so each ordered pair weighs 1/2.
    u1 adds o_11 += 3*2/2 = 3, u2 adds o_00 += 3; u3 = (1,1,0) has ordered pairs (1,1)x2,
    (1,0)x2, (0,1)x2, adding o_11 += 1, o_10 += 1, o_01 += 1; u4 likewise o_00 += 1, o_01 += 1,
    o_10 += 1. So o_00 = o_11 = 4, o_01 = o_10 = 2, n_0 = n_1 = 6, n = 12.
    alpha = 1 - (n - 1) * (o_01 + o_10) / (n_0 n_1 + n_1 n_0) = 1 - 11 * 4 / 72 = 7/18.

    A fifth unit rated by one rater only is not pairable and must change nothing.
    """
    units = [[1, 1, 1], [0, 0, 0], [1, 1, 0], [0, 0, 1]]
    assert krippendorff_alpha(units, "nominal") == pytest.approx(7 / 18)
    assert fleiss_kappa(category_counts(units, (0, 1))) == pytest.approx(1 / 3)
    with_single = [*units, [1, N, N]]
    assert krippendorff_alpha(with_single, "nominal") == pytest.approx(7 / 18)
    assert fleiss_kappa(category_counts(with_single, (0, 1))) == pytest.approx(1 / 3)


def test_interval_and_ordinal_by_hand():
    """Two raters, three units: (1, 2), (3, 3), (5, 4); every ordered pair weighs 1/(2-1) = 1.

    Observed: only u1 and u3 disagree, each by 1 in both orders: sum o_ck d2 = 4 (interval and
    ordinal alike: adjacent values 1-2 and 4-5 each hold one value, so the ordinal distance
    (1 + 1 - (1 + 1)/2)^2 = 1). n = 6.
    Interval expected: sum over all ordered pairs of the 6 values of (x_i - x_j)^2
    = 2 * 6 * sum (x - 3)^2 = 12 * 10 = 120; alpha = 1 - 5 * 4 / 120 = 5/6.
    Ordinal expected (marginals n_1=n_2=n_4=n_5=1, n_3=2): for c<k, n_c n_k d2(c,k) with
    d2 = (sum_{g=c..k} n_g - (n_c + n_k)/2)^2: (1,2) 1, (1,3) 2*6.25, (1,4) 16, (1,5) 25,
    (2,3) 2*2.25, (2,4) 9, (2,5) 16, (3,4) 2*2.25, (3,5) 2*6.25, (4,5) 1; sum 102, both orders
    204; alpha = 1 - 5 * 4 / 204 = 184/204.
    """
    units = [[1, 2], [3, 3], [5, 4]]
    assert krippendorff_alpha(units, "interval") == pytest.approx(5 / 6)
    assert krippendorff_alpha(units, "ordinal") == pytest.approx(184 / 204)


def test_published_examples():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers x 12 units;
    # published alpha: nominal 0.743, ordinal 0.815, interval 0.849.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3]
    c = [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]
    units = transpose([a, b, c, d])
    assert krippendorff_alpha(units, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(units, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(units, "interval") == pytest.approx(0.849, abs=5e-4)
    # Fleiss (1971) worked example as usually reproduced: 10 subjects, 14 raters, 5 categories;
    # P_bar = 0.378, P_e = 0.213, kappa = 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(counts) == pytest.approx(0.210, abs=5e-4)


def test_perfect_panel_is_one():
    units = [[v] * 4 for v in (1, 2, 2, 1, 2, 1)]
    table = transpose(units)  # raters x units
    assert krippendorff_alpha(units, "nominal") == pytest.approx(1.0)
    assert fleiss_kappa(category_counts(units, (1, 2))) == pytest.approx(1.0)
    assert pairwise_agreement(table) == 100.0
    ints = [[v] * 3 for v in (1, 3, 5, 4, 2)]
    assert krippendorff_alpha(ints, "ordinal") == pytest.approx(1.0)
    assert krippendorff_alpha(ints, "interval") == pytest.approx(1.0)


def test_random_panel_is_near_zero():
    rng = np.random.default_rng(0)
    choice = rng.integers(0, 2, size=(400, 5)).tolist()  # 400 units x 5 raters, coin flips
    assert abs(krippendorff_alpha(choice, "nominal")) < 0.05
    assert abs(fleiss_kappa(category_counts(choice, (0, 1)))) < 0.05
    assert pairwise_agreement(transpose(choice)) == pytest.approx(50.0, abs=3.0)
    ints = rng.integers(1, 6, size=(400, 5)).tolist()
    assert abs(krippendorff_alpha(ints, "ordinal")) < 0.05
    assert abs(krippendorff_alpha(ints, "interval")) < 0.05


def test_systematic_disagreement_is_negative():
    units = [[0, 1], [1, 0], [0, 1], [1, 0]]  # two raters who always disagree
    assert krippendorff_alpha(units) < 0
    assert fleiss_kappa(category_counts(units, (0, 1))) == pytest.approx(-1.0)
    assert pairwise_agreement(transpose(units)) == 0.0


def test_pairwise_agreement_by_hand():
    # A-B share units 1-3 and agree on 2 (66.7%); A-C share 1-3, agree on 2 (66.7%);
    # B-C share 1-4, agree on 2 (50%); mean 61.1%.
    table = [[1, 1, 0, N], [1, 0, 0, 1], [1, 1, 1, 1]]
    assert pairwise_agreement(table) == pytest.approx((200 / 3 + 200 / 3 + 50) / 3)
    assert pairwise_agreement([[1, N], [N, 1]]) is None


def test_undefined_cases_are_none_not_numbers():
    same = [[1, 1, 1], [1, 1, 1]]
    assert krippendorff_alpha(same) is None
    assert fleiss_kappa(category_counts(same, (0, 1))) is None
    assert krippendorff_alpha([[1, N], [N, 2]]) is None  # nothing pairable
    assert fleiss_kappa([[1, 0], [0, 1]]) is None  # one rating per unit


def test_bad_input():
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha([[1, 2]], "ratio")
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "interval")
    with pytest.raises(ValueError, match="categories"):
        category_counts([[1, 3]], (1, 2))


def _random_table(rng, n_units, n_raters, values, p_missing):
    units = rng.choice(values, size=(n_units, n_raters)).tolist()
    return [[None if rng.random() < p_missing else v for v in u] for u in units]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_package_alpha_matches_the_hand_written_one(level):
    """The ``krippendorff`` package against stylebench's former hand-written alpha
    (tests/agreement_handwritten.py) on random panels with missing ratings."""
    from agreement_handwritten import krippendorff_alpha as by_hand

    rng = np.random.default_rng(11)
    for trial in range(20):
        units = _random_table(rng, 30, 1 + trial % 5, [1, 2, 3, 4, 5], 0.3)
        ours, ref = krippendorff_alpha(units, level), by_hand(units, level)
        assert (ours is None) == (ref is None)
        if ref is not None:
            assert ours == pytest.approx(ref, abs=1e-9)
    labels = [["later", "earlier", None, "later"], ["later", "later", "later", None]] * 5
    assert krippendorff_alpha(labels) == pytest.approx(by_hand(labels))


def test_statsmodels_kappa_matches_the_hand_written_one_on_full_panels():
    from agreement_handwritten import fleiss_kappa as by_hand

    rng = np.random.default_rng(12)
    for _ in range(20):
        units = _random_table(rng, 25, int(rng.integers(2, 7)), [0, 1, 2], 0.0)
        counts = category_counts(units, (0, 1, 2))
        assert fleiss_kappa(counts) == pytest.approx(by_hand(counts), abs=1e-12)
    # a unit a rater skipped is left out (Fleiss assumes one panel size); the hand-written
    # generalisation kept it, so the two now differ exactly by that unit
    units = [[1, 1, 1], [0, 0, 0], [1, 1, 0], [0, 0, 1], [1, 0, N]]
    counts = category_counts(units, (0, 1))
    assert fleiss_kappa(counts) == pytest.approx(1 / 3)
    assert by_hand(counts) != pytest.approx(1 / 3)
