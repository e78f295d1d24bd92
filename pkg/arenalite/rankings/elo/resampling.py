"""Resampling schemes of the Elo bootstrap: each replicate's pair sums.

Three schemes answer three questions:

- ``"battle"``: battles resampled with replacement within each match day — how sure
  are we on exactly these splits?
- ``"split"``: the K match days (dataset × split) drawn with replacement from the pool
  (the tournament methodology's "Dataset-Split Resampling") — how sure are we on splits
  like these, treating every split as an independent tournament?
- ``"dataset"``: whole datasets drawn with replacement, all their match days together (a
  dataset drawn c times counts c times; TabArena's scheme) — how sure are we on
  datasets like these? The coverage study in ``bench/bench_coverage.py`` shows that only
  this one holds its nominal coverage when datasets differ, hence the default.

"split" and "dataset" draw one multinomial count vector per replicate over the units
(:func:`arenalite.stats.bootstrap.unit_counts`) and form every replicate's pair sums as
``counts @ unit_sums`` (a (B × U) by (U × P) product).

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

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...stats.bootstrap import unit_counts

if TYPE_CHECKING:
    from .battles import BattleSet

_DRAW_BUDGET = 4_000_000  # random draws held in memory at once during the bootstrap
EXACT_DRAW_LIMIT = 200_000_000  # battles × replicates above which "auto" uses Poisson
SCHEMES = ("battle", "split", "dataset")
BATTLE_DRAWS = ("auto", "multinomial", "poisson")  # ways of drawing the "battle" scheme
RESAMPLING = SCHEMES + BATTLE_DRAWS
DEFAULT_RESAMPLING = "dataset"


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


def replicate_pair_sums(t: BattleSet, scheme: str, draw: str | None, n_bootstrap: int,
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
        counts = unit_counts(len(won), n_bootstrap, rng)
    return unit_bootstrap_pair_sums(won, lost, counts, chunk)
