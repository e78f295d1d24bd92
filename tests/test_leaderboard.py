"""Leaderboard (TabArena's table), normalized error, and the interval plot."""

from __future__ import annotations

import re
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

from arenalite.plots.intervals import interval_plot
from arenalite.plots.style import axis_labels, shorten
from arenalite.rankings import leaderboard as leaderboard_module
from arenalite.rankings.leaderboard import COLUMNS
from frames import long_frame, quiet_load

matplotlib.use("Agg")


# ---- the interval plot --------------------------------------------------------------------
def test_shorten_cuts_the_middle_and_keeps_labels_distinct():
    assert shorten("abcdefghij", 5) == "ab…ij"
    assert shorten("abcdefghij", 6) == "abc…ij"
    assert shorten("short", 40) == "short"
    same_ends = ["prefix-" + str(i) * 30 + "-suffix" for i in range(3)]
    labels = axis_labels(same_ends, 12)  # cutting to 12 would merge them: cut less
    assert len(set(labels)) == 3 and all("…" in label for label in labels)
    assert all(len(label) < len(name) for label, name in zip(labels, same_ends, strict=True))
    assert axis_labels(["a" * 50, "b" * 50, "short"], 12) == ["aaaaaa…aaaaa", "bbbbbb…bbbbb",
                                                              "short"]  # no clash: unchanged


def test_every_figure_labels_configurations_that_differ_mid_name_apart():
    """Hyperparameter configurations share long prefixes and suffixes: no two may share a
    label on a heatmap axis, in the profile legend or on the gate's rows."""
    from arenalite.plots.gate import gate_plot
    from arenalite.plots.profiles import profile_plot
    from arenalite.plots.style import tick_labels

    names = [f"gradient_boosting_depth={d}_learning_rate=0.05_subsample=0.8_v1"
             for d in (2, 4, 6, 8)]
    assert len(set(tick_labels(names)[0])) == 4
    taus = np.array([1.0, 1.5, 3.0])
    rho = pd.DataFrame(np.linspace(0.2, 1.0, 12).reshape(3, 4), columns=names)
    fig = profile_plot(taus, rho, pd.Series(0.5, index=names))
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert len(set(legend)) == 4
    table = pd.DataFrame({"reference": "base", "candidate": names, "metric": "accuracy",
                          "median_difference": 0.0, "margin": 0.01, "verdict": "non-inferior",
                          "n_datasets": 3})
    differences = pd.DataFrame({"candidate": names, "metric": "accuracy", "difference": 0.0})
    ticks = [t.get_text() for t in gate_plot(table, differences).axes[0].get_yticklabels()]
    assert len(set(ticks)) == 4


def test_interval_plot_points_whiskers_and_80_rows():
    n = 80
    values = np.linspace(1300, 700, n)
    table = pd.DataFrame({"model": [f"model-{i}-" + "x" * 60 for i in range(n)],
                          "elo": values, "low": values - 30, "high": values + 20})
    fig = interval_plot(table, "elo", low="low", high="high", reference_line=1000.0,
                        title="Elo", xlabel="rating")
    ax = fig.axes[0]
    assert isinstance(fig, Figure) and ax.get_title() == "Elo" and ax.get_xlabel() == "rating"
    segments = ax.collections[0].get_segments()
    assert len(segments) == n
    top = segments[0]  # first table row is drawn on top (largest y)
    assert top[0][0] == pytest.approx(1270) and top[1][0] == pytest.approx(1320)
    assert top[0][1] == n - 1
    assert np.allclose(ax.collections[1].get_offsets()[:, 0], values)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == n and all(len(t) <= 40 for t in labels) and len(set(labels)) == n
    assert fig.get_size_inches()[1] > 15  # grows with the number of rows


def test_interval_plot_without_interval_and_into_given_axes():
    table = pd.DataFrame({"model": ["a", "b"], "score": [2.0, 1.0]})
    ax = Figure().add_subplot()
    fig = interval_plot(table, "score", ax=ax, model_colors={"a": "#000000", "b": "#E69F00"})
    assert fig is ax.figure and len(ax.collections) == 1
    with pytest.raises(ValueError, match="low and high"):
        interval_plot(table, "score", low="score")


# ---- golden: a hand-computed four-model case ---------------------------------------------
HAND = {  # accuracy on D1, D2, D3 (D1: B and C tie; D3: all four tie)
    "A": [0.9, 0.7, 0.5],
    "B": [0.8, 0.9, 0.5],
    "C": [0.8, 0.6, 0.5],
    "D": [0.3, 0.2, 0.5],
}


