"""Metrics from predictions: scikit-learn agreement, golden values, properties, clear errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from arenalite import get_metric
from arenalite import metrics as M
from arenalite.metric_core import average_ranks

SEEDS = [0, 1, 2, 3]


def _binary(seed: int, n: int = 60, levels: int | None = None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    y[:2] = [0, 1]
    score = rng.random(n) + 0.3 * y
    if levels:  # quantize to create many ties
        score = np.round(score * levels) / levels
    return y, score


def _multiclass(seed: int, n: int = 50, k: int = 4):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return y, p


# ----------------------------------------------------------------------------- vs scikit-learn


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("levels", [None, 4, 1])
def test_ranking_metrics_match_sklearn(seed, levels):
    y, s = _binary(seed, levels=levels)
    assert M.roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)
    assert M.average_precision(y, s) == pytest.approx(skm.average_precision_score(y, s), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_label_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 4, 80)
    pred = np.where(rng.random(80) < 0.6, y, rng.integers(0, 5, 80))
    assert M.accuracy(y, pred) == pytest.approx(skm.accuracy_score(y, pred))
    # class 4 only in the predictions: sklearn warns, the value is the same
    with pytest.warns(UserWarning):
        expected = skm.balanced_accuracy_score(y, pred)
    assert M.balanced_accuracy(y, pred) == pytest.approx(expected)
    labels = np.array(["cat", "dog", "eel"])[y % 3]
    guess = np.array(["cat", "dog", "eel"])[pred % 3]
    assert M.balanced_accuracy(labels, guess) == pytest.approx(
        skm.balanced_accuracy_score(labels, guess))


@pytest.mark.parametrize("seed", SEEDS)
def test_probabilistic_metrics_match_sklearn(seed):
    y, s = _binary(seed)
    p = np.clip(s / s.max(), 0, 1)
    assert M.log_loss(y, p) == pytest.approx(skm.log_loss(y, p), rel=1e-12)
    assert M.brier(y, p) == pytest.approx(skm.brier_score_loss(y, p), rel=1e-12)
    ym, pm = _multiclass(seed)
    assert M.log_loss(ym, pm) == pytest.approx(skm.log_loss(ym, pm, labels=range(4)), rel=1e-12)
    assert M.brier(ym, pm) == pytest.approx(skm.brier_score_loss(ym, pm, labels=range(4)),
                                            rel=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_regression_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=40)
    pred = y + rng.normal(scale=0.5, size=40)
    assert M.rmse(y, pred) == pytest.approx(skm.root_mean_squared_error(y, pred))
    assert M.mae(y, pred) == pytest.approx(skm.mean_absolute_error(y, pred))
    assert M.r2(y, pred) == pytest.approx(skm.r2_score(y, pred))


def test_extreme_probabilities_are_clipped_like_sklearn():
    assert M.log_loss([1, 0], [0.0, 1.0]) == pytest.approx(skm.log_loss([1, 0], [0.0, 1.0]))
    assert M.log_loss([1, 0], [0.0, 1.0]) == pytest.approx(-math.log(np.finfo(float).eps))
    assert M.log_loss([0, 1], [0.0, 1.0]) == pytest.approx(skm.log_loss([0, 1], [0.0, 1.0]))


# ----------------------------------------------------------------------------- edge cases, goldens


def test_perfect_worst_and_tied_rankings():
    y = np.array([0, 0, 1, 1])
    assert M.roc_auc(y, [0.1, 0.2, 0.8, 0.9]) == 1.0
    assert M.roc_auc(y, [0.9, 0.8, 0.2, 0.1]) == 0.0
    assert M.roc_auc(y, [0.5, 0.5, 0.5, 0.5]) == 0.5
    assert M.average_precision(y, [0.1, 0.2, 0.8, 0.9]) == 1.0
    # all tied: one threshold, precision = prevalence
    assert M.average_precision(y, [0.5] * 4) == pytest.approx(0.5)
    # one positive-negative tie counts half
    assert M.roc_auc([0, 1], [0.3, 0.3]) == 0.5
    assert M.roc_auc([0, 0, 1], [0.1, 0.5, 0.5]) == pytest.approx(0.75)


def test_average_precision_golden():
    # sklearn docs example: AP = 0.8333...
    assert M.average_precision([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == pytest.approx(5 / 6)
    # all positives: precision 1 at every threshold
    assert M.average_precision([1, 1, 1], [0.2, 0.3, 0.1]) == 1.0


def test_accuracy_and_balanced_accuracy_golden():
    assert M.accuracy([0, 1, 1, 1], [0, 1, 0, 1]) == 0.75
    # recall class 0 = 1, class 1 = 2/3
    assert M.balanced_accuracy([0, 1, 1, 1], [0, 1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)
    assert M.accuracy([True, False], [1, 0]) == 1.0


def test_brier_and_log_loss_golden():
    assert M.brier([0, 1], [0.5, 0.5]) == 0.25
    assert M.log_loss([0, 1], [0.5, 0.5]) == pytest.approx(math.log(2))
    k = 5
    uniform = np.full((3, k), 1 / k)
    assert M.log_loss([0, 3, 4], uniform) == pytest.approx(math.log(k))
    assert M.brier([0, 1], [[1.0, 0.0], [0.0, 1.0]]) == 0.0
    assert M.brier([0, 1], [[0.0, 1.0], [1.0, 0.0]]) == 2.0


def test_regression_golden():
    assert M.rmse([0, 0], [3, 4]) == pytest.approx(math.sqrt(12.5))
    assert M.mae([0, 0], [3, -4]) == 3.5
    assert M.r2([1, 2, 3], [1, 2, 3]) == 1.0
    assert M.r2([1, 2, 3], [2, 2, 2]) == 0.0


def test_gaussian_nll_matches_scipy():
    from scipy.stats import norm

    rng = np.random.default_rng(3)
    y, mu, sd = rng.normal(size=30), rng.normal(size=30), rng.uniform(0.2, 3, 30)
    assert M.gaussian_nll(y, mu, sd) == pytest.approx(-norm.logpdf(y, mu, sd).mean(), rel=1e-12)
    assert M.gaussian_nll([0.0], [0.0], [1.0]) == pytest.approx(0.5 * math.log(2 * math.pi))


def _crps_reference(y, mu, sd):
    """Closed form with math.erf, one value at a time (independent of scipy.special)."""
    out = []
    for yi, mi, si in zip(y, mu, sd, strict=True):
        z = (yi - mi) / si
        cdf = 0.5 * (1 + math.erf(z / math.sqrt(2)))
        pdf = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        out.append(si * (z * (2 * cdf - 1) + 2 * pdf - 1 / math.sqrt(math.pi)))
    return float(np.mean(out))


def test_crps_gaussian_golden_and_references():
    # y at the mean, sigma 1: 2 phi(0) - 1/sqrt(pi) = (sqrt(2) - 1)/sqrt(pi)
    assert M.crps_gaussian([0.0], [0.0], [1.0]) == pytest.approx(
        (math.sqrt(2) - 1) / math.sqrt(math.pi), abs=1e-15)
    rng = np.random.default_rng(4)
    y, mu, sd = rng.normal(size=25) * 3, rng.normal(size=25), rng.uniform(0.1, 4, 25)
    assert M.crps_gaussian(y, mu, sd) == pytest.approx(_crps_reference(y, mu, sd), abs=1e-12)
    # definition: integral of (F(x) - 1[x >= y])^2 dx, numerically
    from scipy.stats import norm

    def trapezoid(f, x):
        return float(np.sum((f[1:] + f[:-1]) / 2 * np.diff(x)))

    for yi, mi, si in zip(y[:3], mu[:3], sd[:3], strict=True):
        below = np.linspace(mi - 40 * si, yi, 200_001)  # split at y: the integrand jumps there
        above = np.linspace(yi, mi + 40 * si, 200_001)
        numeric = (trapezoid(norm.cdf(below, mi, si) ** 2, below)
                   + trapezoid(norm.sf(above, mi, si) ** 2, above))
        assert M.crps_gaussian([yi], [mi], [si]) == pytest.approx(numeric, abs=1e-7)


def test_crps_approaches_mae_for_tiny_sigma():
    assert M.crps_gaussian([1.0, -2.0], [0.0, 0.0], [1e-9, 1e-9]) == pytest.approx(1.5, abs=1e-8)


def test_average_ranks_match_scipy():
    from scipy.stats import rankdata

    v = np.array([3, 1, 3, 2, 2, 2, 5.0])
    np.testing.assert_allclose(average_ranks(v), rankdata(v))


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("call", "exc", "pattern"),
    [
        (lambda: M.roc_auc([0, 1, 2], [0.1, 0.2, 0.3]), ValueError,
         r"y_true must contain only 0/1 labels; found 2 at position 2"),
        (lambda: M.roc_auc([1, 1, 1], [0.1, 0.2, 0.3]), ValueError,
         r"ROC AUC is undefined when y_true holds a single class \(all 3 labels are 1\)"),
        (lambda: M.roc_auc([0, 0], [0.1, 0.2]), ValueError, r"single class.*are 0"),
        (lambda: M.roc_auc([0, 1], [0.1, np.nan]), ValueError,
         r"y_score must be finite; found nan at position 1"),
        (lambda: M.roc_auc([0, 1], [0.1, np.inf]), ValueError, r"y_score.*inf at position 1"),
        (lambda: M.roc_auc([0, 1, 1], [0.1, 0.2]), ValueError,
         r"y_true and y_score must have the same length, got 3 and 2"),
        (lambda: M.roc_auc([0, 1], [[0.1, 0.2]]), ValueError, r"y_score must be one-dimensional"),
        (lambda: M.roc_auc([], []), ValueError, r"y_true is empty"),
        (lambda: M.roc_auc([0, 1], ["a", "b"]), TypeError, r"y_score must be numeric; found 'a'"),
        (lambda: M.roc_auc([0, 1], [0.1, None]), ValueError,
         r"y_score has a missing value \(None\) at position 1"),
        (lambda: M.roc_auc(None, [0.1]), TypeError, r"y_true must be array-like"),
        (lambda: M.average_precision([0, 0], [0.1, 0.2]), ValueError,
         r"average precision is undefined when y_true has no positive labels"),
        (lambda: M.log_loss([0, 1], [0.2, 1.2]), ValueError,
         r"y_prob must be probabilities in \[0, 1\]; found 1.2 at position 1"),
        (lambda: M.brier([0, 1], [-0.1, 0.5]), ValueError, r"found -0.1 at position 0"),
        (lambda: M.log_loss([0, 1], [[0.5, 0.5], [0.6, 0.6]]), ValueError,
         r"rows of y_prob must sum to 1 \(within 1e-05\); row 1 sums to 1.2"),
        (lambda: M.log_loss([0, 3], [[0.5, 0.5], [0.5, 0.5]]), ValueError,
         r"y_true must hold integer class labels 0..1 .*found 3 at position 1"),
        (lambda: M.brier([0, 0.5], [[0.5, 0.5], [0.5, 0.5]]), ValueError,
         r"found 0.5 at position 1"),
        (lambda: M.log_loss([0, 1], [[0.5, np.nan], [0.5, 0.5]]), ValueError,
         r"y_prob must be finite probabilities.*nan at row 0, column 1"),
        (lambda: M.log_loss([0], [[1.0]]), ValueError, r"two class columns, got shape \(1, 1\)"),
        (lambda: M.log_loss([0, 1], np.ones((2, 2, 2)) / 2), ValueError, r"\(n, C\) matrix"),
        (lambda: M.r2([2, 2, 2], [1, 2, 3]), ValueError,
         r"R² is undefined when y_true is constant \(all 3 values are 2\)"),
        (lambda: M.gaussian_nll([0, 1], [0, 1], [1, 0]), ValueError,
         r"std must be strictly positive; found 0 at position 1"),
        (lambda: M.crps_gaussian([0, 1], [0, 1], [1]), ValueError,
         r"y_true and std must have the same length"),
        (lambda: M.crps_gaussian([0], [np.nan], [1]), ValueError, r"mean must be finite"),
        (lambda: M.accuracy([0, 1], [0, None]), ValueError, r"y_pred has a missing value"),
        (lambda: M.rmse("abc", [1]), TypeError, r"y_true must be array-like, got str"),
        (lambda: M.accuracy(["a", "b"], [0, 1]), TypeError,
         r"same kind, got non-numeric y_true and numeric y_pred \(e.g. 'a' at position 0\)"),
        (lambda: M.balanced_accuracy([0, 1], ["a", "b"]), TypeError,
         r"numeric y_true and non-numeric y_pred"),
    ],
)
def test_bad_input_raises_clear_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_pandas_inputs_work_and_nullable_missing_is_reported():
    y = pd.Series([0, 1, 1, 0])
    s = pd.Series([0.1, 0.9, 0.8, 0.3])
    assert M.roc_auc(y, s) == 1.0
    with pytest.raises(ValueError, match=r"y_score must be finite; found nan at position 2"):
        M.roc_auc(y, pd.Series([0.1, 0.2, None, 0.4], dtype="Float64"))


# ----------------------------------------------------------------------------- registry


def test_every_metric_function_is_registered_consistently():
    for name, fn in M.METRIC_FUNCTIONS.items():
        spec = get_metric(name)
        assert spec is not None, name
        assert M.get_metric_function(name.upper()) is fn
    for name in ("accuracy", "balanced_accuracy", "roc_auc", "average_precision", "r2"):
        assert get_metric(name).direction == "max"
        assert get_metric(name).optimum == 1
    for name in ("log_loss", "brier", "rmse", "mae", "crps_gaussian"):
        assert get_metric(name).direction == "min"
        assert get_metric(name).optimum == 0
    assert get_metric("roc_auc").anchor == 0.5
    assert get_metric("brier").anchor == 0.25
    assert get_metric("log_loss").anchor == "ln_k"
    with pytest.raises(ValueError, match="Unknown metric 'f2'"):
        M.get_metric_function("f2")


def test_subgroup_functions_are_reexported():
    from arenalite.metrics import mistake_gains, subgroup_report
    from arenalite.subgroup import mistake_gains as mg
    from arenalite.subgroup import subgroup_report as sr

    assert mistake_gains is mg and subgroup_report is sr
    with pytest.raises(AttributeError):
        _ = M.no_such_metric


# ----------------------------------------------------------------------------- properties


@st.composite
def labelled_scores(draw, min_size=2, max_size=40):
    n = draw(st.integers(min_size, max_size))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    y[0], y[1] = 0, 1
    scores = draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n))  # many ties
    return np.array(y), np.array(scores, dtype=float) / 2


@settings(max_examples=40, deadline=None)
@given(labelled_scores())
def test_auc_invariant_under_monotone_transform_and_antisymmetric(data):
    y, s = data
    auc = M.roc_auc(y, s)
    assert 0.0 <= auc <= 1.0
    assert M.roc_auc(y, np.exp(s) * 3 + 1) == pytest.approx(auc, abs=1e-12)
    assert M.roc_auc(y, s**3 + 7) == pytest.approx(auc, abs=1e-12)
    assert M.roc_auc(y, -s) == pytest.approx(1.0 - auc, abs=1e-12)
    assert M.roc_auc(y, s) == pytest.approx(skm.roc_auc_score(y, s), abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(labelled_scores())
def test_average_precision_bounded_and_monotone_invariant(data):
    y, s = data
    ap = M.average_precision(y, s)
    assert 0.0 < ap <= 1.0
    assert M.average_precision(y, np.exp(s)) == pytest.approx(ap, abs=1e-12)
    assert ap == pytest.approx(skm.average_precision_score(y, s), abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_probabilistic_metrics_bounded(seed, k):
    y, p = _multiclass(seed, n=20, k=k)
    assert 0.0 <= M.brier(y, p) <= 2.0
    assert M.log_loss(y, p) >= 0.0
    yb = (y == 0).astype(int)
    assert 0.0 <= M.brier(yb, p[:, 0]) <= 1.0
    assert 0.0 <= M.balanced_accuracy(y, p.argmax(axis=1)) <= 1.0
    assert M.crps_gaussian(p[:, 0], p[:, 1], p[:, 0] + 0.1) >= 0.0
