"""Elo on nearly separated suites (issue 21): the point fit converges in a handful of Newton
iterations, to the MLE (zero gradient); replicates that need the tie prior stay on the
sufficient statistics and agree with the general path; the blocked chord and the
vectorized log-likelihood equal their unblocked / logaddexp forms."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite.rankings import elo as E
from arenalite.rankings.elo import solvers


def separated(m: int, d: int, spread: float, seed: int = 0) -> arenalite.Benchmark:
    """No seeds; skill differences far above the per-dataset noise."""
    rng = np.random.default_rng(seed)
    score = (0.5 + rng.normal(0, spread, m)[:, None] + rng.normal(0, 0.05, d)[None]
             + rng.normal(0, 0.005, (m, d)))
    mi, di = (a.ravel() for a in np.meshgrid(np.arange(m), np.arange(d), indexing="ij"))
    df = pd.DataFrame({"model": [f"m{i}" for i in mi], "dataset": [f"d{j}" for j in di],
                       "metric": "accuracy", "score": score.ravel().round(5)})
    return arenalite.load_df(df, norm_ref_low=0.0, norm_ref_high=1.0)


def regularized_win(bench: arenalite.Benchmark) -> np.ndarray:
    t = E.play_battles(bench, 0.0)
    win = t.win_matrix()
    return win if E.strongly_connected(win)[()] else win + t.prior


@pytest.mark.parametrize(("m", "spread", "iterations"), [(120, 0.02, 8), (120, 0.1, 10),
                                                         (300, 0.1, 9)])
def test_point_fit_converges_in_a_handful_of_iterations_to_the_mle(m, spread, iterations):
    win = regularized_win(separated(m, 30, spread))
    theta, converged = solvers.newton(win[None], None, 1e-9, iterations)
    assert converged.all()
    p = 1.0 / (1.0 + np.exp(theta[0][None, :] - theta[0][:, None]))  # σ(θ_i − θ_j)
    gradient = win.sum(axis=1) - ((win + win.T) * p).sum(axis=1)
    assert np.abs(gradient).max() < 1e-12 * win.sum()
    # the plain Newton start (zero) reaches the same MLE
    again, _ = solvers.newton(win[None], np.zeros((1, m)), 1e-9, 200)
    np.testing.assert_allclose(E.to_elo(again), E.to_elo(theta), rtol=0, atol=1e-8)


def test_log_likelihood_equals_the_logaddexp_form():
    rng = np.random.default_rng(1)
    win = rng.random((3, 40, 40))
    for w in win:
        np.fill_diagonal(w, 0.0)
    total = win + np.swapaxes(win, 1, 2)
    for scale in (1.0, 30.0, 2000.0):  # 2000: spreads where exp underflows (logaddexp path)
        theta = rng.normal(0, scale, (3, 40))
        d = theta[:, :, None] - theta[:, None, :]
        direct = -(win * np.logaddexp(0.0, -d)).sum(axis=(1, 2))
        got = solvers.log_likelihood(theta, win.sum(axis=2), total)
        np.testing.assert_allclose(got, direct, rtol=1e-12, atol=1e-9 * scale)


def chord_on_both_totals(seed: int, b: int, m: int) -> list[np.ndarray]:
    """The chord's abilities on random general (B, M, M) totals and on uniform ones."""
    rng = np.random.default_rng(seed)
    win = rng.random((b, m, m)) * 0.01
    theta0 = rng.normal(0, 1, m)
    inverse = solvers.chord_inverse(win[0], theta0)
    wins, total = win.sum(axis=2), win + np.swapaxes(win, 1, 2)
    uniform = (wins + 0.005, np.full((b, 1, 1), 0.01))
    return [solvers.chord_sums(w, n, theta0, 1e-9, 60, inverse)[0]
            for w, n in ((wins, total), uniform)]


