"""TabPFN v3's per-member preprocessing of a float feature matrix, as ``tabpfn`` 9.2.0 does it.

A numpy reference of what ``TabPFNClassifier`` / ``TabPFNRegressor`` do to the table before
the model sees it (defined in docs/models.md, "TabPFN preprocessing and ensemble"), in
pipeline order. Ported so far:

1. the feature modalities (``detect_feature_modalities`` on a numeric array):
   :func:`modalities` — a column with at most one distinct value (NaN counts as a value) is
   constant; past ``MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE`` (100) training rows a
   column with fewer than ``MIN_UNIQUE_FOR_NUMERICAL_FEATURES`` (4) distinct values is
   categorical, and a declared categorical one stays so up to
   ``MAX_UNIQUE_FOR_CATEGORICAL_FEATURES`` (30);
2. ``clean_data`` / ``clean_data_transform``: :func:`fit_clean` / :func:`clean` — the
   categorical columns' ordinal codes (the sorted distinct training values; unseen → −1,
   NaN stays NaN), and a constant column's first training value written into new rows;
3. per member, the first steps of its pipeline: the ±inf cells set aside as NaN
   (:func:`set_aside_infs`, written back by :func:`restore_infs`),
   ``RemoveConstantFeaturesStep`` (:func:`kept_features`) and
   ``ReshapeFeatureDistributionsStep`` (:func:`fit_reshape` / :func:`reshape`, with or
   without the originals appended) for the transforms ``squashing_scaler_default``
   (:func:`fit_squashing` / :func:`squash`), ``quantile_uni`` / ``quantile_norm`` and their
   ``_coarse`` / ``_fine`` variants (:func:`fit_quantiles` / :func:`quantile_transform`),
   ``safepower`` / ``power`` (:func:`fit_power` / :func:`power_transform`), ``robust``
   (:func:`fit_robust` / :func:`robust_transform`) and ``none``, then
   ``EncodeCategoricalFeaturesStep``
   (:func:`fit_encode` / :func:`encode`) for ``ordinal_very_common_categories_shuffled``
   and ``numeric``, then ``AddSVDFeaturesStep`` (:func:`fit_svd` / :func:`svd_features`):
   the safe ``StandardScaler(with_mean=False)`` and sklearn's ARPACK ``TruncatedSVD``
   through ``scipy.sparse.linalg.svds`` with the same starting vector, on Fortran-ordered
   rows as the package pins them (ARPACK's basis on a near-degenerate spectrum depends on the
   BLAS's accumulation order, so another BLAS or layout can change the features), then
   ``AddFingerprintFeaturesStep`` (:func:`fingerprint`) and ``ShuffleFeaturesStep``
   (:func:`feature_order`) — :func:`fit_member` / :func:`transform_member`;
4. the torch step at predict time: the soft clip of the numerical columns at 12σ for
   classifiers (:func:`model_input`, float32 like the package's).

Steps 1–3 run in float64, the package's preprocessing dtype. Not yet ported: the other
reshape presets (``quantile_uni_extrapolate``, ``squashing_scaler_max10``, Box-Cox, KDI,
``adaptive``), the quantile presets past 100,000 rows, the other categorical encodings (``onehot``,
plain ``ordinal``), polynomial features, feature and row subsampling, and the model input
with ±inf cells (``PASSTHROUGH_INF``).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import svds
from scipy.special import ndtri

from ..wrapper_preprocessing import impute, impute_means, standard_scaler_stats
from ..yeo_johnson import yeo_johnson, yeo_johnson_lambda

NUMERICAL, CATEGORICAL, CONSTANT = 0, 1, 2
"""Modality codes (the package's ``FeatureModality``)."""
MIN_SAMPLES_FOR_CATEGORICAL = 100
MAX_UNIQUE_FOR_CATEGORICAL = 30
MIN_UNIQUE_FOR_NUMERICAL = 4
SQUASH_MAX_ABS = 3.0
"""``SquashingScaler``'s default ``max_absolute_value``."""
SQUASH_QUANTILES = (25.0, 75.0)
APPEND_TO_ORIGINAL_THRESHOLD = 500
QUANTILE_DIVISORS = {"quantile_uni": 5, "quantile_norm": 5, "quantile_uni_coarse": 10,
                     "quantile_norm_coarse": 10, "quantile_uni_fine": 1,
                     "quantile_norm_fine": 1}
"""The quantile presets: n // divisor quantiles (at least 2; ``_fine``: n)."""
POWER_TRANSFORMS = ("safepower", "power")
RESHAPE_TRANSFORMS = ("squashing_scaler_default", *QUANTILE_DIVISORS, *POWER_TRANSFORMS,
                      "robust", "none")
"""The reshape transforms ported so far."""
QUANTILE_SUBSAMPLE = 100_000
"""sklearn's ``QuantileTransformer`` fits on a random subsample past this many rows."""
BOUNDS_THRESHOLD = 1e-7
"""sklearn's ``QuantileTransformer`` bound margin for the normal output."""


def count_distinct(x: np.ndarray) -> np.ndarray:
    """Distinct values per column, NaN counted once as a value (``nunique(dropna=False)``).

    ``-0.0`` equals ``0.0`` and ``inf`` equals ``inf``.
    """
    x = np.asarray(x, dtype=np.float64)
    if len(x) == 0:
        return np.zeros(x.shape[1], dtype=np.int64)
    values = np.sort(x, axis=0)
    missing = np.isnan(values)
    differs = (values[1:] != values[:-1]) & ~missing[1:]
    return (differs.sum(axis=0) + (~missing).any(axis=0) + missing.any(axis=0)).astype(np.int64)


def modalities(x_train: np.ndarray, categorical_indices: object = None, *,
               min_samples: int = MIN_SAMPLES_FOR_CATEGORICAL,
               max_unique_for_category: int = MAX_UNIQUE_FOR_CATEGORICAL,
               min_unique_for_numerical: int = MIN_UNIQUE_FOR_NUMERICAL) -> np.ndarray:
    """Each column's modality code (:data:`NUMERICAL`, :data:`CATEGORICAL`, :data:`CONSTANT`).

    The package's rule for a numeric array: ≤ 1 distinct value and not declared categorical:
    constant; declared categorical with ≤ ``max_unique_for_category`` distinct values:
    categorical; not declared, more than ``min_samples`` rows and fewer than
    ``min_unique_for_numerical`` distinct values: categorical; else numerical.
    """
    n_unique = count_distinct(x_train)
    declared = set(int(i) for i in (categorical_indices or ()))
    big_enough = len(x_train) > min_samples
    out = np.full(len(n_unique), NUMERICAL, dtype=np.int64)
    for j, n in enumerate(n_unique.tolist()):
        if n <= 1 and j not in declared:
            out[j] = CONSTANT
        elif (j in declared and n <= max_unique_for_category) or \
                (j not in declared and big_enough and n < min_unique_for_numerical):
            out[j] = CATEGORICAL
    return out


@dataclass(frozen=True)
class CleanFit:
    """A fitted ``clean_data``: the ordinal categories and the constant columns' values."""

    categories: dict[int, np.ndarray]  # column → sorted distinct non-NaN training values
    constants: dict[int, float]  # column → its first training value


def fit_clean(x_train: np.ndarray, modality: np.ndarray) -> tuple[CleanFit, np.ndarray]:
    """Fit ``clean_data`` on the training rows; also return them cleaned (a new array)."""
    x_train = np.asarray(x_train, dtype=np.float64)
    cats = {int(j): np.unique(x_train[~np.isnan(x_train[:, j]), j])
            for j in np.flatnonzero(modality == CATEGORICAL)}
    consts = {int(j): float(x_train[0, j]) for j in np.flatnonzero(modality == CONSTANT)}
    fit = CleanFit(categories=cats, constants=consts)
    return fit, _encode(fit, x_train.copy())


def _encode(fit: CleanFit, x: np.ndarray) -> np.ndarray:
    for j, values in fit.categories.items():
        col = x[:, j]
        pos = np.searchsorted(values, col)
        found = (pos < len(values)) & (values[np.minimum(pos, len(values) - 1)] == col)
        x[:, j] = np.where(np.isnan(col), np.nan, np.where(found, pos, -1.0))
    return x


def clean(fit: CleanFit, x: np.ndarray) -> np.ndarray:
    """``clean_data_transform`` of new rows (a new array): constants, then ordinal codes."""
    x = np.array(x, dtype=np.float64)
    for j, value in fit.constants.items():
        x[:, j] = value
    return _encode(fit, x)


def set_aside_infs(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What each member's pipeline does first: (float64 copy with ±inf → NaN, the ±inf
    values (0 elsewhere), the columns whose ±inf values are not all equal — kept even if
    otherwise constant)."""
    x = np.array(x, dtype=np.float64)
    inf = np.isinf(x)
    infs = np.where(inf, x, 0.0)
    x[inf] = np.nan
    forced = inf.any(axis=0) & (infs != infs[:1]).any(axis=0)
    return x, infs, forced


def restore_infs(x: np.ndarray, infs: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Write the set-aside ±inf back (in place) into each output column from its source
    (a source < 0: a derived column, e.g. an SVD feature, left as it is)."""
    for out_j, src in enumerate(sources.tolist()):
        if src < 0:
            continue
        rows = np.isinf(infs[:, src])
        x[rows, out_j] = infs[rows, src]
    return x


def kept_features(x_train: np.ndarray, forced: np.ndarray | None = None) -> np.ndarray:
    """``RemoveConstantFeaturesStep``: the columns not equal to their first row throughout
    (a NaN cell is unequal) and not all NaN, plus ``forced``."""
    keep = ((x_train[0:1, :] == x_train).mean(axis=0) < 1.0) & ~np.all(np.isnan(x_train), axis=0)
    if forced is not None:
        keep = keep | forced
    if not keep.any():
        raise ValueError("All features are constant and would have been removed")
    return keep


@dataclass(frozen=True)
class SquashFit:
    """A fitted ``SquashingScaler`` (skrub's, as the package ships it)."""

    center: np.ndarray  # F: the median (robust and minmax columns)
    scale: np.ndarray  # F: 1/(q75 − q25) factor applied as in the package (see squash)
    robust: np.ndarray  # F, bool
    minmax: np.ndarray  # F, bool
    zero: np.ndarray  # F, bool: max == min
    max_abs: float


def fit_squashing(x: np.ndarray, max_abs: float = SQUASH_MAX_ABS,
                  quantile_range: tuple[float, float] = SQUASH_QUANTILES) -> SquashFit:
    """Fit on the finite values (±inf → NaN): min, max and ``np.nanpercentile`` of
    (25, 50, 75). Columns with max == min are zero columns; with q25 == q75 minmax
    columns (scale 2/(max − min + tiny)); the rest robust (divided by q75 − q25)."""
    x = np.where(np.isinf(x), np.nan, x)
    lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
    q_lower, q_median, q_upper = np.nanpercentile(x, [quantile_range[0], 50.0, quantile_range[1]],
                                                  axis=0)
    zero = hi == lo
    minmax = (q_lower == q_upper) & ~zero
    robust = ~(minmax | zero)
    scale = np.where(robust, q_upper - q_lower,
                     2.0 / (hi - lo + np.finfo(np.float64).tiny))
    return SquashFit(center=q_median, scale=scale, robust=robust, minmax=minmax, zero=zero,
                     max_abs=float(max_abs))


def squash(fit: SquashFit, x: np.ndarray) -> np.ndarray:
    """Robust columns (x − median)/(q75 − q25), minmax ones (x − median)·scale, zero ones
    0 (NaN kept); then z/√(1 + (z/B)²), ±inf → ±B."""
    x = np.asarray(x, dtype=np.float64)
    sign = np.where(np.isinf(x), np.sign(x), 0.0)
    x = np.where(np.isinf(x), np.nan, x)
    z = x.copy()
    r, m = fit.robust, fit.minmax
    if r.any():
        z[:, r] = (x[:, r] - fit.center[r]) / fit.scale[r]
    if m.any():
        z[:, m] = (x[:, m] - fit.center[m]) * fit.scale[m]
    if fit.zero.any():
        finite = np.isfinite(z)
        finite[:, ~fit.zero] = False
        z[finite] = 0.0
    b = fit.max_abs
    z = z / np.sqrt(1 + (z / b) ** 2)
    z = np.where(sign == 1, b, z)
    return np.where(sign == -1, -b, z)


def quantile_count(n_samples: int, transform_name: str = "quantile_uni_coarse") -> int:
    """A quantile preset's quantile count (``AdaptiveQuantileTransformer``): the preset's
    max(n // 5, 2) (``quantile_uni`` / ``_norm``), max(n // 10, 2) (``_coarse``) or n
    (``_fine``), at most n and 20,000, at least 1."""
    divisor = QUANTILE_DIVISORS[transform_name]
    user = n_samples if divisor == 1 else max(n_samples // divisor, 2)
    return max(1, min(user, n_samples, int(QUANTILE_SUBSAMPLE * 0.2)))


def fit_quantiles(x: np.ndarray, transform_name: str = "quantile_uni_coarse") -> np.ndarray:
    """sklearn ``QuantileTransformer`` as the package's ``AdaptiveQuantileTransformer`` fits
    it for a quantile preset: ``np.nanpercentile`` at ``linspace(0, 1, Q)·100`` per column
    (Q × F). Past 100,000 rows sklearn fits on a random subsample, not ported (refused)."""
    if len(x) > QUANTILE_SUBSAMPLE:
        raise ValueError(f"{len(x)} training rows: past {QUANTILE_SUBSAMPLE} sklearn's "
                         "QuantileTransformer subsamples them, not ported yet")
    refs = np.linspace(0, 1, quantile_count(len(x), transform_name), endpoint=True)
    return np.nanpercentile(x, refs * 100, axis=0)


def quantile_transform(quantiles: np.ndarray, x: np.ndarray, normal: bool = False) -> np.ndarray:
    """The quantile transform: per column the mean of the forward and the mirrored
    ``np.interp`` onto the references; NaN kept. Uniform output: values equal to the first
    (last) quantile → 0 (1). Normal output (``normal``): values within 1e-7 below the first
    quantile → 0, above the last → 1 (the first wins), then ``ndtri``, clipped to
    ±``ndtri(1e-7 − eps)`` as sklearn does, NaN cells the positive NaN ``norm.ppf`` writes
    (``ndtri``'s has the sign bit set, which the fingerprint's row hash would see)."""
    refs = np.linspace(0, 1, len(quantiles), endpoint=True)
    out = np.array(x, dtype=np.float64)
    for j in range(out.shape[1]):
        col, q = out[:, j], quantiles[:, j]
        with np.errstate(invalid="ignore"):
            if normal:
                lower = col - BOUNDS_THRESHOLD < q[0]
                upper = col + BOUNDS_THRESHOLD > q[-1]
            else:
                lower, upper = col == q[0], col == q[-1]
        ok = ~np.isnan(col)
        v = col[ok]
        col[ok] = 0.5 * (np.interp(v, q, refs) - np.interp(-v, -q[::-1], -refs[::-1]))
        col[upper] = 1
        col[lower] = 0
        if normal:
            clip_min = ndtri(BOUNDS_THRESHOLD - np.spacing(1))
            clip_max = ndtri(1 - (BOUNDS_THRESHOLD - np.spacing(1)))
            z = np.clip(ndtri(col), clip_min, clip_max)
            z[np.isnan(col)] = np.nan  # scipy's norm.ppf: a positive NaN (ndtri's is negative)
            out[:, j] = z
    return out


def _layout(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``x`` in ``like``'s memory order (Fortran when ``like`` is only Fortran-contiguous).

    The column sums of sklearn's imputer and scaler run in the order the array is laid out,
    and ``ColumnTransformer`` hands its transformers ``X[:, columns]``, Fortran-ordered for a
    C-ordered ``X``; the power presets keep that order throughout, as sklearn does."""
    if like.flags.f_contiguous and not like.flags.c_contiguous:
        return np.asfortranarray(x)
    return np.ascontiguousarray(x)


def _finite(x: np.ndarray) -> np.ndarray:
    return _layout(np.where(np.isinf(x), np.nan, x), x)


@dataclass(frozen=True)
class PowerFit:
    """A fitted ``safepower`` / ``power`` preset: sklearn ``PowerTransformer(standardize=False)``
    (Yeo-Johnson), then the package's safe ``StandardScaler`` (±inf → NaN, mean imputation,
    scaler, ±inf → NaN, mean imputation)."""

    lambdas: np.ndarray  # F; 1.0 for the columns sklearn deems constant
    constant: np.ndarray  # F, bool: left untransformed by the fit (not by a transform)
    pre_means: np.ndarray  # F: the first imputation
    mean: np.ndarray  # F: the StandardScaler's
    scale: np.ndarray  # F
    post_means: np.ndarray  # F: the second imputation


def _safe_standard(x: np.ndarray, fit: PowerFit | None):
    """The safe StandardScaler on Yeo-Johnson output; fitted when ``fit`` is None."""
    x = _finite(x)
    pre = impute_means(x) if fit is None else fit.pre_means
    x = _layout(impute(x, pre), x)
    mean, scale = standard_scaler_stats(x) if fit is None else (fit.mean, fit.scale)
    x = _finite(_layout((x - mean) / scale, x))
    post = impute_means(x) if fit is None else fit.post_means
    return _layout(impute(x, post), x), pre, mean, scale, post


def fit_power(x: np.ndarray) -> tuple[PowerFit, np.ndarray]:
    """Fit ``safepower`` / ``power`` on training rows; return it and the rows transformed as
    ``fit_transform`` does: per column, one sklearn deems constant (``_is_constant_feature``
    on ``np.mean`` / ``np.var`` with NaN cells, so a column with a NaN never is) keeps λ = 1
    and is left as it is; the others get :func:`yeo_johnson_lambda` and are transformed."""
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    eps = np.finfo(np.float64).eps
    mean = np.mean(x, axis=0, dtype=np.float64)
    var = np.var(x, axis=0, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        constant = var <= n * eps * var + (n * mean * eps) ** 2
    out = x.copy(order="K")
    lambdas = np.ones(x.shape[1])
    for i in np.flatnonzero(~constant).tolist():
        lambdas[i] = yeo_johnson_lambda(out[:, i])
        out[:, i] = yeo_johnson(out[:, i], lambdas[i])
    out, pre, s_mean, s_scale, post = _safe_standard(out, None)
    return PowerFit(lambdas=lambdas, constant=constant, pre_means=pre, mean=s_mean,
                    scale=s_scale, post_means=post), out


def power_transform(fit: PowerFit, x: np.ndarray) -> np.ndarray:
    """The fitted power preset on new rows: every column through Yeo-Johnson at its λ
    (λ = 1 too: expm1(log1p(x)), not exactly x), then the fitted safe scaler."""
    out = np.array(x, dtype=np.float64, order="K")
    for i, lmbda in enumerate(fit.lambdas.tolist()):
        out[:, i] = yeo_johnson(out[:, i], lmbda)
    return _safe_standard(out, fit)[0]


ROBUST_QUANTILES = (25.0, 75.0)


@dataclass(frozen=True)
class RobustFit:
    """A fitted ``robust`` preset: sklearn ``RobustScaler(unit_variance=True)``."""

    center: np.ndarray  # F: np.nanmedian
    scale: np.ndarray  # F: (q75 − q25, 1 where < 10·eps) / (ndtri(0.75) − ndtri(0.25))


def fit_robust(x: np.ndarray) -> RobustFit:
    """Fit on training rows: the column medians and ``np.nanpercentile`` (25, 75)."""
    center = np.nanmedian(x, axis=0)
    q = np.transpose([np.nanpercentile(x[:, j], ROBUST_QUANTILES) for j in range(x.shape[1])])
    scale = q[1] - q[0]
    scale[scale < 10 * np.finfo(np.float64).eps] = 1.0
    adjust = ndtri(ROBUST_QUANTILES[1] / 100.0) - ndtri(ROBUST_QUANTILES[0] / 100.0)
    return RobustFit(center=center, scale=scale / adjust)


def robust_transform(fit: RobustFit, x: np.ndarray) -> np.ndarray:
    """(x − center) / scale, NaN kept."""
    return (np.asarray(x, dtype=np.float64) - fit.center) / fit.scale


@dataclass(frozen=True)
class ReshapeFit:
    """A fitted ``ReshapeFeatureDistributionsStep``."""

    transform_name: str
    passthrough: np.ndarray  # input columns passed through first (categoricals, or all)
    transformed: np.ndarray  # input columns transformed, after them
    squash: SquashFit | None
    quantiles: np.ndarray | None  # Q × T for the quantile presets
    categorical_out: np.ndarray  # the output's categorical columns
    power: PowerFit | None = None
    robust: RobustFit | None = None

    @property
    def sources(self) -> np.ndarray:
        """Each output column's input column."""
        return np.concatenate([self.passthrough, self.transformed]).astype(np.int64)


def append_original(setting: bool | str, n_features: int, max_features_per_estimator: int) -> bool:
    """The step's ``append_to_original`` decision ("auto": < 500 features and at most half
    of ``max_features_per_estimator``)."""
    if setting == "auto":
        return n_features < APPEND_TO_ORIGINAL_THRESHOLD and \
            n_features <= max_features_per_estimator / 2
    return bool(setting)


def fit_reshape(x: np.ndarray, categorical: np.ndarray, transform_name: str,
                apply_to_categorical: bool, append: bool = False) -> tuple[ReshapeFit, np.ndarray]:
    """Fit the step on training rows (after :func:`kept_features`); return it and the
    transformed rows.

    ``categorical``: bool per column. ``apply_to_categorical`` (the config's
    ``categorical_name == "numeric"``): every column is transformed, categoricals first;
    else only the numerical ones. ``append`` (:func:`append_original`): all the original
    columns come first, unchanged (the categoricals stay categorical), then the transformed
    ones. Without it, with ``apply_to_categorical`` no column stays categorical; else the
    categoricals pass through first, untransformed, and stay categorical.

    The transformed rows are what ``fit_transform`` gives, which for the power presets is not
    :func:`reshape` of the training rows (a column deemed constant is left as it is there).
    """
    if transform_name not in RESHAPE_TRANSFORMS:
        raise ValueError(f"reshape transform {transform_name!r} is not ported yet "
                         f"(only {RESHAPE_TRANSFORMS})")
    cats = np.flatnonzero(categorical)
    nums = np.flatnonzero(~np.asarray(categorical, dtype=bool))
    transformed = np.concatenate([cats, nums]) if apply_to_categorical else nums
    if append:
        passthrough, cat_out = np.arange(x.shape[1]), cats
    elif apply_to_categorical:
        passthrough, cat_out = np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    else:
        passthrough, cat_out = cats, np.arange(len(cats))
    sq = qs = pw = rb = None
    moved = x[:, transformed]
    if len(transformed):
        if transform_name == "squashing_scaler_default":
            sq = fit_squashing(moved)
        elif transform_name in QUANTILE_DIVISORS:
            qs = fit_quantiles(moved, transform_name)
        elif transform_name in POWER_TRANSFORMS:
            pw, moved = fit_power(moved)
        elif transform_name == "robust":
            rb = fit_robust(moved)
    fit = ReshapeFit(transform_name=transform_name, passthrough=passthrough.astype(np.int64),
                     transformed=transformed.astype(np.int64), squash=sq, quantiles=qs,
                     categorical_out=cat_out.astype(np.int64), power=pw, robust=rb)
    if pw is None:
        return fit, reshape(fit, x)
    return fit, np.hstack([x[:, fit.passthrough], moved]).astype(np.float64, copy=False)


def reshape(fit: ReshapeFit, x: np.ndarray) -> np.ndarray:
    """The fitted step on rows: [passthrough columns, transformed columns]."""
    moved = x[:, fit.transformed]
    if fit.squash is not None:
        moved = squash(fit.squash, moved)
    if fit.quantiles is not None:
        moved = quantile_transform(fit.quantiles, moved, "_norm" in fit.transform_name)
    if fit.power is not None:
        moved = power_transform(fit.power, moved)
    if fit.robust is not None:
        moved = robust_transform(fit.robust, moved)
    return np.hstack([x[:, fit.passthrough], moved]).astype(np.float64, copy=False)


CATEGORICAL_ENCODINGS = ("ordinal_very_common_categories_shuffled", "numeric", "none")
"""The ``categorical_name`` encodings ported so far."""
MIN_CATEGORY_COUNT = 10


@dataclass(frozen=True)
class EncodeFit:
    """A fitted ``EncodeCategoricalFeaturesStep`` (ordinal, very common categories, shuffled)."""

    columns: np.ndarray  # the encoded input columns (moved to the front, in this order)
    categories: tuple[np.ndarray, ...]  # per encoded column: its sorted non-NaN training values
    perms: tuple[np.ndarray, ...]  # per encoded column: the code permutation

    def sources(self, n_features: int) -> np.ndarray:
        """Each output column's input column: the encoded ones, then the rest in order."""
        rest = np.setdiff1d(np.arange(n_features), self.columns)
        return np.concatenate([self.columns, rest]).astype(np.int64)


def very_common_categoricals(x: np.ndarray, categorical: np.ndarray) -> np.ndarray:
    """The categorical columns the package encodes: every value (NaN one value, as
    ``np.unique`` counts) at least 10 times and fewer distinct values than rows // 10."""
    keep = []
    for j in np.asarray(categorical, dtype=np.int64).tolist():
        values, counts = np.unique(x[:, j], return_counts=True)
        if len(x) and counts.min() >= MIN_CATEGORY_COUNT and len(values) < len(x) // 10:
            keep.append(j)
    return np.array(keep, dtype=np.int64)


def fit_encode(x: np.ndarray, categorical: np.ndarray, name: str,
               seed: int) -> tuple[EncodeFit | None, np.ndarray]:
    """Fit the step on training rows (``categorical``: the input's categorical columns);
    return it (None where it leaves the rows as they are) and the encoded rows.

    ``ordinal_very_common_categories_shuffled``: the :func:`very_common_categoricals` move to
    the front, each replaced by the index of its value among its sorted distinct training
    values, then mapped through ``rng.permutation(K)`` (``rng = default_rng(seed)``, one draw
    per column in order; K counts NaN as a category when the training column has one); NaN
    stays NaN, an unseen value becomes NaN. ``numeric`` / ``none``: unchanged.
    """
    if name not in CATEGORICAL_ENCODINGS:
        raise ValueError(f"categorical encoding {name!r} is not ported yet "
                         f"(only {CATEGORICAL_ENCODINGS})")
    if name != CATEGORICAL_ENCODINGS[0]:
        return None, x
    cols = very_common_categoricals(x, categorical)
    if not len(cols):
        return None, x
    rng = np.random.default_rng(int(seed))
    cats, perms = [], []
    for j in cols.tolist():
        col = x[:, j]
        values = np.unique(col[~np.isnan(col)])
        cats.append(values)
        perms.append(rng.permutation(len(values) + int(np.isnan(col).any())))
    fit = EncodeFit(columns=cols, categories=tuple(cats), perms=tuple(perms))
    return fit, encode(fit, x)


def encode(fit: EncodeFit | None, x: np.ndarray) -> np.ndarray:
    """The fitted step on rows."""
    if fit is None:
        return x
    out = x[:, fit.sources(x.shape[1])]
    for k, (values, perm) in enumerate(zip(fit.categories, fit.perms, strict=True)):
        col = out[:, k]
        pos = np.searchsorted(values, col)
        found = (pos < len(values)) & (values[np.minimum(pos, len(values) - 1)] == col)
        code = np.full(len(col), np.nan)
        code[found] = perm[pos[found]].astype(np.float64)
        out[:, k] = code
    return out


HASH_DECIMALS = 12
_MASK64 = 2**64 - 1
MAX_COLLISION_RETRIES = 100


def _row_hash(row: bytes, salt: int) -> float:
    h = int(hashlib.sha256(row + salt.to_bytes(8, "little", signed=False)).hexdigest(), 16)
    return (h & _MASK64) / _MASK64


def fingerprint(x: np.ndarray, n_cells: int, is_test: bool) -> np.ndarray:
    """``AddFingerprintFeaturesStep``'s column (n,): per row, the low 64 bits of
    SHA-256(the row's float64 bytes after ``np.around(·, 12)`` ‖ salt as 8 little-endian
    bytes) divided by 2⁶⁴ − 1, the salt being the training rows' cell count (``n_cells``).

    Training rows (``is_test`` false): a row whose hash was already seen is rehashed with
    salt + 1, + 2, … (continuing from how often its first hash occurred), unless the row is
    all NaN. Test rows keep their first hash. NaN cells hash as they are (±inf have been set
    aside as NaN by then).
    """
    rounded = np.ascontiguousarray(np.around(x, decimals=HASH_DECIMALS))
    out = np.zeros(len(x), dtype=np.float64)
    if is_test:
        for i in range(len(x)):
            out[i] = _row_hash(rounded[i].tobytes(), n_cells)
        return out
    seen: set[float] = set()
    counter: dict[float, int] = defaultdict(int)
    for i in range(len(x)):
        row = rounded[i].tobytes()
        base = _row_hash(row, n_cells)
        add = counter[base]
        h = base if add == 0 else _row_hash(row, n_cells + add)
        retries = 0
        while h in seen and not np.isnan(x[i]).all():
            add += 1
            retries += 1
            if retries > MAX_COLLISION_RETRIES:
                raise RuntimeError(f"fingerprint collision not resolved for row {i}")
            h = _row_hash(row, n_cells + add)
        out[i] = h
        seen.add(h)
        counter[base] = add + 1
    return out


def feature_order(method: str | None, n_features: int, shift: int, seed: int) -> np.ndarray:
    """``ShuffleFeaturesStep``'s column order: ``"shuffle"``:
    ``default_rng(seed).permutation(F)`` (the shift count is not used); ``"rotate"``:
    ``np.roll(arange(F), shift)``; None: unchanged."""
    if method == "shuffle":
        return np.random.default_rng(int(seed)).permutation(n_features)
    if method == "rotate":
        return np.roll(np.arange(n_features), int(shift))
    if method is None:
        return np.arange(n_features)
    raise ValueError(f"unknown feature shift method {method!r}")


@dataclass(frozen=True)
class MemberFit:
    """A member's fitted pipeline steps so far (constant removal, reshape, categoricals, SVD)."""

    kept: np.ndarray  # F, bool
    reshape: ReshapeFit
    encode: EncodeFit | None
    svd: SVDFit | None
    n_cells: int | None = None  # the fingerprint's salt (None: no fingerprint)
    order: np.ndarray | None = None  # the final column order (None: not shuffled)
    encoding: str = "numeric"  # the config's categorical_name

    @property
    def sources(self) -> np.ndarray:
        """Each output column's column in the cleaned input (−1: an SVD or fingerprint
        feature)."""
        src = np.flatnonzero(self.kept)[self.reshape.sources]
        src = src if self.encode is None else src[self.encode.sources(len(src))]
        k = (0 if self.svd is None else len(self.svd.components)) + (self.n_cells is not None)
        src = np.concatenate([src, np.full(k, -1)]).astype(np.int64)
        return src if self.order is None else src[self.order]

    @property
    def categorical(self) -> np.ndarray:
        """The output's categorical columns (the soft clip leaves them alone): after the
        reshape its categoricals; after an ordinal encoding only the encoded columns (none if
        it found no very common categorical), then moved by the shuffle."""
        if self.encode is not None:
            cats = np.arange(len(self.encode.columns))
        elif self.encoding == "numeric":
            cats = self.reshape.categorical_out
        else:
            cats = np.array([], dtype=np.int64)
        if self.order is None:
            return cats.astype(np.int64)
        return np.flatnonzero(np.isin(self.order, cats)).astype(np.int64)


def fit_member(x_train: np.ndarray, modality: np.ndarray, transform_name: str,
               categorical_name: str, seed: int, append_original_setting: bool | str = False,
               max_features_per_estimator: int = 500,
               global_transformer_name: str | None = None, add_fingerprint: bool = False,
               shuffle: bool = False, shift_method: str | None = "shuffle",
               shift: int = 0) -> tuple[MemberFit, np.ndarray]:
    """A member's CPU pipeline on cleaned training rows: ±inf set aside, constant columns
    removed, the reshape (its config's ``name``, ``append_original`` and
    ``max_features_per_estimator``), the categorical encoding (``categorical_name``;
    ``seed``: the member's pipeline seed), the SVD features appended
    (``global_transformer_name``, None or "None" for none), the fingerprint column appended
    (``add_fingerprint``), the columns reordered (``shuffle``: by ``shift_method`` and the
    member's ``shift`` count), ±inf written back. The defaults stop before the fingerprint."""
    x, infs, forced = set_aside_infs(x_train)
    keep = kept_features(x, forced)
    append = append_original(append_original_setting, int(keep.sum()),
                             max_features_per_estimator)
    rs, out = fit_reshape(x[:, keep], modality[keep] == CATEGORICAL, transform_name,
                          categorical_name == "numeric", append)
    enc, out = fit_encode(out, rs.categorical_out, categorical_name, seed)
    sv = None
    if global_transformer_name not in (None, "None"):
        sv = fit_svd(out, global_transformer_name, seed)
        out = np.hstack([out, svd_features(sv, out)])
    n_cells = None
    if add_fingerprint:
        n_cells = out.shape[0] * out.shape[1]
        out = np.hstack([out, fingerprint(out, n_cells, is_test=False)[:, None]])
    order = feature_order(shift_method, out.shape[1], shift, seed) if shuffle else None
    if order is not None:
        out = out[:, order]
    fit = MemberFit(kept=keep, reshape=rs, encode=enc, svd=sv, n_cells=n_cells, order=order,
                    encoding=categorical_name)
    return fit, restore_infs(out, infs, fit.sources)


def transform_member(fit: MemberFit, x: np.ndarray) -> np.ndarray:
    """The fitted :func:`fit_member` steps on new (cleaned) rows."""
    x, infs, _ = set_aside_infs(x)
    out = encode(fit.encode, reshape(fit.reshape, x[:, fit.kept]))
    if fit.svd is not None:
        out = np.hstack([out, svd_features(fit.svd, out)])
    if fit.n_cells is not None:
        out = np.hstack([out, fingerprint(out, fit.n_cells, is_test=True)[:, None]])
    if fit.order is not None:
        out = out[:, fit.order]
    return restore_infs(out, infs, fit.sources)


SVD_DIVISORS = {"svd": 2, "svd_quarter_components": 4}


def svd_components(name: str, n_samples: int, n_features: int) -> int:
    """``get_svd_n_components``: max(1, min(n // 10 + 1, F // 2 ("svd") or F // 4))."""
    if name not in SVD_DIVISORS:
        raise ValueError(f"unknown global transformer {name!r} (only {tuple(SVD_DIVISORS)})")
    return max(1, min(n_samples // 10 + 1, n_features // SVD_DIVISORS[name]))


@dataclass(frozen=True)
class SVDFit:
    """A fitted ``AddSVDFeaturesStep``: the safe scaler's statistics and the components."""

    pre_means: np.ndarray  # F: the first mean imputation
    scale: np.ndarray  # F: StandardScaler(with_mean=False)'s scale
    post_means: np.ndarray  # F: the second mean imputation (after scaling)
    components: np.ndarray  # K × F


def _scaled(fit_or_none: SVDFit | None, x: np.ndarray):
    """The safe ``StandardScaler(with_mean=False)``: ±inf → NaN, mean imputation, divide by
    the scale, ±inf → NaN, mean imputation; fitted when ``fit_or_none`` is None."""
    x = np.asfortranarray(np.where(np.isinf(x), np.nan, x))
    pre = impute_means(x) if fit_or_none is None else fit_or_none.pre_means
    x = np.asfortranarray(impute(x, pre))
    scale = standard_scaler_stats(x)[1] if fit_or_none is None else fit_or_none.scale
    x = np.asfortranarray(x / scale)
    x = np.where(np.isinf(x), np.nan, x)
    post = impute_means(x) if fit_or_none is None else fit_or_none.post_means
    return np.asfortranarray(impute(x, post)), pre, scale, post


def fit_svd(x: np.ndarray, name: str, seed: int) -> SVDFit | None:
    """Fit the step on training rows (None below 2 columns: no SVD features).

    sklearn's ``TruncatedSVD(algorithm="arpack", random_state=seed)`` on the scaled rows
    (Fortran order, as the package pins it): ``svds(X, k, tol=0, v0)`` with
    ``v0 = RandomState(seed).uniform(−1, 1, min(n, F))``, the components reversed to
    descending singular values and their signs flipped so that each row's largest |entry| is
    positive (``svd_flip(u_based_decision=False)``).
    """
    n, f = x.shape
    if f < 2:
        return None
    xs, pre, scale, post = _scaled(None, x)
    k = svd_components(name, n, f)
    v0 = np.random.RandomState(int(seed)).uniform(-1, 1, min(xs.shape))
    _, _, vt = svds(xs, k=k, tol=0.0, v0=v0)
    vt = vt[::-1]
    signs = np.sign(vt[np.arange(k), np.argmax(np.abs(vt), axis=1)])
    vt = vt * signs[:, np.newaxis]
    return SVDFit(pre_means=pre, scale=scale, post_means=post, components=vt)


def svd_features(fit: SVDFit | None, x: np.ndarray) -> np.ndarray:
    """The SVD features of rows (n × K; n × 0 without a fit): scaled rows @ components.T."""
    if fit is None:
        return np.zeros((len(x), 0))
    return _scaled(fit, x)[0] @ fit.components.T


OUTLIER_STD = 12.0
"""The classifier's soft clip (``OUTLIER_REMOVAL_STD`` "auto"); the regressor has none."""


def _nan_mean_std(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``torch_nanmean`` / ``torch_nanstd`` (n − 1, at least 1, in the divisor), in x's dtype."""
    nan = np.isnan(x)
    count = (~nan).sum(axis=0).astype(x.dtype)
    mean = np.where(nan, 0, x).sum(axis=0, dtype=x.dtype) / np.maximum(count, 1)
    sq = np.where(nan, 0, np.square(x - mean)).sum(axis=0, dtype=x.dtype)
    return mean, np.sqrt(sq / np.maximum(count - 1, 1))


def soft_clip_bounds(x_train: np.ndarray, n_sigma: float = OUTLIER_STD):
    """``TorchSoftClipOutliers.fit``: mean ± n_sigma·std of the training rows, then again
    with the cells outside those bounds set to NaN (±inf bounds for ≤ 1 row)."""
    if len(x_train) <= 1:
        inf = np.full(x_train.shape[1:], np.inf, dtype=x_train.dtype)
        return -inf, inf
    mean, std = _nan_mean_std(x_train)
    cut = std * x_train.dtype.type(n_sigma)
    out = (x_train > mean + cut) | (x_train < mean - cut)
    mean, std = _nan_mean_std(np.where(out, np.nan, x_train).astype(x_train.dtype))
    cut = std * x_train.dtype.type(n_sigma)
    return mean - cut, mean + cut


def soft_clip(x: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """``max(−log(1 + |x|) + lower, x)``, then ``min(log(1 + |·|) + upper, ·)`` (NaN kept)."""
    low = np.maximum(-np.log(1 + np.abs(x)) + lower, x)
    return np.minimum(np.log(1 + np.abs(low)) + upper, low)


def model_input(fit: MemberFit, x_train: np.ndarray, x_test: np.ndarray,
                outlier_std: float | None = OUTLIER_STD) -> np.ndarray:
    """A member's model input (float32, train then test rows) from its CPU pipeline's rows:
    cast to float32, then (``outlier_std`` not None) the soft clip on the numerical columns,
    its bounds from the training rows — as the package's torch step does it in float32, so
    equal to it up to float32 summation order, not bit for bit."""
    x = np.vstack([x_train, x_test]).astype(np.float32)
    if outlier_std is None:
        return x
    num = np.setdiff1d(np.arange(x.shape[1]), fit.categorical)
    lower, upper = soft_clip_bounds(x[: len(x_train)][:, num], outlier_std)
    x[:, num] = soft_clip(x[:, num], lower, upper)
    return x
