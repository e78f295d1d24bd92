"""Benchmark.frequentist_comparison: tables, reference mode, errors and the CD diagram."""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure
from scipy import stats

import arenalite
from arenalite.stats.wilcoxon import holm
from test_friedman import DEMSAR

NAMES = ["C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"]


def _bench(matrix: np.ndarray, names: list[str], metric: str = "roc_auc") -> arenalite.Benchmark:
    rows = [{"model": names[j], "dataset": f"ds{i:02d}", "metric": metric, "score": matrix[i, j]}
            for i in range(matrix.shape[0]) for j in range(matrix.shape[1])]
    return arenalite.load_df(pd.DataFrame(rows), norm_ref_low=0.0, norm_ref_high=1.0)


@pytest.fixture(scope="module")
def demsar() -> arenalite.Benchmark:
    return _bench(DEMSAR, NAMES)


def test_all_pairs_on_demsar(demsar: arenalite.Benchmark) -> None:
    result = demsar.frequentist_comparison()
    assert list(result.table.columns) == ["model_a", "model_b", "rank_diff", "p_value",
                                          "significant"]
    assert len(result.table) == 6
    expected = stats.friedmanchisquare(*DEMSAR.T)
    assert result.friedman_statistic == pytest.approx(expected.statistic)
    assert result.friedman_p == pytest.approx(expected.pvalue)
    assert result.cd == pytest.approx(1.2536, abs=5e-4)
    assert list(result.avg_ranks.index) == ["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]
    np.testing.assert_allclose(result.avg_ranks.to_numpy(), [1.964, 2.000, 2.893, 3.143],
                               atol=5e-4)
    # Demšar: at α = 0.05 no pair differs (largest gap 1.18 < CD 1.25); one clique of all four.
    assert not result.table["significant"].any()
    assert result.cliques == [["C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5"]]
    # pairs in the Benchmark's model order (as bayesian_comparison), rank_diff absolute
    assert list(zip(result.table.model_a, result.table.model_b, strict=True)) == \
        list(combinations(demsar.models_, 2))
    row = result.table.set_index(["model_a", "model_b"]).loc[("C4.5+m", "C4.5+m+cf")]
    assert row.rank_diff == pytest.approx(0.5 / 14)


def test_significance_agrees_with_critical_difference() -> None:
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(30, 6)) * 0.05 + np.linspace(0.5, 0.9, 6)
    result = _bench(matrix, [f"m{i}" for i in range(6)], metric="accuracy").frequentist_comparison()
    table = result.table
    np.testing.assert_array_equal(table["significant"], table["rank_diff"] > result.cd)
    assert table["significant"].any()
    nemenyi = result.nemenyi_p
    for row in table.itertuples():
        assert row.p_value == pytest.approx(nemenyi.loc[row.model_a, row.model_b])


def test_reference_mode_equals_scipy_with_holm(demsar: arenalite.Benchmark) -> None:
    result = demsar.frequentist_comparison(reference="C4.5")
    table = result.table
    assert list(table.columns) == ["model_a", "model_b", "w_statistic", "p_value", "p_adjusted",
                                   "significant"]
    assert set(table["model_b"]) == set(NAMES) - {"C4.5"}
    assert (table["model_a"] == "C4.5").all()
    scores = demsar.scores_
    expected_p = []
    for row in table.itertuples():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = stats.wilcoxon(scores.loc[row.model_b], scores.loc["C4.5"])
        assert row.w_statistic == pytest.approx(ref.statistic)
        assert row.p_value == pytest.approx(ref.pvalue, rel=1e-9)
        expected_p.append(ref.pvalue)
    np.testing.assert_allclose(table["p_adjusted"], holm(np.array(expected_p)))
    np.testing.assert_array_equal(table["significant"], table["p_adjusted"] < 0.05)
    # Friedman attributes are there in reference mode too
    assert result.cd == pytest.approx(1.2536, abs=5e-4)


def test_errors(demsar: arenalite.Benchmark) -> None:
    with pytest.raises(ValueError, match="reference 'C5.0' not found in score matrix"):
        demsar.frequentist_comparison(reference="C5.0")
    with pytest.raises(ValueError, match="at least 2 models, got 1"):
        demsar.select_models(["C4.5"]).frequentist_comparison()
    with pytest.raises(ValueError, match="at least 2 datasets .* got 1"):
        demsar.select_datasets(["ds00"]).frequentist_comparison()
    with pytest.raises(ValueError, match="alpha must lie strictly between 0 and 1, got 1.5"):
        demsar.frequentist_comparison(alpha=1.5)
    with pytest.raises(TypeError, match="alpha must be a number"):
        demsar.frequentist_comparison(alpha="0.05")


def test_cd_diagram_twenty_long_names() -> None:
    rng = np.random.default_rng(1)
    names = [f"model_{i}_with_a_rather_long_descriptive_name" if i % 3 == 0 else f"m{i}"
             for i in range(20)]
    matrix = rng.normal(size=(15, 20)) * 0.05 + np.linspace(0.5, 0.7, 20)
    result = _bench(matrix, names, metric="accuracy").frequentist_comparison()
    fig = result.plot()
    assert isinstance(fig, Figure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert sum(any(t.startswith(name + " (") for t in texts) for name in names) == 20
    width, height = fig.get_size_inches()
    assert height >= 3.5 and width >= 9
    # drawing into a given axes with a title works too
    other = Figure()
    ax = other.add_subplot()
    assert result.plot(ax=ax, title="mine") is other
    assert ax.get_title() == "mine"


def test_reference_mode_plots_adjusted_p_values(demsar: arenalite.Benchmark) -> None:
    result = demsar.frequentist_comparison(reference="C4.5")
    fig = result.plot()
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert len(ax.collections[-1].get_offsets()) == 3  # one point per comparison
    assert {t.get_text() for t in ax.get_yticklabels()} == set(NAMES) - {"C4.5"}
    assert ax.get_title().startswith("Wilcoxon + Holm against C4.5")


def test_non_significant_friedman_warns() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(0.7, 0.05, size=(8, 4))  # no real differences
    bench = _bench(matrix, ["a", "b", "c", "d"], metric="accuracy")
    with pytest.warns(UserWarning, match="Friedman test does not reject"):
        result = bench.frequentist_comparison()
    assert result.friedman_p_value == result.friedman_p >= 0.05
