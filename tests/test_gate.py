"""Non-inferiority gate: constructed verdicts, directions, margins, errors, ranking, plot."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from scipy import stats

import arenalite
from arenalite.stats.gate import gate_test, verdict
from frames import quiet_load as _load


def _frame(reference: np.ndarray, candidates: dict[str, np.ndarray],
           metric: str | list[str] = "accuracy") -> pd.DataFrame:
    n = reference.size
    metrics = [metric] * n if isinstance(metric, str) else metric
    rows = []
    for model, values in {"ref": reference, **candidates}.items():
        rows += [{"model": model, "dataset": f"d{j:02d}", "metric": metrics[j],
                  "score": float(values[j])} for j in range(n)]
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def constructed() -> arenalite.Benchmark:
    rng = np.random.default_rng(2024)
    ref = rng.uniform(0.70, 0.90, 15)
    return _load(_frame(ref, {
        "better": ref + 0.03 + rng.normal(0, 0.005, 15),
        "slightly_worse": ref - 0.002 - rng.uniform(0, 0.002, 15),
        "worse": ref - 0.05 + rng.normal(0, 0.005, 15),
        "noisy": ref + rng.normal(0, 0.05, 15) * np.resize([1, -1], 15),
    }))


def test_constructed_verdicts(constructed: arenalite.Benchmark) -> None:
    result = constructed.gate(["better", "slightly_worse", "worse", "noisy"], "ref")
    table = result.table.set_index("candidate")
    assert list(result.table.columns)[:10] == [
        "candidate", "reference", "metric", "n_datasets", "median_difference",
        "p_noninferiority", "p_two_sided", "margin", "verdict", "passed"]
    assert table.loc["better", "verdict"] == "superior"
    # significantly worse (two-sided), but within the 0.01 margin: passes as non-inferior
    assert table.loc["slightly_worse", "p_two_sided"] < 0.05
    assert table.loc["slightly_worse", "verdict"] == "non-inferior"
    assert table.loc["worse", "verdict"] == "inferior"
    assert table.loc["noisy", "verdict"] == "inconclusive"
    assert table["passed"].tolist() == [True, True, False, False]
    assert (table["margin"] == 0.01).all() and (table["n_datasets"] == 15).all()
    # the Friedman + Nemenyi ranking of all models, reference included
    assert set(result.ranking.avg_ranks.index) == {"ref", "better", "slightly_worse", "worse",
                                                   "noisy"}
    assert result.ranking.avg_ranks.index[0] == "better"


def test_p_values_equal_scipy(constructed: arenalite.Benchmark) -> None:
    result = constructed.gate("slightly_worse", "ref")
    raw = constructed._raw
    d = (raw.loc["slightly_worse"] - raw.loc["ref"]).to_numpy()
    row = result.table.iloc[0]
    assert row.p_noninferiority == pytest.approx(
        stats.wilcoxon(d + 0.01, alternative="greater").pvalue)
    assert row.p_two_sided == pytest.approx(stats.wilcoxon(d).pvalue)
    assert row.median_difference == pytest.approx(np.median(d))
    np.testing.assert_allclose(result.differences["difference"], d)


def test_too_few_datasets_is_inconclusive_with_warning() -> None:
    ref = np.array([0.80, 0.70, 0.75, 0.85])
    bench = _load(_frame(ref, {"better": ref + 0.05}))
    with pytest.warns(UserWarning, match=r"too few datasets .*'better' on 'accuracy' \(n = 4\)"):
        result = bench.gate("better", "ref")
    assert result.table.loc[0, "verdict"] == "inconclusive"
    assert not result.table.loc[0, "passed"]


def test_lower_is_better_brier_uses_its_default_margin() -> None:
    rng = np.random.default_rng(5)
    ref = rng.uniform(0.10, 0.20, 12)
    bench = _load(_frame(ref, {"sharper": ref - 0.02, "a_bit_worse": ref + 0.002,
                               "much_worse": ref + 0.02}, metric="brier"))
    table = bench.gate(["sharper", "a_bit_worse", "much_worse"], "ref").table.set_index("candidate")
    assert (table["margin"] == 0.005).all()
    assert table.loc["sharper", "median_difference"] == pytest.approx(0.02)  # ref − candidate
    assert table.loc["sharper", "verdict"] == "superior"
    assert table.loc["a_bit_worse", "verdict"] == "non-inferior"
    assert table.loc["much_worse", "verdict"] == "inferior"


def test_mixed_metrics_one_test_per_metric() -> None:
    rng = np.random.default_rng(9)
    ref = np.concatenate([rng.uniform(0.7, 0.9, 8), rng.uniform(0.1, 0.2, 8)])
    cand = ref + np.concatenate([np.full(8, 0.02), np.full(8, -0.02)])  # better on both
    frame = _frame(ref, {"cand": cand}, metric=["accuracy"] * 8 + ["brier"] * 8)
    bench = _load(frame)
    table = bench.gate("cand", "ref").table.set_index("metric")
    assert table.loc["accuracy", "margin"] == 0.01 and table.loc["brier", "margin"] == 0.005
    assert (table["n_datasets"] == 8).all() and (table["verdict"] == "superior").all()
    custom = bench.gate("cand", "ref", margin={"Brier": 0.001}).table.set_index("metric")
    assert custom.loc["brier", "margin"] == 0.001 and custom.loc["accuracy", "margin"] == 0.01
    with pytest.warns(UserWarning, match=r"margin=0.02 is applied to every metric"):
        bench.gate("cand", "ref", margin=0.02)


def test_margin_errors(constructed: arenalite.Benchmark) -> None:
    rng = np.random.default_rng(1)
    ref = rng.uniform(1, 2, 6)
    unknown = _load(_frame(ref, {"c": ref + 0.1}, metric="rmse"))
    with pytest.raises(ValueError, match="no default margin for metric 'rmse'"):
        unknown.gate("c", "ref")
    assert unknown.gate("c", "ref", margin=0.05).table.loc[0, "margin"] == 0.05
    with pytest.raises(ValueError, match=r"margin names metrics \['r2'\] that no dataset uses"):
        constructed.gate("better", "ref", margin={"r2": 0.01})
    with pytest.raises(ValueError, match="margin must be a finite number ≥ 0, got -0.01"):
        constructed.gate("better", "ref", margin=-0.01)
    with pytest.raises(TypeError, match="margin\\['accuracy'\\] must be a number"):
        constructed.gate("better", "ref", margin={"accuracy": "0.01"})


def test_model_errors(constructed: arenalite.Benchmark) -> None:
    with pytest.raises(ValueError, match="reference 'baseline' not found in score matrix"):
        constructed.gate("better", "baseline")
    with pytest.raises(ValueError, match="candidate 'best' not found in score matrix"):
        constructed.gate(["better", "best"], "ref")
    with pytest.raises(ValueError, match="candidate 'ref' is the reference itself"):
        constructed.gate("ref", "ref")
    with pytest.raises(ValueError, match="lists a model twice"):
        constructed.gate(["better", "better"], "ref")
    with pytest.raises(TypeError, match="non-empty list"):
        constructed.gate([], "ref")
    with pytest.raises(ValueError, match="at least 2 datasets"):
        constructed.select_datasets("d00").gate("better", "ref")


def test_folds_are_averaged_per_dataset_first() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for j in range(8):
        base = rng.uniform(0.7, 0.9)
        for seed in range(5):
            rows.append({"model": "ref", "dataset": f"d{j}", "seed": seed, "metric": "accuracy",
                         "score": base + rng.normal(0, 0.01)})
            rows.append({"model": "cand", "dataset": f"d{j}", "seed": seed, "metric": "accuracy",
                         "score": base + 0.03 + rng.normal(0, 0.01)})
    frame = pd.DataFrame(rows)
    bench = _load(frame, seed="seed")
    row = bench.gate("cand", "ref").table.iloc[0]
    assert row.n_datasets == 8
    means = frame.groupby(["model", "dataset"])["score"].mean().unstack()
    assert row.median_difference == pytest.approx(np.median(means.loc["cand"] - means.loc["ref"]))


def test_verdict_rules() -> None:
    assert verdict(0.001, 0.01, 50, 5, 0.05) == "superior"
    assert verdict(0.01, 0.01, 5, 50, 0.05) == "non-inferior"
    assert verdict(0.20, 0.01, 5, 50, 0.05) == "inferior"
    assert verdict(0.20, 0.30, 5, 50, 0.05) == "inconclusive"
    assert gate_test(np.zeros(10), 0.01)["verdict"] == "non-inferior"  # equal within margin


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 16), shift=st.integers(-4, 4))
def test_direction_symmetry(seed: int, n: int, shift: int) -> None:
    """Higher-is-better scores s and lower-is-better scores 1 − s give the same gate."""
    rng = np.random.default_rng(seed)
    ref = rng.integers(32, 56, n) / 64                       # dyadic: 1 − s is exact
    cand = ref + (shift + rng.integers(-2, 3, n)) / 64
    bounds = {"norm_ref_low": -1.0, "norm_ref_high": 2.0}
    high = _load(_frame(ref, {"c": cand}, metric="score"), **bounds)
    low = _load(_frame(1 - ref, {"c": 1 - cand}, metric="score"), **bounds,
                metric_direction={f"d{j:02d}": "min" for j in range(n)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = high.gate("c", "ref", margin=1 / 64).table
        b = low.gate("c", "ref", margin=1 / 64).table
    pd.testing.assert_frame_equal(a, b)


def test_plot(constructed: arenalite.Benchmark) -> None:
    result = constructed.gate(["better", "worse"], "ref")
    fig = result.plot()
    assert isinstance(fig, Figure)
    labels = sorted(t.get_text() for t in fig.axes[0].get_yticklabels())
    assert labels == ["better (accuracy)\nsuperior, n = 15", "worse (accuracy)\ninferior, n = 15"]


def test_datasets_exactly_at_the_margin_count_as_zero_differences() -> None:
    """0.85 − 0.86 + 0.01 is −8.7e-18 in floats; the gate must treat it as exactly 0."""
    ref = np.array([0.86, 0.76, 0.66, 0.56, 0.81, 0.71, 0.61, 0.51, 0.91, 0.41])
    steps = np.array([-0.01, -0.01, -0.01, -0.01, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06])
    bench = _load(_frame(ref, {"cand": ref + steps}))
    row = bench.gate("cand", "ref").table.iloc[0]
    ideal = np.r_[np.zeros(4), steps[4:] + 0.01]  # four zeros, dropped by Wilcoxon
    expected = stats.wilcoxon(ideal, alternative="greater", zero_method="wilcox").pvalue
    assert row.p_noninferiority == pytest.approx(expected)
    assert row.verdict in ("non-inferior", "superior")
    from arenalite.stats.gate import shift_by_margin
    assert (shift_by_margin(ref + steps - ref, 0.01, ref)[:4] == 0).all()
    assert shift_by_margin(np.array([-0.0099]), 0.01)[0] == pytest.approx(1e-4)


def test_default_margins_cover_registry_aliases() -> None:
    ref = np.linspace(0.1, 0.3, 8)
    for metric, margin in [("overall_accuracy", 0.01), ("1-auc", 0.01), ("Brier", 0.005),
                           ("R2", 0.01), ("auroc", 0.01)]:
        bench = _load(_frame(ref, {"cand": ref + 0.001}, metric=metric))
        row = bench.gate("cand", "ref").table.iloc[0]
        assert row.margin == margin
        # 1-auc and Brier are errors: a higher value is worse for the candidate
        worse = arenalite.get_metric(metric).direction == "min"
        assert row.median_difference == pytest.approx(-0.001 if worse else 0.001)


def test_every_registered_metric_has_a_default_margin_or_a_reason() -> None:
    from arenalite.registry import known_metrics
    from arenalite.stats.gate import DEFAULT_MARGINS, NO_DEFAULT_MARGIN

    assert not set(DEFAULT_MARGINS) & set(NO_DEFAULT_MARGIN)
    assert set(DEFAULT_MARGINS) | set(NO_DEFAULT_MARGIN) == set(known_metrics())


def test_log_scores_and_unit_scores_get_their_documented_defaults() -> None:
    ref = np.linspace(0.3, 0.6, 8)
    for metric, margin in [("log_loss", 0.01), ("NLL", 0.01), ("gaussian_nll", 0.01),
                           ("balanced_accuracy", 0.01), ("f1", 0.01), ("auprc", 0.01)]:
        bench = _load(_frame(ref, {"cand": ref + 0.001}, metric=metric))
        assert bench.gate("cand", "ref").table.loc[0, "margin"] == margin


def test_log_loss_margin_is_twice_the_brier_margin_at_one_half() -> None:
    """KL(p‖q) ≈ 2 (p − q)² near p = ½: the excess log loss of the Brier margin's forecast."""
    from arenalite.stats.gate import DEFAULT_MARGINS

    p, q = 0.5, 0.5 + np.sqrt(DEFAULT_MARGINS["brier"])  # excess Brier (p − q)² = 0.005
    kl = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
    assert kl == pytest.approx(DEFAULT_MARGINS["log_loss"], rel=0.02)


