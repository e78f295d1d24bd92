"""The probabilistic track: a mean + spread regressor against a point model with an honest spread.

Regressors that predict a distribution are scored with proper scoring rules (CRPS and
Gaussian NLL, :mod:`arenalite.metrics`) instead of RMSE. Against them stands the
reference point model with one honest constant spread per dataset, its own
out-of-fold error, so a candidate passes only if its spread carries information that a
single number per dataset does not.

The constant spread is the RMSE of the reference's out-of-fold residuals, pooled over
every out-of-fold prediction of the dataset (all folds and repeats):
``sigma = sqrt(mean_i (y_i - point_i)^2)``. For fixed means it is the Gaussian-NLL
optimal constant (the maximum-likelihood sigma), so the baseline's NLL is exactly
``ln(2 pi sigma^2) / 2 + 1/2`` and the baseline gets the best constant spread in
hindsight: a candidate has to beat that, not a strawman. Two honest caveats:

* sigma is fitted on the same residuals it is scored on. That is one number per
  dataset; its optimism is about 1/n nats per row (n out-of-fold predictions, the AIC
  penalty of one parameter), e.g. 0.001 nats for 2 x 442 rows, well under the gate's
  0.01-nat margin.
* It is not the CRPS-optimal constant unless the residuals are Gaussian (then both
  optima coincide); for heavy-tailed residuals the best constant for CRPS is smaller,
  so the baseline's CRPS is slightly above its best.

:func:`track_scores` turns out-of-fold predictions into the long table that
:func:`arenalite.load_df` reads, one CRPS and one Gaussian NLL per model and dataset,
so that ``Benchmark.gate`` runs on it directly (Gaussian NLL has a default margin of
0.01 nats; CRPS is in the units of y and needs ``margin=``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from . import metrics

TRACK_METRICS = ("crps", "gaussian_nll")
"""The proper scores of the track, as named in the registry and in :func:`track_scores`."""
OOF_COLUMNS = ("dataset", "y_true", "mean", "std", "point")
"""Columns of the out-of-fold table: the candidate's mean and std, the reference's point."""


class SpreadBaseline(NamedTuple):
    """The honest constant spread of a point model and its proper scores on one dataset."""

    sigma: float
    crps: float
    gaussian_nll: float
    n: int


def honest_spread(y_true: Any, point: Any) -> float:
    """The constant spread: RMSE of the out-of-fold residuals ``y_true − point``.

    Raises ``ValueError`` when every residual is 0: a zero spread has no proper score.
    """
    sigma = metrics.rmse(y_true, point)
    if sigma == 0:
        raise ValueError("the out-of-fold residuals are all 0: a constant spread of 0 has no "
                         "CRPS or Gaussian NLL (the point model is exact on these rows)")
    return sigma


def spread_baseline(y_true: Any, point: Any) -> SpreadBaseline:
    """The point model scored as N(point, sigma²) with sigma = :func:`honest_spread`."""
    sigma = honest_spread(y_true, point)
    y = metrics.numeric_1d(y_true, "y_true")
    std = np.full(len(y), sigma)
    return SpreadBaseline(sigma, metrics.crps_gaussian(y, point, std),
                          metrics.gaussian_nll(y, point, std), len(y))


def track_scores(oof: pd.DataFrame, candidate: str = "candidate",
                 reference: str = "reference") -> pd.DataFrame:
    """Per dataset: CRPS and Gaussian NLL of the candidate and of the honest-spread baseline.

    ``oof`` holds one row per out-of-fold prediction (every row of every repeat) with
    the columns of :data:`OOF_COLUMNS`: ``dataset``, ``y_true``, the candidate's
    Gaussian ``mean`` and ``std`` (> 0), and the reference point model's ``point``.
    Returns a long table (model, dataset, metric, score, spread) for
    :func:`arenalite.load_df`; ``spread`` is the baseline's sigma, or the root mean
    square of the candidate's stds. Models are named ``candidate`` and ``reference``.
    """
    if not isinstance(oof, pd.DataFrame):
        raise TypeError(f"oof must be a DataFrame of out-of-fold predictions, "
                        f"got {type(oof).__name__}")
    missing = [c for c in OOF_COLUMNS if c not in oof.columns]
    if missing:
        raise ValueError(f"oof is missing column(s) {missing}; it needs {list(OOF_COLUMNS)}")
    if not all(isinstance(m, str) and m for m in (candidate, reference)) or candidate == reference:
        raise ValueError(f"candidate and reference must be two different non-empty names, "
                         f"got {candidate!r} and {reference!r}")
    values = {c: metrics.numeric_1d(oof[c].to_numpy(), f"oof[{c!r}]") for c in OOF_COLUMNS[1:]}
    bad = values["std"] <= 0
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"oof['std'] must be strictly positive; found {values['std'][i]:g} "
                         f"at row {i}")
    rows = []
    for name, at in oof.groupby("dataset", sort=True).indices.items():  # positions per dataset
        y, mean, std, point = (values[c][at] for c in OOF_COLUMNS[1:])
        try:
            base = spread_baseline(y, point)
        except ValueError as err:
            raise ValueError(f"dataset {name!r}: {err}") from None
        spread = float(np.sqrt(np.mean(std**2)))
        rows += [(candidate, name, "crps", metrics.crps_gaussian(y, mean, std), spread),
                 (candidate, name, "gaussian_nll", metrics.gaussian_nll(y, mean, std), spread),
                 (reference, name, "crps", base.crps, base.sigma),
                 (reference, name, "gaussian_nll", base.gaussian_nll, base.sigma)]
    return pd.DataFrame(rows, columns=["model", "dataset", "metric", "score", "spread"])
