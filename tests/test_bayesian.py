"""Bayesian signed-rank comparison: agreement with baycomp, invariants, errors, plots."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure

import arenalite
from arenalite.stats.bayesian import bayesian_comparison, signed_rank_posterior, winner_shares


def _bench(matrix: np.ndarray) -> arenalite.Benchmark:
    """models × datasets accuracy matrix → Benchmark normalized with bounds 0 and 1."""
    rows = [{"model": f"m{i}", "dataset": f"d{j:02d}", "metric": "accuracy",
             "score": matrix[i, j]}
            for i in range(matrix.shape[0]) for j in range(matrix.shape[1])]
    return arenalite.load_df(pd.DataFrame(rows), norm_ref_low=0.0, norm_ref_high=1.0)


@pytest.fixture(scope="module")
def bench() -> arenalite.Benchmark:
    rng = np.random.default_rng(11)
    matrix = 0.7 + rng.normal(0, 0.02, size=(5, 15)) + np.array([0, 0.004, 0.01, 0.02, 0])[:, None]
    return _bench(matrix)


def test_matches_baycomp_signed_rank_test(bench: arenalite.Benchmark) -> None:
    """Same seed, same probabilities: baycomp's two_on_multiple (SignedRankTest, prior 0.5,
    50 000 RandomState draws) on the rows of scores_, exactly, pair by pair and with every
    pair computed at once."""
    import baycomp
    result = bench.bayesian_comparison(rope=0.01, random_state=5)
    scores = bench.scores_
    for a, b in [("m0", "m1"), ("m0", "m2"), ("m2", "m3")]:
        row = result.table[(result.table.model_a == a) & (result.table.model_b == b)].iloc[0]
        # baycomp: x = model_a, y = model_b, differences y − x; "left" means x is better.
        expected = baycomp.two_on_multiple(scores.loc[a].to_numpy(), scores.loc[b].to_numpy(),
                                           rope=0.01, random_state=5)
        ours = (row.p_a_better, row.p_equiv, row.p_b_better)
        assert ours == tuple(float(p) for p in expected)
        assert max(ours) < 0.99  # an informative (not saturated) comparison


@pytest.mark.parametrize("n, shift, rope, prior, seed", [
    (3, 0.01, 0.01, 0.5, 0), (15, 0.0, 0.01, 0.5, 1), (20, 0.02, 0.01, 0.5, 2),
    (20, -0.005, 0.0, 0.5, 0), (30, 0.01, 0.05, 0.5, 3), (12, 0.01, 0.01, 1.0, 4),
    (12, 0.01, 0.01, 0.6, 5),
])
def test_signed_rank_posterior_equals_baycomp_sample_for_sample(n, shift, rope, prior, seed):
    """Any rope (0 included), any prior weight, any int seed: baycomp's SignedRankTest."""
    import baycomp
    rng = np.random.default_rng(seed + 100)
    b = 0.7 + rng.normal(0, 0.02, n)
    a = b + shift + rng.normal(0, 0.02, n)
    ours = signed_rank_posterior((a - b)[None], rope, 20_000, seed, prior=prior)[0]
    expected = baycomp.SignedRankTest(a, b, rope, prior=prior, nsamples=20_000,
                                      random_state=seed).probs()
    assert ours.tolist() == [float(p) for p in expected]


def test_table_layout_and_modes(bench: arenalite.Benchmark) -> None:
    full = bench.bayesian_comparison(random_state=0)
    assert list(full.table.columns) == ["model_a", "model_b", "p_a_better", "p_equiv",
                                        "p_b_better"]
    assert len(full.table) == 10
    np.testing.assert_allclose(full.table[["p_a_better", "p_equiv", "p_b_better"]].sum(axis=1), 1)
    ref = bench.bayesian_comparison(reference="m0", random_state=0)
    assert (ref.table.model_a == "m0").all()
    assert list(ref.table.model_b) == ["m1", "m2", "m3", "m4"]
    # a pair's result does not depend on which other pairs are computed with it
    some = bench.bayesian_comparison(pairs=[("m1", "m3"), ("m0", "m2")], random_state=0)
    merged = some.table.merge(full.table, on=["model_a", "model_b"], suffixes=("", "_full"))
    assert len(merged) == 2
    np.testing.assert_array_equal(merged.p_a_better, merged.p_a_better_full)
    # swapping a pair swaps the outer probabilities
    swapped = bench.bayesian_comparison(pairs=[("m3", "m1")], random_state=0).table.iloc[0]
    original = merged[merged.model_a == "m1"].iloc[0]
    assert swapped.p_a_better == pytest.approx(original.p_b_better, abs=1e-12)
    assert swapped.p_equiv == pytest.approx(original.p_equiv, abs=1e-12)