def test_blocked_share_sums_are_the_unblocked_ones(monkeypatch):
    runs = []
    for entries in (10**9, 7 * 5 * 60):  # one block; blocks of 7 rows
        monkeypatch.setattr(solvers, "_CACHE_ENTRIES", entries)
        runs.append(chord_on_both_totals(2, 5, 60))
    for one, blocked in zip(*runs, strict=True):
        np.testing.assert_array_equal(one, blocked)


@pytest.mark.parametrize("scheme", ["dataset", "split"])
def test_prior_replicates_on_sufficient_statistics_match_the_general_path(monkeypatch, scheme):
    bench = separated(25, 12, 0.1, seed=3)
    kwargs = {"n_bootstrap": 60, "random_state": 4, "resampling": scheme}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = bench.select_models(bench.models_).elo_ranking(**kwargs)
        with monkeypatch.context() as patch:
            patch.setattr(E.BattleSet, "complete", property(lambda self: False))
            general = bench.select_models(bench.models_).elo_ranking(**kwargs)
    assert fast.params["regularized"] and fast.params["regularized_replicates"] > 30
    assert fast.params["regularized_replicates"] == general.params["regularized_replicates"]
    np.testing.assert_allclose(fast.bootstrap.to_numpy(), general.bootstrap.to_numpy(),
                               rtol=0, atol=1e-6)


@pytest.mark.parametrize("resampling", ["dataset", "poisson"])
def test_bootstrap_replicates_sit_within_1e_8_elo_of_their_mle(monkeypatch, resampling):
    """The chord's stopping step (CHORD_TOL) leaves each replicate within 1e-8 Elo of the
    MLE its draws define (a solve to steps of 1e-14, same draws)."""
    bench = separated(60, 20, 0.05)
    kwargs = {"n_bootstrap": 30, "random_state": 3, "resampling": resampling}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shipped = bench.elo_ranking(**kwargs).table
        monkeypatch.setattr(solvers, "CHORD_TOL", 1e-14)
        monkeypatch.setattr(solvers, "CHORD_MAX_ITER", 400)
        monkeypatch.setattr(E.fitting, "CHORD_TOL", 1e-14)
        monkeypatch.setattr(E.fitting, "CHORD_MAX_ITER", 400)
        exact = bench.elo_ranking(**kwargs).table
    for column in ("ELO", "CI_low", "CI_high"):
        np.testing.assert_allclose(shipped[column], exact[column], rtol=0, atol=1e-8)


def test_bootstrap_on_the_demo_results_meets_no_division_by_zero():
    """Anderson mixing deeper than 2 drives separated replicates of the 6-model demo far out;
    before the runaway guard they reached exp(θ) = 0 (a divide-by-zero warning in every
    site build), which the redo hid in the numbers, not on the console."""
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "content" / "demo_results.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = arenalite.load_csv(demo)
    with warnings.catch_warnings(), np.errstate(divide="raise", invalid="raise"):
        warnings.simplefilter("ignore")
        bench.elo_ranking(n_bootstrap=1000, random_state=0)
        bench.leaderboard(n_bootstrap=200, random_state=0)


@pytest.mark.needs_threads
def test_threaded_share_sums_are_the_serial_ones(monkeypatch):
    """The chord's share sums split between threads (blocks of 3 rows, so each thread runs
    several) give the serial pass's bits, on both the general and the uniform totals."""
    monkeypatch.setattr(solvers, "_CACHE_ENTRIES", 3 * 4 * 50)
    monkeypatch.setattr(solvers, "_THREADED_ENTRIES", 0)
    runs = []
    for threads in (1, 2, 3):
        monkeypatch.setattr(solvers, "share_threads", lambda threads=threads: threads)
        runs.append(chord_on_both_totals(5, 4, 50))
    for serial, two, three in zip(*runs, strict=True):
        np.testing.assert_array_equal(serial, two)
        np.testing.assert_array_equal(serial, three)


