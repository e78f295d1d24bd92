"""The non-inferiority gate: is a candidate not worse than a reference by more than a margin?

Protocol: datasets are the unit of replication, so each model has one raw score per
dataset (folds/seeds averaged).
Per dataset the difference is d = candidate − reference for higher-is-better
metrics and d = reference − candidate for lower-is-better ones (so d > 0 always
means the candidate is better), in the metric's own units.

- Non-inferiority: one-sided Wilcoxon signed-rank test of H0: median(d) ≤ −margin
  against H1: median(d) > −margin, i.e. a test of d + margin > 0.
- A two-sided Wilcoxon signed-rank test of d decides superior / inferior.
- Verdicts, in this order: ``superior`` (two-sided significant, candidate better),
  ``non-inferior`` (the one-sided test passes), ``inferior`` (two-sided significant,
  candidate worse), ``inconclusive`` (nothing shown). Superior and non-inferior
  pass; inconclusive fails, because "not shown to be worse" is not evidence.

Datasets with different metrics are never pooled: raw differences of accuracy and
RMSE are not on one scale, so each metric is its own test (one table row per
candidate and metric). ``margin`` is then a ``{metric: margin}`` dict; a single
number is applied to every metric (with a warning when there are several).
Default margins (:data:`DEFAULT_MARGINS`, in each metric's raw units; every registered
metric has either a default or a reason in :data:`NO_DEFAULT_MARGIN`):

- 0.01 for accuracy, R² and ROC AUC and 0.005 for the Brier score (the protocol's
  numbers); 1 − AUC takes 0.01 on the error itself.
- 0.01 for the other scores bounded in [0, 1] with optimum 1 (balanced accuracy, F1,
  precision, recall, IoU / Jaccard, average precision): one percentage point, the
  protocol's margin for accuracy and ROC AUC, on the same scale. (Average precision's
  chance level is the prevalence, so on rare positives a point is a larger share of
  the attainable range; pass a smaller margin there if that matters.)
- 0.01 nats for log loss (``log_loss``, ``logloss``, ``nll``) and Gaussian NLL. Both
  are the logarithmic scoring rule, so a difference between two models on one dataset
  is a mean log-likelihood ratio per row, free of the unit of y (rescaling y shifts
  every Gaussian NLL by the same ln c). 0.01 nats is the Brier margin carried over:
  the expected excess binary log loss of a forecast q for truth p is KL(p‖q) ≈
  (p − q)² / (2p(1 − p)), twice the excess Brier (p − q)² at p = ½ and more
  elsewhere, so a 2 × 0.005 = 0.01-nat margin admits no more miscalibration than the
  protocol's Brier margin. For a Gaussian forecast 0.01 nats is a mean off by 0.14 σ
  or a spread off by about 10 %.
- None for errors in the units of y (RMSE, MAE, MSE, CRPS) nor for MAPE: see
  :data:`NO_DEFAULT_MARGIN`; ``margin=`` must be given.

A dataset exactly at the margin is a zero difference.
Each candidate is its own decision: no multiplicity correction across candidates.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..params import check_alpha, check_model, check_number, check_shape
from ..results import Result
from .wilcoxon import min_attainable_p, signed_rank_test

if TYPE_CHECKING:
    from ..benchmark import Benchmark
    from .frequentist import FrequentistResult

_POINT = 0.01
"""One percentage point of a score in [0, 1]."""
_NATS = 0.01
"""Mean log-likelihood ratio per row, in nats: twice the Brier margin (module docstring)."""

DEFAULT_MARGINS = {
    **dict.fromkeys(("accuracy", "acc", "overall_accuracy", "r2", "roc_auc", "auc", "auroc",
                     "1-auc", "one_minus_auc"), _POINT),  # the protocol's 0.01
    "brier": 0.005,  # the protocol's number
    **dict.fromkeys(("balanced_accuracy", "f1", "macro_f1", "multilabel_f1_score", "precision",
                     "recall", "iou", "miou", "jaccard", "multiclass_jaccard_index", "ap",
                     "average_precision", "auprc", "map", "test_test_map",
                     "test_test_segm_map"), _POINT),
    **dict.fromkeys(("log_loss", "logloss", "nll", "gaussian_nll"), _NATS),
}
"""Default margins, in each metric's raw units, for the registry names of these metrics."""

_UNITS_OF_Y = ("it is in the units of y, so a fixed number would be strict on one dataset and "
               "meaningless on another")
NO_DEFAULT_MARGIN = {
    **dict.fromkeys(("rmse", "mae", "crps", "crps_gaussian", "gaussian_crps"), _UNITS_OF_Y),
    "mse": "it is in the squared units of y, so no fixed number fits every dataset",
    "mape": ("it is unbounded and dominated by rows with y near 0, so a fixed number of "
             "percentage points means different things on different datasets"),
}
"""Registered metrics without a default margin, and why not."""
MARGIN_RTOL = 1e-9
"""A shifted difference d + margin within this share of the scores' size counts as 0."""
VERDICTS = ("superior", "non-inferior", "inferior", "inconclusive")


