"""TabICL's per-column preprocessing of numeric features, as ``tabicl`` 2.2.0 does it.

A numpy/scipy reference of what ``TabICLClassifier`` / ``TabICLRegressor`` do to a float
feature matrix before the model sees it (defined in docs/models.md, "TabICL preprocessing
and ensemble"):

1. mean imputation of NaNs with the training column means (sklearn ``SimpleImputer``,
   ``keep_empty_features=True``: an all-NaN column is filled with 0);
2. dropping the columns with a single distinct training value (``UniqueFeatureFilter``);
3. then, per normalisation method (``"none"`` or ``"power"``), a pipeline fitted on the
   training rows: z-score with ``std + 1e-6`` clipped to ±100, for ``"power"`` a Yeo-Johnson
   transform (sklearn ``PowerTransformer``: lambdas by scipy's bounded Brent search, then a
   ``StandardScaler``), and the soft outlier clipping at ``outlier_threshold`` robust stds.

Everything runs in float64 (the package's dtype for float64 input); the model gets float32.
Steps 1 and 3 are the rules Google TabFM's wrappers share, in
:mod:`arenalite.models.wrapper_preprocessing`; this module adds TabICL's column filter.
Only numeric features are in scope: the package's ordinal encoding of categorical or
string DataFrame columns is not reproduced. The ensemble (which members see which
pipeline, permutation and class shift) is in :mod:`.ensemble`.
"""

from __future__ import annotations

import numpy as np

from ..wrapper_preprocessing import (
    NORM_METHODS,
    SCALE_EPSILON,
    STD_FLOOR,
    Z_CLIP,
    PipelineFit,
    PowerFit,
    apply_power,
    fit_pipeline,
    fit_power,
    impute,
    impute_means,
    power_columns,
    soft_clip,
    standard_scaler_stats,
    transform,
)
from ..yeo_johnson import BRENT_XTOL, yeo_johnson, yeo_johnson_lambda

__all__ = ["BRENT_XTOL", "NORM_METHODS", "SCALE_EPSILON", "STD_FLOOR", "Z_CLIP", "PipelineFit",
           "PowerFit", "apply_power", "fit_pipeline", "fit_power", "impute", "impute_means",
           "kept_features", "power_columns", "soft_clip", "standard_scaler_stats", "transform",
           "yeo_johnson", "yeo_johnson_lambda"]


def kept_features(x_train: np.ndarray) -> np.ndarray:
    """Columns with more than one distinct training value (``UniqueFeatureFilter``).

    With a single training row every column is kept; if no column varies, the first is
    kept so that the model gets at least one feature.
    """
    n, f = x_train.shape
    if n <= 1:
        return np.ones(f, dtype=bool)
    ordered = np.sort(x_train, axis=0)
    keep = (ordered[1:] != ordered[:-1]).any(axis=0)
    if not keep.any():
        keep[0] = True
    return keep
