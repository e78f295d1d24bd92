"""Bayesian signed-rank test (Benavoli et al. 2017) for many model pairs in one pass.

For a pair (a, b) with per-dataset differences z_i = a_i − b_i on the normalized
scale, the posterior of the distribution of differences is a Dirichlet process
with one prior pseudo-observation at z_0 = 0 of weight s = ``prior`` (0.5, baycomp's
default): weights w ~ Dirichlet(s, 1, …, 1) over (z_0, z_1, …, z_n). Each posterior
sample gives

    θ_a = Σ_ij w_i w_j H(z_i + z_j − 2r),   θ_b = Σ_ij w_i w_j H(−z_i − z_j − 2r),
    θ_equiv = 1 − θ_a − θ_b,

with H the Heaviside step (H(0) = ½) and r the ROPE half-width (with r = 0, θ_a = 1 − θ_b
and θ_equiv = 0). The reported probabilities are the shares of samples in which each
region is the most probable.

This is baycomp's ``two_on_multiple(a, b, rope, random_state=seed)`` (its
``SignedRankTest``, prior 0.5, 50 000 samples) sample for sample: an int
``random_state`` seeds the same ``numpy.random.RandomState`` whose ``dirichlet`` draws
baycomp uses, θ is summed as baycomp sums it wherever the winner is not plain from
float32, and the same region wins. The one difference: a sample in which two regions
tie for the largest θ (within 1e-12: identical models with rope = 0, where θ_a = θ_b = ½)
counts half for each, where baycomp's argmax gives it to the first (a); so results stay
symmetric under swapping a and b (see :func:`winner_shares`).

Vectorization: all pairs share the same Dirichlet draws (each pair's posterior is
still exactly its own; only the Monte Carlo noise is shared), so θ for every pair
and sample is one float32 matrix product ``W @ A`` per chunk of samples. A sample whose
two largest float32 θ are closer than the float32 error bound is decided again in
float64, summed as baycomp sums it.
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
PRIOR = 0.5
"""Weight of the prior pseudo-observation at 0 (baycomp's ``SignedRankTest`` default)."""
_CHUNK_ELEMENTS = 2_000_000  # float32 cells per chunk of samples (~8 MB per array)
_BLOCK_ELEMENTS = 4_000_000  # float32 cells of one block's region matrices
_TIE_TOL = 1e-12
_SEEDS = 2**32
"""numpy.random.RandomState takes int seeds below 2**32."""


def region_matrices(diffs: np.ndarray, rope: float) -> tuple[np.ndarray, np.ndarray]:
    """H(z_i + z_j − 2r) and H(−z_i − z_j − 2r) for each pair; z includes the prior's 0.

    ``diffs`` is pairs × datasets; the results are pairs × (n+1) × (n+1).
    """
    z = np.concatenate([np.zeros((diffs.shape[0], 1)), diffs], axis=1)
    sums = z[:, :, None] + z[:, None, :]
    above = (sums > 2 * rope) + 0.5 * (sums == 2 * rope)
    below = (-sums > 2 * rope) + 0.5 * (-sums == 2 * rope)
    return above, below


def _sample_shares(theta_a: np.ndarray, theta_e: np.ndarray, theta_b: np.ndarray,
                   tol: float) -> np.ndarray:
    """Per sample (… × 3: a, equivalence, b): 1 for the region with the largest θ; regions
    within ``tol`` of the largest share the sample equally."""
    regions = np.stack([theta_a, theta_e, theta_b], axis=-1)
    top = regions >= regions.max(axis=-1, keepdims=True) - tol
    return top / top.sum(axis=-1, keepdims=True)


def winner_shares(theta_a: np.ndarray, theta_b: np.ndarray, tol: float = _TIE_TOL) -> np.ndarray:
    """Per column, the share of rows (samples) in which a, equivalence or b is most probable.

    θ_equiv = −θ_a − θ_b + 1 (baycomp's order of operations, symmetric in a and b).
    Regions within ``tol`` of the largest share the sample equally (e.g. identical
    models with rope = 0, where θ_a = θ_b = ½ exactly).
    """
    theta_a, theta_b = np.asarray(theta_a, dtype=float), np.asarray(theta_b, dtype=float)
    shares = _sample_shares(theta_a, -theta_a - theta_b + 1, theta_b, tol)
    return shares.sum(axis=0) / theta_a.shape[0]


def _legacy_seed(rng: Any) -> int:
    """The int seed of the ``RandomState`` the draws come from: an int below 2**32 as given
    (baycomp's ``random_state``), else one drawn from the Generator (or a fresh one)."""
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if 0 <= rng < _SEEDS:
            return int(rng)
        rng = make_rng(rng)
    generator = np.random.default_rng() if rng is None else rng
    if not isinstance(generator, np.random.Generator):
        raise TypeError(f"rng must be None, an int seed or a numpy Generator, got "
                        f"{type(rng).__name__} {rng!r}")
    return int(generator.integers(_SEEDS))


def signed_rank_posterior(diffs: np.ndarray, rope: float, n_samples: int = N_SAMPLES,
                          rng: Any = None, progress: bool | None = None,
                          prior: float = PRIOR) -> np.ndarray:
    """Posterior probabilities (a better, equivalent, b better) for each row of ``diffs``.

    ``diffs`` is a pairs × datasets array of a − b on a common scale; ``rope`` the
    half-width of the region of practical equivalence on that scale; ``prior`` the weight
    of the pseudo-observation at 0. ``rng``: an int seed (below 2**32, the
    ``RandomState`` seed of baycomp's ``random_state``: same seed, same probabilities), a
    numpy Generator (a seed is drawn from it) or None. θ = wᵀ A w is computed for every
    pair at once as (w ⊗ w) @ A_flat in float32; samples the float32 error could decide
    otherwise are decided again in float64 (module doc).
    """
    diffs = np.asarray(diffs, dtype=float)
    if diffs.ndim != 2 or diffs.shape[0] < 1 or diffs.shape[1] < 1:
        raise ValueError(f"diffs must be a non-empty pairs × datasets array, got shape "
                         f"{diffs.shape}")
    if not np.isfinite(diffs).all():
        raise ValueError("diffs has a non-finite value")
    prior = check_number(prior, "prior", low=0.0, low_open=True,
                         units=" (the Dirichlet weight of the pseudo-observation at 0)")
    n_pairs, m = diffs.shape[0], diffs.shape[1] + 1
    # Every block of pairs replays the same Dirichlet draws, so a pair's result does
    # not depend on which other pairs are computed with it.
    seed = _legacy_seed(rng)
    block = max(1, _BLOCK_ELEMENTS // (2 * m * m))
    chunk = max(1, _CHUNK_ELEMENTS // (m * m + 2 * min(block, n_pairs)))
    blocks = range(0, n_pairs, block)
    starts = range(0, n_samples, chunk)
    counts = np.zeros((n_pairs, 3))
    with Progress(len(blocks) * len(starts), "Bayesian signed-rank", enabled=progress) as bar:
        for first in blocks:  # blocks of pairs and chunks of samples bound the memory
            last = min(first + block, n_pairs)
            counts[first:last] = _block_counts(diffs[first:last], rope, n_samples, chunk,
                                               np.random.RandomState(seed), prior, bar)
    return counts / n_samples


def _block_counts(diffs: np.ndarray, rope: float, n_samples: int, chunk: int,
                  rng: np.random.RandomState, prior: float, bar: Progress) -> np.ndarray:
    """Per pair, the number of samples each region wins (ties shared)."""
    n_pairs, m = diffs.shape[0], diffs.shape[1] + 1
    above, below = region_matrices(diffs, rope)
    above, below = above.reshape(n_pairs, m * m), below.reshape(n_pairs, m * m)
    # (m·m) × (2·pairs): column p is pair p's "a better" matrix, column pairs + p its "b better".
    regions = np.ascontiguousarray(np.concatenate([above, below], axis=0).T, dtype=np.float32)
    alpha = np.ones(m)
    alpha[0] = prior
    # |θ32 − θ| ≤ (m² + 3)·u for θ a sum of m² products of float32-rounded weights (u = 2^-24,
    # Σ w_i w_j = 1), and θ_equiv adds both errors: a float32 margin above this decides.
    margin = 4 * (m * m + 8) * 2.0**-24
    counts = np.zeros((n_pairs, 3))
    for start in range(0, n_samples, chunk):
        size = min(chunk, n_samples - start)
        w = rng.dirichlet(alpha, size)
        w32 = w.astype(np.float32)
        theta = (w32[:, :, None] * w32[:, None, :]).reshape(size, m * m) @ regions
        theta_a, theta_b = theta[:, :n_pairs], theta[:, n_pairs:]
        theta_e = 1 - theta_a - theta_b
        wins = [theta_a > np.maximum(theta_e, theta_b) + margin,
                theta_e > np.maximum(theta_a, theta_b) + margin,
                theta_b > np.maximum(theta_a, theta_e) + margin]
        for region, won in enumerate(wins):
            counts[:, region] += won.sum(axis=0)
        rows, cols = np.nonzero(~(wins[0] | wins[1] | wins[2]))
        if rows.size:
            _exact_counts(counts, w, rows, cols, above, below, rope)
        bar.update()
    return counts


def _exact_counts(counts: np.ndarray, w: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                  above: np.ndarray, below: np.ndarray, rope: float) -> None:
    """Add the float64 decisions of samples ``rows`` for pairs ``cols`` to ``counts``: θ
    summed as baycomp sums it (``np.sum(np.outer(w, w) * H)``, θ_equiv = −θ_a − θ_b + 1;
    with rope = 0, θ_a = −θ_b + 1 and θ_equiv = 0)."""
    m = w.shape[1]
    step = max(1, _CHUNK_ELEMENTS // (m * m))
    for first in range(0, rows.size, step):
        r, c = rows[first:first + step], cols[first:first + step]
        product = (w[r, :, None] * w[r, None, :]).reshape(r.size, m * m)
        theta_b = (product * below[c]).sum(axis=1)
        if rope > 0:
            theta_a = (product * above[c]).sum(axis=1)
            theta_e = -theta_a - theta_b + 1
        else:
            theta_a, theta_e = -theta_b + 1, np.zeros(r.size)
        np.add.at(counts, c, _sample_shares(theta_a, theta_e, theta_b, _TIE_TOL))


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
    (0.01 = 1 % of the normalization range). Reproducible with ``random_state``; an int
    seed gives baycomp's ``two_on_multiple(a, b, rope, random_state=seed)`` on the rows of
    ``scores_`` exactly (module doc). The prior pseudo-observation at 0 weighs 0.5.

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
        Seed of the Monte Carlo sampler: an int below 2**32 seeds baycomp's
        ``RandomState`` draws; a Generator (or a larger int) gives such a seed.
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
                                  _random_state(random_state))
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


def _random_state(random_state: Any) -> Any:
    """``random_state`` checked: an int seed below 2**32 as given (baycomp's seed), anything
    else as the Generator it makes."""
    if (isinstance(random_state, (int, np.integer))
            and not isinstance(random_state, (bool, np.bool_)) and 0 <= random_state < _SEEDS):
        return int(random_state)
    return make_rng(random_state)
