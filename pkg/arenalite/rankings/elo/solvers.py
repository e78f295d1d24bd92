"""Bradley-Terry solvers: maximum-likelihood abilities θ of weighted win matrices.

Ratings are the joint MLE of Σ W_ij log σ(θ_i − θ_j): :func:`newton` (Newton's method
with a line search) for the point fit, :func:`chord` / :func:`chord_sums` (one shared
Hessian, Anderson-accelerated) for bootstrap replicates, :func:`solve_batch` choosing
between them and adding the tie prior where needed.

Regularization rule. When a win matrix's graph is not strongly connected (a model wins
or loses every battle, or groups never beat each other) its MLE is infinite. Then, and
only then, a tie prior is added: one virtual match day in which every pair ties with
weight w_min / (M − 1), w_min the lightest battle weight of the data. Every model thus
gets half a win and half a loss of the lightest real battle (a Haldane-style ½
correction), spread evenly over its opponents: the smallest nudge that keeps the ratings
finite, and too small to reorder models that the data order. The point estimate and
every bootstrap replicate follow the same rule, each only when it needs it, and no
replicate is ever dropped.
"""

from __future__ import annotations

import contextlib
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_ANDERSON = 6  # iterates the chord's Anderson acceleration mixes
# A chord iterate whose abilities spread further than this has run away (the MLE with its
# tie prior lies far inside: e^-600 is a win probability no battle weight supports); its
# replicate leaves the chord at once for the Newton redo, before exp(θ − max θ) underflows
# to 0 and the shares divide by zero.
_RUNAWAY_SPREAD = 600.0
# The chord stops once no θ moves by CHORD_TOL: it converges linearly, so its distance to
# the fixed point is a few steps' worth. 1e-12 keeps replicates within 1e-8 Elo of their
# MLE on separated 1000-model suites and on the demo's prior replicates, whose chord
# contracts slowly (1e-11 left 1.2e-8 Elo there at depth 6, 1e-9 up to 3e-7 Elo on the
# separated suites).
CHORD_TOL = 1e-12
CHORD_MAX_ITER = 100
_EXPAND_STEP = 0.05  # Newton tries doubling full steps that move some θ this far
_REUSE_STEP = 1e-3  # Newton reuses the last Hessian once no θ moved by more than this
_CACHE_ENTRIES = 65_536  # entries of the chord's work block (512 KiB: stays in cache)
# The chord's share sums are split between threads (numpy releases the GIL inside each
# block's operations) once a pass has this many entries; Pyodide and WASI have no threads.
_THREADED_ENTRIES = 2_000_000


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


