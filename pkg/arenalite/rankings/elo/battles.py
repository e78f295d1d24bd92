"""The battles: every (dataset[, seed]) is a match day, every model pair one battle.

The better normalized score wins a battle (1 point), equal scores or a difference of at
most ``tie_threshold`` are a tie (½ point each). A battle on match day (d, s) weighs
1 / (P · S_d) with P = M(M−1)/2 and S_d the number of distinct seed labels of dataset d,
so a complete dataset carries total weight 1. This module turns a Benchmark into those
battles (:class:`BattleSet`) and into the sums the solvers and the resampling schemes
need: pair sums per match day or dataset, the win matrix, and — when every pair met on
every match day — each unit's model points and battles per pair (:class:`CompleteUnits`),
the sufficient statistics of the Bradley-Terry likelihood.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .solvers import prior_weight, tie_prior

if TYPE_CHECKING:
    from ...benchmark import Benchmark

_SOLVE_BUDGET = 2_000_000  # entries of the (…, M, M) win matrices built at once


def match_days(benchmark: Benchmark) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Normalized scores per match day: (scores K × M with NaN where absent, dataset codes, S_d).

    Columns follow ``benchmark.models_``, dataset codes index ``benchmark.datasets_``;
    the last array gives each match day's S_d.
    """
    keys = ["dataset", "seed"] if benchmark.has_seeds else ["dataset"]
    table = benchmark.long_.set_index(keys + ["model"])["norm"].unstack("model")
    datasets = table.index.get_level_values("dataset")
    table = table.reindex(columns=benchmark.models_)
    codes = pd.Index(benchmark.datasets_).get_indexer(datasets)
    seeds_per_dataset = np.bincount(codes)
    return table.to_numpy(dtype=float), codes, seeds_per_dataset[codes]


def pair_blocks(m: int) -> Iterator[tuple[int, slice]]:
    """(i, the columns of the pairs (i, j > i)) for i < m − 1: the pairs of
    :func:`battle_points`' order come in one contiguous block per first model."""
    start = 0
    for i in range(m - 1):
        stop = start + m - 1 - i
        yield i, slice(start, stop)
        start = stop


