"""Google TabFM's ensemble around the raw model, as ``tabfm`` 1.0.1's wrappers build it.

``TabFMClassifier`` / ``TabFMRegressor`` (their default path, not the ``ensemble``
preset) show the model ``n_estimators`` views of the data (defined in docs/models.md,
"Google TabFM (tabfm)", "Preprocessing and ensemble"):

* :func:`fit_members` — what ``fit`` prepares (an :class:`EnsemblePlan`): the class
  labels as their rank, the unique-feature filter, the members' feature permutations
  (the shared shuffler of :mod:`arenalite.models.wrapper_ensemble`, or, with more columns
  than ``max_num_features``, a column subsample per member), the class shifts, the
  normalisation method of each member and its fitted pipeline;
* :func:`member_inputs` — per member, the float rows (train then test), columns
  permuted and zero-padded to the widest member, its active feature count ``d``, its
  categorical mask and its (shifted or scaled) targets;
* :func:`aggregate_proba` — ``predict_proba`` from the members' logits;
* :func:`aggregate_regression` — ``predict`` from the members' scaled predictions.

The draws: one ``random.Random(random_state)`` (the generator's) gives, in order, the
column subsamples when subsampling, the class offsets ``rng.sample(range(C), C)`` cycled
over the members, then a shuffle of the members' (permutation, offset) pairs; without
subsampling the permutations come from the shuffler's own ``random.Random(random_state)``
(cycled when there are fewer than ``n_estimators``). Member i takes method
``norm_methods[i % 2]``; the members run grouped by method, "none" first.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..wrapper_ensemble import shuffle_patterns, softmax
from .preprocessing import PipelineFit, fit_pipeline, scale_targets, transform, unique_filter

TASKS = ("binary", "multiclass", "regression")
DEFAULT_NORM_METHODS = ("none", "power")
SOFTMAX_TEMPERATURE = 0.9
MAX_NUM_FEATURES = 500
"""The wrappers' ``max_num_features``: wider tables are column-subsampled per member."""

PORTED_OPTIONS = {"n_estimators": 32, "norm_methods": None, "feat_shuffle_method": "random",
                  "class_shift": True, "outlier_threshold": 4.0, "max_num_features": 500,
                  "softmax_temperature": 0.9, "average_logits": True, "random_state": 42}
"""The wrappers' options this port follows, with the package's defaults."""
IGNORED_OPTIONS = ("use_amp", "batch_size", "verbose", "num_folds_for_cv", "nnls_beta",
                   "calibration_lambda", "min_rows_for_single_val_split")
"""Options that do not change the default path's predictions (precision and batching of
the torch/JAX call, logging, and settings of the unported NNLS/calibration)."""
UNPORTED_OPTIONS = {
    "norm_methods": "the 'quantile', 'quantile_rtdl' and 'robust' normalisations",
    "feat_shuffle_method": "feature shuffles other than 'random' and 'none'",
    "permute_categorical": "the per-member permutation of categorical values",
    "max_num_rows": "the per-member row subsample",
    "n_feature_crosses": "the feature crosses of the 'ensemble' preset",
    "n_svd_features": "the SVD features of the 'ensemble' preset",
    "total_svd_pool": "the SVD features of the 'ensemble' preset",
    "enable_nnls": "the NNLS member weights of the 'ensemble' preset",
    "binary_calibration_method": "the Platt calibration of the 'ensemble' preset",
    "multiclass_calibration_method": "the vector calibration of the 'ensemble' preset",
    "cat_encoder_mode": "categorical codes in 'frequency' or 'alphabetical' order",
    "ensemble": "the 'ensemble' preset (TabFMClassifier.ensemble / TabFMRegressor.ensemble)",
}
"""The wrappers' options this port refuses when set to anything but their default path."""
_DEFAULT_PATH = {"permute_categorical": False, "max_num_rows": None, "n_feature_crosses": 0,
                 "n_svd_features": 0, "total_svd_pool": None, "enable_nnls": False,
                 "binary_calibration_method": None, "multiclass_calibration_method": None,
                 "cat_encoder_mode": "appearance", "ensemble": False}


@dataclass(frozen=True)
class Settings:
    """The ported options of the wrappers' default path (the package's defaults)."""

    n_estimators: int = 32
    norm_methods: tuple[str, ...] = DEFAULT_NORM_METHODS
    feat_shuffle_method: str = "random"
    class_shift: bool = True
    outlier_threshold: float = 4.0
    max_num_features: int | None = MAX_NUM_FEATURES
    softmax_temperature: float = SOFTMAX_TEMPERATURE
    average_logits: bool = True
    random_state: int | None = 42


