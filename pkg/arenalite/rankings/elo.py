"""Bradley-Terry Elo: every (dataset[, seed]) is a match day, every model pair one battle.

The better normalized score wins a battle (1 point), equal scores or a difference of at
most ``tie_threshold`` are a tie (½ point each). A battle on match day (d, s) weighs
1 / (P · S_d) with P = M(M−1)/2 and S_d the number of distinct seed labels of dataset d,
so a complete dataset carries total weight 1. Ratings are the joint maximum-likelihood
Bradley-Terry abilities of the weighted win matrix (Newton's method with a line search),
reported as R = 1000 + 400/ln10 · (θ − mean θ).

Regularization rule. When a win matrix's graph is not strongly connected (a model wins
or loses every battle, or groups never beat each other) its MLE is infinite. Then, and
only then, a tie prior is added: one virtual match day in which every pair ties with
weight w_min / (M − 1), w_min the lightest battle weight of the data. Every model thus
gets half a win and half a loss of the lightest real battle (a Haldane-style ½
correction), spread evenly over its opponents: the smallest nudge that keeps the ratings
finite, and too small to reorder models that the data order. The point estimate and
every bootstrap replicate follow the same rule, each only when it needs it, and no
replicate is ever dropped; warnings say how many needed it.

The 95 % interval is the 2.5 / 97.5 % quantiles of ``n_bootstrap`` replicates (the point
stays the full-data MLE). Three resampling schemes answer three questions:

- ``"battle"``: battles resampled with replacement within each match day — how sure
  are we on exactly these splits?
- ``"split"``: the K match days (dataset × split) drawn with replacement from the pool
  (the tournament methodology's "Dataset-Split Resampling") — how sure are we on splits
  like these, treating every split as an independent tournament?
- ``"dataset"``: whole datasets drawn with replacement, all their match days together (a
  dataset drawn c times counts c times; TabArena's scheme) — how sure are we on
  datasets like these? The coverage study in ``bench/bench_coverage.py`` shows that only
  this one holds its 95 % when datasets differ, hence the default.

All schemes are vectorized. "split" and "dataset" draw one multinomial count vector per
replicate over the units (match days or datasets) and form every replicate's pair sums
as ``counts @ unit_sums`` (a (B × U) by (U × P) product); then all replicates of a chunk
are solved together on their (B, M, M) win tensors. When every pair met on every match
day (no missing score, the usual case), a unit's battles per pair are the same for all
pairs, and the likelihood Σ_i θ_i w_i − Σ_{i<j} N_ij log(e^θ_i + e^θ_j) depends on a
replicate only through each model's points w = counts @ unit_points and its battles
per pair N = counts @ unit_battles: a (B × U) by (U × M) product, and no win matrix is
built. Whether a replicate's MLE is finite then follows from its sorted points
(Landau's condition, :func:`complete_connected`); the few that are not finite take the
general path with the tie prior. Both paths give the same abilities for the same draws.

The "battle" scheme draws per replicate n_k uniform draws among the n_k battles of each
match day, accumulated straight into per-replicate pair sums with ``bincount``. Exact
resampling draws one number per battle and replicate; when that exceeds
``EXACT_DRAW_LIMIT`` (e.g. 150 models × 2,000 match days × 1,000 replicates = 22 billion
draws) ``resampling="auto"`` switches to the Poisson bootstrap (Hanley & MacGibbon 2006):
every battle gets an independent Poisson(1) count, and since sums of independent Poisson
counts are Poisson, only three draws per (pair, battle weight) are needed per replicate —
Poisson(#wins), Poisson(#ties), Poisson(#losses). It differs from the exact scheme only in
not fixing each match day's total at n_k. ``"battle"`` is ``"auto"``; ``"multinomial"``
and ``"poisson"`` force one way of drawing it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_n_bootstrap, check_number, make_rng
from ..progress import Progress
from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

ELO_BASE = 1000.0
ELO_SCALE = 400.0 / math.log(10.0)
RULE_OF_THUMB_DELTAS = (0, 50, 100, 200, 400)
_DRAW_BUDGET = 4_000_000  # random draws held in memory at once during the bootstrap
_SOLVE_BUDGET = 2_000_000  # B · M · M entries per batched Newton solve
_ANDERSON = 2  # iterates the chord's Anderson acceleration mixes
EXACT_DRAW_LIMIT = 200_000_000  # battles × replicates above which "auto" uses Poisson
SCHEMES = ("battle", "split", "dataset")
BATTLE_DRAWS = ("auto", "multinomial", "poisson")  # ways of drawing the "battle" scheme
RESAMPLING = SCHEMES + BATTLE_DRAWS
DEFAULT_RESAMPLING = "dataset"


# ---- Elo scale -----------------------------------------------------------------------
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


# ---- match days and battles ------------------------------------------------------------
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


def battle_points(scores: np.ndarray, tie_threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Points of the first model of every pair (i < j) per match day: 1, ½, 0 or NaN.

    Returns ``(points, pairs)``: points is K × P, pairs the (2, P) model indices.
    NaN marks a pair that did not meet that day (one of the two has no score).
    """
    k, m = scores.shape
    pairs = np.vstack(np.triu_indices(m, 1))
    diff = np.empty((k, pairs.shape[1]))
    start = 0
    for i in range(m - 1):  # the pairs (i, j > i) are one block: slices, no gathers
        stop = start + m - 1 - i
        np.subtract(scores[:, i:i + 1], scores[:, i + 1:], out=diff[:, start:stop])
        start = stop
    return _points(diff, tie_threshold, out=diff), pairs