def verdict(p_noninferiority: float, p_two_sided: float, w_plus: float, w_minus: float,
            alpha: float) -> str:
    """The gate's verdict from the two p-values and the direction of the signed ranks."""
    if p_two_sided < alpha and w_plus > w_minus:
        return "superior"
    if p_noninferiority < alpha:
        return "non-inferior"
    if p_two_sided < alpha and w_minus > w_plus:
        return "inferior"
    return "inconclusive"


def reason(result: str, n_datasets: int, p_noninferiority: float, p_two_sided: float,
           margin: float, alpha: float) -> str:
    """Why the gate gave ``result``, in one sentence with the numbers that decided it."""
    one, two = f"one-sided p = {p_noninferiority:.3g}", f"two-sided p = {p_two_sided:.3g}"
    if result == "superior":
        return f"passes: better than the reference ({two} < {alpha:g})"
    if result == "non-inferior":
        return f"passes: not worse by more than the margin {margin:g} ({one} < {alpha:g})"
    if result == "inferior":
        return (f"fails: worse than the reference ({two} < {alpha:g}) and not shown within "
                f"the margin {margin:g} ({one})")
    floor = min_attainable_p(n_datasets, "greater")
    if floor >= alpha:
        return (f"fails: with {n_datasets} dataset(s) the smallest attainable one-sided p is "
                f"0.5^{n_datasets} = {floor:.3g}, not below {alpha:g}; more datasets are needed")
    return (f"fails: not shown within the margin {margin:g} ({one} ≥ {alpha:g}); not shown to "
            "be worse is not evidence of being competitive")


def shift_by_margin(d: np.ndarray, margin: float, scale: np.ndarray | None = None) -> np.ndarray:
    """``d + margin`` with float round-off at the margin snapped to an exact 0.

    A dataset exactly at the margin (e.g. 0.85 vs 0.86 with margin 0.01) must be a
    zero difference, which Wilcoxon drops, not a ±1e-17 one that takes the smallest
    rank. ``scale`` is the size of the scores behind each ``d`` (default ``|d|``).
    """
    d = np.asarray(d, dtype=float)
    scale = np.abs(d) if scale is None else np.asarray(scale, dtype=float)
    shifted = d + margin
    return np.where(np.abs(shifted) <= MARGIN_RTOL * (scale + margin), 0.0, shifted)


def gate_test(d: np.ndarray, margin: float, alpha: float = 0.05,
              scale: np.ndarray | None = None) -> dict[str, Any]:
    """Run the gate on per-dataset differences ``d`` (positive = candidate better).

    ``scale`` (per dataset, e.g. the larger absolute score) sets the round-off
    tolerance of :func:`shift_by_margin`.
    """
    d = np.asarray(d, dtype=float)
    noninferiority = signed_rank_test(shift_by_margin(d, margin, scale), alternative="greater")
    two_sided = signed_rank_test(d, alternative="two-sided")
    result = verdict(noninferiority.p_value, two_sided.p_value, two_sided.w_plus,
                     two_sided.w_minus, alpha)
    return {
        "n_datasets": int(d.size),
        "median_difference": float(np.median(d)),
        "p_noninferiority": noninferiority.p_value,
        "p_two_sided": two_sided.p_value,
        "margin": float(margin),
        "verdict": result,
        "passed": result in ("superior", "non-inferior"),
        "wins": int(np.sum(d > 0)),
        "losses": int(np.sum(d < 0)),
        "ties": int(np.sum(d == 0)),
        "reason": reason(result, int(d.size), noninferiority.p_value, two_sided.p_value,
                         float(margin), alpha),
    }


class GateResult(Result):
    """Gate table (one row per candidate and metric), per-dataset differences, ranking.

    Table columns: candidate, reference, metric, n_datasets, median_difference,
    p_noninferiority, p_two_sided, margin, verdict, passed, wins, losses, ties, reason
    (one sentence: which test decided the verdict, with its p-value).
    ``.differences``: candidate, reference, metric, dataset, difference (raw units,
    positive = candidate better). ``.ranking``: Friedman + Nemenyi ranking of all
    models of the benchmark, references included (a :class:`FrequentistResult`).
    """

    method = "gate"

    def __init__(self, table: pd.DataFrame, *, differences: pd.DataFrame,
                 ranking: FrequentistResult, **params: Any) -> None:
        super().__init__(table, **params)
        self.differences = differences
        self.ranking = ranking

    def plot(self, ax: Any = None, figsize: tuple[float, float] | None = None,
             title: str | None = None) -> Any:
        """Per-dataset differences per candidate, with the median, 0 and −margin marked."""
        from ..plots.gate import gate_plot

        return gate_plot(self.table, self.differences, ax=ax, figsize=figsize, title=title)