def bench_of(scores: dict[str, list[float]], **kwargs):
    return quiet_load(long_frame(scores, ["accuracy"] * len(next(iter(scores.values())))),
                      norm_ref_low=0.0, norm_ref_high=1.0, **kwargs)


def column(result, name: str) -> dict[str, float]:
    return dict(zip(result.table["model"], result.table[name], strict=True))


@pytest.fixture(scope="module")
def hand():
    return bench_of(HAND).leaderboard(n_bootstrap=0)


def test_columns_and_order(hand):
    assert tuple(hand.table.columns) == COLUMNS == (
        "model", "elo", "elo+", "elo-", "rank", "winrate", "improvability", "improvability+",
        "improvability-", "mrr", "rank=1_count", "rank=2_count", "rank=3_count",
        "rank>3_count", "normalized-error")
    assert (np.diff(hand.table["elo"]) <= 0).all()
    assert hand.table["model"].tolist() == ["A", "B", "C", "D"]


def test_golden_ranks_and_mrr(hand):
    # average ranks — D1: A 1, B 2.5, C 2.5, D 4; D2: B 1, A 2, C 3, D 4; D3: all 2.5
    assert column(hand, "rank") == pytest.approx({"A": 5.5 / 3, "B": 2.0, "C": 8 / 3, "D": 3.5})
    assert column(hand, "mrr") == pytest.approx(
        {"A": (1 + 1 / 2 + 1 / 2.5) / 3, "B": (1 / 2.5 + 1 + 1 / 2.5) / 3,
         "C": (1 / 2.5 + 1 / 3 + 1 / 2.5) / 3, "D": (1 / 4 + 1 / 4 + 1 / 2.5) / 3})


def test_golden_rank_counts(hand):
    # a tie spanning positions [lo, hi] gives 1 / (tie size) to each k in the span:
    # D1's B–C tie gives ½ to ranks 2 and 3; D3's four-way tie ¼ to ranks 1, 2, 3 and >3
    expected = {"A": (1.25, 1.25, 0.25, 0.25), "B": (1.25, 0.75, 0.75, 0.25),
                "C": (0.25, 0.75, 1.75, 0.25), "D": (0.25, 0.25, 0.25, 2.25)}
    names = ["rank=1_count", "rank=2_count", "rank=3_count", "rank>3_count"]
    for model, counts in expected.items():
        row = hand.table.set_index("model").loc[model, names].to_numpy(dtype=float)
        assert row == pytest.approx(counts)
    assert hand.table[names].sum(axis=1).tolist() == pytest.approx([3.0] * 4)
    assert hand.table["rank=1_count"].sum() == pytest.approx(3.0)


def test_golden_winrate(hand):
    # A: ½ against B (1 win, 1 loss, 1 tie), 5/6 against C and D
    assert column(hand, "winrate") == pytest.approx(
        {"A": (0.5 + 5 / 6 + 5 / 6) / 3, "B": (0.5 + 2 / 3 + 5 / 6) / 3,
         "C": (1 / 6 + 1 / 3 + 5 / 6) / 3, "D": 1 / 6})


def test_golden_improvability(hand):
    # errors (1 − accuracy): D1 .1 .2 .2 .7, D2 .3 .1 .4 .8, D3 all .5; a fraction as
    # TabArena publishes it (improvability_ranking keeps percent)
    assert column(hand, "improvability") == pytest.approx(
        {"A": 2 / 9, "B": 1 / 6, "C": 5 / 12, "D": (6 / 7 + 0.875) / 3})
    ranking = bench_of(HAND).improvability_ranking().table
    assert column(hand, "improvability") == pytest.approx(
        {m: v / 100 for m, v in zip(ranking["model"], ranking["improvability"], strict=True)})
    for name in ("elo+", "elo-", "improvability+", "improvability-"):
        assert (hand.table[name] == 0.0).all()  # no bootstrap: zero-width bars


def test_golden_normalized_error(hand):
    # D1: best .1, median .2 → A 0, B 1, C 1, D clipped to 1; D2: best .1, median .35 →
    # A .2/.25 = .8, B 0, C 1.2 → 1, D 1; D3: median = best, spread 1e-5, all 0
    expected = {"A": 0.8 / 3, "B": 1 / 3, "C": 2 / 3, "D": 2 / 3}
    assert column(hand, "normalized-error") == pytest.approx(expected)
    ranking = bench_of(HAND).normalized_error_ranking()
    assert column(ranking, "normalized-error") == pytest.approx(expected)
    assert ranking.table["model"].tolist() == ["A", "B", "C", "D"]
    per = ranking.per_dataset.set_index(["model", "dataset"])["normalized-error"]
    assert per[("A", "d1")] == pytest.approx(0.8) and per[("C", "d1")] == 1.0
    assert isinstance(ranking.plot(), Figure)


