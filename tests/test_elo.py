"""Bradley-Terry Elo: golden values (SPEC §3), the numeric core on arrays, bootstrap
invariants, bad input, and hypothesis properties (permutation, monotonicity, finiteness)."""

from __future__ import annotations

import re
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import arenalite
from arenalite.rankings import elo as E
from arenalite.rankings.elo import fitting as elo_fit
from arenalite.rankings.elo import resampling, scorecard
from frames import long_frame

matplotlib.use("Agg")

GOLDEN = {"Steady": 1091.7, "Specialist-X": 1000.0, "Specialist-Y": 1000.0, "Sprinter": 908.3}


def load(df: pd.DataFrame, **kwargs):
    kwargs.setdefault("norm_ref_low", 0.0)
    kwargs.setdefault("norm_ref_high", 1.0)
    return arenalite.load_df(df, **kwargs)


def frame(scores: dict[str, list[float]]) -> pd.DataFrame:
    """One accuracy dataset per score column."""
    return long_frame(scores, ["accuracy"] * len(next(iter(scores.values()))))


def ratings(result) -> dict[str, float]:
    return dict(zip(result.table["model"], result.table["ELO"], strict=True))


# ---- golden values --------------------------------------------------------------------
def test_four_model_golden(four_models):
    res = load(four_models).elo_ranking(n_bootstrap=0)
    assert list(res.table.columns) == ["model", "ELO", "CI_low", "CI_high"]
    got = ratings(res)
    for model, value in GOLDEN.items():
        assert got[model] == pytest.approx(value, abs=0.05)
    assert list(res.table["model"])[0] == "Steady" and list(res.table["model"])[-1] == "Sprinter"
    assert np.allclose(res.table["CI_low"], res.table["ELO"])
    assert np.allclose(res.table["CI_high"], res.table["ELO"])
    assert res.table["ELO"].mean() == pytest.approx(1000.0)


def test_win_probability_gap_and_rule_of_thumb():
    assert arenalite.elo_gap(0.75) == pytest.approx(400 * np.log10(3), abs=1e-9)
    assert arenalite.elo_gap(0.75) == pytest.approx(190.85, abs=0.005)
    assert arenalite.elo_win_probability(190.85) == pytest.approx(0.75, abs=1e-4)
    probs = arenalite.elo_win_probability(np.array([-400.0, 0.0, 400.0]))
    assert probs.shape == (3,)
    assert probs[0] + probs[2] == pytest.approx(1.0)
    table = arenalite.elo_rule_of_thumb()
    assert list(table["delta"]) == [0, 50, 100, 200, 400]
    assert list(table["win_probability"]) == [50.0, 57.1, 64.0, 76.0, 90.9]
    with pytest.raises(TypeError, match="delta"):
        arenalite.elo_win_probability("a lot")
    with pytest.raises(ValueError, match="probability"):
        arenalite.elo_gap(1.0)


def test_golden_extras(four_models):
    res = load(four_models).elo_ranking(n_bootstrap=0)
    wr = res.winrate_matrix
    assert list(wr.index) == list(wr.columns)
    assert wr.index[0] == "Steady" and wr.index[-1] == "Sprinter"
    assert np.isnan(np.diag(wr.to_numpy())).all()
    assert wr.loc["Steady", "Sprinter"] == 1.0 and wr.loc["Sprinter", "Steady"] == 0.0
    assert wr.loc["Specialist-X", "Steady"] == 0.5
    rec = res.record.set_index(["model", "opponent"])
    assert rec.loc[("Steady", "Sprinter"), "record"] == "6–0 (100.0 %)"
    assert rec.loc[("Steady", "(all)"), "record"] == "12–6 (66.7 %)"
    assert rec.loc[("Sprinter", "(all)"), ["wins", "losses", "ties"]].tolist() == [6, 12, 0]
    assert rec.loc[("Steady", "(all)"), "win_share"] == pytest.approx(2 / 3)
    card = res.scorecard
    assert card.loc["Steady", "Sprinter"] == "6–0 (100.0 %)"
    assert card.loc["Steady", "Steady"] == "—"
    assert card.loc["Steady", "ELO"] == pytest.approx(1091.7)


