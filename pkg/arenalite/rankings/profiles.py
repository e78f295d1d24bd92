"""Performance profiles (Dolan & Moré 2002) on the raw score matrix.

Ratio to the best per dataset: r_ij = best_j / s_ij for higher-is-better datasets and
s_ij / best_j for lower-is-better ones, so r ≥ 1 and r = 1 for the best model; all raw
scores must be strictly positive. A model's profile ρ_i(τ) is the share of datasets
with r_ij ≤ τ, evaluated exactly at every observed ratio plus τ = 1 (the step function
has no other jumps). The area under the profile on a log10 τ axis up to the largest
observed ratio, AUP = Σ_k (log10 τ_{k+1} − log10 τ_k) · ρ_i(τ_k), summarizes it (higher
is better). It equals log10 τ_max − mean_j log10 r_ij, so AUP orders models like the
geometric mean of their raw scores (inverse for lower-is-better datasets), and dropping a
model never reorders the others by AUP; other methods can reorder (see :func:`stability`).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..methods import compared, get
from ..results import Result

if TYPE_CHECKING:
    from ..benchmark import Benchmark


def check_positive(raw: np.ndarray, models: list[str], datasets: list[str]) -> None:
    """ValueError naming the first cell whose raw score is 0 or below."""
    bad = ~(raw > 0)
    if bad.any():
        i, j = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(f"model {models[i]!r} has a score of 0 or below ({float(raw[i, j])!r}) "
                         f"on dataset {datasets[j]!r}; performance profiles need strictly "
                         "positive raw scores")


def performance_ratios(raw: np.ndarray, higher_is_better: np.ndarray) -> np.ndarray:
    """Ratio of each score to the per-dataset best (≥ 1, 1 = best) for an M × D matrix."""
    best = np.where(higher_is_better, raw.max(axis=0), raw.min(axis=0))
    return np.where(higher_is_better, best / raw, raw / best)


def profile_steps(ratios: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints τ (every observed ratio and 1, sorted) and ρ (M × T) at each of them."""
    m, d = ratios.shape
    taus = np.unique(np.append(ratios.ravel(), 1.0))
    position = np.searchsorted(taus, ratios)  # exact: every ratio is a breakpoint
    key = (np.arange(m)[:, None] * taus.size + position).ravel()
    # Counts as floats (exact integers), accumulated and scaled in place: one M × T buffer.
    rho = np.bincount(key, weights=np.ones(key.size), minlength=m * taus.size)
    rho = rho.reshape(m, taus.size)
    np.cumsum(rho, axis=1, out=rho)
    rho /= d
    return taus, rho


def area_under_profile(taus: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """AUP per model: Σ_k (log10 τ_{k+1} − log10 τ_k) · ρ(τ_k) up to the largest ratio."""
    return rho[:, :-1] @ np.diff(np.log10(taus))


def aup_from_ratios(ratios: np.ndarray) -> np.ndarray:
    """AUP per model straight from the M × D ratios: log10 τ_max − mean_j log10 r_ij, the
    closed form of :func:`area_under_profile` (no M × T profile needed). Each model's
    logarithms are summed in sorted order, so models with the same ratios tie exactly."""
    logs = np.sort(np.log10(ratios), axis=1)
    return np.log10(ratios.max(initial=1.0)) - logs.mean(axis=1)


def evaluate_profile(taus: np.ndarray, rho: np.ndarray, at: np.ndarray) -> np.ndarray:
    """ρ of every model at arbitrary τ values (right-continuous step function)."""
    index = np.searchsorted(taus, np.asarray(at, dtype=float), side="right") - 1
    out = np.where(index >= 0, rho[:, np.maximum(index, 0)], 0.0)
    return out


def step_points(taus: np.ndarray, rho: pd.DataFrame) -> pd.DataFrame:
    """The profiles' step points only: per model (``rho``'s columns, T × M), τ = 1 and each τ
    where its fraction changes (tau, model, fraction_within_tau), at most M × (D + 1) rows
    instead of the M × T of the full grid; the step function is the same."""
    values = rho.to_numpy(dtype=float)
    changes = np.ones(values.shape, dtype=bool)
    changes[1:] = values[1:] != values[:-1]
    model, tau = np.nonzero(changes.T)  # model-major: each model's steps, τ ascending
    return pd.DataFrame({"tau": np.asarray(taus, dtype=float)[tau],
                         "model": np.asarray(rho.columns, dtype=object)[model],
                         "fraction_within_tau": values[tau, model]})


class ProfileResult(Result):
    """Exact performance-profile steps (tau, model, fraction_within_tau) with AUP.

    ``aup`` holds the areas, best first (the ranking); ``taus`` and ``rho`` (τ × model) the
    step function and ``table`` its long form, each laid out on first access from the
    M × D ratios (at 1000 models × 50 datasets ``rho`` is 0.4 GB and ``table`` 0.9 GB,
    which the ranking does not need).
    """

    method = "performance_profiles"

    def __init__(self, ratios: np.ndarray, *, aup: pd.Series, benchmark: Benchmark,
                 **params: Any) -> None:
        """``ratios`` (M × D) with models in ``aup``'s order."""
        super().__init__(None, **params)
        self.aup = aup
        self._ratios = ratios
        self._benchmark = benchmark

    @property
    def _models(self) -> np.ndarray:
        return self.aup.index.to_numpy(dtype=object)

    @functools.cached_property
    def _steps(self) -> tuple[np.ndarray, np.ndarray]:
        """(τ breakpoints, ρ as M × T), built once for ``taus``, ``rho`` and ``table``."""
        return profile_steps(self._ratios)

    def _build_table(self) -> pd.DataFrame:
        return profile_table(*self._steps, self._models)

    @property
    def taus(self) -> np.ndarray:
        """The breakpoints: every observed ratio and 1, sorted."""
        return self._steps[0]

    @functools.cached_property
    def rho(self) -> pd.DataFrame:
        """ρ (τ × model, models in AUP order): each model's share of datasets within τ."""
        taus, rho = self._steps
        return pd.DataFrame(rho.T, index=pd.Index(taus, name="tau"),
                            columns=pd.Index(self._models, name="model"), copy=False)

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None, model_colors: Any = None,
             tau_max: float | None = None) -> Any:
        """Steps on a log-scaled τ axis up to ``tau_max`` (default: where 98 % of the ratios
        lie); ``model_colors`` a {model: colour} dict or a list in AUP order."""
        from ..plots.profiles import profile_plot

        return profile_plot(self.taus, self.rho, self.aup, ax=ax, figsize=figsize, title=title,
                            model_colors=model_colors, tau_max=tau_max)

    def stability(self, methods: Any = None) -> pd.DataFrame:
        """Drop the top model by AUP; per method, did the order of the others change?

        evaluma's name for :func:`stability` on the benchmark these profiles came from.
        """
        return stability(self._benchmark, methods, aup=self.aup)


