"""Shared fixtures: small long-format score tables used across the test suite.

Also the wasm32 lane's rules (scripts/wasm_lane.sh): on WASI the tests marked with what it
lacks, as the browser does too, are deselected and counted by marker.
"""

from __future__ import annotations

import os
import sys
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

# WASI (the wasm32 lane, scripts/wasm_lane.sh) has no os.getuid; pytest's tmp_path calls it
# to check who owns its folder. -1 is how POSIX says "unknown", and pytest skips the check then.
if not hasattr(os, "getuid"):
    os.getuid = lambda: -1

# What WASI (and Pyodide in the browser) has none of: tests marked so are left out there.
NOT_ON_WASM = ("browser", "needs_processes", "needs_threads", "needs_sockets", "needs_dask")
LEFT_OUT = pytest.StashKey[Counter]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On WASI, deselect the tests marked NOT_ON_WASM; count them by their first such marker."""
    if sys.platform != "wasi":
        return
    kept, left, why = [], [], Counter()
    for item in items:
        marker = next((m for m in NOT_ON_WASM if item.get_closest_marker(m)), None)
        if marker is None:
            kept.append(item)
        else:
            left.append(item)
            why[marker] += 1
    config.stash[LEFT_OUT] = why
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    """On WASI, say how many tests were left out and why (the marker's description)."""
    why = config.stash.get(LEFT_OUT, None)
    if why is None:
        return
    described = {name.strip(): text.strip()
                 for name, _, text in (line.partition(":") for line in config.getini("markers"))}
    counts = {k: len(terminalreporter.stats.get(k, [])) for k in ("passed", "failed", "error")}
    terminalreporter.write_sep("=", "wasm32 lane")
    terminalreporter.write_line(f"{counts['passed']} passed, {counts['failed']} failed, "
                                f"{counts['error']} errors, {sum(why.values())} left out:")
    for marker, count in why.most_common():
        terminalreporter.write_line(f"{count:4d} {marker}: {described[marker]}")


# CI explores the same hypothesis examples on every run (reproducible, never flaky);
# local runs keep exploring new ones.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

FOUR_MODELS_SCORES = {
    "Specialist-X": [0.96, 0.96, 0.96, 0.55, 0.55, 0.55],
    "Specialist-Y": [0.55, 0.55, 0.55, 0.96, 0.96, 0.96],
    "Steady": [0.93, 0.93, 0.93, 0.80, 0.80, 0.80],
    "Sprinter": [0.90, 0.90, 0.90, 0.70, 0.70, 0.70],
}
FOUR_MODELS_DATASETS = ["D1", "D2", "D3", "D4", "D5", "D6"]


def four_models_frame() -> pd.DataFrame:
    """SPEC §3 golden example: four models on six accuracy datasets, long format."""
    rows = [
        {"model": model, "dataset": ds, "metric": "accuracy", "score": value}
        for model, values in FOUR_MODELS_SCORES.items()
        for ds, value in zip(FOUR_MODELS_DATASETS, values, strict=True)
    ]
    return pd.DataFrame(rows)


def seeded_frame() -> pd.DataFrame:
    """Three models × four accuracy datasets × five seeds (0-4), deterministic.

    Model "A" is best on average, "C" worst; every model ran every seed.
    """
    rng = np.random.default_rng(12345)
    base = {"A": 0.85, "B": 0.80, "C": 0.70}
    offsets = {"D1": 0.05, "D2": -0.05, "D3": 0.0, "D4": 0.08}
    rows = []
    for model, level in base.items():
        for ds, shift in offsets.items():
            noise = rng.normal(0.0, 0.03, size=5)
            for seed in range(5):
                score = float(np.clip(level + shift + noise[seed], 0.01, 0.99))
                rows.append({"model": model, "dataset": ds, "seed": seed,
                             "metric": "accuracy", "score": round(score, 4)})
    return pd.DataFrame(rows)


@pytest.fixture
def four_models() -> pd.DataFrame:
    """Long DataFrame (model, dataset, metric, score) of the SPEC §3 four-model example.

    Load with ``norm_ref_low=0.0, norm_ref_high=1.0`` to reproduce the golden numbers.
    """
    return four_models_frame()


@pytest.fixture
def seeded() -> pd.DataFrame:
    """Long DataFrame (model, dataset, seed, metric, score): 3 models, 4 datasets, 5 seeds."""
    return seeded_frame()