def test_plots_return_figures(four_models):
    from matplotlib.figure import Figure

    res = load(four_models).elo_ranking(n_bootstrap=50, random_state=0)
    fig = res.plot(title="Elo")
    assert isinstance(fig, Figure) and fig.axes[0].get_title() == "Elo"
    heat = res.plot_winrate(figsize=(5, 4))
    assert isinstance(heat, Figure)
    ax = Figure().add_subplot()
    assert res.plot_winrate(ax=ax) is ax.figure


# ---- numeric core on arrays -------------------------------------------------------------
def hunter_mm(win: np.ndarray, tol: float = 1e-12) -> np.ndarray:
    """Reference: Hunter's MM iteration γ_i ← W_i / Σ_j N_ij / (γ_i + γ_j)."""
    n = win + win.T
    gamma = np.ones(len(win))
    for _ in range(100_000):
        new = win.sum(axis=1) / (n / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new /= np.exp(np.log(new).mean())
        if np.abs(new - gamma).max() < tol:
            break
        gamma = new
    return np.log(new)


def test_newton_matches_hunter_mm_and_score_equations():
    rng = np.random.default_rng(3)
    win = rng.random((5, 5))
    np.fill_diagonal(win, 0.0)
    theta = E.bradley_terry(win[None])[0]
    assert np.allclose(theta, hunter_mm(win), atol=1e-7)
    p = 1 / (1 + np.exp(-(theta[:, None] - theta[None, :])))
    assert np.allclose(((win + win.T) * p).sum(axis=1), win.sum(axis=1))


def test_two_model_gap_is_elo_gap():
    # A wins 3 of 4 battles against B: P(A beats B) = 0.75 → gap 400·log10(3).
    win = np.array([[[0.0, 3.0], [1.0, 0.0]]])
    elo = E.to_elo(E.bradley_terry(win))[0]
    assert elo[0] - elo[1] == pytest.approx(400 * np.log10(3), abs=1e-6)


def test_battle_points_and_ties():
    scores = np.array([[0.5, 0.5, 0.7], [0.50, 0.52, np.nan]])
    points, pairs = E.battle_points(scores, 0.0)
    assert pairs.tolist() == [[0, 0, 1], [1, 2, 2]]
    assert points[0].tolist() == [0.5, 0.0, 0.0]
    assert points[1, 0] == 0.0 and np.isnan(points[1, 1:]).all()
    loose, _ = E.battle_points(scores, 0.03)
    assert loose[1, 0] == 0.5


def test_weights_make_every_complete_dataset_weigh_one():
    # D0 has 5 seeds, D1 one seed: each dataset carries total weight 1 (1 / (P·S_d) per battle).
    rows = []
    for model, level in {"A": 0.9, "B": 0.8, "C": 0.7}.items():
        for s in range(5):
            rows.append({"model": model, "dataset": "D0", "seed": s, "metric": "accuracy",
                         "score": level + 0.01 * s})
        rows.append({"model": model, "dataset": "D1", "seed": 0, "metric": "accuracy",
                     "score": 1.6 - level})
    bench = load(pd.DataFrame(rows), seed="seed")
    scores, codes, seeds = E.match_days(bench)
    assert scores.shape == (6, 3) and seeds.tolist() == [5, 5, 5, 5, 5, 1]
    points, pairs = E.battle_points(scores, 0.0)
    weights = 1.0 / (pairs.shape[1] * seeds)
    win = E.win_matrix(points, weights, pairs, 3)
    total = win + win.T
    assert np.triu(total, 1).sum() == pytest.approx(2.0)
    # D0 says A > B > C, D1 the reverse, with equal weight: every model at 1000.
    res = bench.elo_ranking(n_bootstrap=0)
    assert np.allclose(res.table["ELO"], 1000.0, atol=1e-6)


def test_models_meet_only_on_shared_seed_labels():
    rows = [
        {"model": "A", "dataset": "D0", "seed": 0, "score": 0.9},
        {"model": "B", "dataset": "D0", "seed": 0, "score": 0.8},
        {"model": "A", "dataset": "D0", "seed": 1, "score": 0.7},
        {"model": "B", "dataset": "D0", "seed": 2, "score": 0.95},
    ]
    df = pd.DataFrame(rows).assign(metric="accuracy")
    bench = load(df, seed="seed")
    scores, _, seeds = E.match_days(bench)
    points, pairs = E.battle_points(scores, 0.0)
    assert np.isnan(points[1:]).all() and points[0, 0] == 1.0
    win = E.win_matrix(points, 1.0 / (pairs.shape[1] * seeds), pairs, 2)
    assert win[0, 1] == pytest.approx(1 / 3) and win[1, 0] == 0.0
    with pytest.warns(UserWarning) as caught:
        bench.elo_ranking(n_bootstrap=0)
    messages = [str(w.message) for w in caught]
    assert any("share few or no seed labels in dataset(s) ['D0']" in m for m in messages)
    assert any("infinite" in m for m in messages)  # A won the only battle
    assert {w.filename for w in caught} == {__file__}  # both point at the caller's line


def test_no_shared_seed_at_all_gives_finite_ratings():
    df = pd.DataFrame({"model": ["A", "B"], "dataset": "D0", "seed": [0, 1],
                       "metric": "accuracy", "score": [0.9, 0.8]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = load(df, seed="seed").elo_ranking(n_bootstrap=10, random_state=0)
    assert np.allclose(res.table[["ELO", "CI_low", "CI_high"]].to_numpy(), 1000.0)
    assert res.record["wins"].sum() == 0


def test_strong_connectivity():
    cycle = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]], dtype=float)
    chain = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=float)
    assert E.strongly_connected(np.stack([cycle, chain])).tolist() == [True, False]


