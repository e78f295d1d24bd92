"""Wilcoxon signed-rank core and Holm correction: agreement with scipy and invariants."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from arenalite.stats.wilcoxon import holm, min_attainable_p, signed_rank_test


def _scipy(d: np.ndarray, alternative: str) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = stats.wilcoxon(d, alternative=alternative)
    return float(res.statistic), float(res.pvalue)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 70),
       kind=st.sampled_from(["continuous", "rounded", "integers"]),
       alternative=st.sampled_from(["two-sided", "greater", "less"]))
def test_equals_scipy(seed: int, n: int, kind: str, alternative: str) -> None:
    """Exact (no ties), sign-flip (ties/zeros, n ≤ 13) and normal branches all match scipy."""
    rng = np.random.default_rng(seed)
    d = rng.normal(0.3, 1.0, n)
    if kind == "rounded":
        d = np.round(d, 1)
    elif kind == "integers":
        d = rng.integers(-3, 4, n).astype(float)
    if not np.any(d):
        d[0] = 1.0
    ours = signed_rank_test(d, alternative)
    statistic, p = _scipy(d, alternative)
    assert ours.statistic == pytest.approx(statistic)
    assert ours.p_value == pytest.approx(p, rel=1e-9, abs=1e-14)


def test_known_small_example() -> None:
    d = np.array([1.0, 2.0, 3.0, 4.0, 5.0, -6.0])
    result = signed_rank_test(d)
    assert (result.w_plus, result.w_minus, result.statistic) == (15.0, 6.0, 6.0)
    assert signed_rank_test(d, "greater").p_value == pytest.approx(14 / 64)
    assert min_attainable_p(5, "greater") == pytest.approx(1 / 32)
    assert min_attainable_p(5) == pytest.approx(1 / 16)


def test_all_zero_differences_give_no_evidence() -> None:
    result = signed_rank_test(np.zeros(8))
    assert (result.statistic, result.p_value, result.n_nonzero) == (0.0, 1.0, 0)


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="alternative must be one of"):
        signed_rank_test(np.ones(3), "bigger")
    with pytest.raises(ValueError, match="non-finite value inf at position 1"):
        signed_rank_test(np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="non-empty 1-D"):
        signed_rank_test(np.array([]))
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        holm(np.array([0.1, 1.5]))


def test_holm_known_values() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted: .005×4 = .02, .01×3 = .03, .03×2 = .06, .04×1 = .04 → running max .06
    np.testing.assert_allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(holm(np.array([0.5, 0.9])), [1.0, 1.0])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=20))
def test_holm_invariants(values: list[float]) -> None:
    p = np.array(values)
    adjusted = holm(p)
    assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= -1e-15)       # order preserved
    assert adjusted.min() == pytest.approx(min(1.0, p.min() * p.size))