@pytest.mark.parametrize("metric", ["rmse", "MAE", "mse", "crps", "mape"])
def test_scale_dependent_metrics_ask_for_margin_and_say_why(metric: str) -> None:
    ref = np.linspace(1.0, 2.0, 8)
    bench = _load(_frame(ref, {"cand": ref + 0.1}, metric=metric))
    with pytest.raises(ValueError, match=rf"no default margin for metric '{metric}': "
                                         r"it is .*; pass margin= as a number"):
        bench.gate("cand", "ref")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(6, 40), low=st.floats(0, 0.02),
       extra=st.floats(0, 0.02))
def test_a_wider_margin_never_raises_the_noninferiority_p_value(seed: int, n: int, low: float,
                                                                 extra: float) -> None:
    """W+ counts the positive Walsh averages of d + margin, which only grow with the margin."""
    d = np.random.default_rng(seed).normal(-0.01, 0.02, n)
    narrow, wide = gate_test(d, low), gate_test(d, low + extra)
    assert wide["p_noninferiority"] <= narrow["p_noninferiority"] + 1e-12
    assert narrow["p_two_sided"] == wide["p_two_sided"]
    assert not (narrow["passed"] and not wide["passed"])


def test_each_verdict_comes_with_its_reason(constructed: arenalite.Benchmark) -> None:
    table = constructed.gate(["better", "slightly_worse", "worse", "noisy"],
                             "ref").table.set_index("candidate")
    assert list(table.columns)[-1] == "reason"
    assert table.loc["better", "reason"].startswith("passes: better than the reference "
                                                    "(two-sided p = ")
    assert table.loc["slightly_worse", "reason"].startswith(
        "passes: not worse by more than the margin 0.01 (one-sided p = ")
    assert table.loc["worse", "reason"].startswith("fails: worse than the reference")
    assert "not shown to be worse is not evidence" in table.loc["noisy", "reason"]
    few = gate_test(np.full(3, 0.05), 0.01)
    assert few["verdict"] == "inconclusive"
    assert few["reason"] == ("fails: with 3 dataset(s) the smallest attainable one-sided p is "
                             "0.5^3 = 0.125, not below 0.05; more datasets are needed")
