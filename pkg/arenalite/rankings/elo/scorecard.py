"""Scorecards of an Elo ranking: the win-rate matrix over datasets and the match record
(wins, losses, ties of every ordered pair over all match days)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .battles import battle_outcome

if TYPE_CHECKING:
    from ...benchmark import Benchmark

_DRAW_BUDGET = 4_000_000  # battle outcomes held at once by the win-rate matrix


def winrate_matrix(scores: np.ndarray, tie_threshold: float) -> np.ndarray:
    """Share of datasets where row beats column (ties ½) from an M × D score matrix.

    Rows in blocks, so that the (rows, M, D) battle outcomes stay within ``_DRAW_BUDGET``.
    """
    m, d = scores.shape
    share = np.empty((m, m))
    step = max(1, _DRAW_BUDGET // max(m * d, 1))
    for first in range(0, m, step):
        block = scores[first:first + step, None, :] - scores[None, :, :]
        share[first:first + step] = battle_outcome(block, tie_threshold).mean(axis=2)
    np.fill_diagonal(share, np.nan)
    return share


def winrate_table(benchmark: Benchmark, tie_threshold: float) -> pd.DataFrame:
    """The win-rate matrix as a DataFrame, rows and columns sorted by mean win rate."""
    models = benchmark.models_
    share = winrate_matrix(benchmark.scores_.loc[models].to_numpy(dtype=float), tie_threshold)
    by_rate = np.lexsort((np.asarray(models, dtype=object), -np.nanmean(share, axis=1)))
    names = [models[i] for i in by_rate]
    return pd.DataFrame(share[np.ix_(by_rate, by_rate)], index=pd.Index(names, name="model"),
                        columns=pd.Index(names, name="opponent"))


def battle_counts(points: np.ndarray, pairs: np.ndarray, m: int) -> np.ndarray:
    """Unweighted (wins, losses, ties) of row against column over all match days: (3, M, M)."""
    wins = (points == 1.0).sum(axis=0)
    losses = (points == 0.0).sum(axis=0)
    ties = (points == 0.5).sum(axis=0)
    out = np.zeros((3, m, m), dtype=np.int64)
    out[0][pairs[0], pairs[1]], out[0][pairs[1], pairs[0]] = wins, losses
    out[1][pairs[0], pairs[1]], out[1][pairs[1], pairs[0]] = losses, wins
    out[2][pairs[0], pairs[1]], out[2][pairs[1], pairs[0]] = ties, ties
    return out


def _format_record(wins: np.ndarray, losses: np.ndarray, ties: np.ndarray,
                   share: np.ndarray) -> list[str]:
    """"W–L[–T] (share %)" per row; each distinct (W, L, T) is formatted once (the share
    follows from them), so 1000 models' million pairs cost a few hundred formats."""
    # one integer key per (W, L, T): a 1-D unique instead of a row-wise one
    key = (wins * (losses.max(initial=0) + 1) + losses) * (ties.max(initial=0) + 1) + ties
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    texts = []
    for w, lo, t, s in zip(wins[first].tolist(), losses[first].tolist(), ties[first].tolist(),
                           share[first], strict=True):
        head = f"{w}–{lo}" + (f"–{t}" if t else "")
        texts.append(f"{head} ({100 * s:.1f} %)" if np.isfinite(s) else f"{head} (no battles)")
    return np.asarray(texts, dtype=object)[inverse.reshape(-1)].tolist()


def record_table(counts: np.ndarray, models: list[str], order: list[int]) -> pd.DataFrame:
    """Long scorecard: one row per ordered pair, then one "(all)" row per model."""
    m = len(models)
    # ordered pairs in table order: row-major over (rank of model, rank of opponent)
    by_rank = np.asarray(order, dtype=int)
    rows_i, cols_j = (by_rank[k] for k in np.nonzero(~np.eye(m, dtype=bool)))
    w, lo, t = (c[rows_i, cols_j] for c in counts)
    total = counts.sum(axis=2)
    wt, lt, tt = total[0][order], total[1][order], total[2][order]
    wins = np.concatenate([w, wt])
    losses = np.concatenate([lo, lt])
    ties = np.concatenate([t, tt])
    n = wins + losses + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, (wins + 0.5 * ties) / np.maximum(n, 1), np.nan)
    names = np.asarray(models, dtype=object)
    table = pd.DataFrame({
        "model": np.concatenate([names[rows_i], names[order]]),
        "opponent": np.concatenate([names[cols_j], np.full(m, "(all)", dtype=object)]),
        "wins": wins, "losses": losses, "ties": ties, "win_share": share,
        "record": _format_record(wins, losses, ties, share),
    })
    return table
