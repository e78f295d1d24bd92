"""Checks of the parameters that several methods share (bootstrap size, random state)."""

from __future__ import annotations

from typing import Any

import numpy as np


def check_n_bootstrap(n_bootstrap: Any, minimum: int = 1) -> int:
    """``n_bootstrap`` as an int ≥ ``minimum`` (0 allows a point estimate only)."""
    if isinstance(n_bootstrap, (bool, np.bool_)) or not isinstance(n_bootstrap, (int, np.integer)):
        raise TypeError(f"n_bootstrap must be an integer, got {type(n_bootstrap).__name__} "
                        f"{n_bootstrap!r}")
    if n_bootstrap < minimum:
        least = "0 (point estimate only) or more" if minimum == 0 else f"at least {minimum}"
        raise ValueError(f"n_bootstrap must be {least}, got {n_bootstrap!r}")
    return int(n_bootstrap)


def make_rng(random_state: Any) -> np.random.Generator:
    """A numpy Generator from None, an int seed or a Generator."""
    if isinstance(random_state, (bool, np.bool_)):
        raise TypeError(f"random_state must be None, an int or a numpy Generator, got "
                        f"{random_state!r}")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as err:
        raise TypeError(f"random_state must be None, an int or a numpy Generator, got "
                        f"{type(random_state).__name__} {random_state!r}") from err