def _points(diff: np.ndarray, tie_threshold: float, out: np.ndarray | None = None) -> np.ndarray:
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

    When every pair met on every match day the sums are two weighted products over the
    days (no K × P temporaries of weighted points).
    """
    if not np.isnan(points).any():
        return pair_sums_to_matrix(weights @ points, weights @ (1.0 - points), pairs, m)
    won, lost = day_pair_sums(points, weights)
    return pair_sums_to_matrix(won.sum(axis=0), lost.sum(axis=0), pairs, m)


def strongly_connected(win: np.ndarray) -> np.ndarray:
    """Whether each (…, M, M) win matrix's graph (i → j when W_ij > 0) is strongly connected.

    That is the condition for a finite Bradley-Terry MLE (Hunter 2004, Assumption 1).
    """
    adj = (win > 0).astype(np.float32)
    ok = np.ones(win.shape[:-2], dtype=bool)
    for a in (adj, np.swapaxes(adj, -1, -2)):
        reach = np.zeros(win.shape[:-1], dtype=np.float32)
        reach[..., 0] = 1.0
        while True:
            grown = np.maximum(reach, (np.einsum("...i,...ij->...j", reach, a) > 0))
            if np.array_equal(grown, reach):
                break
            reach = grown
        ok &= reach.all(axis=-1)
    return ok


def prior_weight(weights: np.ndarray, m: int) -> float:
    """Per-pair weight of the tie prior: w_min / (M − 1), w_min the lightest battle weight.

    Every model then gets half a win and half a loss of the lightest real battle. With
    no battle at all, w_min is taken as 1 / P (a battle of a one-seed dataset).
    """
    lightest = weights.min() if weights.size else 2.0 / (m * (m - 1))
    return float(lightest) / (m - 1)


def tie_prior(m: int, weight: float) -> np.ndarray:
    """The regularizing prior: one virtual match day where every pair ties with ``weight``."""
    prior = np.full((m, m), 0.5 * weight)
    np.fill_diagonal(prior, 0.0)
    return prior


def _log_likelihood(theta: np.ndarray, win: np.ndarray) -> np.ndarray:
    d = theta[:, :, None] - theta[:, None, :]
    return -(win * np.logaddexp(0.0, -d)).sum(axis=(1, 2))


def bradley_terry(win: np.ndarray, theta0: np.ndarray | None = None, tol: float = 1e-9,
                  max_iter: int = 200) -> np.ndarray:
    """Maximum-likelihood abilities θ (mean 0) for a batch of win matrices (B, M, M).

    Newton's method on the concave log-likelihood Σ W_ij log σ(θ_i − θ_j) with a
    backtracking line search, all replicates at once; converged replicates leave the
    batch. Requires strongly connected graphs (see :func:`strongly_connected`).
    """
    theta, converged = _newton(win, theta0, tol, max_iter)
    if not converged.all():
        raise RuntimeError(f"Bradley-Terry Newton iteration did not converge for "
                           f"{int((~converged).sum())} of {len(win)} win matrices within "
                           f"{max_iter} iterations")
    return theta


def _newton(win: np.ndarray, theta0: np.ndarray | None, tol: float,
            max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    b, m, _ = win.shape
    total = win + np.swapaxes(win, 1, 2)
    wins = win.sum(axis=2)
    theta = np.zeros((b, m)) if theta0 is None else np.array(theta0, dtype=float, copy=True)
    active = np.arange(b)
    base = None  # log-likelihood at θ: the last accepted trial's, not evaluated twice
    for _ in range(max_iter):
        if active.size == 0:
            break
        th, w, n = theta[active], win[active], total[active]
        p = 0.5 * (1.0 + np.tanh(0.5 * (th[:, :, None] - th[:, None, :])))
        grad = wins[active] - (n * p).sum(axis=2)
        h = n * p * (1.0 - p)
        lap = -h
        lap[:, np.arange(m), np.arange(m)] = h.sum(axis=2)
        step = np.linalg.solve(lap + 1.0 / m, grad[..., None])[..., 0]
        if base is None:
            base = _log_likelihood(th, w)
        scale = np.ones(active.size)
        new = th + step
        for _ in range(50):
            value = _log_likelihood(new, w)
            worse = value < base - 1e-12 * np.abs(base)
            if not worse.any():
                break
            scale[worse] *= 0.5
            new[worse] = th[worse] + scale[worse, None] * step[worse]
        else:
            value = _log_likelihood(new, w)
        new -= new.mean(axis=1, keepdims=True)
        theta[active] = new
        going = np.abs(new - th).max(axis=1) >= tol
        active, base = active[going], value[going]
    converged = np.ones(b, dtype=bool)
    converged[active] = False
    return theta, converged


def chord_inverse(win: np.ndarray, theta0: np.ndarray) -> np.ndarray:
    """Inverse of the (regularized) negative Hessian of the log-likelihood of the (M, M)
    win matrix ``win`` at ``theta0``: the shared step matrix of :func:`_chord`."""
    m = win.shape[-1]
    total = win + win.T
    p0 = 0.5 * (1.0 + np.tanh(0.5 * (theta0[:, None] - theta0[None, :])))
    h = total * p0 * (1.0 - p0)
    lap = -h
    lap[np.arange(m), np.arange(m)] = h.sum(axis=1)
    return np.linalg.inv(lap + 1.0 / m)


def _chord(win: np.ndarray, theta0: np.ndarray, tol: float, max_iter: int,
           inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton steps with one shared Hessian, inverted in ``inverse`` (:func:`chord_inverse`).

    Bootstrap replicates are small perturbations of the full data, so one Hessian (the
    full-data one at ``theta0``) serves them all: it is inverted once and each iteration
    is a single (B, M) @ (M, M) product instead of B linear solves. The expected scores
    use σ(θ_i − θ_j) = e_i / (e_i + e_j) with e = exp(θ − max θ): no transcendental
    function per pair. The chord iteration converges linearly; Anderson acceleration of
    depth ``_ANDERSON`` (Walker & Ni 2011: mix the last steps by the γ minimizing the new
    residual, a tiny ridge keeping the small Gram system solvable) cuts the iterations to
    the same fixed point (depth 1 about halves them; depth 2 saves a further fifth on
    1000-model dataset replicates). Replicates whose steps do not shrink below ``tol``
    within ``max_iter`` iterations are reported as not converged.
    """
    return _chord_sums(win.sum(axis=2), win + np.swapaxes(win, 1, 2), theta0, tol, max_iter,
                       inverse)


