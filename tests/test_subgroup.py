"""AUROC vs AUPRC audit: subgroup report and the paper's Theorem 2 on mistake gains."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from sklearn.metrics import average_precision_score, roc_auc_score

from arenalite.metrics import average_precision, mistake_gains, roc_auc, subgroup_report


def _distinct(seed: int, n: int = 40):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    score = rng.permutation(n) / n + 0.2 * y * rng.random(n)  # distinct scores
    assert len(np.unique(score)) == n
    return y, score


def _swap(score: np.ndarray, i: int, j: int) -> np.ndarray:
    out = score.copy()
    out[[i, j]] = out[[j, i]]
    return out


def _mistakes_by_loop(y, score):
    """Definition 2.1 spelled out: adjacent (positive, negative) in ascending score order."""
    order = np.argsort(score)
    return [(order[k], order[k + 1]) for k in range(len(order) - 1)
            if y[order[k]] == 1 and y[order[k + 1]] == 0]


# ----------------------------------------------------------------------------- Theorem 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_theorem2_auroc_gain_constant_auprc_gain_grows_with_score(seed):
    y, s = _distinct(seed)
    result = mistake_gains(y, s)
    table = result.table
    n_pos, n_neg = int(y.sum()), int(len(y) - y.sum())
    expected_pairs = _mistakes_by_loop(y, s)
    assert len(table) == len(expected_pairs) > 2
    assert list(zip(table["row_positive"], table["row_negative"], strict=True)) == expected_pairs
    assert (table["n_pairs"] == 1).all()
    # AUROC: the same 1/(n_pos n_neg) whichever mistake is fixed
    np.testing.assert_allclose(table["auroc_gain"], 1.0 / (n_pos * n_neg), rtol=1e-12)
    # AUPRC: strictly increasing with the score of the fixed pair
    assert table["score_positive"].is_monotonic_increasing
    assert np.all(np.diff(table["auprc_gain"].to_numpy()) > 0)
    base_auc, base_ap = roc_auc(y, s), average_precision(y, s)
    for row in table.itertuples():
        fixed = _swap(s, row.row_positive, row.row_negative)
        assert roc_auc_score(y, fixed) - base_auc == pytest.approx(row.auroc_gain, abs=1e-12)
        assert average_precision_score(y, fixed) - base_ap == pytest.approx(row.auprc_gain,
                                                                            abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_gains_match_recomputation_with_ties(data):
    n = data.draw(st.integers(3, 30))
    y = np.array(data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    y[:2] = [0, 1]
    s = np.array(data.draw(st.lists(st.integers(0, 6), min_size=n, max_size=n)), dtype=float)
    table = mistake_gains(y, s).table
    base_auc, base_ap = roc_auc(y, s), average_precision(y, s)
    for row in table.itertuples():
        assert y[row.row_positive] == 1 and y[row.row_negative] == 0
        assert s[row.row_positive] == row.score_positive < row.score_negative
        fixed = _swap(s, row.row_positive, row.row_negative)
        assert roc_auc(y, fixed) - base_auc == pytest.approx(row.auroc_gain, abs=1e-12)
        assert average_precision(y, fixed) - base_ap == pytest.approx(row.auprc_gain, abs=1e-12)
        assert row.auroc_gain > 0


def test_tied_block_swap_can_lower_auprc():
    """Step-wise AUPRC scores a tied block as one threshold, so a tied swap may cost AUPRC."""
    y = np.r_[np.ones(5), np.zeros(10)].astype(int)
    s = np.r_[np.ones(5), np.full(10, 2.0)]
    row = mistake_gains(y, s).table.iloc[0]
    assert row["auprc_gain"] < 0 < row["auroc_gain"]
    fixed = _swap(s, int(row["row_positive"]), int(row["row_negative"]))
    assert average_precision_score(y, fixed) - average_precision_score(y, s) == pytest.approx(
        row["auprc_gain"], abs=1e-12)


def test_tied_mistakes_count_pairs():
    # values 1 (two positives) and 2 (three negatives): one adjacent pair of values, 6 choices
    y = np.array([1, 1, 0, 0, 0, 1])
    s = np.array([1.0, 1.0, 2.0, 2.0, 2.0, 3.0])
    table = mistake_gains(y, s).table
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["n_pairs"], row["row_positive"], row["row_negative"]) == (6, 0, 2)
    assert row["auroc_gain"] == pytest.approx((2 + 3) / (2 * 3 * 3))


def test_perfect_ranking_has_no_mistakes_and_plot_works():
    result = mistake_gains([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.4])
    assert result.table.empty
    assert list(result.table.columns) == ["score_positive", "score_negative", "row_positive",
                                          "row_negative", "n_pairs", "auroc_gain", "auprc_gain"]
    y, s = _distinct(5)
    fig = mistake_gains(y, s).plot(title="gains")
    assert isinstance(fig, Figure)
    assert fig.axes[0].get_title() == "gains"


def test_mistake_gains_errors():
    with pytest.raises(ValueError, match=r"AUROC is undefined when y holds a single class"):
        mistake_gains([1, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match=r"y and score must have the same length, got 2 and 3"):
        mistake_gains([0, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"score must be finite; found nan at position 0"):
        mistake_gains([0, 1], [np.nan, 0.2])
    with pytest.raises(ValueError, match=r"y must contain only 0/1 labels; found 3 at position 1"):
        mistake_gains([0, 3], [0.1, 0.2])


# ----------------------------------------------------------------------------- subgroup report


def _two_groups(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 400
    group = np.where(np.arange(n) < 200, "A", "B")
    prevalence = np.where(group == "A", 0.4, 0.1)
    y = (rng.random(n) < prevalence).astype(int)
    score = rng.normal(size=n) + 1.2 * y
    return y, score, group


def test_subgroup_report_matches_sklearn_per_group():
    y, s, g = _two_groups()
    report = subgroup_report(y, s, g)
    table = report.table
    assert list(table.columns) == ["group", "n", "n_positive", "prevalence", "auroc", "auprc"]
    assert list(table["group"]) == ["A", "B"]  # descending prevalence
    for row in table.itertuples():
        mask = g == row.group
        assert row.n == mask.sum() and row.n_positive == y[mask].sum()
        assert row.prevalence == pytest.approx(y[mask].mean())
        assert row.auroc == pytest.approx(roc_auc_score(y[mask], s[mask]), abs=1e-12)
        assert row.auprc == pytest.approx(average_precision_score(y[mask], s[mask]), abs=1e-12)
    gap = report.gaps.iloc[0]
    assert (gap["higher_group"], gap["lower_group"]) == ("A", "B")
    assert gap["prevalence_gap"] > 0
    assert gap["auroc_gap"] == pytest.approx(table["auroc"][0] - table["auroc"][1])
    assert gap["auprc_gap"] == pytest.approx(table["auprc"][0] - table["auprc"][1])
    assert report.overall["auroc"] == pytest.approx(roc_auc_score(y, s))
    assert report.overall["auprc"] == pytest.approx(average_precision_score(y, s))


def test_same_ranking_quality_different_prevalence_auprc_gap_is_prevalence():
    """Identical score distributions per class: AUROC equal, AUPRC favours the higher prevalence."""
    from scipy.stats import norm

    def group(n_pos, n_neg):
        pos = norm.ppf((np.arange(n_pos) + 0.5) / n_pos, loc=1.0)
        neg = norm.ppf((np.arange(n_neg) + 0.5) / n_neg)
        return np.r_[np.ones(n_pos), np.zeros(n_neg)], np.r_[pos, neg]

    ya, sa = group(200, 800)   # prevalence 0.2
    yb, sb = group(20, 980)    # prevalence 0.02
    report = subgroup_report(np.r_[ya, yb], np.r_[sa, sb], ["high"] * 1000 + ["low"] * 1000)
    gap = report.gaps.iloc[0]
    assert gap["higher_group"] == "high"
    assert abs(gap["auroc_gap"]) < 0.01
    assert gap["auprc_gap"] > 0.2
    assert "exceeds the AUROC gap" in report.guidance
    assert "prefer AUROC" in report.guidance
    assert "'high'" in report.guidance and "'low'" in report.guidance


def test_three_groups_give_all_pairwise_gaps_and_plot():
    rng = np.random.default_rng(1)
    g = np.repeat(["x", "y", "z"], 100)
    y = (rng.random(300) < np.repeat([0.5, 0.3, 0.1], 100)).astype(int)
    y[[0, 1, 100, 101, 200, 201]] = [0, 1, 0, 1, 0, 1]
    s = rng.random(300) + 0.5 * y
    report = subgroup_report(y, s, g)
    assert len(report.gaps) == 3
    prevalence = dict(zip(report.table["group"], report.table["prevalence"], strict=True))
    for row in report.gaps.itertuples():
        assert prevalence[row.higher_group] >= prevalence[row.lower_group]
    fig = report.plot()
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_title() == "AUROC and AUPRC by subgroup"
    assert ax.get_ylabel() and len(fig.legends) == 1  # beside the bars, not over them
    assert "prefer AUROC" in report.guidance


def test_subgroup_report_errors():
    y, s, g = _two_groups()
    with pytest.raises(ValueError, match=r"group 'B' has only negative labels \(3 rows\)"):
        subgroup_report([1, 0, 1, 0, 0, 0], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                        ["A", "A", "A", "B", "B", "B"])
    with pytest.raises(ValueError, match=r"at least two subgroups, got only 'A'"):
        subgroup_report([0, 1], [0.1, 0.2], ["A", "A"])
    with pytest.raises(ValueError, match=r"y and group must have the same length, got 400 and 3"):
        subgroup_report(y, s, ["A", "B", "A"])
    with pytest.raises(ValueError, match=r"group has a missing value \(None\) at position 1"):
        subgroup_report([0, 1, 0], [0.1, 0.2, 0.3], ["A", None, "B"])