def test_reproducible_with_random_state(bench: arenalite.Benchmark) -> None:
    one = bench.bayesian_comparison(random_state=42).table
    two = bench.bayesian_comparison(random_state=42).table
    pd.testing.assert_frame_equal(one, two)
    other = bench.bayesian_comparison(random_state=43).table
    assert not one.equals(other)
    np.testing.assert_allclose(one.p_a_better, other.p_a_better, atol=0.02)


def test_identical_models_and_clear_winner() -> None:
    assert signed_rank_posterior(np.zeros((1, 6)), 0.01, 2000).tolist() == [[0.0, 1.0, 0.0]]
    # rope = 0: θ_a = θ_b = ½ exactly in every sample, a tie shared by a and b
    np.testing.assert_allclose(signed_rank_posterior(np.zeros((1, 6)), 0.0, 2000), [[0.5, 0, 0.5]])
    clear = signed_rank_posterior(np.full((1, 12), 0.2), 0.01, 5000, np.random.default_rng(0))
    assert clear[0, 0] > 0.99


def test_winner_shares_ties() -> None:
    theta_a = np.array([[0.5], [0.1], [0.5]])
    theta_b = np.array([[0.5], [0.1], [0.2]])
    # rows: a/b tie, equivalence wins (0.8), a wins
    np.testing.assert_allclose(winner_shares(theta_a, theta_b), [[1.5 / 3, 1 / 3, 0.5 / 3]])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 20), rope=st.floats(0, 0.05),
       shift=st.floats(-0.05, 0.05))
def test_probabilities_are_a_distribution(seed: int, n: int, rope: float, shift: float) -> None:
    diffs = np.random.default_rng(seed).normal(shift, 0.03, size=(3, n))
    probs = signed_rank_posterior(diffs, rope, 500, np.random.default_rng(seed))
    assert np.all(probs >= 0) and np.all(probs <= 1)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    mirrored = signed_rank_posterior(-diffs, rope, 500, np.random.default_rng(seed))
    np.testing.assert_allclose(mirrored, probs[:, ::-1], atol=1e-12)


def test_errors(bench: arenalite.Benchmark) -> None:
    with pytest.raises(ValueError, match="reference 'zz' not found in score matrix"):
        bench.bayesian_comparison(reference="zz")
    with pytest.raises(ValueError, match="either reference= or pairs="):
        bench.bayesian_comparison(reference="m0", pairs=[("m1", "m2")])
    with pytest.raises(ValueError, match="model_b of pair 'nope' not found"):
        bench.bayesian_comparison(pairs=[("m1", "nope")])
    with pytest.raises(ValueError, match="compares model 'm1' with itself"):
        bench.bayesian_comparison(pairs=[("m1", "m1")])
    with pytest.raises(ValueError, match=r"\(model_a, model_b\) tuples, got 'm1'"):
        bench.bayesian_comparison(pairs=["m1", "m2"])
    with pytest.raises(ValueError, match="rope must be a finite number ≥ 0 .* got -0.1"):
        bench.bayesian_comparison(rope=-0.1)
    with pytest.raises(TypeError, match="rope must be a number"):
        bench.bayesian_comparison(rope="0.01")
    with pytest.raises(ValueError, match="at least 2 models, got 1"):
        bench.select_models("m0").bayesian_comparison()
    with pytest.raises(ValueError, match="at least 2 datasets"):
        bench.select_datasets("d00").bayesian_comparison()