def ratios_and_aup(benchmark: Benchmark) -> tuple[np.ndarray, np.ndarray, pd.Series]:
    """The M × D ratios (models in ``benchmark.models_`` order), the AUP order (best first,
    ties by name) and the AUP Series in that order: all that ranking by AUP needs, without
    the M × T profile."""
    models, datasets = benchmark.models_, benchmark.datasets_
    raw = benchmark.raw_.loc[models, datasets].to_numpy(dtype=float)
    check_positive(raw, models, datasets)
    higher = (benchmark.directions_.loc[datasets] == "max").to_numpy()
    ratios = performance_ratios(raw, higher)
    aup = aup_from_ratios(ratios)
    names = np.asarray(models, dtype=object)
    order = np.lexsort((names, -aup))
    return ratios, order, pd.Series(aup[order], index=pd.Index(names[order], name="model"),
                                    name="aup")


def performance_profiles(benchmark: Benchmark) -> ProfileResult:
    """Dolan-Moré performance profiles of every model on the raw score matrix.

    No parameters: profiles use the raw (not normalized) scores, which must all be
    strictly positive.

    Returns
    -------
    ProfileResult
        ``.table``: tau, model, fraction_within_tau (the exact step function, laid out
        on first access, as are ``.taus`` and ``.rho``);
        ``.aup``: area under each profile on a log10 τ axis (best first);
        ``.plot()`` on a log-scaled τ axis; ``.stability()``.
    """
    ratios, order, aup_series = ratios_and_aup(benchmark)
    return ProfileResult(ratios[order], aup=aup_series, benchmark=benchmark)


def profile_table(taus: np.ndarray, rho: np.ndarray, names: np.ndarray) -> pd.DataFrame:
    """The long form (tau, model, fraction_within_tau) of the M × T profile ``rho`` of the
    models ``names``: M × T rows, laid out when a ProfileResult's table is first read (at
    1000 models × 50 datasets that is 50 M rows, about 0.9 GB, which neither the ranking by
    AUP nor the plot needs). The model column is categorical (codes, not M × T string
    references) and the fractions share ρ's buffer."""
    return pd.DataFrame({
        "tau": np.tile(taus, len(names)),
        "model": pd.Categorical.from_codes(
            np.repeat(np.arange(len(names), dtype=np.min_scalar_type(-len(names))),
                      taus.size), categories=names),
        "fraction_within_tau": rho.reshape(-1),
    }, copy=False)


def stability(benchmark: Benchmark, methods: Any = None,
              aup: pd.Series | None = None) -> pd.DataFrame:
    """Drop the top model by AUP; per method, did the order of the others change?

    ``methods`` defaults to aup and the rank comparison's methods (aggregate, elo at its
    point estimate, improvability), less those these data do not define (improvability
    without a known optimum for every metric). ``aup`` is the benchmark's AUP, best first,
    when already computed. Returns one row per method: method, dropped, changed,
    order_before, order_after ("A > B > C").
    """
    if len(benchmark.models_) < 3:
        raise ValueError(f"stability needs at least three models (two left after dropping "
                         f"the top one), got {benchmark.models_!r}")
    known = ("aup", *(spec.name for spec in compared()))
    chosen = known if methods is None else [methods] if isinstance(methods, str) else list(methods)
    unknown = [m for m in chosen if m not in known]
    if unknown:
        raise ValueError(f"methods {unknown!r} unknown; choose from {known!r}")
    by_aup = _order(benchmark, "aup") if aup is None else [str(m) for m in aup.index]
    top = by_aup[0]
    reduced = benchmark.drop_models(top)
    rows = []
    for method in chosen:
        try:
            full = by_aup if method == "aup" else _order(benchmark, method)
        except ValueError:
            if methods is not None:
                raise
            continue  # by default, a ranking these data do not define is left out
        before = [m for m in full if m != top]
        after = _order(reduced, method)
        rows.append({"method": method, "dropped": top, "changed": before != after,
                     "order_before": " > ".join(before), "order_after": " > ".join(after)})
    return pd.DataFrame(rows)


def _order(benchmark: Benchmark, method: str) -> list[str]:
    """Models best first under ``method`` (each ranking's table is already sorted)."""
    if method == "aup":
        return [str(m) for m in ratios_and_aup(benchmark)[2].index]
    return [str(m) for m in get(method).point(benchmark).table["model"]]