def test_share_threads_follow_the_platform(monkeypatch):
    monkeypatch.setattr(solvers.sys, "platform", "emscripten")
    assert solvers.share_threads() == 1
    monkeypatch.setattr(solvers.sys, "platform", "wasi")
    assert solvers.share_threads() == 1
    monkeypatch.setattr(solvers.sys, "platform", "linux")
    assert 1 <= solvers.share_threads() <= 8


@pytest.mark.needs_threads
def test_the_share_threads_live_for_one_solve_and_keep_the_callers_error_settings(monkeypatch):
    """No chord thread outlives its solve (nothing for a later fork to copy), and a
    threaded pass raises under the caller's np.errstate as a serial one does."""
    import threading

    before = {t.name for t in threading.enumerate()}
    _threaded_chord_in_child()
    assert not [t.name for t in threading.enumerate()
                if t.name.startswith("arenalite-chord") and t.name not in before]
    monkeypatch.setattr(solvers, "_THREADED_ENTRIES", 0)
    e = np.array([[1.0, 0.0, 0.0, 1.0]] * 3)  # e_i + e_j = 0 for the middle pair
    buffers = [np.empty(4 * 3) for _ in range(2)]
    with solvers.share_pool(2) as pool, np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            solvers._share_sums(e, np.full((3, 1, 1), 1.0), buffers, pool)


@pytest.mark.needs_processes
def test_a_forked_child_solves_with_threads_after_its_parent_did():
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("this platform cannot fork")
    parent = _threaded_chord_in_child()
    with multiprocessing.get_context("fork").Pool(1) as pool:
        child = pool.apply_async(_threaded_chord_in_child).get(timeout=60)
    np.testing.assert_array_equal(child, parent)


def _threaded_chord_in_child() -> np.ndarray:
    rng = np.random.default_rng(6)
    b, m = 3, 40
    win = rng.random((b, m, m))
    theta0 = np.zeros(m)
    inverse = solvers.chord_inverse(win[0], theta0)
    old = solvers._THREADED_ENTRIES, solvers.share_threads
    solvers._THREADED_ENTRIES, solvers.share_threads = 0, lambda: 2
    try:
        return solvers.chord_sums(win.sum(axis=2), win + np.swapaxes(win, 1, 2), theta0,
                                  1e-9, 60, inverse)[0]
    finally:
        solvers._THREADED_ENTRIES, solvers.share_threads = old


def test_a_runaway_chord_replicate_goes_to_newton_without_dividing_by_zero():
    """An iterate whose abilities spread past _RUNAWAY_SPREAD leaves the chord unconverged
    (for the Newton redo) before exp(θ − max θ) underflows to 0."""
    win = np.array([[[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]])
    theta0 = np.array([0.0, 0.0, 0.0])
    inverse = np.eye(3) * 1e4  # a wildly wrong step matrix: the first step runs away
    with np.errstate(divide="raise", invalid="raise"):
        theta, converged = solvers.chord(win, theta0 + [1.0, 0.0, -1.0], 1e-11, 50, inverse)
    assert not converged[0]
    assert np.isfinite(theta).all()


def test_the_demo_bootstrap_sits_within_1e_8_elo_of_its_mle(monkeypatch):
    """The deeper Anderson mixing keeps the demo's separated replicates, which need the tie
    prior, within 1e-8 Elo of a solve to steps of 1e-14."""
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "content" / "demo_results.csv"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = arenalite.load_csv(demo)
        kwargs = {"n_bootstrap": 300, "random_state": 1}
        shipped = bench.select_models(bench.models_).elo_ranking(**kwargs).bootstrap
        for module in (solvers, E.fitting):
            monkeypatch.setattr(module, "CHORD_TOL", 1e-14)
            monkeypatch.setattr(module, "CHORD_MAX_ITER", 400)
        exact = bench.select_models(bench.models_).elo_ranking(**kwargs).bootstrap
    np.testing.assert_allclose(shipped.to_numpy(), exact.to_numpy(), rtol=0, atol=1e-8)
