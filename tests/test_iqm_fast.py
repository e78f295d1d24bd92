"""IQM's fast paths against simple references on small inputs (issue 13).

The pattern bootstrap's windows and packed per-cell counts (``iqm_from_patterns``), the
run weights of a trimmed sum (``_weights``), the seed order by text (``_text_codes``) and
the whole ranking's row layout (against a string sort feeding the same bootstrap).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite import load_df
from arenalite.rankings.iqm import (
    draw_patterns,
    iqm,
    iqm_from_patterns,
    stratified_bootstrap_iqm_equal,
)
from arenalite.rankings.iqm import seed_bootstrap as iqm_module
from arenalite.rankings.iqm.ranking import _text_codes
from arenalite.rankings.iqm.seed_bootstrap import _weights
from test_fast_paths import reference_iqms


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 3), st.integers(20, 60), st.integers(2, 6), st.integers(0, 2**32 - 1),
       st.sampled_from([0.5, 2.0, 6.0]), st.booleans())
def test_windows_and_packed_counts_equal_repeated_runs(m, d, s, seed, guard, ties):
    """Enough runs for real windows (and, with narrow guards, many full recomputations)."""
    rng = np.random.default_rng(seed)
    cube = rng.normal(size=(m, d, s)) + rng.normal(size=(1, d, 1))
    if ties:
        cube = cube.round(1)
    patterns = draw_patterns(rng, 25, m * d, s)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(iqm_module, "_GUARD_SDS", guard)
        fast = iqm_from_patterns(cube, patterns)
    np.testing.assert_allclose(fast, reference_iqms(cube, patterns), rtol=0, atol=1e-12)


def test_patterns_are_index_typed():
    """Pattern ids index tables without a conversion (int32 on wasm32)."""
    assert draw_patterns(np.random.default_rng(0), 3, 4, 5).dtype == np.intp


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=8), min_size=1, max_size=3),
       st.integers(0, 12), st.integers(0, 12), st.integers(0, 5))
def test_weights_are_the_runs_at_the_kept_positions(segments, low, span, origin):
    """Each run's weight = how many of the positions low..high-1 of the drawn sequence it holds."""
    high = low + span
    drawn = np.concatenate([np.asarray(c, dtype=np.int64) for c in segments])[None, :]
    start = np.cumsum([0] + [len(c) for c in segments[:-1]]).astype(np.intp)
    origins = origin + np.arange(len(segments)) * 7  # each segment continues from its own origin
    end = drawn.copy()
    for k, first in enumerate(start):
        last = first + len(segments[k])
        end[0, first:last] = origins[k] + np.cumsum(drawn[0, first:last])
    expected = np.zeros(drawn.shape[1], dtype=np.int64)
    for k, first in enumerate(start):
        runs = np.repeat(np.arange(first, first + len(segments[k])),
                         drawn[0, first:first + len(segments[k])].astype(np.intp))
        kept = runs[max(low - origins[k], 0):max(high - origins[k], 0)]
        expected += np.bincount(kept, minlength=drawn.shape[1])
    assert _weights(end, start, origins[None, :], low, high)[0].tolist() == expected.tolist()


@pytest.mark.parametrize("column", [
    pd.Series([10, 9, 100, 2, 9, -3, 10]),
    pd.Series([2**40, 7, -(2**40), 7], dtype="int64"),
    pd.Series([3, 1, 2, 1], dtype="Int64"),
    pd.Series([3, 11, 2], dtype="uint8"),
    pd.Series(["b", "a", "10", "9", "a"]),
    pd.Series([0.5, 10.0, 2.0, 10.0]),
    pd.Series([1, "1x", 2.5, 1], dtype=object),
])
def test_text_codes_order_values_as_their_text(column):
    expected = pd.factorize(column.astype(str), sort=True)[0]
    assert _text_codes(column).tolist() == expected.tolist()


@pytest.mark.parametrize("seeds", [[10, 9, 100, 2], ["s1", "s0", "s10"], [0.5, 2.0, 10.0]])
def test_ranking_equals_a_string_sort_feeding_the_same_bootstrap(seeds):
    """Rows by (model, dataset, seed as text) with a plain string sort, then the same draws."""
    rng = np.random.default_rng(7)
    df = pd.DataFrame([(f"m{a}", f"d{b}", seed, float(rng.uniform(0.2, 0.9)))
                       for a in (3, 1, 10, 2) for b in (5, 0, 12) for seed in seeds],
                      columns=["model", "dataset", "seed", "score"]).assign(metric="accuracy")
    df = df.sample(frac=1.0, random_state=3)
    table = load_df(df, seed="seed", norm_ref_low=0.0, norm_ref_high=1.0).iqm_ranking(
        n_bootstrap=200, random_state=5, resampling="seed").table
    rows = df.assign(text=df["seed"].astype(str)).sort_values(["model", "dataset", "text"])
    cube = rows["score"].to_numpy().reshape(4, 3, len(seeds))
    boot = stratified_bootstrap_iqm_equal(cube, 200, np.random.default_rng(5))
    low, high = np.percentile(boot, [2.5, 97.5], axis=0)
    expected = pd.DataFrame({"model": sorted(df["model"].unique()),
                             "IQM": iqm(cube.reshape(4, -1)), "CI_low": low, "CI_high": high})
    expected = expected.sort_values(["IQM", "model"], ascending=[False, True], kind="stable",
                                    ignore_index=True)
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
