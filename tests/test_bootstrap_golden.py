"""Pinned outputs of every method with a bootstrap interval (Elo, leaderboard, IQM, rank
sensitivity) on small suites, recorded from the code before the Elo package and the shared
bootstrap module (issue 21), so that refactoring cannot move a result unnoticed.

Where the random stream is unchanged the tables must match: IQM exactly, Elo columns
within 1e-8 Elo (the point fit's solver may take another path to the same MLE). Rank
sensitivity's stream changed in issue 21 (row draws → the shared multinomial counts);
its entries were re-recorded then. The Elo and leaderboard entries were re-recorded once
more when the bootstrap's chord solver began to stop at steps of 1e-11 instead of 1e-9
(same draws): the old stops had left the replicates up to 4.8e-8 Elo from their MLE, the
new ones leave at most 1.4e-10 (against a solve to 1e-14). ``python
tests/test_bootstrap_golden.py [PREFIX …]`` re-records the cases (those whose names start
with a prefix).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import arenalite

FIXTURE = Path(__file__).parent / "data" / "golden_bootstrap.json"
ELO_COLUMNS = {"ELO", "CI_low", "CI_high", "elo", "elo+", "elo-"}
# Float columns other than Elo's: bit-identical on CPython x86-64 with Pyodide's pins (the
# tables were recorded there), equal up to round-off (1e-12) elsewhere: newer pandas and
# wasm32's libm sum and round some reductions differently (1 ulp seen). Integers: exact.


def suite(name: str) -> pd.DataFrame:
    """Small long tables: seeded, uneven seeds (a pair misses some seed labels), no seeds,
    and a separated one (the tie prior)."""
    rng = np.random.default_rng({"seeded": 1, "uneven": 2, "noseed": 3, "separated": 4}[name])
    n_models, n_datasets, n_seeds = {"seeded": (9, 12, 3), "uneven": (7, 10, 4),
                                     "noseed": (10, 15, 1), "separated": (8, 10, 1)}[name]
    skill = np.linspace(0.0, 0.3 if name == "separated" else 0.08, n_models)
    noise = 0.001 if name == "separated" else 0.03
    score = (0.6 + skill[:, None, None] + rng.normal(0, 0.05, (1, n_datasets, 1))
             + rng.normal(0, noise, (n_models, n_datasets, n_seeds)))
    m, d, s = (a.ravel() for a in np.meshgrid(np.arange(n_models), np.arange(n_datasets),
                                              np.arange(n_seeds), indexing="ij"))
    df = pd.DataFrame({"model": [f"m{i}" for i in m], "dataset": [f"d{j}" for j in d],
                       "seed": s, "metric": "accuracy", "score": score.ravel().round(4)})
    if name == "uneven":  # every model keeps ≥ 1 seed per dataset; some lose seed labels
        df = df[~((df["model"].isin(["m1", "m4"])) & (df["seed"] == 3) & (df["dataset"] < "d5"))]
    if n_seeds == 1:
        df = df.drop(columns="seed")
    return df


def benchmark(name: str) -> arenalite.Benchmark:
    df = suite(name)
    seed = "seed" if "seed" in df.columns else None
    return arenalite.load_df(df, seed=seed, norm_ref_low=0.0, norm_ref_high=1.0)


def group() -> arenalite.BenchmarkGroup:
    frames = []
    for k, cond in enumerate(("frozen", "tuned")):
        df = suite("noseed").assign(cond=cond)
        df["score"] += np.random.default_rng(10 + k).normal(0, 0.02, len(df)).round(4)
        frames.append(df)
    return arenalite.load_df(pd.concat(frames), condition_col="cond", norm_ref_low=0.0,
                             norm_ref_high=1.0)


CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    **{f"elo-{s}-{r}": (s, "elo_ranking", {"n_bootstrap": 40, "random_state": 1,
                                            "resampling": r})
       for s in ("seeded", "uneven", "noseed", "separated")
       for r in ("dataset", "split", "multinomial", "poisson")},
    "elo-seeded-threshold": ("seeded", "elo_ranking", {"n_bootstrap": 40, "random_state": 2,
                                                        "tie_threshold": 0.02,
                                                        "calibration_model": "m3"}),
    "leaderboard-seeded": ("seeded", "leaderboard", {"n_bootstrap": 40, "random_state": 3}),
    "leaderboard-uneven": ("uneven", "leaderboard", {"n_bootstrap": 40, "random_state": 3}),
    "leaderboard-noseed-battle": ("noseed", "leaderboard",
                                  {"n_bootstrap": 40, "random_state": 4, "resampling": "battle",
                                   "calibration_model": "m0", "calibration_elo": 800.0}),
    "leaderboard-separated": ("separated", "leaderboard", {"n_bootstrap": 40,
                                                           "random_state": 5}),
    **{f"iqm-{s}-{r}": (s, "iqm_ranking", {"n_bootstrap": 200, "random_state": 6,
                                           "resampling": r})
       for s, r in (("seeded", "dataset"), ("seeded", "seed"), ("uneven", "dataset"),
                    ("uneven", "seed"), ("noseed", "dataset"))},
    **{f"sensitivity-{agg}": ("group", "rank_sensitivity", {"agg": agg, "n_bootstrap": 200,
                                                            "random_state": 7})
       for agg in ("trimmed_mean", "mean", "median", "avg_rank")},
}


def run(case: str) -> pd.DataFrame:
    data, method, kwargs = CASES[case]
    target = group() if data == "group" else benchmark(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(target, method)(**kwargs).table


def as_json(table: pd.DataFrame) -> dict[str, list]:
    return {c: [v.item() if isinstance(v, np.generic) else v for v in table[c]]
            for c in table.columns}


def write(prefixes: list[str]) -> None:
    """Re-record the cases whose names start with one of ``prefixes`` (all without)."""
    old = json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}
    new = {case: as_json(run(case)) if not prefixes or case.startswith(tuple(prefixes))
           else old[case] for case in CASES}
    FIXTURE.write_text(json.dumps(new, separators=(",", ":")) + "\n")


@pytest.fixture(scope="module")
def golden() -> dict[str, dict[str, list]]:
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("case", list(CASES))
def test_outputs_match_the_pinned_tables(golden, case):
    got, want = as_json(run(case)), golden[case]
    assert list(got) == list(want)
    for column, values in want.items():
        if column in ELO_COLUMNS:
            np.testing.assert_allclose(got[column], values, rtol=0, atol=1e-8, err_msg=column)
        elif all(isinstance(v, int) for v in values):
            np.testing.assert_array_equal(got[column], values, err_msg=column)
        elif all(isinstance(v, (int, float)) for v in values):
            np.testing.assert_allclose(got[column], values, rtol=1e-12, atol=0, err_msg=column)
        else:
            assert got[column] == values, column


if __name__ == "__main__":
    sys.exit(write(sys.argv[1:]))
