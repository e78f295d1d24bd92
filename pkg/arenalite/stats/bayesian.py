"""Bayesian signed-rank test (Benavoli et al. 2017) for many model pairs in one pass.

For a pair (a, b) with per-dataset differences z_i = a_i − b_i on the normalized
scale, the posterior of the distribution of differences is a Dirichlet process
with one prior pseudo-observation at z_0 = 0: weights w ~ Dirichlet(1, 1, …, 1)
over (z_0, z_1, …, z_n). Each posterior sample gives

    θ_a = Σ_ij w_i w_j H(z_i + z_j − 2r),   θ_b = Σ_ij w_i w_j H(−z_i − z_j − 2r),
    θ_equiv = 1 − θ_a − θ_b,

with H the Heaviside step (H(0) = ½) and r the ROPE half-width. The reported
probabilities are the shares of samples in which each region is the most probable,
as in baycomp's ``SignedRankTest`` (prior=1); a sample in which two regions tie for
the largest θ (within 1e-6) counts half for each (see :func:`winner_shares`).

Vectorization: all pairs share the same Dirichlet draws (each pair's posterior is
still exactly its own; only the Monte Carlo noise is shared), so θ for every pair
and sample is one matrix product ``W @ A`` per chunk of samples.
"""

from __future__ import annotations

from itertools import combinations
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_int, check_model, check_number, check_shape, make_rng
from ..progress import Progress
from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark

N_SAMPLES = 50_000
_CHUNK_ELEMENTS = 2_000_000  # float32 cells per chunk of samples (~8 MB per array)
_BLOCK_ELEMENTS = 4_000_000  # float32 cells of one block's region matrices
_TIE_TOL = 1e-6


def region_matrices(diffs: np.ndarray, rope: float) -> tuple[np.ndarray, np.ndarray]:
    """H(z_i + z_j − 2r) and H(−z_i − z_j − 2r) for each pair; z includes the prior's 0.

    ``diffs`` is pairs × datasets; the results are pairs × (n+1) × (n+1).
    """
    z = np.concatenate([np.zeros((diffs.shape[0], 1)), diffs], axis=1)
    sums = z[:, :, None] + z[:, None, :]
    above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    below = (-sums > 2 * rope) + 0.5 * (-sums == 2 * rope)
    return above, below


def winner_shares(theta_a: np.ndarray, theta_b: np.ndarray, tol: float = _TIE_TOL) -> np.ndarray:
    """Per column, the share of rows (samples) in which a, equivalence or b is most probable.

    Regions within ``tol`` of the largest share the sample equally (e.g. identical
    models with rope = 0, where θ_a = θ_b = ½ exactly).
    """
    theta_e = 1.0 - theta_a - theta_b
    a_wins = (theta_a > theta_e + tol) & (theta_a > theta_b + tol)
    b_wins = (theta_b > theta_e + tol) & (theta_b > theta_a + tol)
    e_wins = (theta_e > theta_a + tol) & (theta_e > theta_b + tol)
    counts = np.stack([a_wins.sum(axis=0), e_wins.sum(axis=0), b_wins.sum(axis=0)], axis=1)
    counts = counts.astype(float)
    tied = ~(a_wins | b_wins | e_wins)
    if tied.any():
        rows, cols = np.nonzero(tied)
        regions = np.stack([theta_a[rows, cols], theta_e[rows, cols], theta_b[rows, cols]], axis=1)
        top = regions >= regions.max(axis=1, keepdims=True) - tol
        shares = top / top.sum(axis=1, keepdims=True)
        np.add.at(counts, cols, shares)
    return counts / theta_a.shape[0]