def _number(name: str, value: object, integer: bool, low: float) -> None:
    ok = not isinstance(value, bool) and isinstance(
        value, (int, np.integer) if integer else (int, float, np.number))
    if not ok or not math.isfinite(value) or value < low or (not integer and value <= 0):
        kind = "an integer" if integer else "a positive finite number"
        raise ValueError(f"tabfm option {name!r} must be {kind}"
                         + (f" ≥ {low}" if integer else "") + f", got {value!r}")


def settings_from(options: Mapping[str, object]) -> Settings:
    """The :class:`Settings` of ``TabFMClassifier``/``TabFMRegressor`` keyword arguments.

    A ported option is checked; an ignored one passes; an unported one set to anything but
    the default path's value is refused by name (``ValueError``), as is an unknown name.
    """
    values = dict(PORTED_OPTIONS)
    for key, value in options.items():
        if key in IGNORED_OPTIONS:
            continue
        if key in _DEFAULT_PATH:
            if value != _DEFAULT_PATH[key]:
                raise ValueError(f"tabfm option {key}={value!r} is not ported to arenalite "
                                 f"({UNPORTED_OPTIONS[key]}); arenalite runs the wrappers' "
                                 f"default path, {key}={_DEFAULT_PATH[key]!r}")
            continue
        if key not in PORTED_OPTIONS:
            raise ValueError(f"unknown tabfm option {key!r}; the wrappers' options are "
                             f"{sorted([*PORTED_OPTIONS, *IGNORED_OPTIONS, *_DEFAULT_PATH])}")
        values[key] = value
    methods = values["norm_methods"] or DEFAULT_NORM_METHODS
    methods = (methods,) if isinstance(methods, str) else tuple(methods)
    bad = [m for m in methods if m not in ("none", "power")]
    if bad or not methods:
        raise ValueError(f"tabfm option norm_methods={values['norm_methods']!r} is not ported "
                         f"to arenalite ({UNPORTED_OPTIONS['norm_methods']}); it runs 'none' "
                         "and 'power'")
    if values["feat_shuffle_method"] not in ("random", "none"):
        raise ValueError(f"tabfm option feat_shuffle_method={values['feat_shuffle_method']!r} "
                         "is not a method of the package's FeatureShuffler ('random', 'none')")
    _number("n_estimators", values["n_estimators"], True, 1)
    _number("outlier_threshold", values["outlier_threshold"], False, 0)
    _number("softmax_temperature", values["softmax_temperature"], False, 0)
    if values["max_num_features"] is not None:
        _number("max_num_features", values["max_num_features"], True, 1)
    if values["random_state"] is not None:
        _number("random_state", values["random_state"], True, 0)
    for key in ("class_shift", "average_logits"):
        if not isinstance(values[key], bool | np.bool_):
            raise ValueError(f"tabfm option {key!r} must be true or false, got {values[key]!r}")
    return Settings(int(values["n_estimators"]), methods, values["feat_shuffle_method"],
                    bool(values["class_shift"]), float(values["outlier_threshold"]),
                    None if values["max_num_features"] is None
                    else int(values["max_num_features"]),
                    float(values["softmax_temperature"]), bool(values["average_logits"]),
                    None if values["random_state"] is None else int(values["random_state"]))


@dataclass(frozen=True)
class EnsemblePlan:
    """Everything ``fit`` prepares, members in the order the model runs them."""

    task: str
    n_features_in: int  # columns of the numeric table as given
    n_categorical: int  # its leading categorical columns
    features: np.ndarray  # n_features_in, bool: columns kept by the unique filter
    categorical: np.ndarray  # F_kept, bool: kept columns that are categorical
    pipelines: dict[str, PipelineFit]  # normalisation method → fitted pipeline
    methods: tuple[str, ...]  # per member
    patterns: np.ndarray  # members × d, int64: member column j = kept column patterns[i, j]
    offsets: np.ndarray  # members, int64: class shift (0 for regression)
    classes: np.ndarray | None  # C sorted distinct labels (classification)
    y_train: np.ndarray  # n: label ranks (int64) or scaled targets (float64)
    y_mean: float | None
    y_scale: float | None

    @property
    def n_members(self) -> int:
        return len(self.methods)

    @property
    def n_train(self) -> int:
        return len(self.y_train)

    @property
    def n_classes(self) -> int:
        return 0 if self.classes is None else len(self.classes)


