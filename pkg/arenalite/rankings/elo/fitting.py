"""The Elo fit of a benchmark: the full-data MLE and the abilities of every bootstrap replicate.

:func:`fit` is the one orchestration that :func:`.ranking.elo_ranking` and the
leaderboard share: battles, point fit (memoized per Benchmark), replicate draws of the
chosen scheme, replicate solves, warnings about the tie prior. All replicates of a chunk
are solved together on their (B, M, M) win tensors. When every pair met on every match
day (no missing score, the usual case), a unit's battles per pair are the same for all
pairs, and the likelihood Σ_i θ_i w_i − Σ_{i<j} N_ij log(e^θ_i + e^θ_j) depends on a
replicate only through each model's points w = counts @ unit_points and its battles
per pair N = counts @ unit_battles: a (B × U) by (U × M) product, and no win matrix is
built. Whether a replicate's MLE is finite then follows from its sorted points
(Landau's condition, :func:`.solvers.complete_connected`); the few that are not finite
take the general path with the tie prior. Both paths give the same abilities for the
same draws.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...progress import Progress
from ...stats.bootstrap import unit_counts
from .battles import BattleSet, CompleteUnits, pair_sums_to_matrix, play_battles
from .resampling import battle_draw, replicate_pair_sums
from .scale import ELO_BASE, to_elo
from .solvers import (
    CHORD_MAX_ITER,
    CHORD_TOL,
    chord_inverse,
    chord_sums,
    complete_connected,
    solve_batch,
    strongly_connected,
)

if TYPE_CHECKING:
    from ...benchmark import Benchmark

_SOLVE_BUDGET = 2_000_000  # B · M · M entries per batched solve


def point_abilities(benchmark: Benchmark, t: BattleSet,
                    tie_threshold: float) -> tuple[np.ndarray, bool]:
    """Full-data MLE abilities θ (M,) of ``t = play_battles(benchmark, tie_threshold)``, and
    whether the tie prior was needed (then warns).

    Fitted once per Benchmark and threshold (``Benchmark.memo``): elo_ranking, leaderboard
    and compare_rankings ask for the same fit, about a second at 1000 models.
    """
    theta, n_reg = benchmark.memo(("elo point abilities", tie_threshold),
                                  lambda: solve_batch(t.win_matrix()[None], None, t.prior))
    if n_reg:
        warnings.warn("the Bradley-Terry MLE is infinite for these battles (a model wins or "
                      "loses all its battles, or some models are never compared): added the "
                      "tie prior, one virtual match day in which every pair ties with weight "
                      "w_min / (M − 1) (half a win and half a loss of the lightest battle per "
                      "model), to keep the ratings finite", UserWarning, stacklevel=5)
    return theta[0].copy(), bool(n_reg)


def replicate_abilities(t: BattleSet, theta: np.ndarray, scheme: str, draw: str | None,
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
            counts = unit_counts(len(units.battles), n_bootstrap, rng)
        solved = solve_complete_units(t, theta, units, counts, complete_chunk(m, n_bootstrap))
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
                      UserWarning, stacklevel=5)
    return reps, n_reg


def step_inverse(t: BattleSet, theta: np.ndarray) -> np.ndarray:
    """The chord's step matrix shared by every replicate: the full-data Hessian at θ
    (with the tie prior when the full data need it), inverted once."""
    full = t.win_matrix()
    if not strongly_connected(full)[()]:
        full = full + t.prior
    return chord_inverse(full, theta)


def solve_pair_sums(t: BattleSet, theta: np.ndarray,
                    pair_sums: Iterator[tuple[np.ndarray, np.ndarray]]
                    ) -> Iterator[tuple[np.ndarray, int]]:
    """Yield (θ, replicates given the tie prior) per chunk of (won, lost) pair sums."""
    prior, inverse = t.prior, step_inverse(t, theta)
    for won, lost in pair_sums:
        yield solve_batch(pair_sums_to_matrix(won, lost, t.pairs, len(t.models)), theta,
                          prior, inverse)


def solve_complete_units(t: BattleSet, theta: np.ndarray, units: CompleteUnits,
                         counts: np.ndarray, chunk: int) -> Iterator[tuple[np.ndarray, int]]:
    """Yield (θ, replicates given the tie prior) per ``chunk`` rows of the unit draws."""
    prior, inverse = t.prior, step_inverse(t, theta)
    margin = 0.25 * float(t.weights.min())
    for first in range(0, len(counts), chunk):
        yield solve_complete(units, counts[first:first + chunk], theta, prior, inverse,
                             t.pairs, margin)


def solve_complete(units: CompleteUnits, counts: np.ndarray, theta: np.ndarray,
                   prior: np.ndarray, inverse: np.ndarray, pairs: np.ndarray,
                   margin: float) -> tuple[np.ndarray, int]:
    """:func:`solve_batch` for the replicates ``counts`` (c, U) of complete units.

    Every replicate is solved by the chord on its sufficient statistics alone; those that
    are not strongly connected get the tie prior there too (a tie of every pair adds
    ½ · weight · (M − 1) points to every model and ``weight`` battles to every pair, so
    the statistics stay uniform). Any the chord leaves unconverged get their win
    matrices and the general solve.
    """
    counts = counts.astype(float)
    points, battles = counts @ units.points, counts @ units.battles
    needs = ~complete_connected(points, battles, margin)
    if needs.any():
        weight = 2.0 * float(prior[0, 1])  # the prior's per-pair battles (½ each side)
        points[needs] += 0.5 * weight * (len(theta) - 1)
        battles[needs] += weight
    theta_out, converged = chord_sums(points + 0.5 * battles[:, None], battles[:, None, None],
                                      theta, CHORD_TOL, CHORD_MAX_ITER, inverse)
    n_reg = int(needs[converged].sum())
    general = ~converged
    if not general.any():
        return theta_out, n_reg
    rows = np.flatnonzero(general)
    won, lost = units.pair_sums()
    for block in np.array_split(rows, -(-rows.size // solve_chunk(len(theta), rows.size))):
        drawn = counts[block]
        win = pair_sums_to_matrix(drawn @ won, drawn @ lost, pairs, len(theta))
        theta_out[block], n_general = solve_batch(win, theta, prior, inverse)
        n_reg += n_general
    return theta_out, n_reg


def solve_chunk(m: int, n_bootstrap: int) -> int:
    """Replicates per batched solve, keeping B · M · M within ``_SOLVE_BUDGET``."""
    return max(1, min(n_bootstrap, _SOLVE_BUDGET // (m * m)))


def complete_chunk(m: int, n_bootstrap: int) -> int:
    """Replicates per chord solve on sufficient statistics: B · M within ``_SOLVE_BUDGET``
    / 16 (no (B, M, M) tensor is held, so far more replicates share each pass over the
    step matrix than :func:`solve_chunk` allows)."""
    return max(1, min(n_bootstrap, _SOLVE_BUDGET // (16 * m)))


@dataclass(frozen=True)
class EloFit:
    """A fitted battle set: full-data abilities ``theta`` (M,), the bootstrap replicates'
    ``replicates`` (B, M), the scheme and battle draw used, and whether the point / how
    many replicates needed the tie prior."""

    battles: BattleSet
    theta: np.ndarray
    replicates: np.ndarray
    scheme: str
    draw: str | None
    regularized: bool
    regularized_replicates: int

    def ratings(self, calibration_model: str | None = None,
                calibration_elo: float = ELO_BASE) -> tuple[np.ndarray, np.ndarray]:
        """(point ratings (M,), replicate ratings (B, M)) on the Elo scale, shifted so that
        ``calibration_model`` sits at ``calibration_elo`` (None: centred on 1000)."""
        elo, reps = to_elo(self.theta), to_elo(self.replicates)
        if calibration_model is not None:
            shift = calibration_elo - elo[self.battles.models.index(calibration_model)]
            elo, reps = elo + shift, reps + shift
        return elo, reps


def fit(benchmark: Benchmark, tie_threshold: float, scheme: str, draw: str | None,
        n_bootstrap: int, rng: np.random.Generator, counts: np.ndarray | None = None) -> EloFit:
    """BattleSet, point fit and ``n_bootstrap`` replicates of ``scheme`` (checked values,
    see :func:`.resampling.check_resampling`); ``counts`` (B, U) may give the dataset draws
    of the "dataset" scheme (the leaderboard shares them with improvability)."""
    t = play_battles(benchmark, tie_threshold)
    theta, regularized = point_abilities(benchmark, t, tie_threshold)
    if scheme == "battle":
        draw = battle_draw(draw, int((~np.isnan(t.points)).sum()), n_bootstrap)
    reps, n_reg = replicate_abilities(t, theta, scheme, draw, n_bootstrap, rng, counts)
    return EloFit(t, theta, reps, scheme, draw, regularized, n_reg)
