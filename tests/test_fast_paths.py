"""Fast paths equal simple reference implementations on small inputs (issue 13).

IQM bootstrap: one count pattern per cell, weighted trimmed means over runs sorted once
(against ``trim_mean`` of the runs repeated by their counts, and in distribution against
the per-run bootstrap). Nemenyi: the vectorized studentized-range survival function
(against scipy's per-value integral). Elo: per-dataset sums by ``reduceat``, the
accelerated chord solver (against Newton), the win-rate matrix in row blocks.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from arenalite.rankings import elo
from arenalite.rankings.elo import battles, resampling, scorecard, solvers
from arenalite.rankings.iqm import (
    draw_patterns,
    iqm_from_patterns,
    resampling_patterns,
    stratified_bootstrap_iqm,
    stratified_bootstrap_iqm_equal,
)
from arenalite.rankings.iqm import seed_bootstrap as iqm_module
from arenalite.stats.frequentist import _all_pairs_table
from arenalite.stats.friedman import nemenyi_pvalues, studentized_range_sf


def reference_iqms(cube: np.ndarray, patterns: np.ndarray) -> np.ndarray:
    """Loop reference: trim_mean of each model's runs repeated by their drawn counts."""
    m, d, s = cube.shape
    counts, _ = resampling_patterns(s)
    out = np.empty((patterns.shape[0], m))
    for b in range(patterns.shape[0]):
        for i in range(m):
            drawn = counts[patterns[b, i * d:(i + 1) * d]].ravel()
            # np.repeat takes intp counts: int32 on wasm32, where int64 does not cast safely
            out[b, i] = stats.trim_mean(np.repeat(cube[i].ravel(), drawn.astype(np.intp)), 0.25)
    return out


@pytest.mark.parametrize("n_seeds", [1, 2, 3, 5, 7])
def test_patterns_are_the_multinomial(n_seeds):
    counts, pattern = resampling_patterns(n_seeds)
    assert (counts.sum(axis=1) == n_seeds).all()
    assert len(np.unique(counts, axis=0)) == len(counts) == math.comb(2 * n_seeds - 1, n_seeds)
    sequences = np.bincount(pattern, minlength=len(counts))
    expected = [math.factorial(n_seeds) // math.prod(math.factorial(c) for c in row)
                for row in counts]
    assert sequences.tolist() == expected


def test_too_many_seeds_for_the_pattern_table():
    with pytest.raises(ValueError, match="8 seeds per cell"):
        resampling_patterns(8)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 12), st.integers(1, 6), st.integers(0, 2**32 - 1),
       st.booleans())
def test_iqm_from_patterns_equals_trim_mean_of_repeated_runs(m, d, s, seed, ties):
    rng = np.random.default_rng(seed)
    cube = rng.normal(size=(m, d, s))
    if ties:
        cube = cube.round(0)
    patterns = draw_patterns(rng, 30, m * d, s)
    np.testing.assert_allclose(iqm_from_patterns(cube, patterns),
                               reference_iqms(cube, patterns), rtol=0, atol=1e-12)


def test_replicates_outside_the_windows_are_recomputed_exactly(monkeypatch):
    """With no guard the windows are one run wide: most replicates take the full path."""
    monkeypatch.setattr(iqm_module, "_GUARD_SDS", 0.0)
    rng = np.random.default_rng(3)
    cube = rng.normal(size=(3, 40, 5))
    patterns = draw_patterns(rng, 50, 120, 5)
    np.testing.assert_allclose(iqm_from_patterns(cube, patterns),
                               reference_iqms(cube, patterns), rtol=0, atol=1e-12)


def test_blocking_does_not_change_the_draws(monkeypatch):
    cube = np.random.default_rng(4).normal(size=(6, 10, 5))
    whole = stratified_bootstrap_iqm_equal(cube, 40, np.random.default_rng(0))
    monkeypatch.setattr(iqm_module, "_TABLE_ELEMENTS", 1)
    np.testing.assert_allclose(  # same draws; blocks only change the summation round-off
        whole, stratified_bootstrap_iqm_equal(cube, 40, np.random.default_rng(0)), atol=1e-14)


def test_fast_bootstrap_has_the_per_run_bootstraps_distribution():
    """Two-sample KS test per model: pattern draws vs one index per run (fixed seeds)."""
    rng = np.random.default_rng(5)
    cube = rng.normal(size=(3, 8, 5)) + np.arange(3)[:, None, None]
    fast = stratified_bootstrap_iqm_equal(cube, 4000, np.random.default_rng(1))
    cells = np.repeat(np.arange(24), 5)
    slow = stratified_bootstrap_iqm(cube.ravel(), cells, cells // 8, 4000,
                                    np.random.default_rng(2))
    for i in range(3):
        assert stats.ks_2samp(fast[:, i], slow[:, i]).pvalue > 0.01
        np.testing.assert_allclose(np.percentile(fast[:, i], [2.5, 50, 97.5]),
                                   np.percentile(slow[:, i], [2.5, 50, 97.5]), atol=0.03)


@pytest.mark.parametrize("k", [2, 3, 14, 150])
def test_studentized_range_sf_equals_scipy(k):
    q = np.linspace(0.0, 9.0, 19)
    np.testing.assert_allclose(studentized_range_sf(q, k),
                               stats.studentized_range.sf(q, k, np.inf), rtol=0, atol=1e-11)


def test_studentized_range_sf_interpolated_for_many_values():
    """More values than Hermite nodes: the interpolated path, checked on a sample."""
    q = np.random.default_rng(6).uniform(0.0, 8.0, 6000)
    sample = q[:25]
    np.testing.assert_allclose(studentized_range_sf(q, 20)[:25],
                               stats.studentized_range.sf(sample, 20, np.inf), rtol=0, atol=1e-11)