def draw_members(n_features: int, n_classes: int, settings: Settings
                 ) -> list[tuple[str, list[int], int]]:
    """(method, feature pattern, class offset) per member, in the order the model runs them
    (module docstring)."""
    n_est, seed = settings.n_estimators, settings.random_state
    rng = random.Random(seed)
    n_cols = n_features if settings.max_num_features is None \
        else min(n_features, settings.max_num_features)
    if n_cols < n_features:
        patterns = []
        for _ in range(n_est):
            cols = rng.sample(range(n_features), n_cols)
            patterns.append(rng.sample(cols, len(cols)))
    else:
        patterns = shuffle_patterns(n_features, settings.feat_shuffle_method, n_est, seed)
        if len(patterns) < n_est:
            cycles = -(-n_est // len(patterns))
            patterns = (patterns * cycles)[:n_est]
    if settings.class_shift and n_est > 1 and n_classes > 1:
        base = rng.sample(range(n_classes), n_classes)
        offsets = (base * -(-n_est // len(base)))[:n_est]
    else:
        offsets = [0] * n_est
    pairs = list(zip(patterns, offsets, strict=True))
    rng.shuffle(pairs)
    methods = settings.norm_methods
    assigned = [(methods[i % len(methods)], pattern, offset)
                for i, (pattern, offset) in enumerate(pairs)]
    return [member for method in methods for member in assigned if member[0] == method]


def check_classes(n_classes: int, max_classes: int) -> None:
    """The package's refusal of a target with more classes than the checkpoint's
    ``max_classes``."""
    if n_classes > max_classes:
        raise ValueError(f"The number of classes ({n_classes}) exceeds the maximum number "
                         f"of classes ({max_classes}) supported by the model.")


def _labels(y: np.ndarray, task: str, max_classes: int | None) -> tuple[np.ndarray, np.ndarray]:
    classes, ranks = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y_train has a single class {classes[0].item()!r}; classification "
                         "needs at least 2")
    if task == "binary" and len(classes) != 2:
        raise ValueError(f"task 'binary' needs exactly 2 classes, y_train has {len(classes)}")
    if max_classes is not None:
        check_classes(len(classes), max_classes)
    return classes, ranks.astype(np.int64).ravel()


def fit_members(x_train: np.ndarray, y_train: np.ndarray, task: str, n_categorical: int = 0,
                settings: Settings = Settings(), max_classes: int | None = None
                ) -> EnsemblePlan:
    """What ``TabFMClassifier.fit`` / ``TabFMRegressor.fit`` prepare.

    x_train: the numeric table (n × F float64, no NaN: :func:`.preprocessing.numeric_table`
    of a DataFrame, or the numbers as given), its first ``n_categorical`` columns
    categorical codes. y_train: class labels (ranked among the sorted distinct labels;
    more than ``max_classes`` of them refused with the package's message) or real targets
    (scaled by :func:`.preprocessing.scale_targets`).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    x = np.asarray(x_train, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"X_train must be a 2-D table with columns, got shape {x.shape}")
    bad = ~np.isfinite(x)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"X_train has a non-finite value {x[row, col].item()!r} in row {row}, "
                         f"column {col}; the package refuses NaN and infinity in an array")
    y = np.asarray(y_train)
    if len(y) != x.shape[0]:
        raise ValueError(f"y_train has {len(y)} values but X_train has {x.shape[0]} rows")
    classes = y_mean = y_scale = None
    if task == "regression":
        targets, y_mean, y_scale = scale_targets(y)
    else:
        classes, targets = _labels(y, task, max_classes)
    features = unique_filter(x)
    if not features.any():
        raise ValueError("every column of X_train holds a single value in the context rows; "
                         "the package's unique-feature filter leaves the model no feature")
    x = x[:, features]
    categorical = (np.arange(features.size) < n_categorical)[features]
    members = draw_members(x.shape[1], 0 if classes is None else len(classes), settings)
    methods = tuple(m for m, _, _ in members)
    pipelines = {m: fit_pipeline(x, m, settings.outlier_threshold)
                 for m in dict.fromkeys(methods)}
    return EnsemblePlan(task, features.size, int(n_categorical), features, categorical,
                        pipelines, methods, np.array([p for _, p, _ in members], dtype=np.int64),
                        np.array([o for _, _, o in members], dtype=np.int64), classes, targets,
                        y_mean, y_scale)


@dataclass(frozen=True)
class MemberInputs:
    """The model's inputs per member, in plan order; each member's table is made when asked
    for (:meth:`member_x`), so that only the pipelines' outputs are held at once."""

    rows: dict[str, np.ndarray]  # method → (n_train + n_test) × F′ float32 pipeline output
    methods: tuple[str, ...]
    patterns: np.ndarray  # members × d, int64
    width: int  # the widest member's column count (the batch's padded width)
    y_train: np.ndarray  # members × n_train, float32
    d: np.ndarray  # members, int64: active (unpadded) feature count
    cat_mask: np.ndarray  # members × width, bool
    n_train: int

    def member_x(self, i: int) -> np.ndarray:
        """Member i's rows (train then test) × ``width``, float32, zero-padded columns."""
        x = self.rows[self.methods[i]][:, self.patterns[i]]
        pad = self.width - x.shape[1]
        return np.pad(x, ((0, 0), (0, pad))) if pad else x

    @property
    def x(self) -> np.ndarray:
        """Every member's rows: members × (n_train + n_test) × width (tests, small tables)."""
        return np.stack([self.member_x(i) for i in range(len(self.methods))])


def member_inputs(plan: EnsemblePlan, x_test: np.ndarray) -> MemberInputs:
    """Per member, concat(train, test) of its pipeline's output with its columns, padded
    with zero columns to the widest member; targets shifted, (y + offset) mod C, or the
    scaled targets; all as float32 (the model's input dtype)."""
    x = np.asarray(x_test, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != plan.n_features_in:
        raise ValueError(f"X_test has {x.shape[-1] if x.ndim == 2 else x.shape} feature "
                         f"columns but X_train had {plan.n_features_in}")
    bad = ~np.isfinite(x)
    if bad.any():
        row, col = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"X_test has a non-finite value {x[row, col].item()!r} in row {row}, "
                         f"column {col}; the package refuses NaN and infinity in an array")
    x = x[:, plan.features]
    rows = {method: np.concatenate([fit.x_train, transform(fit, x)], axis=0).astype(np.float32)
            for method, fit in plan.pipelines.items()}
    m, width = plan.n_members, plan.patterns.shape[1]
    if plan.classes is None:
        y = np.broadcast_to(plan.y_train.astype(np.float32), (m, plan.n_train)).copy()
    else:
        y = ((plan.y_train[np.newaxis, :] + plan.offsets[:, np.newaxis])
             % plan.n_classes).astype(np.float32)
    d = np.array([len(p) for p in plan.patterns], dtype=np.int64)
    cat_mask = np.zeros((m, width), dtype=bool)
    cat_mask[:, :plan.patterns.shape[1]] = plan.categorical[plan.patterns]
    return MemberInputs(rows, plan.methods, plan.patterns, width, y, d, cat_mask, plan.n_train)


def _outputs(outputs: object, plan: EnsemblePlan, name: str) -> np.ndarray:
    arr = np.asarray(outputs, dtype=np.float32)
    if arr.ndim != 3 or arr.shape[0] != plan.n_members:
        raise ValueError(f"{name} must be members × rows × outputs with {plan.n_members} "
                         f"members, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} has a non-finite value {arr[where].item()!r} at {where}")
    return arr


def unshift(logits: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Member i's logits over its shifted classes back in class order:
    out[i][..., c] = logits[i][..., (c + offsets[i]) mod C]."""
    c = logits.shape[-1]
    index = (np.arange(c)[np.newaxis, :] + offsets[:, np.newaxis]) % c
    return np.take_along_axis(logits, index[:, np.newaxis, :], axis=2)


def aggregate_proba(outputs: object, plan: EnsemblePlan,
                    softmax_temperature: float = SOFTMAX_TEMPERATURE,
                    average_logits: bool = True) -> np.ndarray:
    """``predict_proba`` (n_test × C, float32) from the members' logits (members × n_test ×
    max_classes, plan order): the first C logits, un-shifted; then the softmax at
    ``softmax_temperature`` of their mean (``average_logits``), or the mean of each
    member's softmax."""
    if plan.classes is None:
        raise ValueError("aggregate_proba needs a classification plan; this one is regression")
    arr = _outputs(outputs, plan, "outputs")
    if arr.shape[2] < plan.n_classes:
        raise ValueError(f"The model returned {arr.shape[2]} value(s) per row, but the "
                         f"ensemble was fit on {plan.n_classes} classes")
    logits = unshift(arr[..., :plan.n_classes], plan.offsets)
    if average_logits:
        return softmax(np.mean(logits, axis=0), softmax_temperature)
    return np.mean(softmax(logits, softmax_temperature), axis=0)


def aggregate_regression(outputs: object, plan: EnsemblePlan) -> np.ndarray:
    """``predict`` (n_test, float32) from the members' scaled predictions (members × n_test
    × 1): their float32 mean, then the target scaler's inverse as sklearn applies it in
    place on float32 (×scale, then +mean, each rounded to float32)."""
    if plan.y_scale is None:
        raise ValueError("aggregate_regression needs a regression plan; this one classifies")
    arr = _outputs(outputs, plan, "outputs")
    if arr.shape[2] != 1:
        raise ValueError(f"The model returned {arr.shape[2]} values per row, but regression "
                         "expects a single output (a classification checkpoint?)")
    avg = np.mean(arr[..., 0], axis=0)
    avg = (avg.astype(np.float64) * plan.y_scale).astype(np.float32)
    return (avg.astype(np.float64) + plan.y_mean).astype(np.float32)