def test_normalized_error_on_lower_is_better_metric_and_spread_floor():
    frame = long_frame({"A": [1.0, 5.0], "B": [2.0, 5.0], "C": [4.0, 5.000001]},
                       ["rmse", "rmse"])
    bench = quiet_load(frame)
    per = bench.normalized_error_ranking().per_dataset.set_index(["model", "dataset"])
    per = per["normalized-error"]
    assert per[("A", "d0")] == 0.0 and per[("B", "d0")] == 1.0 and per[("C", "d0")] == 1.0
    # d1: median − best = 0 → floor 1e-5; C is 1e-6 worse → 0.1
    assert per[("C", "d1")] == pytest.approx(0.1)


def test_golden_elo_two_models_and_calibration():
    # A wins 3 of 4 datasets: P = 0.75, gap 400·log10(3); centred on 1000 without calibration
    scores = {"A": [0.9, 0.9, 0.9, 0.1], "B": [0.5, 0.5, 0.5, 0.5]}
    plain = bench_of(scores).leaderboard(n_bootstrap=0)
    gap = 400 * np.log10(3)
    assert column(plain, "elo") == pytest.approx({"A": 1000 + gap / 2, "B": 1000 - gap / 2})
    assert column(plain, "winrate") == pytest.approx({"A": 0.75, "B": 0.25})
    cal = bench_of(scores).leaderboard(n_bootstrap=50, random_state=0, calibration_model="B",
                                       calibration_elo=1200)
    assert column(cal, "elo") == pytest.approx({"A": 1200 + gap, "B": 1200.0})
    same = bench_of(scores).leaderboard(n_bootstrap=50, random_state=0)
    assert cal.table["elo+"].tolist() == pytest.approx(same.table["elo+"].tolist())


def test_elo_matches_elo_ranking(hand):
    elo = bench_of(HAND).elo_ranking(n_bootstrap=0)
    assert column(hand, "elo") == pytest.approx(column(elo, "ELO"))


def test_elo_and_improvability_bars_share_the_dataset_draws(monkeypatch):
    bench = bench_of(HAND)
    counts = np.array([[2, 0, 1], [0, 3, 0], [1, 1, 1]])
    # a second draw would differ (replicate 0 = the data itself), so unshared draws fail
    draws = iter([counts, counts[::-1]])
    monkeypatch.setattr(leaderboard_module, "unit_counts", lambda n, b, rng: next(draws))
    res = bench.leaderboard(n_bootstrap=3, random_state=0)
    per = bench.improvability_ranking().per_dataset.pivot(index="model", columns="dataset",
                                                          values="improvability")
    expected = counts @ per.loc[bench.models_, bench.datasets_].to_numpy().T / 300
    assert np.allclose(res.improvability_bootstrap.to_numpy(), expected)
    # replicate 0 is the suite with d0 twice and d2 once, fitted from scratch
    doubled = {m: [v[0], v[0], v[2]] for m, v in HAND.items()}
    refit = bench_of(doubled).elo_ranking(n_bootstrap=0)
    assert res.bootstrap.iloc[0].to_dict() == pytest.approx(column(refit, "ELO"), abs=1e-6)
    point = res.table.set_index("model")
    high = np.percentile(res.bootstrap.to_numpy(), 97.5, axis=0)
    assert point.loc[bench.models_, "elo+"].to_numpy() == pytest.approx(
        np.maximum(high - point.loc[bench.models_, "elo"].to_numpy(), 0))


def test_single_dataset_bars_are_zero():
    res = bench_of({"A": [0.9], "B": [0.8], "C": [0.7]}).leaderboard(n_bootstrap=40,
                                                                     random_state=1)
    for name in ("elo+", "elo-", "improvability+", "improvability-"):
        assert res.table[name].to_numpy() == pytest.approx(0.0, abs=1e-6)


def test_plot_draws_elo_whiskers():
    res = bench_of(HAND).leaderboard(n_bootstrap=30, random_state=0)
    fig = res.plot()
    ax = fig.axes[0]
    segments = ax.collections[0].get_segments()
    top = res.table.iloc[0]
    assert segments[0][0][0] == pytest.approx(top["elo"] - top["elo-"])
    assert segments[0][1][0] == pytest.approx(top["elo"] + top["elo+"])
    assert "dataset bootstrap" in ax.get_title()