def battle_points(scores: np.ndarray, tie_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Points of the first model of every pair (i < j) per match day: 1, ½, 0 or NaN.

    Returns ``(points, pairs)``: points is K × P, pairs the (2, P) model indices.
    NaN marks a pair that did not meet that day (one of the two has no score).
    """
    k, m = scores.shape
    pairs = np.vstack(np.triu_indices(m, 1))
    points = np.empty((k, pairs.shape[1]))
    for i, columns in pair_blocks(m):  # slices, no gathers
        block = points[:, columns]  # scored while it is in cache: one pass over K × P
        np.subtract(scores[:, i:i + 1], scores[:, i + 1:], out=block)
        battle_outcome(block, tie_threshold, out=block)
    return points, pairs


def ranked_day_points(scores: np.ndarray) -> np.ndarray:
    """Each model's points per match day, (K, M), with no tie threshold and no missing
    score: the models it beats plus ½ per other model with an equal score, i.e. its
    average rank among the day's scores minus one (exact halves). O(K · M log M), no
    (K, P) battles."""
    from scipy.stats import rankdata

    return rankdata(scores, method="average", axis=1) - 1.0


def complete_win_sums(scores: np.ndarray, weights: np.ndarray,
                      tie_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Weighted (won, lost) points of the first and of the second model of every pair (P,)
    over match days where every model has a score: the pairs (i, j > i) are scored a block
    at a time and summed at once (no K × P points in memory)."""
    m = scores.shape[1]
    won, lost = np.empty((2, m * (m - 1) // 2))
    for i, columns in pair_blocks(m):
        points = np.subtract(scores[:, i:i + 1], scores[:, i + 1:])
        battle_outcome(points, tie_threshold, out=points)
        won[columns], lost[columns] = block_win_sums(points, weights)
    return won, lost


def block_win_sums(points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted (won, lost) sums over the days of a block of complete battle points; the
    block is made contiguous first, so the same points give the same bits whichever array
    they came from."""
    points = np.ascontiguousarray(points)
    return weights @ points, weights @ (1.0 - points)


def battle_outcome(diff: np.ndarray, tie_threshold: float,
                   out: np.ndarray | None = None) -> np.ndarray:
    """1 for a positive score difference, 0 for a negative one, ½ within ``tie_threshold``
    (NaN stays NaN); ``out=diff`` overwrites the differences (one K × P buffer, not two)."""
    tied = np.abs(diff) <= tie_threshold if tie_threshold > 0 else None
    out = np.sign(diff, out=out)
    if tied is not None:
        out[tied] = 0.0
    out *= 0.5
    out += 0.5
    return out


def pair_sums_to_matrix(won: np.ndarray, lost: np.ndarray, pairs: np.ndarray,
                        m: int) -> np.ndarray:
    """(…, P) weighted points of the first and of the second model per pair → (…, M, M).

    Both sides are summed separately so that a side without points stays exactly 0
    (a difference of sums would leave round-off that fakes a connected graph).
    """
    shape = won.shape[:-1] + (m, m)
    win = np.zeros(shape)
    win[..., pairs[0], pairs[1]] = won
    win[..., pairs[1], pairs[0]] = lost
    return win


def day_pair_sums(points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted points of the first and of the second model per match day and pair: (K, P) each."""
    met = ~np.isnan(points)
    won = np.where(met, points, 0.0)
    won *= weights[:, None]
    lost = met * weights[:, None]
    lost -= won
    return won, lost


def win_matrix(points: np.ndarray, weights: np.ndarray, pairs: np.ndarray, m: int) -> np.ndarray:
    """Weighted win matrix W (M × M): W_ij = weighted points of i against j.

    When every pair met on every match day the sums are weighted products over the days, a
    block of pairs (i, j > i) at a time as in :func:`complete_win_sums` (no K × P
    temporaries: the losing side's points 1 − p are formed a block at a time).
    """
    if not np.isnan(points).any():
        won, lost = np.empty((2, points.shape[1]))
        for _, columns in pair_blocks(m):  # complete_win_sums' blocks: the same bits
            won[columns], lost[columns] = block_win_sums(points[:, columns], weights)
        return pair_sums_to_matrix(won, lost, pairs, m)
    won, lost = day_pair_sums(points, weights)
    return pair_sums_to_matrix(won.sum(axis=0), lost.sum(axis=0), pairs, m)


def group_sums(rows: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Sums of the rows of ``rows`` (K, …) per group label in ``groups`` (K): (n_groups, …).

    One pass over the rows (``reduceat`` over runs of equal labels; rows are reordered
    only if the labels are not already grouped); a group without rows sums to 0.
    """
    out = np.zeros((n_groups,) + rows.shape[1:])
    if len(groups) == 0:
        return out
    order = np.argsort(groups, kind="stable")
    if np.any(order != np.arange(len(groups))):
        rows, groups = rows[order], groups[order]
    present, starts = np.unique(groups, return_index=True)
    out[present] = np.add.reduceat(rows, starts, axis=0)
    return out


def dataset_pair_sums(points: np.ndarray, weights: np.ndarray, codes: np.ndarray,
                      n_datasets: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-dataset (won, lost) pair sums, (n_datasets, P) each, of the match days' points.

    Every match day of a dataset weighs the same, so each side is the weight times a sum
    of points over the dataset's days: points are multiples of ½, so those sums (and
    battles − points) are exact and a side without points stays exactly 0. One pass over
    the K × P points, no weighted copies. (Days with unequal weights within a dataset
    fall back to summing :func:`day_pair_sums`.)
    """
    order = np.argsort(codes, kind="stable")
    if np.any(order != np.arange(len(codes))):
        points, weights, codes = points[order], weights[order], codes[order]
    present, starts = np.unique(codes, return_index=True)
    if not np.array_equal(weights, np.repeat(weights[starts], np.diff(np.append(starts,
                                                                                len(codes))))):
        won, lost = day_pair_sums(points, weights)
        return group_sums(won, codes, n_datasets), group_sums(lost, codes, n_datasets)
    met = ~np.isnan(points)
    if met.all():
        battles = np.diff(np.append(starts, len(codes)))[:, None].astype(float)
        # one day per dataset (no seeds): the sums are the points themselves
        scored = points if len(starts) == len(codes) else np.add.reduceat(points, starts,
                                                                            axis=0)
    else:
        battles = np.add.reduceat(met, starts, axis=0).astype(float)
        scored = np.add.reduceat(np.where(met, points, 0.0), starts, axis=0)
    weight = weights[starts, None]
    if len(present) == n_datasets:  # every dataset played: no zero rows to fill in
        return weight * scored, weight * (battles - scored)
    won, lost = np.zeros((2, n_datasets, points.shape[1]))
    won[present] = weight * scored
    lost[present] = weight * (battles - scored)
    return won, lost


@dataclass(frozen=True)
class CompleteUnits:
    """Resampling units (match days or datasets) of a battle set where every pair met on
    every match day.

    ``points`` (U, M): each model's weighted points per unit; ``battles`` (U,): each unit's
    weighted battles per pair, the same for every pair. A replicate drawing the units
    ``counts`` times then has model points ``counts @ points`` and ``counts @ battles``
    battles per pair: the sufficient statistics of the Bradley-Terry likelihood (see
    :func:`.fitting.solve_complete`). ``pair_sums()`` gives the units' (won, lost) pair
    sums (U, P), built on the first call only: just the rare replicate whose MLE needs its
    win matrix asks for them.
    """

    points: np.ndarray
    battles: np.ndarray
    pair_sums: Callable[[], tuple[np.ndarray, np.ndarray]]


def day_model_points(points: np.ndarray, m: int) -> np.ndarray:
    """Each of the ``m`` models' points per match day, (K, M), from complete (K, P) battle
    points (pairs in :func:`battle_points`' order).

    The pairs (i, j > i) are one block of columns: model i scores the block's row sums,
    each j > i the block's 1 − p. One pass over the points, no (K, M, M) win matrices.
    """
    out = np.zeros((len(points), m))
    for i, columns in pair_blocks(m):
        block = points[:, columns]
        out[:, i] += block.sum(axis=1)
        out[:, i + 1:] += 1.0 - block
    return out


def model_points(won: np.ndarray, lost: np.ndarray, pairs: np.ndarray, m: int) -> np.ndarray:
    """Each model's points Σ_j W_ij per row of (…, P) pair sums: (…, M); the win matrices
    are built in blocks of at most ``_SOLVE_BUDGET`` entries."""
    out = np.empty(won.shape[:-1] + (m,))
    per_block = max(1, _SOLVE_BUDGET // (m * m))
    for first in range(0, len(won), per_block):
        block = slice(first, first + per_block)
        out[block] = pair_sums_to_matrix(won[block], lost[block], pairs, m).sum(axis=-1)
    return out


def few_shared_seeds(scores: np.ndarray, codes: np.ndarray, pairs: np.ndarray,
                     datasets: list[str]) -> list[str]:
    """The datasets where some model pair shares under half of the seed labels."""
    present = ~np.isnan(scores)
    if present.all():
        return []
    shared = np.zeros((codes.max() + 1, pairs.shape[1]))
    np.add.at(shared, codes, present[:, pairs[0]] & present[:, pairs[1]])
    n_labels = np.bincount(codes)
    few = (shared < n_labels[:, None] / 2).any(axis=1)
    return [datasets[i] for i in np.flatnonzero(few)]


@dataclass(frozen=True)
class BattleSet:
    """The battles of a benchmark, ready to be fitted and resampled.

    ``scores`` (K, M): normalized scores per match day (NaN = no score; only days where
    some pair met); ``tie_threshold`` the battles' tie rule; ``weights`` (K): battle weight
    1 / (P · S_d) of each match day; ``codes`` (K): each match day's dataset, indexing
    ``datasets``; ``pairs`` (2, P) model indices. ``points`` (K, P), the points of the
    first model of each pair per match day (NaN = did not meet), are scored on first use:
    a complete battle set's fit and dataset bootstrap never need them.
    """

    scores: np.ndarray
    tie_threshold: float
    weights: np.ndarray
    codes: np.ndarray
    pairs: np.ndarray
    models: list[str]
    datasets: list[str]

    @cached_property
    def points(self) -> np.ndarray:
        return battle_points(self.scores, self.tie_threshold)[0]

    @property
    def prior(self) -> np.ndarray:
        """The tie prior of the regularization rule (module doc), as an M × M matrix."""
        m = len(self.models)
        return tie_prior(m, prior_weight(self.weights, m))

    def win_matrix(self) -> np.ndarray:
        return self._win

    @cached_property
    def _win(self) -> np.ndarray:
        """The full-data win matrix, built once (point fit and the bootstrap's Hessian)."""
        m = len(self.models)
        if self.complete:
            won, lost = complete_win_sums(self.scores, self.weights, self.tie_threshold)
            return pair_sums_to_matrix(won, lost, self.pairs, m)
        return win_matrix(self.points, self.weights, self.pairs, m)

    def unit_pair_sums(self, scheme: str) -> tuple[np.ndarray, np.ndarray]:
        """Per-unit (won, lost) pair sums, (U, P) each: match days ("split") or datasets."""
        if scheme == "split":
            return day_pair_sums(self.points, self.weights)
        return dataset_pair_sums(self.points, self.weights, self.codes, len(self.datasets))

    @cached_property
    def complete(self) -> bool:
        """Whether there are match days and every pair met on each (no missing score)."""
        return (len(self.scores) > 0 and len(self.models) > 1
                and not np.isnan(self.scores).any())

    def day_points(self) -> np.ndarray:
        """Each model's (unweighted) points per match day, (K, M), of a complete battle set:
        from the ranks of each day's scores when there is no tie threshold, else from the
        battle points."""
        if self.tie_threshold == 0:
            return ranked_day_points(self.scores)
        return day_model_points(self.points, len(self.models))

    def complete_units(self, scheme: str) -> CompleteUnits:
        """The units of "split" or "dataset" with their sufficient statistics (needs
        :attr:`complete`: then a unit's battles per pair are the sum of its days' weights),
        from each day's model points (no pair sums unless a replicate asks for them)."""
        weighted = self.day_points() * self.weights[:, None]
        if scheme == "split":
            points, battles = weighted, self.weights
        else:
            n = len(self.datasets)
            points = group_sums(weighted, self.codes, n)
            battles = np.bincount(self.codes, weights=self.weights, minlength=n)
        return CompleteUnits(points, battles, functools.cache(
            functools.partial(self.unit_pair_sums, scheme)))


def play_battles(benchmark: Benchmark, tie_threshold: float) -> BattleSet:
    """Battles of every match day where at least one pair met (see module doc); warns
    naming the datasets where some pair shares under half of the seed labels.

    Built once per Benchmark and threshold (``Benchmark.memo``): elo_ranking, the
    leaderboard and compare_rankings play the same battles (at 1000 models its K × P
    points take a third of a second to score). The warning comes with every call.
    """
    played, few = benchmark.memo(("elo battles", tie_threshold),
                                 lambda: score_battles(benchmark, tie_threshold))
    if few:
        warnings.warn(f"models share few or no seed labels in dataset(s) {few!r}: battles are "
                      "only played on a common seed label, so pairs sharing under half of a "
                      "dataset's seed labels weigh less and pairs sharing none contribute nothing",
                      UserWarning, stacklevel=5)
    return played


def score_battles(benchmark: Benchmark, tie_threshold: float) -> tuple[BattleSet, list[str]]:
    """:func:`play_battles` without the memo: the battle set and the datasets where pairs
    share few seed labels."""
    scores, codes, seeds = match_days(benchmark)
    m = scores.shape[1]
    pairs = np.vstack(np.triu_indices(m, 1))
    few = (few_shared_seeds(scores, codes, pairs, benchmark.datasets_) if benchmark.has_seeds
           else [])
    played = (~np.isnan(scores)).sum(axis=1) >= 2  # some pair met that day
    if played.all():
        played = slice(None)  # a view: no copy of the scores
    return BattleSet(scores[played], tie_threshold, 1.0 / (pairs.shape[1] * seeds[played]),
                      codes[played], pairs, benchmark.models_, benchmark.datasets_), few