def gate(benchmark: Benchmark, candidate: Any, reference: str, margin: Any = None,
         alpha: float = 0.05) -> GateResult:
    """Non-inferiority gate of one or several candidates against ``reference`` (raw scores).

    Per candidate and metric: a one-sided Wilcoxon signed-rank test of the per-dataset
    differences shifted by the margin, and a two-sided test for superiority (module doc).

    Parameters
    ----------
    candidate : str or list of str
        The model(s) to test.
    reference : str
        The model they must not be worse than.
    margin : None, float or {metric: float}
        The loss tolerated, in each metric's raw units: None uses each metric's
        documented default (:data:`DEFAULT_MARGINS`; RMSE-like metrics have none and
        must be given), a number applies to every metric, a dict sets one per metric.
    alpha : float
        Significance level, strictly between 0 and 1 (default 0.05).

    Returns
    -------
    GateResult
        ``.table``: one row per candidate and metric with the verdict (superior,
        non-inferior, inferior, inconclusive), p-values and margin; ``.differences``;
        ``.plot()``.
    """
    alpha = check_alpha(alpha)
    check_shape(benchmark, "gate")
    check_model(benchmark, reference, "reference")
    candidates = _candidates(benchmark, candidate, reference)
    raw = benchmark.raw_
    metrics = benchmark.metrics_.loc[raw.columns].astype(str).to_numpy()
    masks = {metric: metrics == metric for metric in sorted(set(metrics))}
    margins = _margins(margin, list(masks))
    sign = np.where(benchmark.directions_.loc[raw.columns].to_numpy() == "min", -1.0, 1.0)
    ref_raw = raw.loc[reference].to_numpy(dtype=float)
    rows, diff_frames, powerless = [], [], []
    for name in candidates:  # a handful of candidates × metrics, one test each
        cand_raw = raw.loc[name].to_numpy(dtype=float)
        d_all = (cand_raw - ref_raw) * sign
        scale_all = np.maximum(np.abs(cand_raw), np.abs(ref_raw))
        for metric, mask in masks.items():
            d = d_all[mask]
            if min_attainable_p(d.size, "greater") >= alpha:
                powerless.append(f"{name!r} on {metric!r} (n = {d.size})")
            rows.append({"candidate": name, "reference": reference, "metric": metric,
                         **gate_test(d, margins[metric], alpha, scale_all[mask])})
            diff_frames.append(pd.DataFrame({"candidate": name, "reference": reference,
                                             "metric": metric, "dataset": raw.columns[mask],
                                             "difference": d}))
    if powerless:
        warnings.warn(f"too few datasets to pass the gate at alpha {alpha:g} (the smallest "
                      f"one-sided p-value with n datasets is 0.5^n): {', '.join(powerless)}; "
                      "these verdicts can only be inconclusive", UserWarning, stacklevel=3)
    table = pd.DataFrame(rows)
    from .frequentist import frequentist_comparison

    ranking = frequentist_comparison(benchmark, alpha=alpha)
    return GateResult(table, differences=pd.concat(diff_frames, ignore_index=True),
                      ranking=ranking, candidates=candidates, reference=reference,
                      margin=margins, alpha=alpha)


def _candidates(benchmark: Benchmark, candidate: Any, reference: str) -> list[str]:
    names = [candidate] if isinstance(candidate, str) else candidate
    if not isinstance(names, (list, tuple)) or not names:
        raise TypeError(f"candidate must be a model name or a non-empty list of names, "
                        f"got {candidate!r}")
    for name in names:
        check_model(benchmark, name, "candidate")
        if name == reference:
            raise ValueError(f"candidate {name!r} is the reference itself; compare it with "
                             f"another model")
    if len(set(names)) != len(names):
        raise ValueError(f"candidate lists a model twice: {list(names)!r}")
    return list(names)


def _margins(margin: Any, metrics: list[str]) -> dict[str, float]:
    """One margin per metric: the given number, the dict's entry, or the default."""
    if margin is None:
        given: dict[str, Any] = {}
    elif isinstance(margin, dict):
        given = {str(k).lower(): v for k, v in margin.items()}
        known = {m.lower() for m in metrics}
        extra = sorted(k for k in given if k not in known)
        if extra:
            raise ValueError(f"margin names metrics {extra!r} that no dataset uses; "
                             f"metrics are {metrics!r}")
    else:
        value = check_number(margin, "margin", low=0.0)
        if len(metrics) > 1:
            warnings.warn(f"margin={value!r} is applied to every metric {metrics!r} in its own "
                          "raw units; pass a {metric: margin} dict to set one per metric",
                          UserWarning, stacklevel=4)
        return {m: value for m in metrics}
    out = {}
    for metric in metrics:
        key = metric.lower()
        if key in given:
            out[metric] = check_number(given[key], f"margin[{metric!r}]", low=0.0)
        elif key in DEFAULT_MARGINS:
            out[metric] = DEFAULT_MARGINS[key]
        else:
            why = NO_DEFAULT_MARGIN.get(key, "arenalite has no default for it")
            raise ValueError(f"no default margin for metric {metric!r}: {why}; pass margin= "
                             f"as a number or a {{{metric!r}: margin}} dict in the metric's "
                             "raw units (the smallest loss you would accept as negligible)")
    return out

