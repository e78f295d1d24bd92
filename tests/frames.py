"""Small builders of long score tables shared by the ranking tests."""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

import arenalite


def quiet_load(df: pd.DataFrame, **kwargs: Any) -> arenalite.Benchmark:
    """``load_df`` with its warnings (observed bounds, unknown metric) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return arenalite.load_df(df, **kwargs)


def long_frame(scores: dict[str, list[float]], metrics: list[str]) -> pd.DataFrame:
    """One row per (model, dataset d<k>) with dataset k's metric from ``metrics``."""
    return pd.DataFrame([
        {"model": model, "dataset": f"d{k}", "metric": metrics[k], "score": value}
        for model, values in scores.items() for k, value in enumerate(values)
    ])