def signed_rank_posterior(diffs: np.ndarray, rope: float, n_samples: int = N_SAMPLES,
                          rng: np.random.Generator | None = None,
                          progress: bool | None = None) -> np.ndarray:
    """Posterior probabilities (a better, equivalent, b better) for each row of ``diffs``.

    ``diffs`` is a pairs × datasets array of a − b on a common scale; ``rope`` the
    half-width of the region of practical equivalence on that scale. θ = wᵀ A w is
    computed for every pair at once as (w ⊗ w) @ A_flat, in float32 (the shares only
    need the ordering of three numbers that sum to 1).
    """
    diffs = np.asarray(diffs, dtype=float)
    if diffs.ndim != 2 or diffs.shape[0] < 1 or diffs.shape[1] < 1:
        raise ValueError(f"diffs must be a non-empty pairs × datasets array, got shape "
                         f"{diffs.shape}")
    if not np.isfinite(diffs).all():
        raise ValueError("diffs has a non-finite value")
    rng = np.random.default_rng() if rng is None else rng
    n_pairs, m = diffs.shape[0], diffs.shape[1] + 1
    # Every block of pairs replays the same Dirichlet draws, so a pair's result does
    # not depend on which other pairs are computed with it.
    seed = int(rng.integers(2**63))
    block = max(1, _BLOCK_ELEMENTS // (2 * m * m))
    chunk = max(1, _CHUNK_ELEMENTS // (m * m + 2 * min(block, n_pairs)))
    blocks = range(0, n_pairs, block)
    starts = range(0, n_samples, chunk)
    shares = np.zeros((n_pairs, 3))
    with Progress(len(blocks) * len(starts), "Bayesian signed-rank", enabled=progress) as bar:
        for first in blocks:  # blocks of pairs and chunks of samples bound the memory
            last = min(first + block, n_pairs)
            shares[first:last] = _block_shares(diffs[first:last], rope, n_samples, chunk,
                                               np.random.default_rng(seed), bar)
    return shares


def _block_shares(diffs: np.ndarray, rope: float, n_samples: int, chunk: int,
                  rng: np.random.Generator, bar: Progress) -> np.ndarray:
    n_pairs, m = diffs.shape[0], diffs.shape[1] + 1
    above, below = region_matrices(diffs, rope)
    # (m·m) × (2·pairs): column p is pair p's "a better" matrix, column pairs + p its "b better".
    regions = np.concatenate([above, below], axis=0).reshape(2 * n_pairs, m * m).T
    regions = np.ascontiguousarray(regions, dtype=np.float32)
    shares = np.zeros((n_pairs, 3))
    for start in range(0, n_samples, chunk):
        size = min(chunk, n_samples - start)
        w = rng.dirichlet(np.ones(m), size=size).astype(np.float32)
        theta = (w[:, :, None] * w[:, None, :]).reshape(size, m * m) @ regions
        shares += winner_shares(theta[:, :n_pairs], theta[:, n_pairs:]) * size
        bar.update()
    return shares / n_samples


class BayesianResult(Result):
    """Posterior probabilities per model pair; ``.plot()`` draws a heatmap or stacked bars."""

    method = "bayesian"

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, order: Any = None) -> Any:
        """Reference mode: stacked bars per model; otherwise heatmaps of P(row better) and
        P(equivalent), rows and columns in ``order`` (a list of models) when given."""
        from ..plots.bayes import bayes_heatmap, bayes_stacked_bars

        rope = self.params["rope"]
        reference = self.params.get("reference")
        if reference is not None:
            return bayes_stacked_bars(self.table, reference, rope, ax=ax, figsize=figsize,
                                      title=title)
        return bayes_heatmap(self.table, self.params["models"], rope, ax=ax, figsize=figsize,
                             title=title, order=order)


def bayesian_comparison(benchmark: Benchmark, rope: float = 0.01, reference: str | None = None,
                        pairs: Any = None, random_state: Any = None,
                        n_samples: int = N_SAMPLES) -> BayesianResult:
    """Bayesian signed-rank test of model pairs on the normalized per-dataset scores.

    Pairs: every pair of models (default), ``reference`` against every other model
    (model_a = reference, as in ``frequentist_comparison`` and evaluma: ``p_a_better`` is
    then P(reference better)), or the given ``pairs`` of (model_a, model_b). ``rope`` is
    the half-width of the region of practical equivalence on the normalized scale
    (0.01 = 1 % of the normalization range). Reproducible with ``random_state``.

    Parameters
    ----------
    rope : float
        Half-width of the region of practical equivalence, normalized scale, ≥ 0
        (default 0.01).
    reference : str or None
        Compare this model with every other one (it is model_a, so ``p_a_better`` is the
        probability that the reference is better); None compares all pairs.
    pairs : list of (model_a, model_b) or None
        Only these pairs (not together with ``reference``).
    random_state : None, int or numpy Generator
        Seed of the Monte Carlo sampler.
    n_samples : int
        Posterior samples per pair (default 50 000).

    Returns
    -------
    BayesianResult
        ``.table``: model_a, model_b, p_a_better, p_equiv, p_b_better; ``.plot()``: a
        heatmap of P(row better), or stacked bars against ``reference``.
    """
    rope = check_number(rope, "rope", low=0.0, units=" (normalized scale)")
    n_samples = check_int(n_samples, "n_samples")
    check_shape(benchmark, "bayesian_comparison")
    chosen = _pairs(benchmark, reference, pairs)
    scores = benchmark.scores_
    values = scores.to_numpy(dtype=float)
    index = {m: i for i, m in enumerate(scores.index)}
    a = np.array([index[p[0]] for p in chosen])
    b = np.array([index[p[1]] for p in chosen])
    probs = signed_rank_posterior(values[a] - values[b], rope, n_samples,
                                  make_rng(random_state))
    table = pd.DataFrame({
        "model_a": [p[0] for p in chosen],
        "model_b": [p[1] for p in chosen],
        "p_a_better": probs[:, 0],
        "p_equiv": probs[:, 1],
        "p_b_better": probs[:, 2],
    })
    return BayesianResult(table, rope=rope, reference=reference, models=list(scores.index),
                          n_samples=n_samples, random_state=random_state)


def _pairs(benchmark: Benchmark, reference: str | None, pairs: Any) -> list[tuple[str, str]]:
    models = benchmark.models_
    if reference is not None and pairs is not None:
        raise ValueError("give either reference= or pairs=, not both")
    if reference is not None:
        check_model(benchmark, reference, "reference")
        return [(reference, m) for m in models if m != reference]
    if pairs is None:
        return list(combinations(models, 2))
    if isinstance(pairs, (str, bytes)) or not hasattr(pairs, "__iter__"):
        raise TypeError(f"pairs must be a list of (model_a, model_b) tuples, got {pairs!r}")
    out = []
    for item in pairs:
        if isinstance(item, (str, bytes)) or len(tuple(item)) != 2:
            raise ValueError(f"pairs must hold (model_a, model_b) tuples, got {item!r}")
        first, second = tuple(item)
        check_model(benchmark, first, "model_a of pair")
        check_model(benchmark, second, "model_b of pair")
        if first == second:
            raise ValueError(f"pair {item!r} compares model {first!r} with itself")
        out.append((first, second))
    if not out:
        raise ValueError("pairs is empty: give at least one (model_a, model_b) pair")
    return out