def test_reference_sits_in_model_a_as_in_frequentist_comparison() -> None:
    """One orientation: the reference is model_a in both comparisons, and p_a_better is
    P(reference better) — here the reference beats m1 on every dataset by 0.05."""
    rng = np.random.default_rng(3)
    base = 0.7 + rng.normal(0, 0.01, size=12)
    bench = _bench(np.vstack([base + 0.05, base, base + rng.normal(0, 0.02, size=12)]))
    bayes = bench.bayesian_comparison(reference="m0", random_state=0).table
    freq = bench.frequentist_comparison(reference="m0").table
    assert list(bayes.model_a) == list(freq.model_a) == ["m0", "m0"]
    assert list(bayes.model_b) == list(freq.model_b) == ["m1", "m2"]
    vs_m1 = bayes.set_index("model_b").loc["m1"]
    assert vs_m1.p_a_better > 0.99 and vs_m1.p_b_better < 0.01
    pairs = bench.bayesian_comparison(pairs=[("m0", "m1")], random_state=0).table
    assert pairs.p_a_better.iloc[0] == vs_m1.p_a_better  # same pair, same numbers


def test_plots(bench: arenalite.Benchmark) -> None:
    heat = bench.bayesian_comparison(random_state=0).plot(title="heat")
    assert isinstance(heat, Figure)
    image = heat.axes[0].images[0].get_array()
    assert image.shape == (5, 5) and image.mask.diagonal().all()
    bars = bench.bayesian_comparison(reference="m0", random_state=0).plot()
    assert isinstance(bars, Figure)
    assert [t.get_text() for t in bars.legends[0].get_texts()][-1] == "m0 better"
    subset = bench.bayesian_comparison(pairs=[("m0", "m1")], random_state=0).plot()
    assert subset.axes[0].images[0].get_array().shape == (2, 2)


def test_closed_form_posterior_with_one_and_two_datasets() -> None:
    """z = (0.5,) or (0.5, 0.5), rope 0.01: θ_a = 1 − w0², θ_equiv = w0², θ_b = 0.

    a is most probable iff w0 < 1/√2, with w0 the prior pseudo-observation's weight:
    w0 ~ Beta(s, n) for prior weight s, so P(a) = I_{1/√2}(s, n), the regularized
    incomplete beta — 0.8409 (= 2^-¼) for n = 1 and 0.9640 for n = 2 at s = 0.5
    (baycomp's default); with s = 1, 1 − (1 − 1/√2)^n, 0.7071 and 0.9142 (the golden
    values before the prior's weight became baycomp's 0.5).
    """
    from scipy.special import betainc

    c = 1 / np.sqrt(2)
    for prior in (0.5, 1.0):
        one = signed_rank_posterior(np.array([[0.5]]), 0.01, 100_000, np.random.default_rng(3),
                                    prior=prior)
        expected = betainc(prior, 1, c)
        np.testing.assert_allclose(one[0], [expected, 1 - expected, 0.0], atol=0.005)
    assert betainc(0.5, 1, c) == pytest.approx(2 ** -0.25)
    assert betainc(1.0, 2, c) == pytest.approx(1 - (1 - c) ** 2)
    bench = _bench(np.array([[0.9, 0.8], [0.4, 0.3]]))
    two = bayesian_comparison(bench, rope=0.01, random_state=3, n_samples=100_000).table.iloc[0]
    expected = betainc(0.5, 2, c)
    assert expected == pytest.approx(0.9640, abs=1e-4)
    np.testing.assert_allclose([two.p_a_better, two.p_equiv, two.p_b_better],
                               [expected, 1 - expected, 0.0], atol=0.005)


def test_prior_and_seed_checks() -> None:
    with pytest.raises(ValueError, match=r"prior must be .*> 0.* got 0"):
        signed_rank_posterior(np.ones((1, 3)), 0.01, 100, 0, prior=0)
    with pytest.raises(TypeError, match="rng must be None, an int seed or a numpy Generator"):
        signed_rank_posterior(np.ones((1, 3)), 0.01, 100, "seed")
    # an int seed beyond RandomState's (≥ 2**32) is taken through a Generator, reproducibly
    big = [signed_rank_posterior(np.full((1, 4), 0.01), 0.01, 500, 2**40) for _ in range(2)]
    np.testing.assert_array_equal(*big)