def _chord_sums(wins: np.ndarray, total: np.ndarray, theta0: np.ndarray, tol: float,
                max_iter: int, inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_chord` on the likelihood's sufficient statistics: each model's points
    ``wins`` (B, M) and the battles of every pair ``total`` (B, M, M), or (B, 1, 1) when
    every pair fought equally often (then ``wins`` must include the ½ · total of each
    model's tie with itself, which the uniform ``total`` puts on the diagonal)."""
    b, m = wins.shape
    theta = np.array(np.broadcast_to(theta0, (b, m)), dtype=float)
    past_theta, past_step = np.zeros((_ANDERSON, b, m)), np.zeros((_ANDERSON, b, m))
    k = 0  # iterates held in the history
    active = np.arange(b)
    buffer = np.empty((b, m, m))  # one work array for every iteration
    for _ in range(max_iter):
        if active.size == 0:
            break
        th = theta[active]
        e = np.exp(th - th.max(axis=1, keepdims=True))
        share = buffer[:active.size]
        np.add(e[:, :, None], e[:, None, :], out=share)
        np.divide(total, share, out=share)
        grad = wins - e * share.sum(axis=2)
        step = grad @ inverse
        step -= step.mean(axis=1, keepdims=True)
        new = th + step
        if k:
            d_theta = th - past_theta[:k, active]
            d_step = step - past_step[:k, active]  # (k, A, M)
            gram = np.einsum("kam,lam->akl", d_step, d_step)
            gram += (1e-14 * np.trace(gram, axis1=1, axis2=2) + np.finfo(float).tiny
                     )[:, None, None] * np.eye(k)
            gamma = np.linalg.solve(gram, np.einsum("kam,am->ak", d_step, step)[..., None])
            new -= np.einsum("ak,kam->am", gamma[..., 0], d_theta + d_step)
        past_theta[1:, active], past_step[1:, active] = (past_theta[:-1, active],
                                                          past_step[:-1, active])
        past_theta[0, active], past_step[0, active] = th, step
        k = min(k + 1, _ANDERSON)
        theta[active] = new
        going = ~(np.abs(step).max(axis=1) < tol)
        if not going.all():  # the totals follow the active replicates, copied only then
            active, total, wins = active[going], total[going], wins[going]
    converged = np.ones(b, dtype=bool)
    converged[active] = False
    theta[~np.isfinite(theta).all(axis=1)] = theta0
    return theta, converged


def _solve_batch(win: np.ndarray, theta0: np.ndarray | None, prior: np.ndarray,
                 inverse: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Add ``prior`` to (only) the matrices that need it, then solve; returns (θ, n regularized).

    A matrix needs the prior when its graph is not strongly connected, or when Newton
    does not converge on it (a nearly separated, numerically infinite MLE). With ``theta0``
    (replicates) the chord solves, ``inverse`` its step matrix (:func:`chord_inverse`);
    without (the point fit), Newton.
    """
    m = win.shape[-1]
    bad = ~strongly_connected(win)
    if bad.any():
        win = win.copy()
        win[bad] += prior
    if theta0 is None:
        theta, converged = _newton(win, None, 1e-9, 200)
    else:
        theta, converged = _chord(win, theta0, 1e-9, 60, inverse)
        redo = ~converged
        if redo.any():
            start = np.broadcast_to(theta0, (int(redo.sum()), m))
            theta[redo], converged[redo] = _newton(win[redo], start, 1e-9, 200)
    if not converged.all():
        again = ~converged & ~bad
        if not again.any():
            raise RuntimeError("Bradley-Terry Newton iteration did not converge even with the "
                               "tie prior")
        theta[again] = bradley_terry(win[again] + prior)
        bad |= again
    return theta, int(bad.sum())


def _day_blocks(n_per_day: np.ndarray, budget: int) -> list[tuple[int, int]]:
    """Consecutive match-day ranges holding at most ``budget`` battles (or a single day)."""
    blocks, first, held = [], 0, 0
    for k, n in enumerate(n_per_day.tolist()):
        if held and held + n > budget:
            blocks.append((first, k))
            first, held = k, 0
        held += n
    blocks.append((first, len(n_per_day)))
    return blocks


def bootstrap_pair_sums(points: np.ndarray, weights: np.ndarray, n_bootstrap: int,
                        rng: np.random.Generator, chunk: int):
    """Yield (won, lost), each (chunk, P): per-replicate weighted points of both sides per pair.

    Battles are resampled with replacement within each match day: day k with n_k
    battles gets n_k uniform draws among its own battles. The draws are summed per
    (replicate, pair) with ``bincount``; no battle × model matrix is ever built. Memory
    stays bounded by drawing at most ``_DRAW_BUDGET`` battles at once (several replicates
    per draw when a replicate is small, blocks of match days when it is large).
    """
    met = ~np.isnan(points)
    day, pair = np.nonzero(met)  # battles, grouped by match day (row-major order)
    n_per_day = met.sum(axis=1)
    offsets = np.concatenate([[0], np.cumsum(n_per_day)])
    value = points[day, pair] * weights[day]
    other = (1.0 - points[day, pair]) * weights[day]
    n_pairs = points.shape[1]
    per_draw = max(1, _DRAW_BUDGET // max(day.size, 1))
    blocks = []
    for d0, d1 in _day_blocks(n_per_day, _DRAW_BUDGET) if day.size else []:
        n = n_per_day[d0:d1]
        s0, s1 = int(offsets[d0]), int(offsets[d1])
        high = int(n[0]) if np.all(n == n[0]) else np.repeat(n, n)
        start = np.repeat(offsets[d0:d1], n).astype(np.int32)
        complete = bool(np.all(n == n_pairs))  # then a day's k-th battle is pair k
        blocks.append((s1 - s0, high, start, complete))
    done = 0
    while done < n_bootstrap:
        size = min(chunk, n_bootstrap - done)
        won = np.zeros((size, n_pairs))
        lost = np.zeros((size, n_pairs))
        for r0 in range(0, size, per_draw):
            r1 = min(size, r0 + per_draw)
            bins = (r1 - r0) * n_pairs
            shift = (np.arange(r1 - r0, dtype=np.int64) * n_pairs)[:, None]
            for n_slots, high, start, complete in blocks:
                within = rng.integers(0, high, size=(r1 - r0, n_slots), dtype=np.int32)
                draw = within + start
                key = (shift + (within if complete else pair[draw])).ravel()
                won[r0:r1] += np.bincount(key, weights=value[draw].ravel(),
                                          minlength=bins).reshape(r1 - r0, n_pairs)
                lost[r0:r1] += np.bincount(key, weights=other[draw].ravel(),
                                           minlength=bins).reshape(r1 - r0, n_pairs)
        yield won, lost
        done += size


def poisson_pair_sums(points: np.ndarray, weights: np.ndarray, n_bootstrap: int,
                      rng: np.random.Generator, chunk: int):
    """Yield (won, lost), each (chunk, P), by the Poisson bootstrap of battles.

    Battles of equal weight and equal outcome are exchangeable, so their Poisson(1)
    counts add up to one Poisson draw per (replicate, weight, pair, outcome).
    """
    levels, level_of_day = np.unique(weights, return_inverse=True)
    days = [slice(None)] if levels.size == 1 else [level_of_day == k for k in range(levels.size)]
    # Battles per (outcome, weight level, pair), counted on boolean K × P masks (NaN ≠ any).
    counts = np.stack([[np.count_nonzero(points[rows] == value, axis=0) for rows in days]
                       for value in (1.0, 0.5, 0.0)]).astype(float)
    done = 0
    while done < n_bootstrap:
        size = min(chunk, n_bootstrap - done)
        wins, ties, losses = (_poisson_sums(rng, c, levels, size) for c in counts)
        yield wins + 0.5 * ties, losses + 0.5 * ties
        done += size


def _poisson_sums(rng: np.random.Generator, means: np.ndarray, levels: np.ndarray,
                  size: int) -> np.ndarray:
    """Σ_level weight · Poisson(means) for ``size`` replicates: (size, P).

    Only positive means are drawn: a Poisson(0) draw is 0 and consumes no random numbers,
    so the stream and the sums equal those of drawing every entry (e.g. no ties at all).
    """
    drawn = np.zeros((size,) + means.shape)
    positive = means > 0
    drawn[:, positive] = rng.poisson(means[positive], size=(size, int(positive.sum())))
    return np.tensordot(drawn, levels, axes=([1], [0]))


def resample_counts(n_units: int, n_bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """(B, U) counts: per replicate, U units drawn with replacement from U (multinomial)."""
    return rng.multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_bootstrap)


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


def unit_bootstrap_pair_sums(won: np.ndarray, lost: np.ndarray, counts: np.ndarray,
                             chunk: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (won, lost), each (chunk, P): ``counts @`` the per-unit pair sums (U, P).

    A unit (match day or dataset) drawn c times in a replicate counts c times. The
    products are taken for up to ``_DRAW_BUDGET`` / P replicates at once (the unit sums
    are read once per block, not once per small solve chunk) and handed out by chunk.
    """
    per_product = max(chunk, _DRAW_BUDGET // max(won.shape[1], 1))
    for first in range(0, len(counts), per_product):
        block = counts[first:first + per_product].astype(float)
        block_won, block_lost = block @ won, block @ lost
        for start in range(0, len(block), chunk):
            yield block_won[start:start + chunk], block_lost[start:start + chunk]


@dataclass(frozen=True)
class CompleteUnits:
    """Resampling units (match days or datasets) of a tournament where every pair met on
    every match day.

    ``won``, ``lost`` (U, P): the units' pair sums; ``points`` (U, M): each model's
    weighted points per unit; ``battles`` (U,): each unit's weighted battles per pair, the
    same for every pair. A replicate drawing the units ``counts`` times then has model
    points ``counts @ points`` and ``counts @ battles`` battles per pair: the sufficient
    statistics of the Bradley-Terry likelihood (see :func:`complete_unit_abilities`).
    """

    won: np.ndarray
    lost: np.ndarray
    points: np.ndarray
    battles: np.ndarray


def model_points(won: np.ndarray, lost: np.ndarray, pairs: np.ndarray, m: int) -> np.ndarray:
    """Each model's points Σ_j W_ij per row of (…, P) pair sums: (…, M); the win matrices
    are built in blocks of at most ``_SOLVE_BUDGET`` entries."""
    out = np.empty(won.shape[:-1] + (m,))
    per_block = max(1, _SOLVE_BUDGET // (m * m))
    for first in range(0, len(won), per_block):
        block = slice(first, first + per_block)
        out[block] = pair_sums_to_matrix(won[block], lost[block], pairs, m).sum(axis=-1)
    return out


def complete_connected(points: np.ndarray, battles: np.ndarray, margin: float) -> np.ndarray:
    """Whether each (B, M) row of model points, with ``battles`` (B,) per pair for every
    pair, has a strongly connected win graph.

    It is when every set S of k < M models scored more than the n · k(k − 1)/2 of the
    battles among themselves (some point against the others); the k lowest scorers are
    the hardest set of size k (Landau's condition). A real excess is at least ½ battle of
    the lightest weight, so ``margin`` (a quarter of it) separates it from round-off.
    """
    m = points.shape[-1]
    k = np.arange(1, m)
    lowest = np.cumsum(np.sort(points, axis=-1), axis=-1)[..., :-1]
    return (lowest - battles[:, None] * (k * (k - 1) / 2) > margin).all(axis=-1)


def _solve_complete(units: CompleteUnits, counts: np.ndarray, theta: np.ndarray,
                    prior: np.ndarray, inverse: np.ndarray, pairs: np.ndarray,
                    margin: float) -> tuple[np.ndarray, int]:
    """:func:`_solve_batch` for the replicates ``counts`` (c, U) of complete units.

    Replicates that are strongly connected are solved by the chord on their sufficient
    statistics alone; the others (and any the chord leaves unconverged) get their win
    matrices and the general solve, tie prior included.
    """
    counts = counts.astype(float)
    points, battles = counts @ units.points, counts @ units.battles
    theta_out = np.empty((len(counts), len(theta)))
    fast = np.flatnonzero(complete_connected(points, battles, margin))
    theta_out[fast], converged = _chord_sums(points[fast] + 0.5 * battles[fast, None],
                                             battles[fast, None, None], theta, 1e-9, 60,
                                             inverse)
    general = np.ones(len(counts), dtype=bool)
    general[fast[converged]] = False
    if not general.any():
        return theta_out, 0
    rows = counts[general]
    win = pair_sums_to_matrix(rows @ units.won, rows @ units.lost, pairs, len(theta))
    theta_out[general], n_reg = _solve_batch(win, theta, prior, inverse)
    return theta_out, n_reg


def to_elo(theta: np.ndarray) -> np.ndarray:
    """Abilities θ → Elo ratings centred on 1000 (last axis = models)."""
    return ELO_BASE + ELO_SCALE * (theta - theta.mean(axis=-1, keepdims=True))


# ---- scorecards ----------------------------------------------------------------------
def winrate_matrix(scores: np.ndarray, tie_threshold: float) -> np.ndarray:
    """Share of datasets where row beats column (ties ½) from an M × D score matrix.

    Rows in blocks, so that the (rows, M, D) battle outcomes stay within ``_DRAW_BUDGET``.
    """
    m, d = scores.shape
    share = np.empty((m, m))
    step = max(1, _DRAW_BUDGET // max(m * d, 1))
    for first in range(0, m, step):
        block = scores[first:first + step, None, :] - scores[None, :, :]
        share[first:first + step] = _points(block, tie_threshold).mean(axis=2)
    np.fill_diagonal(share, np.nan)
    return share


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


# ---- the method ------------------------------------------------------------------------
class EloResult(Result):
    """Elo ratings with bootstrap intervals, plus win-rate matrix and match record."""

    method = "elo"

    def __init__(self, table: pd.DataFrame, *, winrate_matrix: pd.DataFrame,
                 record: pd.DataFrame, bootstrap: pd.DataFrame, **params: Any) -> None:
        super().__init__(table, **params)
        self.winrate_matrix = winrate_matrix
        self.record = record
        self.bootstrap = bootstrap

    @property
    def margin(self) -> pd.Series:
        """± margin per model, (R₀.₉₇₅ − R₀.₀₂₅) / 2, as the tournament methodology reports it."""
        half = (self.table["CI_high"] - self.table["CI_low"]) / 2
        return pd.Series(half.to_numpy(), index=pd.Index(self.table["model"], name="model"),
                         name="margin")

    @property
    def scorecard(self) -> pd.DataFrame:
        """The record as a model × opponent grid of "W–L (share)" strings, with a total column."""
        grid = self.record.pivot(index="model", columns="opponent", values="record")
        order = list(self.table["model"])
        grid = grid.reindex(index=order, columns=order + ["(all)"]).fillna("—")
        grid = grid.rename(columns={"(all)": "total"})
        grid.insert(len(grid.columns), "ELO", self.table.set_index("model")["ELO"].round(1))
        return grid

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None) -> Any:
        """Ratings as points with 95 % whiskers; ``model_colors`` in table order or by name."""
        from ..plots.intervals import interval_plot

        scheme = self.params.get("resampling", "")
        anchored = self.params.get("calibration_model") is not None
        line = self.params.get("calibration_elo", ELO_BASE) if anchored else ELO_BASE
        return interval_plot(self.table, "ELO", low="CI_low", high="CI_high", ax=ax,
                             figsize=figsize, reference_line=line, model_colors=model_colors,
                             title=title or f"Bradley-Terry Elo (95 % {scheme} bootstrap interval)",
                             xlabel="Elo rating")

    def plot_winrate(self, ax: Any = None, figsize: tuple[float, float] | None = None,
                     title: str | None = None) -> Any:
        """Heatmap of the share of datasets where the row model beats the column model."""
        from ..plots.heatmap import heatmap

        return heatmap(self.winrate_matrix, ax=ax, figsize=figsize,
                       title=title or "Win rate of row model against column model",
                       colorbar_label="share of datasets won (ties ½)", fmt="{:.2f}",
                       vmin=0.0, vmax=1.0, xlabel="opponent", ylabel="model")


# ---- checks ------------------------------------------------------------------------------
def check_resampling(resampling: Any) -> tuple[str, str | None]:
    """``resampling`` → (scheme, way of drawing the battle scheme or None)."""
    if not isinstance(resampling, str) or resampling not in RESAMPLING:
        raise ValueError(f"resampling must be one of {SCHEMES!r} (or {BATTLE_DRAWS!r}, ways of "
                         f"drawing the 'battle' scheme), got {resampling!r}")
    if resampling in SCHEMES:
        return resampling, ("auto" if resampling == "battle" else None)
    return "battle", resampling


def battle_draw(draw: str, n_battles: int, n_bootstrap: int) -> str:
    """"auto" → exact multinomial draws unless battles × replicates exceeds the limit."""
    if draw != "auto":
        return draw
    return "multinomial" if n_battles * n_bootstrap <= EXACT_DRAW_LIMIT else "poisson"


def _check_params(n_bootstrap: Any, tie_threshold: Any) -> tuple[int, float]:
    n_bootstrap = check_n_bootstrap(n_bootstrap, minimum=0)
    if tie_threshold is None:
        return n_bootstrap, 0.0
    return n_bootstrap, check_number(tie_threshold, "tie_threshold", low=0.0)


def check_models(models: list[str], calibration_model: Any) -> None:
    """At least two models, and ``calibration_model`` (if given) among them."""
    if len(models) < 2:
        raise ValueError(f"Elo needs at least two models, got {models!r}")
    if calibration_model is not None and calibration_model not in models:
        raise ValueError(f"calibration_model {calibration_model!r} not found in score matrix; "
                         f"models are {models!r}")


def _warn_few_shared_seeds(scores: np.ndarray, codes: np.ndarray, pairs: np.ndarray,
                           datasets: list[str]) -> None:
    """Warn naming datasets where some model pair shares under half of the seed labels."""
    present = ~np.isnan(scores)
    if present.all():
        return
    shared = np.zeros((codes.max() + 1, pairs.shape[1]))
    np.add.at(shared, codes, present[:, pairs[0]] & present[:, pairs[1]])
    n_labels = np.bincount(codes)
    few = (shared < n_labels[:, None] / 2).any(axis=1)
    if few.any():
        names = [datasets[i] for i in np.flatnonzero(few)]
        warnings.warn(f"models share few or no seed labels in dataset(s) {names!r}: battles are "
                      "only played on a common seed label, so pairs sharing under half of a "
                      "dataset's seed labels weigh less and pairs sharing none contribute nothing",
                      UserWarning, stacklevel=5)


# ---- fit: tournament, point, bootstrap -----------------------------------------------------
@dataclass(frozen=True)
class Tournament:
    """The battles of a benchmark, ready to be fitted and resampled.

    ``points`` (K, P): points of the first model of each pair per match day (NaN = did
    not meet); ``weights`` (K): battle weight 1 / (P · S_d) of each match day; ``codes``
    (K): each match day's dataset, indexing ``datasets``; ``pairs`` (2, P) model indices.
    """

    points: np.ndarray
    weights: np.ndarray
    codes: np.ndarray
    pairs: np.ndarray
    models: list[str]
    datasets: list[str]

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
        return win_matrix(self.points, self.weights, self.pairs, len(self.models))

    def unit_pair_sums(self, scheme: str) -> tuple[np.ndarray, np.ndarray]:
        """Per-unit (won, lost) pair sums, (U, P) each: match days ("split") or datasets."""
        if scheme == "split":
            return day_pair_sums(self.points, self.weights)
        return dataset_pair_sums(self.points, self.weights, self.codes, len(self.datasets))

    @cached_property
    def complete(self) -> bool:
        """Whether there are match days and every pair met on each (no missing score)."""
        return len(self.points) > 0 and not np.isnan(self.points).any()

    def complete_units(self, scheme: str) -> CompleteUnits:
        """The units of "split" or "dataset" with their sufficient statistics (needs
        :attr:`complete`: then a unit's battles per pair are the sum of its days' weights)."""
        won, lost = self.unit_pair_sums(scheme)
        battles = (self.weights if scheme == "split" else
                   np.bincount(self.codes, weights=self.weights, minlength=len(self.datasets)))
        return CompleteUnits(won, lost, model_points(won, lost, self.pairs, len(self.models)),
                             battles)


def tournament(benchmark: Benchmark, tie_threshold: float) -> Tournament:
    """Battles of every match day where at least one pair met (see module doc)."""
    scores, codes, seeds = match_days(benchmark)
    points, pairs = battle_points(scores, tie_threshold)
    if benchmark.has_seeds:
        _warn_few_shared_seeds(scores, codes, pairs, benchmark.datasets_)
    played = ~np.isnan(points).all(axis=1)
    if played.all():
        played = slice(None)  # a view: no copy of the K × P points
    return Tournament(points[played], 1.0 / (pairs.shape[1] * seeds[played]), codes[played],
                      pairs, benchmark.models_, benchmark.datasets_)


def point_abilities(benchmark: Benchmark, t: Tournament,
                    tie_threshold: float) -> tuple[np.ndarray, bool]:
    """Full-data MLE abilities θ (M,) of ``t = tournament(benchmark, tie_threshold)``, and
    whether the tie prior was needed (then warns).

    Fitted once per Benchmark and threshold (``Benchmark.memo``): elo_ranking, leaderboard
    and compare_rankings ask for the same fit, about a second at 1000 models.
    """
    theta, n_reg = benchmark.memo(("elo point abilities", tie_threshold),
                                  lambda: _solve_batch(t.win_matrix()[None], None, t.prior))
    if n_reg:
        warnings.warn("the Bradley-Terry MLE is infinite for these battles (a model wins or "
                      "loses all its battles, or some models are never compared): added the "
                      "tie prior, one virtual match day in which every pair ties with weight "
                      "w_min / (M − 1) (half a win and half a loss of the lightest battle per "
                      "model), to keep the ratings finite", UserWarning, stacklevel=4)
    return theta[0].copy(), bool(n_reg)


def replicate_pair_sums(t: Tournament, scheme: str, draw: str | None, n_bootstrap: int,
                        rng: np.random.Generator, chunk: int,
                        counts: np.ndarray | None = None
                        ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per-replicate (won, lost) pair sums of ``scheme``, in chunks of ``chunk`` replicates.

    ``counts`` (B, U) may give the unit draws of "split"/"dataset" (the leaderboard
    shares its dataset draws with improvability); by default they are drawn here.
    No replicates (the point estimate only): nothing is set up.
    """
    if n_bootstrap == 0:
        return iter(())
    if scheme == "battle":
        resample = poisson_pair_sums if draw == "poisson" else bootstrap_pair_sums
        return resample(t.points, t.weights, n_bootstrap, rng, chunk)
    won, lost = t.unit_pair_sums(scheme)
    if counts is None:
        counts = resample_counts(len(won), n_bootstrap, rng)
    return unit_bootstrap_pair_sums(won, lost, counts, chunk)


def replicate_abilities(t: Tournament, theta: np.ndarray, scheme: str, draw: str | None,
                        n_bootstrap: int, rng: np.random.Generator,
                        counts: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """Abilities of every bootstrap replicate of ``scheme`` (B, M), none dropped, and how
    many needed the tie prior (then warns).

    ``counts`` (B, U) may give the unit draws of "split"/"dataset" (the leaderboard shares
    its dataset draws with improvability); by default they are drawn here. When every
    pair met on every match day, "split" and "dataset" replicates are solved from their
    sufficient statistics (:class:`CompleteUnits`), never building their win matrices;
    otherwise from their pair sums (:func:`replicate_pair_sums`). Both give the same
    abilities (to the solver's 1e-9) for the same draws. No replicates: no set-up (the
    full-data Hessian is inverted only for a bootstrap).
    """
    m = len(t.models)
    chunk = solve_chunk(m, n_bootstrap)
    if n_bootstrap == 0:
        return np.empty((0, m)), 0
    if scheme != "battle" and t.complete:
        units = t.complete_units(scheme)
        if counts is None:
            counts = resample_counts(len(units.won), n_bootstrap, rng)
        solved = solve_complete_units(t, theta, units, counts, chunk)
    else:
        solved = solve_pair_sums(t, theta, replicate_pair_sums(t, scheme, draw, n_bootstrap,
                                                               rng, chunk, counts))
    reps = np.empty((n_bootstrap, m))
    n_reg = done = 0
    with Progress(n_bootstrap, "Elo bootstrap") as bar:
        for th, n_bad in solved:
            reps[done:done + len(th)] = th
            n_reg += n_bad
            done += len(th)
            bar.update(len(th))
    if n_reg:
        warnings.warn(f"{n_reg} of {n_bootstrap} bootstrap replicates had an infinite "
                      "Bradley-Terry MLE (a model won or lost all its battles in them) and got "
                      "the tie prior by the same rule as the point estimate; none was dropped",
                      UserWarning, stacklevel=4)
    return reps, n_reg


def step_inverse(t: Tournament, theta: np.ndarray) -> np.ndarray:
    """The chord's step matrix shared by every replicate: the full-data Hessian at θ
    (with the tie prior when the full data need it), inverted once."""
    full = t.win_matrix()
    if not strongly_connected(full)[()]:
        full = full + t.prior
    return chord_inverse(full, theta)


def solve_pair_sums(t: Tournament, theta: np.ndarray,
                    pair_sums: Iterator[tuple[np.ndarray, np.ndarray]]
                    ) -> Iterator[tuple[np.ndarray, int]]:
    """Yield (θ, replicates given the tie prior) per chunk of (won, lost) pair sums."""
    prior, inverse = t.prior, step_inverse(t, theta)
    for won, lost in pair_sums:
        yield _solve_batch(pair_sums_to_matrix(won, lost, t.pairs, len(t.models)), theta,
                           prior, inverse)


def solve_complete_units(t: Tournament, theta: np.ndarray, units: CompleteUnits,
                         counts: np.ndarray, chunk: int) -> Iterator[tuple[np.ndarray, int]]:
    """Yield (θ, replicates given the tie prior) per ``chunk`` rows of the unit draws."""
    prior, inverse = t.prior, step_inverse(t, theta)
    margin = 0.25 * float(t.weights.min())
    for first in range(0, len(counts), chunk):
        yield _solve_complete(units, counts[first:first + chunk], theta, prior, inverse,
                              t.pairs, margin)


def solve_chunk(m: int, n_bootstrap: int) -> int:
    """Replicates per batched solve, keeping B · M · M within ``_SOLVE_BUDGET``."""
    return max(1, min(n_bootstrap, _SOLVE_BUDGET // (m * m)))


# ---- tables ------------------------------------------------------------------------------
def rating_table(models: list[str], elo: np.ndarray, low: np.ndarray,
                 high: np.ndarray) -> pd.DataFrame:
    """``model, ELO, CI_low, CI_high``, best first (ties by name)."""
    names = np.asarray(models, dtype=object)
    order = np.lexsort((names, -elo))
    return pd.DataFrame({"model": names[order], "ELO": elo[order], "CI_low": low[order],
                         "CI_high": high[order]})


def winrate_table(benchmark: Benchmark, tie_threshold: float) -> pd.DataFrame:
    """The win-rate matrix as a DataFrame, rows and columns sorted by mean win rate."""
    models = benchmark.models_
    share = winrate_matrix(benchmark.scores_.loc[models].to_numpy(dtype=float), tie_threshold)
    by_rate = np.lexsort((np.asarray(models, dtype=object), -np.nanmean(share, axis=1)))
    names = [models[i] for i in by_rate]
    return pd.DataFrame(share[np.ix_(by_rate, by_rate)], index=pd.Index(names, name="model"),
                        columns=pd.Index(names, name="opponent"))


def elo_ranking(
    benchmark: Benchmark,
    n_bootstrap: int = 1000,
    random_state: Any = None,
    tie_threshold: float | None = None,
    calibration_model: str | None = None,
    resampling: str = DEFAULT_RESAMPLING,
    calibration_elo: float = ELO_BASE,
) -> EloResult:
    """Bradley-Terry Elo ratings (full-data MLE) with 95 % percentile bootstrap intervals.

    ``resampling`` chooses the question the interval answers (module doc): "battle" (these
    exact splits), "split" (match days drawn from the pool), "dataset" (datasets like
    these; the default, the only one that holds its coverage when models are better on
    some datasets than on others). "auto", "multinomial" and "poisson" are ways of drawing
    the battle scheme. ``calibration_model`` shifts all ratings so that it sits at
    ``calibration_elo`` (default 1000), as TabArena anchors its published scale.
    The result's ``params`` record the scheme, the battle draw, and whether the point
    estimate / how many replicates needed the tie prior; ``.margin`` is ±(R₀.₉₇₅ − R₀.₀₂₅)/2.

    Parameters
    ----------
    n_bootstrap : int
        Bootstrap replicates for the 95 % percentile interval; 0 gives the point
        estimate only (the interval columns then equal it).
    random_state : None, int or numpy Generator
        Seed of the bootstrap.
    tie_threshold : float or None
        Normalized score differences at most this large are ties (½ point each); None
        or 0: only equal scores tie.
    calibration_model : str or None
        Shift every rating (after the intervals) so that this model sits at
        ``calibration_elo``; None: ratings centred on 1000.
    resampling : str
        "dataset" (default), "split" or "battle"; or "auto", "multinomial", "poisson"
        (ways of drawing the battle scheme).
    calibration_elo : float
        The rating of ``calibration_model`` (default 1000).

    Returns
    -------
    EloResult
        ``.table``: model, ELO, CI_low, CI_high (best first); ``.winrate_matrix``,
        ``.record``, ``.margin``; ``.plot()`` (points with interval whiskers) and
        ``.plot_winrate()``.
    """
    n_bootstrap, threshold = _check_params(n_bootstrap, tie_threshold)
    calibration_elo = check_number(calibration_elo, "calibration_elo")
    check_models(benchmark.models_, calibration_model)
    scheme, draw = check_resampling(resampling)
    rng = make_rng(random_state)

    t = tournament(benchmark, threshold)
    theta, regularized = point_abilities(benchmark, t, threshold)
    if scheme == "battle":
        draw = battle_draw(draw, int((~np.isnan(t.points)).sum()), n_bootstrap)
    reps, n_reg = replicate_abilities(t, theta, scheme, draw, n_bootstrap, rng)

    elo, reps = to_elo(theta), to_elo(reps)
    if calibration_model is not None:
        shift = calibration_elo - elo[t.models.index(calibration_model)]
        elo, reps = elo + shift, reps + shift
    low, high = np.percentile(reps, [2.5, 97.5], axis=0) if n_bootstrap else (elo, elo)
    table = rating_table(t.models, elo, low, high)
    order = [t.models.index(name) for name in table["model"]]
    return EloResult(table, winrate_matrix=winrate_table(benchmark, threshold),
                     record=record_table(battle_counts(t.points, t.pairs, len(t.models)),
                                         t.models, order),
                     bootstrap=pd.DataFrame(reps, columns=pd.Index(t.models, name="model")),
                     n_bootstrap=n_bootstrap, random_state=random_state,
                     tie_threshold=tie_threshold, calibration_model=calibration_model,
                     calibration_elo=calibration_elo,
                     resampling=scheme, draw=draw, regularized=regularized,
                     regularized_replicates=n_reg)
