"""The shared unit bootstrap (stats/bootstrap.py): counts, rows, percentile intervals, and
the ``confidence`` every interval method takes."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite.stats.bootstrap import (
    interval_level,
    percentile_interval,
    tail_percent,
    unit_counts,
    unit_rows,
)


def test_unit_counts_are_intp_multinomial_draws_of_the_units():
    counts = unit_counts(7, 500, np.random.default_rng(1))
    assert counts.shape == (500, 7) and counts.dtype == np.intp
    assert (counts.sum(axis=1) == 7).all() and (counts >= 0).all()
    expected = np.random.default_rng(1).multinomial(7, np.full(7, 1 / 7), size=500)
    np.testing.assert_array_equal(counts, expected)  # the stream Elo and IQM always drew
    assert abs(counts.mean() - 1.0) < 0.05
    assert unit_counts(3, 0, np.random.default_rng(0)).shape == (0, 3)


def test_unit_rows_repeat_each_unit_as_often_as_drawn():
    counts = np.array([[3, 0, 0], [0, 1, 2], [1, 1, 1]], dtype=np.int64)
    rows = unit_rows(counts)
    np.testing.assert_array_equal(rows, [[0, 0, 0], [1, 2, 2], [0, 1, 2]])
    assert rows.dtype == np.intp
    big = unit_counts(40, 200, np.random.default_rng(2))
    rows = unit_rows(big)
    for r in range(0, 200, 37):
        np.testing.assert_array_equal(np.bincount(rows[r], minlength=40), big[r])


@pytest.mark.parametrize("confidence", [0.95, 0.9, 0.8, 0.99, 0.5])
def test_percentile_interval_cuts_equal_tails(confidence):
    reps = np.random.default_rng(3).normal(size=(1001, 4))
    low, high = percentile_interval(reps, confidence)
    tail = 50 * (1 - confidence)
    np.testing.assert_allclose(low, np.percentile(reps, tail, axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, np.percentile(reps, 100 - tail, axis=0), rtol=0,
                               atol=1e-12)
    inside = ((reps >= low) & (reps <= high)).mean(axis=0)
    assert np.allclose(inside, confidence, atol=0.01)


def test_95_percent_is_exactly_the_2_5_and_97_5_percentiles():
    assert tail_percent(0.95) == 2.5 and 100 - tail_percent(0.95) == 97.5
    reps = np.random.default_rng(4).random((999, 3))
    np.testing.assert_array_equal(percentile_interval(reps, 0.95),
                                  np.percentile(reps, [2.5, 97.5], axis=0))
    assert interval_level(0.95) == "95 %" and interval_level(0.9) == "90 %"


def _bench(seeds: bool = True) -> arenalite.Benchmark:
    rng = np.random.default_rng(5)
    rows = [{"model": f"m{i}", "dataset": f"d{j}", "seed": s, "metric": "accuracy",
             "score": 0.6 + 0.03 * i + rng.normal(0, 0.03)}
            for i in range(5) for j in range(8) for s in range(3 if seeds else 1)]
    return arenalite.load_df(pd.DataFrame(rows), seed="seed", norm_ref_low=0.0,
                             norm_ref_high=1.0)


METHODS = {"elo_ranking": ("CI_low", "CI_high"), "iqm_ranking": ("CI_low", "CI_high"),
           "leaderboard": ("elo-", "elo+")}


@pytest.mark.parametrize("method", list(METHODS))
def test_every_interval_method_takes_a_confidence(method):
    bench = _bench()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = getattr(bench, method)(n_bootstrap=200, random_state=0)
        narrow = getattr(bench, method)(n_bootstrap=200, random_state=0, confidence=0.5)
    assert wide.params["confidence"] == 0.95 and narrow.params["confidence"] == 0.5
    low, high = METHODS[method]
    if method == "leaderboard":  # distances from the point
        assert (narrow.table[low] <= wide.table[low] + 1e-12).all()
        assert (narrow.table[high] <= wide.table[high] + 1e-12).all()
    else:
        width = lambda t: (t[high] - t[low]).to_numpy()  # noqa: E731
        assert (width(narrow.table) <= width(wide.table) + 1e-12).all()
        assert (width(narrow.table) < width(wide.table)).any()


@pytest.mark.parametrize("method", [*METHODS, "rank_sensitivity"])
@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.2, float("nan")])
def test_bad_confidence_is_a_value_error_naming_it(method, bad):
    target = _bench() if method != "rank_sensitivity" else None
    call = (getattr(target, method) if target is not None
            else lambda **kw: _bench().rank_sensitivity(_bench(), **kw))
    with pytest.raises(ValueError, match=r"confidence must lie strictly between 0 and 1, "
                                         r"got (nan|" + re.escape(repr(bad)) + ")"):
        call(n_bootstrap=10, random_state=0, confidence=bad)
    with pytest.raises(TypeError, match="confidence must be a number, got str '0.9'"):
        call(n_bootstrap=10, random_state=0, confidence="0.9")
