"""TabICL's ensemble around the raw model, as ``tabicl`` 2.2.0's sklearn wrappers build it.

``TabICLClassifier`` / ``TabICLRegressor`` never show the model the data as given: they
fit a few preprocessing pipelines (:mod:`.preprocessing`), draw feature permutations and
(for classification) circular class shifts with Python's ``random.Random(random_state)``,
run the model once per member and combine the members' outputs. This module reproduces
that for numeric float features (defined in docs/models.md, "TabICL preprocessing and
ensemble"):

* :func:`fit_members` — what ``fit`` prepares: an :class:`EnsemblePlan`;
* :func:`member_inputs` — per member, the float32 rows (train then test) and the train
  targets the model gets, with its feature permutation and class shift;
* :func:`aggregate_proba` — the classifier's ``predict_proba`` from the members' logits;
* :func:`quantile_summary` and :func:`aggregate_regression` (or both at once,
  :func:`predict_regression`) — the regressor's ``predict`` from the members' raw
  quantiles.

The draws' shuffler and the final softmax are shared with Google TabFM
(:mod:`arenalite.models.wrapper_ensemble`).

Members are grouped by normalisation method in the order of first appearance in
``norm_methods`` (the package orders the groups by iterating a Python ``set`` of the
method names, which varies with PYTHONHASHSEED; the ensemble average does not depend on
it beyond float rounding).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..preprocess import feature_matrix
from ..wrapper_ensemble import (
    SHUFFLE_METHODS,
    SOFTMAX_TEMPERATURE,
    latin_square,  # noqa: F401  (re-exported: the draws' pieces)
    shuffle_patterns,
    softmax,
)
from .preprocessing import (
    NORM_METHODS,
    PipelineFit,
    fit_pipeline,
    impute,
    impute_means,
    kept_features,
    transform,
)

TASKS = ("binary", "multiclass", "regression")
DEFAULT_NORM_METHODS = ("none", "power")
MAX_CLASSES = 10
"""Classes the v2 classifier checkpoint handles natively (its ``max_classes``)."""
DEFAULT_ALPHAS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The regressor's default probability levels for ``output_type="quantiles"``."""
NUM_QUANTILES = 999
"""Raw quantiles the v2 regressor checkpoint predicts per test row."""
TAIL_QUANTILES = 20
"""Quantiles per tail in the exponential tail fit of the quantile distribution."""
TOL = 1e-6
MIN_BETA, MAX_BETA = 0.01, 100.0
OUTPUT_TYPES = ("mean", "variance", "median", "quantiles", "raw_quantiles")


@dataclass(frozen=True)
class EnsemblePlan:
    """Everything ``fit`` prepares: imputation, kept columns, pipelines and the members."""

    task: str
    n_features_in: int  # columns of X_train as given
    imputer_means: np.ndarray  # n_features_in, float64
    features: np.ndarray  # n_features_in, bool: columns kept (more than one distinct value)
    pipelines: dict[str, PipelineFit]  # normalisation method → fitted pipeline
    methods: tuple[str, ...]  # per member, its normalisation method
    feature_perms: np.ndarray  # members × F_kept, int64: member column j = kept column perm[j]
    class_perms: np.ndarray | None  # members × C, int64: original class c is shown as perm[c]
    classes: np.ndarray | None  # C: the sorted distinct training labels (LabelEncoder)
    y_train: np.ndarray  # n: encoded labels 0 … C−1 (int64) or standardized targets (float32)
    y_mean: float | None  # regression: the target scaler's mean (float64)
    y_scale: float | None  # regression: the target scaler's scale (float64)

    @property
    def n_members(self) -> int:
        return len(self.methods)

    @property
    def n_train(self) -> int:
        return len(self.y_train)

    @property
    def n_classes(self) -> int | None:
        return None if self.classes is None else len(self.classes)

    @property
    def many_classes(self) -> bool:
        """More classes than the checkpoint's native 10 (the model's hierarchical mode)."""
        return self.classes is not None and len(self.classes) > MAX_CLASSES