def test_separation_adds_documented_prior_with_warning():
    df = frame({"Best": [0.9, 0.95, 0.99], "Mid": [0.5, 0.6, 0.4], "Low": [0.3, 0.55, 0.45]})
    with pytest.warns(UserWarning, match="tie prior, one virtual match day") as caught:
        res = load(df).elo_ranking(n_bootstrap=30, random_state=1)
    assert any("30 of 30 bootstrap replicates" in str(w.message) for w in caught)
    values = res.table[["ELO", "CI_low", "CI_high"]].to_numpy()
    assert np.isfinite(values).all()
    assert res.table["model"].iloc[0] == "Best" and res.params["regularized"]
    assert res.params["regularized_replicates"] == 30
    # the regularized point estimate is the MLE of the data plus the tie prior: battles
    # weigh 1/3, so every pair ties with weight (1/3) / (M − 1) = 1/6, 1/12 to each side
    prior = E.tie_prior(3, 1 / 6)
    assert prior[0, 1] == pytest.approx(1 / 12) and prior.sum(axis=1) == pytest.approx([1 / 6] * 3)
    win = np.array([[0, 3, 3], [0, 0, 2], [0, 1, 0]], dtype=float) / 3 + prior
    expected = E.to_elo(E.bradley_terry(win[None]))[0]
    assert ratings(res)["Best"] == pytest.approx(expected[0])


def test_point_fit_is_shared_per_benchmark_and_tie_threshold(four_models, monkeypatch):
    solve = elo_fit.solve_batch
    point_fits = []

    def counting(win, theta0, *args):
        point_fits.extend([win.shape] if theta0 is None else [])
        return solve(win, theta0, *args)

    monkeypatch.setattr(elo_fit, "solve_batch", counting)
    bench = load(four_models)
    first = bench.elo_ranking(n_bootstrap=20, random_state=0, resampling="battle")
    again = bench.elo_ranking(n_bootstrap=20, random_state=0, resampling="battle")
    bench.compare_rankings()
    bench.leaderboard(n_bootstrap=0)
    assert len(point_fits) == 1
    pd.testing.assert_frame_equal(first.table, again.table)
    pd.testing.assert_frame_equal(
        first.table, load(four_models).elo_ranking(n_bootstrap=20, random_state=0,
                                                   resampling="battle").table)
    bench.elo_ranking(n_bootstrap=0, tie_threshold=0.05)
    bench.drop_models("Sprinter").elo_ranking(n_bootstrap=0)
    assert len(point_fits) == 4  # + the fresh load's, another threshold's, a selection's


def test_shared_point_fit_still_warns_about_the_tie_prior():
    bench = load(frame({"Best": [0.9, 0.95, 0.99], "Mid": [0.5, 0.6, 0.4],
                        "Low": [0.3, 0.55, 0.45]}))
    for _ in range(2):
        with pytest.warns(UserWarning, match="tie prior, one virtual match day"):
            assert bench.elo_ranking(n_bootstrap=0).params["regularized"]