# ---- bad input ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"resampling": "bayes"}, ValueError, r"resampling must be one of .*'dataset'.*'bayes'"),
        ({"calibration_model": "Nobody"}, ValueError, "'Nobody' not found"),
        ({"calibration_elo": float("nan")}, ValueError, "calibration_elo must be finite"),
        ({"calibration_elo": "high"}, TypeError, "calibration_elo must be a number"),
        ({"n_bootstrap": -1}, ValueError, "n_bootstrap.*-1"),
        ({"random_state": "x"}, TypeError, "random_state"),
    ],
)
def test_bad_parameters(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        bench_of(HAND).leaderboard(**kwargs)


# ---- properties --------------------------------------------------------------------------
grids = st.lists(st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.6, 0.8]), min_size=4, max_size=4),
                 min_size=2, max_size=5)
SETTINGS = settings(max_examples=15, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
POINTS = ["elo", "rank", "winrate", "improvability", "mrr", "normalized-error"]


def grid_scores(grid: list[list[float]]) -> dict[str, list[float]]:
    return {f"M{i}": row for i, row in enumerate(grid)}


def quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call()


@SETTINGS
@given(grid=grids, order=st.randoms(use_true_random=False))
def test_permutation_invariance(grid, order):
    frame = long_frame(grid_scores(grid), ["accuracy"] * 4)
    shuffled = frame.sample(frac=1.0, random_state=order.randint(0, 10_000))
    renamed = {f"M{i}": f"Z{len(grid) - i}" for i in range(len(grid))}
    shuffled = shuffled.replace({"model": renamed, "dataset": {"d0": "x", "d3": "a"}})
    a = quiet(lambda: quiet_load(frame, norm_ref_low=0.0, norm_ref_high=1.0)
              .leaderboard(n_bootstrap=0)).table.set_index("model")
    b = quiet(lambda: quiet_load(shuffled, norm_ref_low=0.0, norm_ref_high=1.0)
              .leaderboard(n_bootstrap=0)).table.set_index("model")
    b = b.rename(index={v: k for k, v in renamed.items()}).loc[a.index]
    assert np.allclose(a.to_numpy(dtype=float), b.to_numpy(dtype=float), atol=1e-6)


@SETTINGS
@given(grid=grids)
def test_duplicating_every_dataset_keeps_points(grid):
    scores = grid_scores(grid)
    twice = {m: v + v for m, v in scores.items()}
    one = quiet(lambda: bench_of(scores).leaderboard(n_bootstrap=0))
    two = quiet(lambda: bench_of(twice).leaderboard(n_bootstrap=0))
    # the tie prior is a fixed amount, so it weighs half as much against doubled data
    assume(not one.regularized)
    a, b = one.table.set_index("model"), two.table.set_index("model").loc[one.table["model"]]
    assert np.allclose(a[POINTS].to_numpy(dtype=float), b[POINTS].to_numpy(dtype=float),
                       atol=1e-6)
    counts = ["rank=1_count", "rank=2_count", "rank=3_count", "rank>3_count"]
    assert np.allclose(2 * a[counts].to_numpy(dtype=float), b[counts].to_numpy(dtype=float))


@SETTINGS
@given(grid=grids, seed=st.integers(0, 1000))
def test_dataset_bootstrap_bars_hold_the_point(grid, seed):
    res = quiet(lambda: bench_of(grid_scores(grid)).leaderboard(n_bootstrap=30,
                                                                random_state=seed))
    bars = res.table[["elo+", "elo-", "improvability+", "improvability-"]].to_numpy()
    assert np.isfinite(bars).all() and (bars >= 0).all()
    assert np.isfinite(res.bootstrap.to_numpy()).all()
    elo = quiet(lambda: bench_of(grid_scores(grid)).elo_ranking(n_bootstrap=30,
                                                                random_state=seed))
    assert (elo.table["CI_high"] - elo.table["CI_low"] >= 0).all()


# ---- command line and report ---------------------------------------------------------------
def test_cli_leaderboard_and_report_section_first(tmp_path, capsys):
    from arenalite.cli import main

    csv = tmp_path / "scores.csv"
    rows = long_frame(HAND, ["accuracy"] * 3)
    rows.to_csv(csv, index=False)
    args = [str(csv), "--norm-ref-low", "0", "--norm-ref-high", "1", "--n-bootstrap", "20"]
    assert main(["leaderboard", *args, "-o", str(tmp_path / "lb")]) == 0
    table = pd.read_csv(tmp_path / "lb" / "leaderboard.csv")
    assert tuple(table.columns) == COLUMNS and table["model"].tolist() == ["A", "B", "C", "D"]
    assert (tmp_path / "lb" / "leaderboard.png").is_file()
    assert main(["report", *args, "-o", str(tmp_path / "rep")]) == 0
    page = (tmp_path / "rep" / "report.html").read_text(encoding="utf-8")
    sections = re.findall(r'<h2 id="([^"]+)">', page)
    assert sections[0] == "leaderboard" and "elo" in sections  # first section after the summary
    capsys.readouterr()
