"""Elo's "split"/"dataset" bootstrap on sufficient statistics (issue 13): when every pair
met on every match day, a replicate is solved from its model points and its battles per
pair alone. Checked against the general path (full win matrices) it replaces."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arenalite
from arenalite.rankings import elo as E
from arenalite.rankings.elo import battles as elo_battles
from arenalite.rankings.elo import fitting as elo_fit
from arenalite.rankings.elo import solvers


def scores_frame(rng: np.random.Generator, m: int, d: int, s: int, decimals: int) -> pd.DataFrame:
    """Complete long table: model skill + per-run noise, rounded so that ties occur."""
    skill = rng.normal(0.0, 0.05, m)
    score = np.clip(0.7 + skill[:, None, None] + rng.normal(0.0, 0.05, (m, d, s)), 0, 1)
    mi, di, si = (a.ravel() for a in np.meshgrid(np.arange(m), np.arange(d), np.arange(s),
                                                 indexing="ij"))
    return pd.DataFrame({"model": [f"m{i}" for i in mi], "dataset": [f"d{j}" for j in di],
                         "seed": si, "metric": "accuracy", "score": score.ravel().round(decimals)})


def load(df: pd.DataFrame) -> arenalite.Benchmark:
    seeded = df["seed"].nunique() > 1
    if not seeded:
        df = df.drop(columns="seed")
    return arenalite.load_df(df, seed="seed" if seeded else None, norm_ref_low=0.0,
                             norm_ref_high=1.0)


def ranking(bench, general: bool, monkeypatch, **kwargs):
    """elo_ranking on a fresh copy, by the general path when ``general``; plus warnings."""
    with monkeypatch.context() as patch:
        if general:
            patch.setattr(E.BattleSet, "complete", property(lambda self: False))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = bench.select_models(bench.models_).elo_ranking(**kwargs)
    return result, [str(w.message) for w in caught]


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 7), st.integers(1, 6), st.integers(1, 4), st.integers(0, 2),
       st.sampled_from(["dataset", "split"]), st.sampled_from([None, 0.03]),
       st.integers(0, 10_000))
def test_sufficient_statistics_give_the_general_path_abilities(m, d, s, decimals, scheme,
                                                               threshold, seed):
    """Same replicates, same tie-prior count and warnings; abilities equal to the solver's
    tolerance (tiny suites: many replicates are separated and take the general path)."""
    bench = load(scores_frame(np.random.default_rng(seed), m, d, s, decimals))
    kwargs = dict(n_bootstrap=40, random_state=seed, resampling=scheme, tie_threshold=threshold)
    with pytest.MonkeyPatch.context() as patch:
        fast, fast_warnings = ranking(bench, False, patch, **kwargs)
        general, general_warnings = ranking(bench, True, patch, **kwargs)
    np.testing.assert_allclose(fast.bootstrap.to_numpy(), general.bootstrap.to_numpy(),
                               rtol=0, atol=1e-6)
    assert fast.params["regularized_replicates"] == general.params["regularized_replicates"]
    assert fast_warnings == general_warnings
    pd.testing.assert_frame_equal(fast.table, general.table, rtol=0, atol=1e-6)


def test_larger_suite_takes_the_fast_path_and_matches(monkeypatch):
    bench = load(scores_frame(np.random.default_rng(3), 25, 30, 3, 3))
    t = E.play_battles(bench, 0.0)
    assert t.complete
    calls = []
    chord = elo_fit.chord_sums
    monkeypatch.setattr(elo_fit, "chord_sums", lambda wins, total, *a: calls.append(total.shape)
                        or chord(wins, total, *a))
    fast, _ = ranking(bench, False, monkeypatch, n_bootstrap=300, random_state=0)
    assert calls and all(shape[1:] == (1, 1) for shape in calls)  # uniform battles only
    general, _ = ranking(bench, True, monkeypatch, n_bootstrap=300, random_state=0)
    np.testing.assert_allclose(fast.bootstrap.to_numpy(), general.bootstrap.to_numpy(),
                               rtol=0, atol=1e-7)


def test_missing_scores_take_the_general_path():
    df = scores_frame(np.random.default_rng(1), 4, 5, 2, 3)
    t = E.play_battles(load(df.iloc[1:]), 0.0)  # m0 misses one run: one match day incomplete
    assert not t.complete
    assert E.play_battles(load(df), 0.0).complete


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7), st.integers(1, 5), st.integers(0, 1_000))
def test_landau_condition_is_strong_connectivity(m, units, seed):
    """For tournaments in which every pair fought n battles, the sorted-points test equals
    the graph search on the win matrix (ties and separated groups included)."""
    rng = np.random.default_rng(seed)
    pairs = np.vstack(np.triu_indices(m, 1))
    weight = 1.0 / (pairs.shape[1] * units)
    points = rng.choice([0.0, 0.5, 1.0], p=[0.45, 0.1, 0.45], size=(units, pairs.shape[1]))
    if seed % 3 == 0:  # a top group that wins all its battles: not connected
        points[:, pairs[0] < m // 2] = 1.0
    won = (points * weight).sum(axis=0, keepdims=True)
    lost = ((1.0 - points) * weight).sum(axis=0, keepdims=True)
    win = E.pair_sums_to_matrix(won, lost, pairs, m)
    got = E.complete_connected(win.sum(axis=2), np.array([units * weight]), 0.25 * weight)
    np.testing.assert_array_equal(got, E.strongly_connected(win))


def test_uniform_chord_equals_the_chord_on_win_matrices():
    rng = np.random.default_rng(4)
    m, n = 9, 6.0
    skill = rng.normal(0.0, 1.0, m)
    p = 1.0 / (1.0 + np.exp(-(skill[:, None] - skill[None, :])))
    win = n * rng.binomial(20, p[None].repeat(5, axis=0)) / 20.0
    win = np.triu(win, 1) + np.swapaxes(np.triu(n - win, 1), 1, 2)  # W_ij + W_ji = n
    base = win.mean(axis=0)
    theta0 = E.bradley_terry(base[None])[0]
    inverse = E.chord_inverse(base, theta0)
    expected, ok = solvers.chord(win, theta0, 1e-12, 200, inverse)
    points = win.sum(axis=2)
    got, ok_too = solvers.chord_sums(points + n / 2, np.full((5, 1, 1), n), theta0, 1e-12, 200,
                                inverse)
    assert ok.all() and ok_too.all()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


def test_blocked_model_points_equal_the_win_matrix_row_sums(monkeypatch):
    rng = np.random.default_rng(5)
    m = 6
    pairs = np.vstack(np.triu_indices(m, 1))
    won, lost = rng.random((2, 7, pairs.shape[1]))
    expected = E.pair_sums_to_matrix(won, lost, pairs, m).sum(axis=2)
    monkeypatch.setattr(elo_battles, "_SOLVE_BUDGET", 2 * m * m)  # blocks of two units
    np.testing.assert_allclose(E.model_points(won, lost, pairs, m), expected, rtol=0,
                               atol=1e-15)


def test_unit_battles_are_the_days_weights():
    bench = load(scores_frame(np.random.default_rng(6), 4, 3, 2, 3))
    t = E.play_battles(bench, 0.0)
    for scheme in ("split", "dataset"):
        units = t.complete_units(scheme)
        won, lost = units.pair_sums()
        total = won + lost
        np.testing.assert_allclose(total, np.broadcast_to(units.battles[:, None], total.shape),
                                   rtol=1e-14)
    assert np.allclose(t.complete_units("dataset").battles, 1 / 6)  # each dataset weighs 1


@pytest.mark.parametrize("tie_threshold", [0.0, 0.05])
@pytest.mark.parametrize("scheme", ["split", "dataset"])
def test_unit_points_equal_the_row_sums_of_the_units_win_matrices(scheme, tie_threshold):
    bench = load(scores_frame(np.random.default_rng(7), 7, 4, 3, 3))
    t = E.play_battles(bench, tie_threshold)
    units = t.complete_units(scheme)
    won, lost = units.pair_sums()
    assert units.pair_sums() is units.pair_sums()  # built once
    expected = E.model_points(won, lost, t.pairs, len(t.models))
    np.testing.assert_allclose(units.points, expected, rtol=1e-14, atol=0)
    np.testing.assert_allclose(E.day_model_points(t.points, len(t.models)).sum(axis=1),
                               len(t.models) * (len(t.models) - 1) / 2, rtol=0, atol=0)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(2, 25), st.integers(1, 5), st.integers(0, 10_000))
def test_ranked_day_points_are_the_battles_row_sums(k, m, levels, seed):
    """A model's points on a complete match day without a tie threshold: its average rank
    minus one, exactly the sum of its battle points (ties ½)."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, (k, m)) / 3.0  # few levels: many ties
    points, _ = E.battle_points(scores, 0.0)
    np.testing.assert_array_equal(elo_battles.ranked_day_points(scores),
                                  E.day_model_points(points, m))


@pytest.mark.parametrize("tie_threshold", [0.0, 0.3])
def test_block_win_sums_equal_the_win_matrix_of_the_battle_points(tie_threshold):
    rng = np.random.default_rng(8)
    scores = rng.integers(0, 4, (5, 12)) / 3.0
    weights = rng.random(5)
    points, pairs = E.battle_points(scores, tie_threshold)
    won, lost = elo_battles.complete_win_sums(scores, weights, tie_threshold)
    np.testing.assert_array_equal(E.pair_sums_to_matrix(won, lost, pairs, 12),
                                  E.win_matrix(points, weights, pairs, 12))


def test_a_complete_tournament_fits_and_bootstraps_without_its_battle_points():
    """The K × P points (200 MB at 1000 models × 50 datasets) are scored only on demand:
    the point fit and the dataset bootstrap of a complete tournament use the scores."""
    bench = load(scores_frame(np.random.default_rng(9), 6, 5, 1, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench.elo_ranking(n_bootstrap=20, random_state=0)
    t = E.play_battles(bench, 0.0)
    assert "points" not in vars(t)
    assert t.points.shape == (5, 15)  # scored when asked for