def test_disconnected_groups_get_prior():
    # A beats B everywhere, C beats D everywhere, no cross information beyond that.
    df = frame({"A": [0.9, 0.9], "B": [0.8, 0.8], "C": [0.7, 0.7], "D": [0.6, 0.6]})
    with pytest.warns(UserWarning, match="infinite"):
        res = load(df).elo_ranking(n_bootstrap=0)
    assert np.isfinite(res.table["ELO"]).all()
    assert list(res.table["model"]) == ["A", "B", "C", "D"]


def test_all_ties_everyone_1000():
    df = frame({"A": [0.5, 0.6], "B": [0.5, 0.6], "C": [0.5, 0.6]})
    res = load(df).elo_ranking(n_bootstrap=20, random_state=0)
    assert np.allclose(res.table[["ELO", "CI_low", "CI_high"]].to_numpy(), 1000.0)


def test_tie_threshold_turns_small_differences_into_ties(four_models):
    # differences 0.03 (Steady−Sprinter on D1–D3, Specialist−Steady) become ties at 0.05
    res = load(four_models).elo_ranking(n_bootstrap=0, tie_threshold=0.05)
    rec = res.record.set_index(["model", "opponent"])
    assert rec.loc[("Steady", "Sprinter"), ["wins", "ties"]].tolist() == [3, 3]
    assert rec.loc[("Steady", "Sprinter"), "record"] == "3–0–3 (75.0 %)"


# ---- bootstrap ----------------------------------------------------------------------------
def test_bootstrap_pair_sums_invariants(monkeypatch):
    rng = np.random.default_rng(0)
    scores = rng.random((7, 4))
    scores[2, 1] = np.nan
    scores[5, [0, 3]] = np.nan
    points, pairs = E.battle_points(scores, 0.0)
    weights = rng.random(7) + 0.5
    met = ~np.isnan(points)
    expected_total = (met.sum(axis=1) * weights).sum()
    # a tiny draw budget forces both paths: day blocks and one replicate per draw
    monkeypatch.setattr(resampling, "_DRAW_BUDGET", 10)
    chunks = list(E.bootstrap_pair_sums(points, weights, 400, np.random.default_rng(1), 150))
    assert [len(w) for w, _ in chunks] == [150, 150, 100]
    won = np.concatenate([w for w, _ in chunks])
    lost = np.concatenate([lo for _, lo in chunks])
    total = won + lost
    assert np.allclose(total.sum(axis=1), expected_total)  # n_k draws on every match day
    assert (won >= 0).all() and (lost >= 0).all()
    # pairs that never met stay at zero; the mean over replicates is the data
    point_won = (np.where(met, points, 0) * weights[:, None]).sum(axis=0)
    point_total = (met * weights[:, None]).sum(axis=0)
    assert np.allclose(won.mean(axis=0), point_won, atol=0.25 * point_total.max())
    assert np.allclose(total.mean(axis=0), point_total, atol=0.25 * point_total.max())


def test_one_sided_pairs_stay_exactly_zero():
    # round-off in "total − won" once faked a connected graph; sides are summed separately
    points = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]) / 1.0
    weights = np.array([1 / 7, 1 / 3])
    pairs = np.vstack(np.triu_indices(3, 1))
    for _won, lost in E.bootstrap_pair_sums(points, weights, 50, np.random.default_rng(0), 50):
        assert (lost[:, :2] == 0.0).all()
    assert E.win_matrix(points, weights, pairs, 3)[1, 0] == 0.0


def test_poisson_pair_sums_mean_and_variance():
    rng = np.random.default_rng(0)
    scores = rng.random((40, 5))
    scores[3, 2] = np.nan
    points, pairs = E.battle_points(scores, 0.05)
    weights = np.where(np.arange(40) < 20, 1 / 10, 1 / 30)  # two weight levels
    met = ~np.isnan(points)
    chunks = list(E.poisson_pair_sums(points, weights, 3000, np.random.default_rng(1), 1000))
    assert [len(w) for w, _ in chunks] == [1000, 1000, 1000]
    won = np.concatenate([w for w, _ in chunks])
    lost = np.concatenate([lo for _, lo in chunks])
    point_won = (np.where(met, points, 0) * weights[:, None]).sum(axis=0)
    point_lost = (np.where(met, 1 - points, 0) * weights[:, None]).sum(axis=0)
    # E[won] is the data; Var[won] = Σ w² · (1[win] + ¼ 1[tie]) for Poisson(1) battle counts
    assert np.allclose(won.mean(axis=0), point_won, rtol=0.05)
    assert np.allclose(lost.mean(axis=0), point_lost, rtol=0.05)
    var = (np.where(met, points**2, 0) * weights[:, None] ** 2).sum(axis=0)
    assert np.allclose(won.var(axis=0), var, rtol=0.15)


