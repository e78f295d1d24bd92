"""Argument checks of every method, in one place and with one rule.

A value of the wrong type (a string where a number belongs, a bool where a count
belongs) is a ``TypeError``; a value of the right type that is out of range (a
negative ROPE, ``alpha=1.5``, an unknown aggregate) is a ``ValueError``. Each message
names the parameter and the value given. The command line translates the parameter
names to its flags (:func:`arenalite.cli.flag_message`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .benchmark import Benchmark

MIN_DATASETS = 2


def is_number(value: Any) -> bool:
    """A real number: Python's or numpy's int or float, but not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_))


def check_number(value: Any, name: str, *, low: float | None = None, high: float | None = None,
                 low_open: bool = False, high_open: bool = False, units: str = "") -> float:
    """``value`` as a finite float within the bounds given (``units`` ends the message)."""
    if not is_number(value):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    number = float(value)
    below = low is not None and (number <= low if low_open else number < low)
    above = high is not None and (number >= high if high_open else number > high)
    if not math.isfinite(number) or below or above:
        raise ValueError(f"{name} must {_requirement(low, high, low_open, high_open)}{units}, "
                         f"got {plain(value)!r}")
    return number


def _requirement(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is None and high is None:
        return "be finite"
    if high is None:
        return f"be a finite number {'>' if low_open else '≥'} {low:g}"
    if low is None:
        return f"be a finite number {'<' if high_open else '≤'} {high:g}"
    if low_open and high_open:
        return f"lie strictly between {low:g} and {high:g}"
    return f"lie in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"


def plain(value: Any) -> Any:
    """numpy scalars as Python scalars, so messages read ``1`` rather than ``np.int64(1)``."""
    return value.item() if isinstance(value, np.generic) else value


def check_int(value: Any, name: str, minimum: int = 1, note: str = "") -> int:
    """``value`` as an int ≥ ``minimum`` (a count of samples or replicates)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if value < minimum:
        least = "a positive integer" if minimum == 1 else f"an integer ≥ {minimum}"
        raise ValueError(f"{name} must be {least}{note}, got {plain(value)!r}")
    return int(value)


def check_n_bootstrap(n_bootstrap: Any, minimum: int = 1) -> int:
    """``n_bootstrap`` as an int ≥ ``minimum`` (0 allows a point estimate only)."""
    return check_int(n_bootstrap, "n_bootstrap", minimum,
                     " (0: point estimate only)" if minimum == 0 else "")


def check_bool(value: Any, name: str) -> bool:
    """``value`` must be True or False (numpy's bool too)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value`` must be one of the strings ``choices``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {tuple(choices)!r}, got {type(value).__name__} "
                        f"{value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)!r}, got {value!r}")
    return value


def check_alpha(alpha: Any) -> float:
    """``alpha`` must be a number strictly between 0 and 1."""
    return check_number(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True)


def check_confidence(confidence: Any) -> float:
    """``confidence`` (the level of a bootstrap interval) must lie strictly between 0 and 1."""
    return check_number(confidence, "confidence", low=0.0, high=1.0, low_open=True,
                        high_open=True)


def make_rng(random_state: Any) -> np.random.Generator:
    """A numpy Generator from None, an int seed or a Generator."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"random_state must be None, an int or a numpy Generator, got "
                        f"{random_state!r}")
    if isinstance(random_state, (int, np.integer)) and random_state < 0:
        raise ValueError(f"random_state must be None, an int ≥ 0 or a numpy Generator, got "
                         f"{plain(random_state)!r}")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as err:
        raise TypeError(f"random_state must be None, an int or a numpy Generator, got "
                        f"{type(random_state).__name__} {random_state!r}") from err


def check_model(benchmark: Benchmark, name: Any, what: str) -> str:
    """``name`` must be one of the benchmark's models."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a model name (str), got {name!r}")
    if name not in benchmark.models_:
        raise ValueError(f"{what} {name!r} not found in score matrix; it is not a model of this "
                         f"benchmark (models: {benchmark.models_!r})")
    return name


def check_shape(benchmark: Benchmark, method: str, min_models: int = 2,
                min_datasets: int = MIN_DATASETS) -> None:
    """Enough models and datasets for ``method``; every score finite."""
    k, n = len(benchmark.models_), len(benchmark.datasets_)
    if k < min_models:
        raise ValueError(f"{method} needs at least {min_models} models, got {k} "
                         f"({benchmark.models_!r})")
    if n < min_datasets:
        raise ValueError(f"{method} needs at least {min_datasets} datasets (datasets are the unit "
                         f"of replication), got {n} ({benchmark.datasets_!r})")
    check_finite(benchmark.scores_, "scores_")


def check_finite(frame: pd.DataFrame, name: str) -> None:
    """Every cell of a model × dataset frame is a finite number."""
    values = frame.to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"{name} has a non-finite value {float(values[i, j])!r} for model "
                         f"{frame.index[i]!r} on dataset {frame.columns[j]!r}")