def test_nemenyi_matrix_equals_scipy_per_pair():
    ranks = np.array([1.2, 2.5, 2.5, 3.9, 4.9])
    n = 12
    scale = np.sqrt(5 * 6 / (6.0 * n))
    expected = stats.studentized_range.sf(
        np.abs(ranks[:, None] - ranks[None, :]) / scale * np.sqrt(2.0), 5, np.inf)
    np.fill_diagonal(expected, 1.0)
    np.testing.assert_allclose(nemenyi_pvalues(ranks, n), expected, rtol=0, atol=1e-11)


def test_all_pairs_table_in_combinations_order():
    models = ["a", "b", "c", "d"]
    table = _all_pairs_table(models, np.arange(4.0), np.full((4, 4), 0.5), 0.05)
    assert list(zip(table["model_a"], table["model_b"], strict=True)) == list(
        combinations(models, 2))


def test_group_sums_equal_add_at():
    rng = np.random.default_rng(7)
    rows = rng.random((12, 5))
    for groups in (np.array([3, 0, 3, 1, 0, 3, 5, 5, 0, 1, 1, 3]), np.repeat([0, 2, 3], 4)):
        expected = np.zeros((6, 5))
        np.add.at(expected, groups, rows)
        np.testing.assert_allclose(elo.group_sums(rows, groups, 6), expected, rtol=0, atol=1e-14)


def test_accelerated_chord_reaches_the_newton_solution():
    """Replicate-like win matrices: the shared-Hessian chord with Anderson mixing vs Newton."""
    rng = np.random.default_rng(8)
    m = 12
    skill = rng.normal(0.0, 1.0, m)
    p = 1.0 / (1.0 + np.exp(-(skill[:, None] - skill[None, :])))
    base = 20.0 * p
    np.fill_diagonal(base, 0.0)
    win = base[None] * rng.uniform(0.7, 1.3, (16, m, m))
    theta0 = elo.bradley_terry(base[None])[0]
    chord, converged = solvers.chord(win, theta0, 1e-12, 200, elo.chord_inverse(base, theta0))
    assert converged.all()
    np.testing.assert_allclose(chord, elo.bradley_terry(win, tol=1e-12), rtol=0, atol=1e-9)


def test_blocked_winrate_matrix_equals_the_direct_one(monkeypatch):
    scores = np.random.default_rng(9).random((7, 5)).round(1)
    direct = battles.battle_outcome(scores[:, None, :] - scores[None, :, :], 0.05).mean(axis=2)
    np.fill_diagonal(direct, np.nan)
    monkeypatch.setattr(scorecard, "_DRAW_BUDGET", 10)
    np.testing.assert_array_equal(elo.winrate_matrix(scores, 0.05), direct)


def test_poisson_sums_skip_zero_means_without_changing_the_stream():
    means = np.array([[0.0, 3.0, 0.0, 12.0, 0.5], [2.0, 0.0, 0.0, 40.0, 0.0]])
    levels = np.array([1.0, 2.0])
    every = np.random.default_rng(1).poisson(means, size=(4,) + means.shape)
    drawn = resampling._poisson_sums(np.random.default_rng(1), means, levels, 4)
    np.testing.assert_array_equal(drawn, np.tensordot(every, levels, axes=([1], [0])))


def test_win_matrix_of_complete_days_equals_the_day_sums():
    rng = np.random.default_rng(10)
    points = rng.choice([0.0, 0.5, 1.0], size=(6, 10))
    weights = rng.uniform(0.1, 1.0, 6)
    pairs = np.vstack(np.triu_indices(5, 1))
    won, lost = elo.day_pair_sums(points, weights)
    expected = elo.pair_sums_to_matrix(won.sum(axis=0), lost.sum(axis=0), pairs, 5)
    np.testing.assert_allclose(elo.win_matrix(points, weights, pairs, 5), expected, rtol=1e-14)
    always = np.ones((6, 10))  # the first model of every pair always wins: losses stay exactly 0
    assert (elo.win_matrix(always, weights, pairs, 5)[pairs[1], pairs[0]] == 0.0).all()


def test_records_formatted_once_per_distinct_record():
    wins, losses = np.array([3, 0, 3, 1, 0]), np.array([1, 0, 1, 2, 4])
    ties = np.array([0, 0, 0, 1, 0])
    n = wins + losses + ties
    with np.errstate(invalid="ignore"):
        share = np.where(n > 0, (wins + 0.5 * ties) / np.maximum(n, 1), np.nan)
    assert scorecard._format_record(wins, losses, ties, share) == [
        "3–1 (75.0 %)", "0–0 (no battles)", "3–1 (75.0 %)", "1–2–1 (37.5 %)", "0–4 (0.0 %)"]


@pytest.mark.parametrize("missing", [False, True])
def test_dataset_pair_sums_equal_grouped_day_sums(missing):
    rng = np.random.default_rng(11)
    points = rng.choice([0.0, 0.5, 1.0], size=(9, 6))
    if missing:
        points[[1, 4], [2, 5]] = np.nan
    codes = np.array([2, 0, 2, 0, 1, 2, 1, 0, 2])
    weights = 1.0 / (6 * np.bincount(codes)[codes])  # equal weights within each dataset
    won, lost = elo.day_pair_sums(points, weights)
    got = elo.dataset_pair_sums(points, weights, codes, 4)
    for side, day in zip(got, (won, lost), strict=True):
        np.testing.assert_allclose(side, elo.group_sums(day, codes, 4), rtol=1e-14, atol=0)
    always = elo.dataset_pair_sums(np.ones((9, 6)), weights, codes, 4)[1]
    assert (always == 0.0).all()  # a side without points stays exactly 0