def test_poisson_and_exact_bootstrap_agree():
    # with many battles per match day (66 pairs) fixing each day's total barely matters
    rng = np.random.default_rng(5)
    level = np.linspace(0.4, 0.7, 12)
    frame_rows = [{"model": f"m{i:02d}", "dataset": f"D{d}", "seed": s, "metric": "accuracy",
                   "score": float(np.clip(level[i] + rng.normal(0, 0.1), 0, 1))}
                  for i in range(12) for d in range(6) for s in range(3)]
    bench = load(pd.DataFrame(frame_rows), seed="seed")
    exact = bench.elo_ranking(n_bootstrap=1500, random_state=0, resampling="multinomial")
    poisson = bench.elo_ranking(n_bootstrap=1500, random_state=0, resampling="poisson")
    assert exact.params["resampling"] == poisson.params["resampling"] == "battle"
    assert (exact.params["draw"], poisson.params["draw"]) == ("multinomial", "poisson")
    pd.testing.assert_series_equal(exact.table["ELO"], poisson.table["ELO"])
    width_exact = (exact.table["CI_high"] - exact.table["CI_low"]).to_numpy()
    width_poisson = (poisson.table["CI_high"] - poisson.table["CI_low"]).to_numpy()
    assert np.allclose(width_poisson, width_exact, rtol=0.2)


@pytest.mark.parametrize("name", ["auto", "battle"])
def test_auto_resampling_switches_on_size(four_models, monkeypatch, name):
    bench = load(four_models)
    res = bench.elo_ranking(n_bootstrap=10, random_state=0, resampling=name)
    assert (res.params["resampling"], res.params["draw"]) == ("battle", "multinomial")
    monkeypatch.setattr(resampling, "EXACT_DRAW_LIMIT", 100)
    assert bench.elo_ranking(n_bootstrap=10, random_state=0,
                             resampling=name).params["draw"] == "poisson"


@pytest.mark.parametrize("bad", ["bayes", "Dataset", None, 3])
def test_bad_resampling_names_parameter_and_choices(four_models, bad):
    pattern = r"resampling must be one of \('battle', 'split', 'dataset'\).*'auto'.*got " + \
        re.escape(repr(bad))
    with pytest.raises(ValueError, match=pattern):
        load(four_models).elo_ranking(resampling=bad)