@dataclass(frozen=True)
class MemberInputs:
    """The model's inputs, one row of the first axis per member, in plan order."""

    x: np.ndarray  # members × (n_train + n_test) × F_kept, float32
    y_train: np.ndarray  # members × n_train, float32
    feature_perms: np.ndarray  # members × F_kept, int64
    class_perms: np.ndarray | None  # members × C, int64
    methods: tuple[str, ...]
    n_train: int


# ---- the RNG draws (Shuffler and EnsembleGenerator._generate_ensemble) ----

def draw_members(n_features: int, n_classes: int | None, n_estimators: int,
                 norm_methods: Sequence[str], feat_shuffle_method: str,
                 class_shuffle_method: str, random_state: int | None
                 ) -> list[tuple[str, list[int], list[int] | None]]:
    """(method, feature permutation, class permutation) per member, in plan order.

    Every (feature pattern, class pattern) pair, the feature patterns outermost, is
    shuffled by a third ``random.Random(random_state)``; each pair is then taken with
    every method in turn and the first n_estimators (pair, method) combinations are the
    members, grouped by method.
    """
    feats = shuffle_patterns(n_features, feat_shuffle_method, n_estimators, random_state)
    classes = [None] if n_classes is None else \
        shuffle_patterns(n_classes, class_shuffle_method, n_estimators, random_state)
    configs = list(itertools.product(feats, classes))
    random.Random(random_state).shuffle(configs)
    chosen = list(itertools.product(configs, norm_methods))[:n_estimators]
    order = list(dict.fromkeys(method for _, method in chosen))
    return [(method, feat, cls) for group in order
            for (feat, cls), method in chosen if method == group]


# ---- input checks ----

def _matrix(x: object, name: str) -> np.ndarray:
    try:
        return feature_matrix(x, name, allow_nan=True)
    except TypeError as error:
        raise TypeError(f"{error} (categorical or string columns are not supported)") from None


