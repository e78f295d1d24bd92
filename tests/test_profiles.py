"""Performance profiles (Dolan & Moré): exact steps, AUP, stability, bad input, and the
monotonicity property (raising one model's score never lowers its profile)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite.rankings import profiles as P
from frames import long_frame as long
from frames import quiet_load as load


def test_ratios_both_directions():
    raw = np.array([[0.8, 2.0], [0.4, 4.0]])
    r = P.performance_ratios(raw, np.array([True, False]))
    assert np.allclose(r, [[1.0, 1.0], [2.0, 2.0]])


def test_exact_steps_and_aup_by_hand():
    # ratios: A = (1, 1.25), B = (2, 1), C = (1.25, 4)
    ratios = np.array([[1.0, 1.25], [2.0, 1.0], [1.25, 4.0]])
    taus, rho = P.profile_steps(ratios)
    assert taus.tolist() == [1.0, 1.25, 2.0, 4.0]
    assert rho.tolist() == [[0.5, 1.0, 1.0, 1.0], [0.5, 0.5, 1.0, 1.0], [0.0, 0.5, 0.5, 1.0]]
    gaps = np.diff(np.log10(taus))
    aup = P.area_under_profile(taus, rho)
    assert aup[0] == pytest.approx(0.5 * gaps[0] + gaps[1] + gaps[2])
    assert aup[2] == pytest.approx(0.0 * gaps[0] + 0.5 * gaps[1] + 0.5 * gaps[2])
    assert P.evaluate_profile(taus, rho, [0.5, 1.1, 3.9, 10.0])[1].tolist() == [0, .5, 1, 1]


def test_four_model_profiles(four_models):
    res = load(four_models).performance_profiles()
    assert list(res.table.columns) == ["tau", "model", "fraction_within_tau"]
    steady = res.table[res.table["model"] == "Steady"]
    # Steady: ratio .96/.93 on D1-3 and .96/.80 = 1.2 on D4-6
    assert steady["tau"].iloc[0] == 1.0 and steady["fraction_within_tau"].iloc[0] == 0.0
    at = dict(zip(steady["tau"].round(6), steady["fraction_within_tau"], strict=True))
    assert at[round(0.96 / 0.93, 6)] == 0.5 and at[1.2] == 1.0
    assert res.table["tau"].max() == pytest.approx(0.96 / 0.55)
    assert res.aup.index[0] == "Steady" and res.aup.name == "aup"
    assert res.aup["Specialist-X"] == pytest.approx(res.aup["Specialist-Y"])
    # the table covers every breakpoint for every model
    assert len(res.table) == 4 * res.table["tau"].nunique()


def test_lower_is_better_dataset():
    bench = load(long({"A": [1.0, 0.9], "B": [2.0, 0.45], "C": [1.5, 0.9]},
                      ["rmse", "accuracy"]))
    rho = bench.performance_profiles().rho
    assert rho.loc[1.0, "A"] == 1.0
    assert rho.loc[1.0, "B"] == 0.0 and rho.loc[2.0, "B"] == 1.0
    assert rho.loc[1.0, "C"] == 0.5 and rho.loc[1.5, "C"] == 1.0


def test_zero_or_negative_scores_are_rejected():
    df = long({"A": [0.9, 0.0], "B": [0.8, 0.5]}, ["accuracy", "accuracy"])
    with pytest.raises(ValueError, match=r"model 'A' has a score of 0 or below \(0.0\) on "
                                         r"dataset 'd1'"):
        load(df).performance_profiles()
    df = long({"A": [0.9, 0.7], "B": [0.8, -0.2]}, ["r2", "r2"])
    with pytest.raises(ValueError, match="score of 0 or below"):
        load(df).performance_profiles()


def test_plot_and_ax(four_models):
    from matplotlib.figure import Figure

    res = load(four_models).performance_profiles()
    fig = res.plot(title="Profiles")
    assert isinstance(fig, Figure) and fig.axes[0].get_title() == "Profiles"
    assert len(fig.axes[0].get_lines()) == 4
    ax = Figure().add_subplot()
    assert res.plot(ax=ax) is ax.figure


def test_plot_has_a_log_tau_axis_with_raw_ratios(four_models):
    res = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0).performance_profiles()
    ax = res.plot().axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_xlim()[0] == 1.0
    x = ax.get_lines()[0].get_xdata()
    np.testing.assert_allclose(x[:-1], res.taus)  # raw ratios, not log10 values
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[0] == "1" and all(float(v) >= 1 for v in labels)


def test_plot_with_many_long_named_models_colours_the_best_ten():
    rng = np.random.default_rng(3)
    names = [f"model-{i:02d}-with-a-rather-long-name-and-an-even-longer-suffix" for i in range(30)]
    res = load(long({n: list(rng.uniform(0.5, 1.0, 5)) for n in names},
                    ["accuracy"] * 5)).performance_profiles()
    ax = res.plot().axes[0]
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert len(labels) == 11 and labels[-1] == "20 other models"
    assert labels[0].startswith(f"{res.aup.index[0][:10]}") and "…" in labels[0]
    assert all(len(label) < 60 for label in labels)


def test_stability_lives_beside_the_profiles(four_models):
    from arenalite.rankings.profiles import stability

    bench = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    pd.testing.assert_frame_equal(stability(bench), bench.performance_profiles().stability())


def test_stability_reports_every_method(four_models):
    bench = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    table = bench.performance_profiles().stability()
    assert list(table["method"]) == ["aup", "aggregate", "elo", "improvability"]
    assert set(table["dropped"]) == {"Steady"}
    row = table.set_index("method").loc["aup"]
    assert row["order_before"] == "Sprinter > Specialist-X > Specialist-Y"
    assert row["changed"] == (row["order_before"] != row["order_after"])
    assert table["changed"].dtype == bool


def test_stability_detects_a_change():
    # improvability is relative to the best error, so dropping the top model reorders B and C
    scores = {"A": [0.83, 0.93, 0.91], "B": [0.89, 0.92, 0.11], "C": [0.23, 0.93, 0.86]}
    res = load(long(scores, ["accuracy"] * 3)).performance_profiles()
    assert res.aup.index[0] == "A"
    table = res.stability(methods=["aup", "improvability"]).set_index("method")
    assert table.loc["improvability", "order_before"] == "B > C"
    assert table.loc["improvability", "order_after"] == "C > B"
    assert table.loc["improvability", "changed"]
    assert not table.loc["aup", "changed"]


def test_aup_is_log_tau_max_minus_mean_log_ratio():
    # why the AUP order never changes when a model is dropped: it is the geometric-mean order
    rng = np.random.default_rng(5)
    ratios = P.performance_ratios(rng.uniform(0.1, 1.0, (5, 7)), np.ones(7, dtype=bool))
    taus, rho = P.profile_steps(ratios)
    expected = np.log10(taus[-1]) - np.log10(ratios).mean(axis=1)
    assert np.allclose(P.area_under_profile(taus, rho), expected)
    np.testing.assert_allclose(P.aup_from_ratios(ratios), P.area_under_profile(taus, rho),
                               rtol=1e-12, atol=1e-15)


def test_aup_from_ratios_ties_models_with_the_same_ratios_in_any_order():
    ratios = np.array([[1.0, 1.3, 2.7, 1.1], [2.7, 1.1, 1.0, 1.3], [1.2, 1.0, 1.0, 1.5]])
    aup = P.aup_from_ratios(ratios)
    assert aup[0] == aup[1]


def test_stability_bad_input(four_models):
    res = load(four_models).performance_profiles()
    with pytest.raises(ValueError, match="methods \\['magic'\\] unknown"):
        res.stability(methods=["magic"])
    two = load(long({"A": [0.5], "B": [0.6]}, ["accuracy"])).performance_profiles()
    with pytest.raises(ValueError, match="at least three models"):
        two.stability()


def test_stability_skips_improvability_for_unknown_metric():
    bench = load(long({"A": [0.5, 0.7], "B": [0.6, 0.6], "C": [0.4, 0.9]}, ["mystery"] * 2))
    table = bench.performance_profiles().stability()
    assert "improvability" not in set(table["method"])


@settings(max_examples=40, deadline=None)
@given(grid=st.lists(st.lists(st.floats(0.05, 5.0), min_size=3, max_size=3), min_size=2,
                     max_size=4),
       higher=st.lists(st.booleans(), min_size=3, max_size=3),
       who=st.integers(0, 3), where=st.integers(0, 2), factor=st.floats(1.0, 3.0))
def test_improving_a_score_never_lowers_its_profile(grid, higher, who, where, factor):
    raw = np.array(grid)
    better = np.array(higher)
    who %= len(grid)
    taus, rho = P.profile_steps(P.performance_ratios(raw, better))
    improved = raw.copy()
    improved[who, where] *= factor if better[where] else 1 / factor
    taus2, rho2 = P.profile_steps(P.performance_ratios(improved, better))
    grid_taus = np.union1d(taus, taus2)
    before = P.evaluate_profile(taus, rho, grid_taus)[who]
    after = P.evaluate_profile(taus2, rho2, grid_taus)[who]
    assert (after >= before - 1e-12).all()
    assert rho2[:, -1].tolist() == [1.0] * len(grid)  # everyone within τ_max


@settings(max_examples=15, deadline=None)
@given(grid=st.lists(st.lists(st.sampled_from([0.2, 0.4, 0.5, 0.8, 0.9]), min_size=3,
                              max_size=3), min_size=2, max_size=4),
       bump=st.sampled_from([0.05, 0.1, 0.3]), who=st.integers(0, 3))
def test_api_monotone_and_permutation_invariant(grid, bump, who):
    who %= len(grid)
    scores = {f"M{i}": row for i, row in enumerate(grid)}
    bounds = {"norm_ref_low": 0.0, "norm_ref_high": 1.0}
    base = load(long(scores, ["accuracy"] * 3), **bounds).performance_profiles()
    shuffled = long(scores, ["accuracy"] * 3).iloc[::-1]
    again = load(shuffled, **bounds).performance_profiles()
    pd.testing.assert_series_equal(base.aup.sort_index(), again.aup.sort_index())
    scores[f"M{who}"] = [v + bump for v in grid[who]]
    bumped = load(long(scores, ["accuracy"] * 3), **bounds).performance_profiles()
    taus = np.union1d(base.taus, bumped.taus)
    before = P.evaluate_profile(base.taus, base.rho[f"M{who}"].to_numpy()[None], taus)[0]
    after = P.evaluate_profile(bumped.taus, bumped.rho[f"M{who}"].to_numpy()[None], taus)[0]
    assert (after >= before - 1e-12).all()


@settings(max_examples=40, deadline=None)
@given(grid=st.lists(st.lists(st.sampled_from([0.1, 0.25, 0.4, 0.5, 0.8, 1.0, 2.5]),
                              min_size=3, max_size=3), min_size=1, max_size=4),
       higher=st.lists(st.booleans(), min_size=3, max_size=3))
def test_exact_step_function_and_aup_against_brute_force(grid, higher):
    """SPEC §3: ρ_i(τ) = share of datasets with r_ij ≤ τ at every observed ratio and τ = 1;
    AUP = Σ_k (log10 τ_{k+1} − log10 τ_k) · ρ_i(τ_k) up to the largest ratio."""
    raw = np.array(grid)
    better = np.array(higher)
    ratios = np.array([[max(raw[:, j]) / raw[i, j] if better[j] else raw[i, j] / min(raw[:, j])
                        for j in range(3)] for i in range(len(raw))])
    taus, rho = P.profile_steps(P.performance_ratios(raw, better))
    assert np.allclose(np.sort(np.unique(np.append(ratios, 1.0))), taus)
    assert taus[0] == 1.0
    for k, tau in enumerate(taus):
        assert np.allclose(rho[:, k], (ratios <= tau * (1 + 1e-12)).mean(axis=1))
    aup = P.area_under_profile(taus, rho)
    np.testing.assert_allclose(P.aup_from_ratios(P.performance_ratios(raw, better)), aup,
                               rtol=1e-12, atol=1e-12)
    by_hand = [sum((np.log10(taus[k + 1]) - np.log10(taus[k])) * rho[i, k]
                   for k in range(len(taus) - 1)) for i in range(len(raw))]
    assert np.allclose(aup, by_hand)
    between = (taus[:-1] + taus[1:]) / 2  # no other jumps: constant between breakpoints
    assert np.allclose(P.evaluate_profile(taus, rho, between), rho[:, :-1])


def test_profiles_lay_out_rho_and_the_long_table_on_first_access(four_models):
    """The ranking by AUP needs neither the M × T profile nor its long form; both are laid
    out when first read, once, and are what the eager layout gives."""
    res = load(four_models).performance_profiles()
    assert "rho" not in vars(res) and "_steps" not in vars(res) and res._table is None
    ratios, order, _ = P.ratios_and_aup(res._benchmark)
    taus, rho = P.profile_steps(ratios[order])
    np.testing.assert_array_equal(res.taus, taus)
    np.testing.assert_array_equal(res.rho.to_numpy().T, rho)
    table = res.table
    assert res.table is table
    expected = pd.DataFrame({"tau": np.tile(taus, 4), "model": np.repeat(res.aup.index, len(taus)),
                             "fraction_within_tau": rho.reshape(-1)})
    pd.testing.assert_frame_equal(table.astype({"model": object}), expected,
                                  check_dtype=False)


def test_profiles_pickle_before_and_after_their_layout(four_models):
    import pickle

    res = load(four_models).performance_profiles()
    again = pickle.loads(pickle.dumps(res))  # nothing laid out yet
    pd.testing.assert_frame_equal(again.table, res.table)
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(res)).rho, res.rho)