def seeded_long(levels: dict[str, list[float]], n_seeds: int, noise: float = 0.05,
                seed: int = 0) -> pd.DataFrame:
    """Accuracy rows: model level per dataset plus seed noise, every model on every seed."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame([
        {"model": model, "dataset": f"D{d}", "seed": s, "metric": "accuracy",
         "score": float(np.clip(level + rng.normal(0, noise), 0, 1))}
        for model, per_dataset in levels.items() for d, level in enumerate(per_dataset)
        for s in range(n_seeds)])


def test_single_dataset_replicates_all_equal_the_point():
    bench = load(seeded_long({"A": [0.62], "B": [0.6], "C": [0.58]}, n_seeds=8), seed="seed")
    res = bench.elo_ranking(n_bootstrap=50, random_state=0, resampling="dataset")
    point = res.table.set_index("model")["ELO"]
    assert np.allclose(res.bootstrap.to_numpy(), point[res.bootstrap.columns].to_numpy()[None],
                       atol=1e-6)
    assert np.allclose(res.margin.to_numpy(), 0.0, atol=1e-6)
    split = bench.elo_ranking(n_bootstrap=50, random_state=0, resampling="split")
    assert (split.margin > 1.0).all()  # the seeds of that dataset still vary


def test_split_and_dataset_coincide_with_one_split_per_dataset():
    df = grid_frame([[0.9, 0.3, 0.5, 0.7, 0.6], [0.5, 0.6, 0.7, 0.3, 0.4],
                     [0.1, 0.7, 0.3, 0.5, 0.9]])
    bench = load(df)
    split = bench.elo_ranking(n_bootstrap=300, random_state=4, resampling="split")
    dataset = bench.elo_ranking(n_bootstrap=300, random_state=4, resampling="dataset")
    pd.testing.assert_frame_equal(split.bootstrap, dataset.bootstrap)
    pd.testing.assert_frame_equal(split.table, dataset.table)
    assert (split.params["resampling"], dataset.params["resampling"]) == ("split", "dataset")
    assert split.params["draw"] is None


def test_dataset_scheme_draws_whole_datasets():
    bench = load(seeded_long({"A": [0.7, 0.5, 0.6], "B": [0.6, 0.7, 0.5],
                              "C": [0.5, 0.6, 0.7]}, n_seeds=4), seed="seed")
    t = E.play_battles(bench, 0.0)
    won, lost = t.unit_pair_sums("dataset")
    day_won, day_lost = E.day_pair_sums(t.points, t.weights)
    assert won.shape == (3, 3) and np.allclose(won + lost, 1 / 3)  # each dataset weighs 1
    assert np.allclose(won[1], day_won[t.codes == 1].sum(axis=0))
    counts = np.array([[3, 0, 0], [0, 1, 2], [1, 1, 1]])
    chunks = list(E.replicate_pair_sums(t, "dataset", None, 3, np.random.default_rng(0), 2,
                                        counts=counts))
    assert [len(w) for w, _ in chunks] == [2, 1]
    got = np.concatenate([w for w, _ in chunks])
    assert np.allclose(got, counts @ won)
    assert np.allclose(got[2], day_won.sum(axis=0))  # every dataset once: the data
    split_won, _ = t.unit_pair_sums("split")
    assert split_won.shape == (12, 3) and np.allclose(split_won, day_won)


@pytest.mark.parametrize("scheme", ["battle", "split", "dataset"])
def test_no_replicate_dropped_and_rare_winner_interval_is_sensible(scheme):
    # "Weak" loses every battle except on one seed of one dataset (like knn-1 on the demo):
    # many replicates lose that win. They get the small tie prior, so the interval stays
    # below the next model instead of jumping over it (the old one-dataset prior did).
    levels = {"A": [0.71] * 6, "B": [0.7] * 6, "C": [0.69] * 6, "Weak": [0.2] * 6}
    df = seeded_long(levels, n_seeds=5, noise=0.02)
    df.loc[(df["model"] == "Weak") & (df["dataset"] == "D0") & (df["seed"] == 0), "score"] = 0.9
    bench = load(df, seed="seed")
    with pytest.warns(UserWarning, match=r"\d+ of 400 bootstrap replicates .* none was dropped"):
        res = bench.elo_ranking(n_bootstrap=400, random_state=0, resampling=scheme)
    assert not res.params["regularized"] and res.params["regularized_replicates"] > 0
    assert res.bootstrap.shape == (400, 4) and np.isfinite(res.bootstrap.to_numpy()).all()
    row = res.table.set_index("model")
    assert row.loc["Weak", "CI_low"] <= row.loc["Weak", "ELO"] <= row.loc["Weak", "CI_high"]
    assert row.loc["Weak", "CI_high"] < row.loc["C", "ELO"]


def test_margin_is_half_the_interval(four_models):
    res = load(four_models).elo_ranking(n_bootstrap=100, random_state=0, resampling="split")
    half = (res.table["CI_high"] - res.table["CI_low"]).to_numpy() / 2
    assert np.allclose(res.margin.loc[res.table["model"]].to_numpy(), half)
    assert res.margin.name == "margin" and res.margin.index.name == "model"


def test_bootstrap_is_seedable_and_brackets_point(four_models):
    bench = load(four_models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = bench.elo_ranking(n_bootstrap=200, random_state=7, resampling="battle")
        b = bench.elo_ranking(n_bootstrap=200, random_state=7, resampling="battle")
    pd.testing.assert_frame_equal(a.table, b.table)
    assert (a.table["CI_low"] < a.table["ELO"]).all()
    assert (a.table["ELO"] < a.table["CI_high"]).all()
    assert a.bootstrap.shape == (200, 4) and np.isfinite(a.bootstrap.to_numpy()).all()


def test_calibration_model_shifts_everything(four_models):
    bench = load(four_models)
    base = bench.elo_ranking(n_bootstrap=100, random_state=3)
    cal = bench.elo_ranking(n_bootstrap=100, random_state=3, calibration_model="Sprinter")
    assert ratings(cal)["Sprinter"] == pytest.approx(1000.0)
    shift = 1000.0 - ratings(base)["Sprinter"]
    cols = ["ELO", "CI_low", "CI_high"]
    assert np.allclose(cal.table[cols].to_numpy(), base.table[cols].to_numpy() + shift)
    with pytest.raises(ValueError, match="'Nobody' not found in score matrix"):
        bench.elo_ranking(calibration_model="Nobody")
    anchored = bench.elo_ranking(n_bootstrap=100, random_state=3, calibration_model="Sprinter",
                                 calibration_elo=1656.0)
    assert np.allclose(anchored.table[cols].to_numpy(), cal.table[cols].to_numpy() + 656.0)
    assert anchored.params["calibration_elo"] == 1656.0
    line = anchored.plot().axes[0].lines[0].get_xdata()  # the reference line sits at the anchor
    assert line[0] == pytest.approx(1656.0)
    with pytest.raises(TypeError, match="calibration_elo must be a number"):
        bench.elo_ranking(calibration_model="Sprinter", calibration_elo="high")


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"n_bootstrap": -1}, ValueError, "n_bootstrap.*-1"),
        ({"n_bootstrap": 2.5}, TypeError, "n_bootstrap.*2.5"),
        ({"n_bootstrap": True}, TypeError, "n_bootstrap"),
        ({"tie_threshold": -0.1}, ValueError, "tie_threshold.*-0.1"),
        ({"tie_threshold": float("nan")}, ValueError, "tie_threshold.*nan"),
        ({"tie_threshold": "small"}, TypeError, "tie_threshold.*small"),
    ],
)
def test_bad_parameters(four_models, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        load(four_models).elo_ranking(**kwargs)


def test_single_model_is_rejected():
    with pytest.raises(ValueError, match="at least two models"):
        load(frame({"A": [0.5, 0.6]})).elo_ranking()


# ---- properties ---------------------------------------------------------------------------
score_grid = st.lists(
    st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.6, 0.7, 0.9]), min_size=4, max_size=4),
    min_size=2, max_size=5,
)
SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


def grid_frame(grid: list[list[float]]) -> pd.DataFrame:
    return frame({f"M{i}": row for i, row in enumerate(grid)})


@SETTINGS
@given(grid=score_grid, order=st.randoms(use_true_random=False))
def test_permutation_invariance(grid, order):
    df = grid_frame(grid)
    shuffled = df.sample(frac=1.0, random_state=order.randint(0, 10_000))
    renamed = {f"M{i}": f"Z{len(grid) - i}" for i in range(len(grid))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ratings(load(df).elo_ranking(n_bootstrap=0))
        b = ratings(load(shuffled.replace({"model": renamed})).elo_ranking(n_bootstrap=0))
    for model, value in a.items():
        assert b[renamed[model]] == pytest.approx(value, abs=1e-6)


@SETTINGS
@given(grid=score_grid, who=st.integers(0, 4), where=st.integers(0, 3),
       bump=st.sampled_from([0.05, 0.2, 0.5]))
def test_raising_a_score_never_lowers_elo(grid, who, where, bump):
    who %= len(grid)
    higher = [row[:] for row in grid]
    higher[who][where] = min(higher[who][where] + bump, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = load(grid_frame(grid)).elo_ranking(n_bootstrap=0)
        after = load(grid_frame(higher)).elo_ranking(n_bootstrap=0)
    # the tie prior is added only when needed, so compare like with like
    assume(before.params["regularized"] == after.params["regularized"])
    assert ratings(after)[f"M{who}"] >= ratings(before)[f"M{who}"] - 1e-6


@SETTINGS
@given(grid=score_grid, seed=st.integers(0, 1000))
def test_ratings_always_finite(grid, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = load(grid_frame(grid)).elo_ranking(n_bootstrap=20, random_state=seed)
    values = res.table[["ELO", "CI_low", "CI_high"]].to_numpy()
    assert np.isfinite(values).all()
    assert (res.table["CI_low"] <= res.table["CI_high"]).all()


# ---- SPEC §3 extras: win-rate matrix order, record format, argument checks ---------------
RECORD = re.compile(r"^(\d+)–(\d+)(?:–(\d+))? \((\d+\.\d) %\)$")


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much])
@given(grid=st.lists(st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]), min_size=4,
                              max_size=4), min_size=2, max_size=5),
       tie=st.sampled_from([None, 0.2]))
def test_winrate_sorted_by_mean_and_records_formatted(grid, tie):
    scores = {f"M{i}": row for i, row in enumerate(grid)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = load(frame(scores)).elo_ranking(n_bootstrap=0, tie_threshold=tie)
    wr = res.winrate_matrix
    assert list(wr.index) == list(wr.columns) and sorted(wr.index) == sorted(scores)
    means = np.nanmean(wr.to_numpy(), axis=1)
    assert (np.diff(means) <= 1e-12).all()
    off = ~np.eye(len(wr), dtype=bool)
    assert np.allclose((wr.to_numpy() + wr.to_numpy().T)[off], 1.0)  # ties count ½ each
    for row in res.record.itertuples():
        match = RECORD.match(row.record)
        assert match, row.record
        wins, losses = int(match[1]), int(match[2])
        ties = int(match[3] or 0)
        assert (wins, losses, ties) == (row.wins, row.losses, row.ties)
        assert float(match[4]) == pytest.approx(round(100 * row.win_share, 1))
        assert match[3] is None or ties > 0


def test_record_spec_example_format():
    share = np.array([135 / 190])
    text = scorecard._format_record(np.array([135]), np.array([55]), np.array([0]), share)
    assert text == ["135–55 (71.1 %)"]


def test_bad_random_state_names_it(four_models):
    with pytest.raises(TypeError, match="random_state"):
        load(four_models).elo_ranking(n_bootstrap=5, random_state="seed")


def test_prior_weight_rule():
    # half a win and half a loss of the lightest battle per model, spread over M − 1 pairs
    assert E.prior_weight(np.array([1 / 3, 1 / 6, 1 / 3]), 3) == pytest.approx(1 / 12)
    assert E.prior_weight(np.array([]), 3) == pytest.approx(1 / 6)  # no battle: 1 / P


def test_models_that_never_share_a_seed_all_rate_1000():
    rows = [{"model": model, "dataset": f"D{d}", "seed": s + offset, "metric": "accuracy",
             "score": 0.5 + 0.1 * offset}
            for model, offset in (("A", 0), ("B", 3)) for d in range(2) for s in range(3)]
    with pytest.warns(UserWarning, match="share few or no seed labels"):
        res = load(pd.DataFrame(rows), seed="seed").elo_ranking(n_bootstrap=10, random_state=0)
    assert np.allclose(res.table[["ELO", "CI_low", "CI_high"]].to_numpy(), 1000.0)
    assert res.params["regularized"]


def test_joint_ranking_with_tie_threshold_raises_no_numpy_warning():
    """Notebook 06's call: two runners' copies of each model, scores within the parity
    tolerance, ranked together with tie_threshold. No floating-point warning may leak (every
    divide, invalid and overflow made an error here, so a locally unsilenced one fails)."""
    from pathlib import Path

    import arenalite

    web = pd.read_csv(Path(__file__).resolve().parents[1] / "content"
                      / "webgpu_results_example.csv")
    rng = np.random.default_rng(0)
    python = web.assign(runner="python", score=web["score"] + rng.uniform(-5e-5, 5e-5, len(web)))
    both = pd.concat([web, python]).assign(model=lambda d: d["model"] + " @ " + d["runner"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # the normalization and bootstrap notes
        warnings.simplefilter("error", RuntimeWarning)
        bench = arenalite.load_df(both, seed="seed")
        with np.errstate(divide="raise", invalid="raise", over="raise"):
            for threshold in (1e-4, 0.0):
                table = bench.elo_ranking(n_bootstrap=100, random_state=0,
                                          tie_threshold=threshold).table
                assert np.isfinite(table[["ELO", "CI_low", "CI_high"]].to_numpy()).all()


def test_scorecards_are_built_on_first_look_and_each_result_owns_its_copy():
    rows = [{"model": f"M{i}", "dataset": f"D{d}", "metric": "accuracy",
             "score": 0.5 + 0.03 * i + 0.01 * ((i * d) % 3)} for i in range(4) for d in range(5)]
    bench = load(pd.DataFrame(rows))
    first = bench.elo_ranking(n_bootstrap=0)
    assert not [key for key in bench._memo if key[0] == "elo scorecards"]
    record = first.record
    assert [key for key in bench._memo if key[0] == "elo scorecards"]
    assert first.record is record  # built once per result
    second = bench.elo_ranking(n_bootstrap=0)
    record.loc[:, "wins"] = -1
    first.winrate_matrix.iloc[0, 1] = -1.0
    assert (second.record["wins"] >= 0).all() and (second.winrate_matrix.fillna(0) >= 0).all().all()