def _targets(y: object, n_rows: int, task: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y_train must be 1-dimensional, got shape {y.shape}")
    if len(y) != n_rows:
        raise ValueError(f"y_train has {len(y)} values but X_train has {n_rows} rows")
    numeric = np.issubdtype(y.dtype, np.number) and not np.issubdtype(y.dtype, np.complexfloating)
    if task == "regression":
        if not numeric or y.dtype == np.bool_:
            raise TypeError(f"y_train must be a real numeric array for task 'regression', "
                            f"got dtype {y.dtype}")
    elif not (numeric or y.dtype.kind in "bU"):
        raise TypeError(f"y_train must hold numeric or string class labels, got dtype {y.dtype}")
    if numeric:
        with np.errstate(over="ignore"):
            bad = ~np.isfinite(y.astype(np.float32) if task == "regression" else y)
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(f"y_train has a non-finite value {y[row].item()!r} in row {row}"
                             + (" (as float32)" if task == "regression" else ""))
        if task != "regression" and np.issubdtype(y.dtype, np.floating):
            frac = y != np.round(y)
            if frac.any():
                row = int(np.argmax(frac))
                raise ValueError(f"y_train must hold class labels for task {task!r}; row {row} "
                                 f"has the non-integer {y[row].item()!r}")
    return y


def _methods(norm_methods: object) -> tuple[str, ...]:
    if not norm_methods:  # the wrappers pass ``norm_methods or ["none", "power"]``
        return DEFAULT_NORM_METHODS
    methods = (norm_methods,) if isinstance(norm_methods, str) else tuple(norm_methods)
    for m in methods:
        if m not in NORM_METHODS:
            raise ValueError(f"norm_methods may hold only {NORM_METHODS} (the quantile and "
                             f"robust methods are not reproduced), got {m!r}")
    return methods


def _check_options(n_estimators: object, feat_shuffle_method: object,
                   class_shuffle_method: object, outlier_threshold: object,
                   random_state: object) -> tuple[int, float, int | None]:
    if isinstance(n_estimators, bool) or not isinstance(n_estimators, int | np.integer):
        raise TypeError(f"n_estimators must be an integer, got {n_estimators!r}")
    if n_estimators < 1:
        raise ValueError(f"n_estimators must be at least 1, got {n_estimators}")
    for name, value in (("feat_shuffle_method", feat_shuffle_method),
                        ("class_shuffle_method", class_shuffle_method)):
        if value not in SHUFFLE_METHODS:
            raise ValueError(f"{name} must be one of {SHUFFLE_METHODS}, got {value!r}")
    if isinstance(outlier_threshold, bool) or not isinstance(outlier_threshold,
                                                             int | float | np.number):
        raise TypeError(f"outlier_threshold must be a number, got {outlier_threshold!r}")
    if not (math.isfinite(outlier_threshold) and outlier_threshold > 0):
        raise ValueError("outlier_threshold must be positive and finite, "
                         f"got {outlier_threshold!r}")
    if random_state is not None and (isinstance(random_state, bool)
                                     or not isinstance(random_state, int | np.integer)):
        raise TypeError(f"random_state must be an integer or None, got {random_state!r}")
    return int(n_estimators), float(outlier_threshold), \
        None if random_state is None else int(random_state)


# ---- fit: the plan ----

def scale_targets(y: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The regressor's target scaling: y as float32, sklearn ``StandardScaler`` on it.

    Mean and variance accumulate in float64 (corrected two-pass); scale is 1 for a
    (near-)constant target. The scaled target is computed in float32 as sklearn does:
    (y − float32(mean)) / float32(scale), each step rounded to float32.
    """
    col = np.asarray(y, dtype=np.float32).reshape(-1, 1)
    n = col.shape[0]
    total = np.sum(col.astype(np.float64), axis=0)
    count = np.full(1, float(n))
    mean = total / count
    temp = col - total / count
    correction = np.sum(temp, axis=0)
    temp **= 2
    var = (np.sum(temp, axis=0) - correction ** 2 / count) / count
    eps = np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scale = np.where(constant, 1.0, np.sqrt(var))
    scaled = col - mean.astype(np.float32)
    scaled /= scale.astype(np.float32)
    return scaled.ravel(), float(mean[0]), float(scale[0])


def fit_members(X_train: object, y_train: object, task: str, n_estimators: int = 8,
                norm_methods: str | Sequence[str] | None = None,
                feat_shuffle_method: str = "latin", class_shuffle_method: str = "shift",
                outlier_threshold: float = 4.0, random_state: int | None = 42,
                support_many_classes: bool = True) -> EnsemblePlan:
    """What ``TabICLClassifier.fit`` / ``TabICLRegressor.fit`` prepare, for float features.

    X_train: n × F numbers (NaN allowed, no ±inf). y_train: class labels (task "binary" or
    "multiclass"; encoded as their rank among the sorted distinct labels) or real targets
    ("regression"; scaled by :func:`scale_targets`). The defaults are the wrappers'.
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    n_est, threshold, seed = _check_options(n_estimators, feat_shuffle_method,
                                            class_shuffle_method, outlier_threshold,
                                            random_state)
    methods = _methods(norm_methods)
    x = _matrix(X_train, "X_train")
    y = _targets(y_train, x.shape[0], task)
    classes = y_mean = y_scale = None
    if task == "regression":
        targets, y_mean, y_scale = scale_targets(y)
    else:
        classes, targets = np.unique(y, return_inverse=True)
        targets = targets.astype(np.int64).ravel()
        if len(classes) < 2:
            raise ValueError(f"y_train has a single class {classes[0].item()!r}; "
                             "classification needs at least 2")
        if task == "binary" and len(classes) != 2:
            raise ValueError(f"task 'binary' needs exactly 2 classes, y_train has {len(classes)}")
        if len(classes) > MAX_CLASSES and not support_many_classes:
            raise ValueError(f"y_train has {len(classes)} classes, more than the "
                             f"{MAX_CLASSES} the model supports natively, and "
                             "support_many_classes is False")
    means = impute_means(x)
    x = impute(x, means)
    features = kept_features(x)
    x = x[:, features]
    members = draw_members(x.shape[1], None if classes is None else len(classes), n_est,
                           methods, feat_shuffle_method, class_shuffle_method, seed)
    used = tuple(m for m, _, _ in members)
    pipelines = {m: fit_pipeline(x, m, threshold) for m in dict.fromkeys(used)}
    feature_perms = np.array([f for _, f, _ in members], dtype=np.int64)
    class_perms = None if classes is None else np.array([c for _, _, c in members],
                                                        dtype=np.int64)
    return EnsemblePlan(task, features.size, means, features, pipelines, used, feature_perms,
                        class_perms, classes, targets, y_mean, y_scale)


# ---- predict: the members' inputs ----

def member_inputs(plan: EnsemblePlan, X_test: object) -> MemberInputs:
    """Per member (plan order), the model's X (train rows then test rows) and y_train.

    X[i] = concat(train, test) of member i's pipeline, columns in order
    ``feature_perms[i]``, as float32; y_train[i] = ``class_perms[i][label]`` for
    classification, the scaled target for regression, as float32.
    """
    x = _matrix(X_test, "X_test")
    if x.shape[1] != plan.n_features_in:
        raise ValueError(f"X_test has {x.shape[1]} feature columns but X_train had "
                         f"{plan.n_features_in}")
    x = impute(x, plan.imputer_means)[:, plan.features]
    m, f = plan.n_members, plan.feature_perms.shape[1]
    out = np.empty((m, plan.n_train + x.shape[0], f), dtype=np.float32)
    methods = np.array(plan.methods)
    for method, fit in plan.pipelines.items():  # one or two pipelines, no loop over rows
        rows = np.concatenate([fit.x_train, transform(fit, x)], axis=0)
        idx = np.flatnonzero(methods == method)
        out[idx] = rows[:, plan.feature_perms[idx]].transpose(1, 0, 2)
    if plan.class_perms is None:
        y = np.broadcast_to(plan.y_train.astype(np.float32), (m, plan.n_train)).copy()
    else:
        y = np.take_along_axis(plan.class_perms, plan.y_train[np.newaxis, :].repeat(m, 0),
                               axis=1).astype(np.float32)
    return MemberInputs(out, y, plan.feature_perms, plan.class_perms, plan.methods,
                        plan.n_train)


def model_batches(plan: EnsemblePlan, batch_size: int | None = 8) -> list[np.ndarray]:
    """The members of each model call, as the wrappers batch them (``batch_size=8``).

    Per method group, ``np.array_split`` of its members into ceil(size / batch_size)
    calls. Matters for the classifier's column-embedding reuse across one call's tables
    (``feature_shuffles``), which applies only when the checkpoint groups no features.
    """
    methods = np.array(plan.methods)
    batches = []
    for method in dict.fromkeys(plan.methods):
        idx = np.flatnonzero(methods == method)
        size = batch_size or len(idx)
        batches.extend(np.array_split(idx, int(np.ceil(len(idx) / size))))
    return batches


# ---- after the model: classification ----

def _outputs(outputs: object, plan: EnsemblePlan, name: str, ndim: int) -> np.ndarray:
    arr = np.asarray(outputs)
    if arr.dtype == object or arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number) \
            or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != ndim or arr.shape[0] != plan.n_members:
        raise ValueError(f"{name} must have {ndim} axes, the first of {plan.n_members} members, "
                         f"got shape {arr.shape}")
    arr = arr.astype(np.float32)
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} has a non-finite value {arr[where].item()!r} at {where}")
    return arr


