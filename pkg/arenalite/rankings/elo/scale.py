"""The Elo scale: abilities θ → ratings R = 1000 + 400/ln10 · (θ − mean θ), and what a gap
between two ratings means as a win probability."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

ELO_BASE = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)
RULE_OF_THUMB_DELTAS = (0, 50, 100, 200, 400)


def elo_win_probability(delta: Any) -> Any:
    """P(A beats B) when A is rated ``delta`` points above B: 1 / (1 + 10^(−delta/400))."""
    arr = np.asarray(delta)
    if arr.dtype.kind not in "iuf" or arr.dtype.kind == "b":
        raise TypeError(f"delta must be numeric, got {delta!r}")
    out = 1.0 / (1.0 + np.power(10.0, -arr.astype(float) / 400.0))
    return float(out) if out.ndim == 0 else out


def elo_gap(probability: Any) -> Any:
    """The rating gap at which A beats B with ``probability``: 400 · log10(p / (1 − p))."""
    arr = np.asarray(probability)
    if arr.dtype.kind not in "iuf" or arr.dtype.kind == "b":
        raise TypeError(f"probability must be numeric, got {probability!r}")
    arr = arr.astype(float)
    if np.any(~((arr > 0) & (arr < 1))):
        raise ValueError(f"probability must lie strictly between 0 and 1, got {probability!r}")
    out = 400.0 * np.log10(arr / (1.0 - arr))
    return float(out) if out.ndim == 0 else out


def elo_rule_of_thumb(deltas: Any = RULE_OF_THUMB_DELTAS) -> pd.DataFrame:
    """What a rating gap means: delta, win probability (%), odds (A:B wins)."""
    d = np.asarray(deltas, dtype=float)
    p = np.atleast_1d(elo_win_probability(d))
    return pd.DataFrame({"delta": d, "win_probability": np.round(100 * p, 1),
                         "odds": np.round(p / (1 - p), 2)})


def to_elo(theta: np.ndarray) -> np.ndarray:
    """Abilities θ → Elo ratings centred on 1000 (last axis = models)."""
    return ELO_BASE + ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True))