def log_likelihood(theta: np.ndarray, wins: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Σ_ij W_ij log σ(θ_i − θ_j) per row of θ (B, M) from its sufficient statistics: each
    model's points ``wins`` (B, M) and the battles ``total`` = W + Wᵀ (B, M, M).

    It is Σ_i θ_i wins_i − ½ Σ_ij total_ij log(e^θ_i + e^θ_j), with the logarithm taken of
    e = exp(θ − max θ): one vectorized log per pair instead of a scalar logaddexp (30
    times faster at 1000 models); spreads beyond 700 (where e underflows) use logaddexp.
    """
    top = theta.max(axis=1, keepdims=True)
    if (theta - top).min(initial=0.0) < -700.0:
        pair = np.logaddexp(theta[:, :, None], theta[:, None, :])
        return (theta * wins).sum(axis=1) - 0.5 * (total * pair).sum(axis=(1, 2))
    e = np.exp(theta - top)
    pair = e[:, :, None] + e[:, None, :]
    np.log(pair, out=pair)
    pair *= total
    return (theta * wins).sum(axis=1) - 0.5 * pair.sum(axis=(1, 2)) - top[:, 0] * wins.sum(axis=1)


def bradley_terry(win: np.ndarray, theta0: np.ndarray | None = None, tol: float = 1e-9,
                  max_iter: int = 200) -> np.ndarray:
    """Maximum-likelihood abilities θ (mean 0) for a batch of win matrices (B, M, M).

    Newton's method on the concave log-likelihood Σ W_ij log σ(θ_i − θ_j) with a line
    search that backtracks and expands (:func:`newton`), all replicates at once; converged
    replicates leave the batch. Requires strongly connected graphs (see
    :func:`strongly_connected`).
    """
    theta, converged = newton(win, theta0, tol, max_iter)
    if not converged.all():
        raise RuntimeError(f"Bradley-Terry Newton iteration did not converge for "
                           f"{int((~converged).sum())} of {len(win)} win matrices within "
                           f"{max_iter} iterations")
    return theta


def newton(win: np.ndarray, theta0: np.ndarray | None, tol: float,
           max_iter: int) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method with a line search: (θ (B, M), converged (B,)).

    A step that lowers the likelihood is halved until it does not. A full step that
    raises it and still moves some θ by ``_EXPAND_STEP`` or more is doubled while that
    raises it further: on nearly separated data the MLE lies far out (gaps of tens of θ
    units, where σ'(Δθ) ≈ e^(−Δθ)) and plain Newton only gains about one unit of Δθ per
    iteration; doubling covers much of the distance at once. Near the optimum no step is
    doubled, and once the steps are small (below ``_REUSE_STEP``) the last Hessian's
    Cholesky factor is reused (quadratic convergence then turns into a linear one whose
    rate is the tiny change of the Hessian, at O(M²) instead of O(M³) per iteration).
    """
    from scipy.linalg import cho_factor, cho_solve

    b, m, _ = win.shape
    total = win + np.swapaxes(win, 1, 2)
    wins = win.sum(axis=2)
    theta = (log_ratio_start(wins, win.sum(axis=1)) if theta0 is None
             else np.array(theta0, dtype=float, copy=True))
    active = np.arange(b)
    base = None  # log-likelihood at θ: the last accepted trial's, not evaluated twice
    factors: list = []  # Cholesky factors of the active rows' last Hessians
    moved = np.inf  # the largest step of the last iteration
    for _ in range(max_iter):
        if active.size == 0:
            break
        th, n = theta[active], total[active]
        p = 0.5 * (1.0 + np.tanh(0.5 * (th[:, :, None] - th[:, None, :])))
        grad = wins[active] - (n * p).sum(axis=2)
        if moved >= _REUSE_STEP or len(factors) != active.size:
            h = n * p * (1.0 - p)
            lap = -h
            lap[:, np.arange(m), np.arange(m)] = h.sum(axis=2)
            lap += 1.0 / m
            factors = [cho_factor(matrix, overwrite_a=True, check_finite=False)
                       for matrix in lap]
        step = np.stack([cho_solve(f, g, check_finite=False) for f, g in zip(factors, grad,
                                                                              strict=True)])
        if base is None:
            base = log_likelihood(th, wins[active], n)
        scale = np.ones(active.size)
        new = th + step
        for _ in range(50):
            value = log_likelihood(new, wins[active], n)
            worse = value < base - 1e-12 * np.abs(base)
            if not worse.any():
                break
            scale[worse] *= 0.5
            new[worse] = th[worse] + scale[worse, None] * step[worse]
        else:
            value = log_likelihood(new, wins[active], n)
        far = (scale == 1.0) & (np.abs(step).max(axis=1) >= _EXPAND_STEP)
        _expand(new, value, scale, th, step, wins[active], n, np.flatnonzero(far))
        new -= new.mean(axis=1, keepdims=True)
        theta[active] = new
        change = np.abs(new - th).max(axis=1)
        going = change >= tol
        moved = float(change.max(initial=0.0))
        if not going.all():
            factors = [f for f, keep in zip(factors, going, strict=True) if keep]
        active, base = active[going], value[going]
    converged = np.ones(b, dtype=bool)
    converged[active] = False
    return theta, converged


def log_ratio_start(wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
    """Newton's start: θ_i = log(points / losses) of each model, centred (0 where a model
    has no point or no loss): already spread like the MLE, which saves Newton a few of
    its damped first iterations on well-separated suites."""
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.log(wins / losses)
    theta[~np.isfinite(theta)] = 0.0
    return theta - theta.mean(axis=1, keepdims=True)


def _expand(new: np.ndarray, value: np.ndarray, scale: np.ndarray, th: np.ndarray,
            step: np.ndarray, wins: np.ndarray, total: np.ndarray, grow: np.ndarray) -> None:
    """Double the steps of the rows ``grow`` while the likelihood still rises; updates
    ``new``, ``value`` and ``scale`` in place (at most 2^30 times the step)."""
    for _ in range(30):
        if grow.size == 0:
            return
        trial = th[grow] + (2.0 * scale[grow])[:, None] * step[grow]
        got = log_likelihood(trial, wins[grow], total[grow])
        better = got > value[grow] + 1e-12 * np.abs(value[grow])
        rows = grow[better]
        new[rows], value[rows] = trial[better], got[better]
        scale[rows] *= 2.0
        grow = rows


def chord_inverse(win: np.ndarray, theta0: np.ndarray) -> np.ndarray:
    """Inverse of the (regularized) negative Hessian of the log-likelihood of the (M, M)
    win matrix ``win`` at ``theta0``: the shared step matrix of :func:`chord`."""
    m = win.shape[-1]
    total = win + win.T
    p0 = 0.5 * (1.0 + np.tanh(0.5 * (theta0[:, None] - theta0[None, :])))
    h = total * p0 * (1.0 - p0)
    lap = -h
    lap[np.arange(m), np.arange(m)] = h.sum(axis=1)
    return np.linalg.inv(lap + 1.0 / m)


def chord(win: np.ndarray, theta0: np.ndarray, tol: float, max_iter: int,
           inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Newton steps with one shared Hessian, inverted in ``inverse`` (:func:`chord_inverse`).

    Bootstrap replicates are small perturbations of the full data, so one Hessian (the
    full-data one at ``theta0``) serves them all: it is inverted once and each iteration
    is a single (B, M) @ (M, M) product instead of B linear solves. The expected scores
    use σ(θ_i − θ_j) = e_i / (e_i + e_j) with e = exp(θ − max θ): no transcendental
    function per pair. The chord iteration converges linearly; Anderson acceleration of
    depth ``_ANDERSON`` (Walker & Ni 2011: mix the last steps by the γ minimizing the new
    residual, a tiny ridge keeping the small Gram system solvable) cuts the iterations to
    the same fixed point (depth 1 about halves them; on the dataset replicates of a separated
    1000-model suite depth 2 needs 39 passes to 1e-11, depth 6 27, and 29 to 1e-12). Deep
    mixing can extrapolate a separated replicate of a small suite far out (the demo's, at
    depths 3–6): an iterate whose abilities spread past ``_RUNAWAY_SPREAD`` leaves the chord
    at once, unconverged, before exp(θ − max θ) underflows and the shares divide by zero.
    Replicates that run away, or whose steps do not shrink below ``tol`` within
    ``max_iter`` iterations, are reported as not converged (:func:`solve_batch` redoes
    them by Newton).
    """
    return chord_sums(win.sum(axis=2), win + np.swapaxes(win, 1, 2), theta0, tol, max_iter,
                      inverse)


def chord_sums(wins: np.ndarray, total: np.ndarray, theta0: np.ndarray, tol: float,
               max_iter: int, inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`chord` on the likelihood's sufficient statistics: each model's points
    ``wins`` (B, M) and the battles of every pair ``total`` (B, M, M), or (B, 1, 1) when
    every pair fought equally often (then ``wins`` must include the ½ · total of each
    model's tie with itself, which the uniform ``total`` puts on the diagonal)."""
    b, m = wins.shape
    theta = np.array(np.broadcast_to(theta0, (b, m)), dtype=float)
    past_theta, past_step = np.zeros((_ANDERSON, b, m)), np.zeros((_ANDERSON, b, m))
    k = 0  # iterates held in the history
    active = np.arange(b)
    failed = np.zeros(b, dtype=bool)  # replicates that ran away (see _RUNAWAY_SPREAD)
    threads = share_threads() if b * m * m >= _THREADED_ENTRIES else 1
    # one work array per thread for every iteration, held in its core's cache
    size = min(max(_CACHE_ENTRIES, b * m), b * m * m)  # at least a row, at most a pass
    buffers = [np.empty(size) for _ in range(threads)]
    # the share sums' threads live for this solve only: none is left behind for a fork
    with share_pool(threads) as pool:
        for _ in range(max_iter):
            if active.size == 0:
                break
            th = theta[active]
            e = np.exp(th - th.max(axis=1, keepdims=True))
            grad = wins - e * _share_sums(e, total, buffers, pool)
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
            runaway = ~(new.max(axis=1) - new.min(axis=1) < _RUNAWAY_SPREAD)
            going = ~(np.abs(step).max(axis=1) < tol) & ~runaway
            if runaway.any():
                failed[active[runaway]] = True
            if not going.all():  # the totals follow the active replicates, copied only then
                active, total, wins = active[going], total[going], wins[going]
    converged = np.ones(b, dtype=bool)
    converged[active] = False
    converged[failed] = False
    theta[~np.isfinite(theta).all(axis=1)] = theta0
    return theta, converged


def share_threads() -> int:
    """Threads the chord's share sums may use: the CPUs this process may run on (at most
    8), 1 where the interpreter has no threads (Pyodide, WASI)."""
    if sys.platform in ("emscripten", "wasi"):
        return 1
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(
        os.cpu_count() or 1)
    return max(1, min(8, len(cpus)))


def share_pool(threads: int) -> ThreadPoolExecutor | contextlib.nullcontext:
    """The worker threads of :func:`_share_sums` for one solve (a context manager), or
    none (``nullcontext(None)``) for one thread."""
    if threads < 2:
        return contextlib.nullcontext(None)
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="arenalite-chord")


def _share_sums(e: np.ndarray, total: np.ndarray, buffers: list[np.ndarray],
                pool: ThreadPoolExecutor | None = None) -> np.ndarray:
    """Σ_j total_ij / (e_i + e_j) per replicate and model, (A, M), by blocks of rows of the
    (A, M, M) shares that fit a (flat) buffer: each block is formed, divided and
    summed while it is in cache, instead of three passes over the whole tensor in memory.
    With a ``pool``, several buffers and a large enough pass, consecutive runs of blocks go
    to that many threads, each with its own buffer and the caller's numpy error settings.
    The same operations on the same numbers as one unblocked pass: the same sums."""
    a, m = e.shape
    step = max(1, min(m, buffers[0].size // (a * m)))  # rows of the (A, M, M) per block
    uniform = total.shape[1] == 1
    out = np.empty((a, m))

    def blocks(firsts: range, buffer: np.ndarray) -> None:
        for first in firsts:
            last = min(m, first + step)
            share = buffer[:a * (last - first) * m].reshape(a, last - first, m)
            np.add(e[:, first:last, None], e[:, None, :], out=share)
            np.divide(total if uniform else total[:, first:last], share, out=share)
            np.sum(share, axis=2, out=out[:, first:last])

    firsts = range(0, m, step)
    if pool is None or len(firsts) < 2 * len(buffers) or a * m * m < _THREADED_ENTRIES:
        blocks(firsts, buffers[0])
        return out
    per_thread = -(-len(firsts) // len(buffers))
    runs = [firsts[k * per_thread:(k + 1) * per_thread] for k in range(len(buffers))]
    settings = np.geterr()  # numpy's error state is per thread: hand the caller's over

    def in_thread(firsts: range, buffer: np.ndarray) -> None:
        with np.errstate(**settings):
            blocks(firsts, buffer)

    list(pool.map(in_thread, runs, buffers))  # waits, and re-raises a thread's error
    return out


def solve_batch(win: np.ndarray, theta0: np.ndarray | None, prior: np.ndarray,
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
        theta, converged = newton(win, None, 1e-9, 200)
    else:
        theta, converged = chord(win, theta0, CHORD_TOL, CHORD_MAX_ITER, inverse)
        redo = ~converged
        if redo.any():
            start = np.broadcast_to(theta0, (int(redo.sum()), m))
            theta[redo], converged[redo] = newton(win[redo], start, 1e-9, 200)
    if not converged.all():
        again = ~converged & ~bad
        if not again.any():
            raise RuntimeError("Bradley-Terry Newton iteration did not converge even with the "
                               "tie prior")
        theta[again] = bradley_terry(win[again] + prior)
        bad |= again
    return theta, int(bad.sum())