def unshift(outputs: np.ndarray, class_perms: np.ndarray) -> np.ndarray:
    """out[i][..., class_perms[i]]: member i's columns back in the original class order."""
    index = class_perms[:, np.newaxis, :].repeat(outputs.shape[1], axis=1)
    return np.take_along_axis(outputs, index, axis=2)


def aggregate_proba(outputs: object, plan: EnsemblePlan,
                    softmax_temperature: float = SOFTMAX_TEMPERATURE,
                    average_logits: bool = True) -> np.ndarray:
    """``predict_proba`` (n_test × C, float32) from the members' outputs (plan order).

    outputs: members × n_test × C, each member's logits over its shifted classes (the
    model's ``return_logits=True``; for more than 10 classes the model's
    temperature·log(p + 1e-6)), or its probabilities when ``average_logits`` is False.
    Un-shift, average over members in float32, then softmax(avg / temperature) when
    averaging logits, and divide each row by its sum.
    """
    if plan.class_perms is None:
        raise ValueError("aggregate_proba needs a classification plan; this one is regression")
    arr = _outputs(outputs, plan, "outputs", 3)
    if arr.shape[2] != plan.n_classes:
        raise ValueError(f"outputs have {arr.shape[2]} classes on their last axis, the plan "
                         f"{plan.n_classes}")
    if not (isinstance(softmax_temperature, int | float | np.number)
            and not isinstance(softmax_temperature, bool)):
        raise TypeError(f"softmax_temperature must be a number, got {softmax_temperature!r}")
    if not (math.isfinite(softmax_temperature) and softmax_temperature > 0):
        raise ValueError(f"softmax_temperature must be positive and finite, "
                         f"got {softmax_temperature!r}")
    aligned = unshift(arr, plan.class_perms)
    avg = np.zeros_like(aligned[0])
    for member in aligned:  # float32, member by member, as the wrapper adds them
        avg += member
    avg /= plan.n_members
    if average_logits:
        avg = softmax(avg, float(softmax_temperature))
    return avg / avg.sum(axis=1, keepdims=True)


