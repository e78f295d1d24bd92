"""compare_rankings: golden ranks on the SPEC §3 example, tie handling, spread, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite.rankings.compare import ranks
from frames import long_frame
from frames import quiet_load as load


def test_four_model_golden_ranks(four_models):
    res = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0).compare_rankings()
    assert list(res.table.columns) == ["model", "aggregate", "elo", "improvability",
                                       "rank_spread"]
    t = res.table.set_index("model")
    # aggregate (trimmed mean): Steady .865 > Sprinter .800 > specialists .755 (tied)
    assert t["aggregate"].to_dict() == {"Steady": 1, "Sprinter": 2, "Specialist-X": 3,
                                        "Specialist-Y": 3}
    # Elo: 1091.7 > 1000 = 1000 > 908.3
    assert t["elo"].to_dict() == {"Steady": 1, "Specialist-X": 2, "Specialist-Y": 2,
                                  "Sprinter": 4}
    # improvability: 45.56 = 45.56 < 61.43 < 73.33
    assert t["improvability"].to_dict() == {"Specialist-X": 1, "Specialist-Y": 1, "Steady": 3,
                                            "Sprinter": 4}
    assert t["rank_spread"].to_dict() == {"Steady": 2, "Sprinter": 2, "Specialist-X": 2,
                                          "Specialist-Y": 2}
    assert list(res.table["model"])[:2] == ["Steady", "Sprinter"]
    assert set(res.results) == {"aggregate", "elo", "improvability"}


def test_ranks_min_ties_and_roundoff():
    assert ranks(np.array([3.0, 1.0, 3.0, 2.0]), higher_is_better=True).tolist() == [1, 4, 1, 3]
    assert ranks(np.array([3.0, 1.0, 3.0, 2.0]), higher_is_better=False).tolist() == [3, 1, 3, 2]
    assert ranks(np.array([1000.0, 1000.0 + 1e-10]), True).tolist() == [1, 1]


def test_needs_improvability():
    df = pd.DataFrame({"model": ["A", "B"], "dataset": "d", "metric": "mystery",
                       "score": [0.5, 0.6]})
    with pytest.raises(ValueError, match="compare_rankings needs the improvability ranking: "
                                         "Unknown metric 'mystery'"):
        load(df).compare_rankings()


def test_plot(four_models):
    from matplotlib.figure import Figure

    res = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0).compare_rankings()
    fig = res.plot()
    assert isinstance(fig, Figure) and "Rank" in fig.axes[0].get_title()


@settings(max_examples=15, deadline=None)
@given(grid=st.lists(st.lists(st.sampled_from([0.2, 0.4, 0.5, 0.8, 0.9]), min_size=3,
                              max_size=3), min_size=2, max_size=4))
def test_spread_and_rank_bounds(grid):
    df = long_frame({f"M{i}": row for i, row in enumerate(grid)}, ["accuracy"] * 3)
    with warnings.catch_warnings():  # Elo's tie prior warns on separated grids
        warnings.simplefilter("ignore")
        res = load(df, norm_ref_low=0.0, norm_ref_high=1.0).compare_rankings()
    r = res.table[["aggregate", "elo", "improvability"]].to_numpy()
    assert ((r >= 1) & (r <= len(grid))).all()
    assert (r.min(axis=0) == 1).all()
    assert (res.table["rank_spread"].to_numpy() == r.max(axis=1) - r.min(axis=1)).all()