# ---- after the model: regression ----

def default_alpha_levels(n_quantiles: int = NUM_QUANTILES) -> np.ndarray:
    """float32((k + 1) / (n + 1)), k = 0 … n−1: the quantile levels of the raw outputs.

    The model builds them with ``torch.linspace(0, 1, n + 2)[1:-1]`` in float32, which
    differs from these by one ulp at some levels, depending on the CPU kernel; pass
    torch's values as ``alpha_levels`` to match it bit for bit.
    """
    return ((np.arange(n_quantiles) + 1) / (n_quantiles + 1)).astype(np.float32)


def _tail_betas(q: np.ndarray, levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exponential tail scales: |slope| of q on ln α (left) and ln(1−α) (right), clamped."""
    k = min(TAIL_QUANTILES, q.shape[-1] // 4)
    betas = []
    for lvl, qs, sign in ((np.log(np.maximum(levels[:k], np.float32(TOL))), q[..., :k], 1),
                          (np.log(np.maximum(1 - levels[-k:], np.float32(TOL))), q[..., -k:], -1)):
        lc = lvl - lvl.mean()
        qc = qs - qs.mean(axis=-1, keepdims=True)
        beta = sign * (qc * lc).mean(axis=-1) / np.maximum((lc ** 2).mean(), np.float32(TOL))
        betas.append(np.clip(np.abs(beta), np.float32(MIN_BETA), np.float32(MAX_BETA)))
    return betas[0], betas[1]


def quantile_icdf(q: np.ndarray, alpha: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The model's quantile distribution's Q(α) (exponential tails), float32.

    q: … × n sorted quantiles at ``levels``; alpha: k levels → … × k. Linear between
    knots inside [α_1, α_n]; below, β_L·ln α + (q_1 − β_L·ln α_1); above,
    −β_R·ln(1 − α) + (q_n + β_R·ln(1 − α_n)).
    """
    f32 = np.float32
    a_l, a_r = float(levels[0]), float(levels[-1])
    beta_l, beta_r = _tail_betas(q, levels)
    q_l, q_r = q[..., 0], q[..., -1]
    b_l = q_l - beta_l * np.log(f32(max(a_l, TOL)))
    b_r = q_r + beta_r * np.log(f32(1 - min(a_r, 1 - TOL)))
    alpha = np.asarray(alpha, dtype=np.float32)
    left = beta_l[..., None] * np.log(np.maximum(alpha, f32(TOL))) + b_l[..., None]
    right = -beta_r[..., None] * np.log(np.maximum(f32(1) - alpha, f32(TOL))) + b_r[..., None]
    seg = np.clip(np.searchsorted(levels[:-1], alpha, side="right") - 1, 0, len(levels) - 2)
    lo, hi = levels[seg], levels[seg + 1]
    t = (alpha - lo) / np.maximum(hi - lo, f32(TOL))
    q_lo, q_hi = q[..., seg], q[..., seg + 1]
    spline = q_lo + np.clip(t, f32(0), f32(1)) * (q_hi - q_lo)
    spline = np.where(alpha >= a_r, q_r[..., None], spline)
    return np.where(alpha < a_l, left, np.where(alpha > a_r, right, spline)).astype(np.float32)


def quantile_summary(raw_quantiles: object, output_type: str = "mean",
                     alphas: Sequence[float] | None = None,
                     alpha_levels: np.ndarray | None = None) -> np.ndarray:
    """``TabICL.predict_stats`` of one output type from raw quantiles (… × n), float32.

    The quantiles are sorted first. "mean" / "variance": their mean / unbiased variance
    (accumulated in float64, then float32); "median": Q(0.5); "quantiles": Q at
    ``alphas`` (default 0.1 … 0.9) → … × len(alphas); "raw_quantiles": the sorted ones.
    """
    if output_type not in OUTPUT_TYPES:
        raise ValueError(f"output_type must be one of {OUTPUT_TYPES}, got {output_type!r}")
    q = np.sort(np.asarray(raw_quantiles, dtype=np.float32), axis=-1)
    levels = default_alpha_levels(q.shape[-1]) if alpha_levels is None \
        else np.asarray(alpha_levels, dtype=np.float32)
    if levels.shape != (q.shape[-1],):
        raise ValueError(f"alpha_levels must have {q.shape[-1]} values, got shape {levels.shape}")
    if output_type == "mean":
        return np.mean(q, axis=-1, dtype=np.float64).astype(np.float32)
    if output_type == "variance":
        return np.var(q, axis=-1, ddof=1, dtype=np.float64).astype(np.float32)
    if output_type == "median":
        return quantile_icdf(q, np.array([0.5], dtype=np.float32), levels)[..., 0]
    if output_type == "quantiles":
        a = np.asarray(DEFAULT_ALPHAS if alphas is None else alphas, dtype=np.float64)
        if a.ndim != 1 or a.size == 0 or not np.all((a >= 0) & (a <= 1)):
            raise ValueError(f"alphas must be a non-empty list of levels in [0, 1], got {alphas!r}")
        return quantile_icdf(q, a.astype(np.float32), levels)
    return q


def aggregate_regression(stats: object, plan: EnsemblePlan) -> np.ndarray:
    """The regressor's ``predict`` value from per-member statistics (plan order).

    stats: members × n_test (mean, variance, median) or members × n_test × k (quantiles,
    raw quantiles), in the scaled target space. Each value v becomes
    v·float32(scale) + float32(mean) in float32 (the target scaler's inverse, applied to
    every output type alike, the variance included), then the members are averaged.
    """
    if plan.y_scale is None:
        raise ValueError("aggregate_regression needs a regression plan; this one classifies")
    arr = np.asarray(stats)
    arr = _outputs(arr, plan, "stats", arr.ndim if arr.ndim in (2, 3) else 2)
    flat = arr.reshape(-1, 1)
    flat *= np.float32(plan.y_scale)
    flat += np.float32(plan.y_mean)
    return np.mean(flat.reshape(arr.shape), axis=0)


def predict_regression(raw_quantiles: object, plan: EnsemblePlan,
                       output_type: str | Sequence[str] = "mean",
                       alphas: Sequence[float] | None = None,
                       alpha_levels: np.ndarray | None = None
                       ) -> np.ndarray | dict[str, np.ndarray]:
    """``TabICLRegressor.predict(X, output_type, alphas)`` from the members' raw quantiles.

    raw_quantiles: members × n_test × n_quantiles, the model's output per member (plan
    order). A single output type gives its array, a list a dict by type.
    """
    raw = _outputs(raw_quantiles, plan, "raw_quantiles", 3)
    types = [output_type] if isinstance(output_type, str) else list(output_type)
    out = {t: aggregate_regression(quantile_summary(raw, t, alphas, alpha_levels), plan)
           for t in types}
    return out[types[0]] if isinstance(output_type, str) else out
