"""What ``TabPFNClassifier`` and ``TabPFNRegressor`` (``fit_mode="low_memory"``, float32) do
around the raw model, end to end, on a numeric table: the members' draws (:mod:`.ensemble`),
each member's preprocessing (:mod:`.preprocessing`), one model call per member
(:mod:`.model`) and the aggregation. :func:`predict_proba` equals
``TabPFNClassifier(model_path=PATH, device="cpu", inference_precision=torch.float32,
fit_mode="low_memory", random_state=..., n_estimators=...).fit(X, y).predict_proba(X_test)``;
:func:`predict_regression` equals ``TabPFNRegressor(...).fit(X, y).predict(X_test)``
(docs/models.md, "TabPFN preprocessing and ensemble", "TabPFN regression targets and
aggregation").

The aggregation (the package's ``logits_to_probabilities``): each member's logits, its
class permutation undone (``logits[:, perm]``), divided by the softmax temperature (the
inference config's ``SOFTMAX_TEMPERATURE``, else 0.9); a softmax per member then the mean
over members (``average_before_softmax=False``, the default; ``True``: the mean of the
logits, then one softmax); optionally ``balance_probabilities`` (divided by the training
class shares, renormalised); finally each row divided by its sum.

Inference settings this port does not cover are refused by name rather than run
differently: ``PASSTHROUGH_INF``-free ±inf cells (the package refuses them too), row
subsampling (``SUBSAMPLE_SAMPLES``), polynomial features, more features than a member takes
(feature subsampling), reshape transforms or encodings not in :mod:`.preprocessing`, and
target transforms not in :mod:`.regression`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import ensemble, preprocessing, regression
from .layers import softmax
from .model import TabPFNModel, forward

DEFAULT_N_ESTIMATORS = 8
"""The package's ``DEFAULT_N_ESTIMATORS`` (``n_estimators="auto"``)."""
DEFAULT_SOFTMAX_TEMPERATURE = 0.9
ENCODINGS = ("ordinal_very_common_categories_shuffled", "numeric")
WHERE_WEIGHTS = (
    "download tabpfn-v3-classifier-v3_default.ckpt (classification) or "
    "tabpfn-v3-regressor-v3_default.ckpt (regression) from the Hugging Face hub repo "
    "Prior-Labs/tabpfn_3 (under its own licence) and pass {'name': 'tabpfn', 'weights': "
    "PATH} (on the command line --model tabpfn:weights=PATH); optionally convert it first with "
    "'arenalite convert tabpfn CKPT -o OUT.safetensors'")
NO_WEIGHTS = "model 'tabpfn' needs a TabPFN v3 checkpoint: " + WHERE_WEIGHTS


@dataclass(frozen=True)
class Settings:
    """The inference settings a user sets (the registry's parameters of ``tabpfn``)."""

    n_estimators: int | None = None  # None: the package's "auto"
    random_state: int = 0
    softmax_temperature: float | None = None  # None: the checkpoint's ("auto")
    average_before_softmax: bool = False
    balance_probabilities: bool = False


def check_task(model: TabPFNModel, task: str, where: str) -> None:
    """ValueError when the checkpoint cannot do ``task``."""
    if task == "regression" and model.classification:
        raise ValueError(f"{where} is a TabPFN v3 classifier; task 'regression' needs a "
                         "TabPFN v3 regressor checkpoint")
    if task != "regression" and not model.classification:
        raise ValueError(f"{where} is a TabPFN v3 regressor; task {task!r} needs a TabPFN "
                         "v3 classifier checkpoint")


def check_classes(model: TabPFNModel, n_classes: int) -> None:
    """ValueError when the target has more classes than the checkpoint takes (its head's
    max_num_classes and its inference config's MAX_NUMBER_OF_CLASSES)."""
    limit = min(model.n_out, int(model.inference_config.get("MAX_NUMBER_OF_CLASSES",
                                                            model.n_out)))
    if n_classes > limit:
        raise ValueError(f"TabPFN takes at most {limit} classes (the checkpoint's "
                         f"max_num_classes and MAX_NUMBER_OF_CLASSES); the target has "
                         f"{n_classes}")


def _refuse_unported(cfg: dict, n_features: int) -> list[dict]:
    """The inference config's member configs, after refusing what is not ported."""
    for key, off in (("SUBSAMPLE_SAMPLES", None), ("POLYNOMIAL_FEATURES", "no")):
        if cfg.get(key, off) != off:
            raise ValueError(f"the checkpoint's inference config sets {key}="
                             f"{cfg[key]!r}; arenalite's TabPFN port runs only {key}={off!r}")
    transforms = list(cfg["PREPROCESS_TRANSFORMS"])
    for i, t in enumerate(transforms):
        if t["name"] not in preprocessing.RESHAPE_TRANSFORMS:
            raise ValueError(f"PREPROCESS_TRANSFORMS[{i}] uses the reshape transform "
                             f"{t['name']!r}, not ported yet (ported: "
                             f"{list(preprocessing.RESHAPE_TRANSFORMS)})")
        if t["categorical_name"] not in ENCODINGS:
            raise ValueError(f"PREPROCESS_TRANSFORMS[{i}] uses the categorical encoding "
                             f"{t['categorical_name']!r}, not ported yet (ported: "
                             f"{list(ENCODINGS)})")
        if n_features > t["max_features_per_estimator"]:
            raise ValueError(f"the table has {n_features} features, more than "
                             f"PREPROCESS_TRANSFORMS[{i}]'s max_features_per_estimator "
                             f"{t['max_features_per_estimator']}; feature subsampling is not "
                             "ported yet")
    return transforms


def _refuse_infinite(x: np.ndarray, name: str) -> None:
    bad = np.isinf(x)
    if bad.any():
        row, col = np.argwhere(bad)[0].tolist()
        raise ValueError(f"{name} has an infinite value {float(x[row, col])!r} at row {row}, "
                         f"column {col}; TabPFN refuses ±inf cells (its PASSTHROUGH_INF "
                         "is off)")


def n_members(requested: int | None, cfg: dict) -> int:
    """The package's member count: an explicit count as given; "auto" the inference
    config's ``N_ESTIMATORS`` when it is a count, else ``DEFAULT_N_ESTIMATORS`` (its
    feature-coverage scaling only applies past ``max_features_per_estimator``, refused)."""
    if requested is not None:
        return int(requested)
    configured = cfg.get("N_ESTIMATORS", "auto")
    return DEFAULT_N_ESTIMATORS if configured == "auto" else int(configured)


@dataclass(frozen=True)
class CleanRows:
    """The rows every member starts from: the columns' modalities (numerical, categorical,
    constant), the cleaned training and test rows, the member configs."""

    modality: np.ndarray
    train: np.ndarray
    test: np.ndarray
    transforms: list[dict]


def clean_rows(model: TabPFNModel, x_train: np.ndarray, x_test: np.ndarray,
               categorical_indices: list[int] | None = None) -> CleanRows:
    """Refuse what is not ported, infer the modalities, clean both row sets.

    ``categorical_indices``: the columns declared categorical to the modality inference,
    as the package declares a DataFrame's (``encoding.tabpfn_table``); None for arrays."""
    cfg = model.inference_config
    x_train = np.asarray(x_train, dtype=np.float64)
    x_test = np.asarray(x_test, dtype=np.float64)
    _refuse_infinite(x_train, "X_train")
    _refuse_infinite(x_test, "X_test")
    transforms = _refuse_unported(cfg, x_train.shape[1])
    modality = preprocessing.modalities(
        x_train, categorical_indices,
        min_samples=cfg["MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE"],
        max_unique_for_category=cfg["MAX_UNIQUE_FOR_CATEGORICAL_FEATURES"],
        min_unique_for_numerical=cfg["MIN_UNIQUE_FOR_NUMERICAL_FEATURES"])
    clean_fit, train = preprocessing.fit_clean(x_train, modality)
    return CleanRows(modality, train, preprocessing.clean(clean_fit, x_test), transforms)


def member_input(model: TabPFNModel, rows: CleanRows, members: ensemble.Members,
                 i: int) -> np.ndarray:
    """Member ``i``'s model input (float32, training then test rows): its CPU pipeline and
    the soft clip (the classifier's 12σ; none for the regressor under "auto")."""
    cfg = model.inference_config
    t = rows.transforms[members.config_index[i]]
    fit, train = preprocessing.fit_member(
        rows.train, rows.modality, t["name"], t["categorical_name"],
        int(members.pipeline_seeds[i]), t["append_original"], t["max_features_per_estimator"],
        t["global_transformer_name"], add_fingerprint=bool(cfg["FINGERPRINT_FEATURE"]),
        shuffle=True, shift_method=cfg["FEATURE_SHIFT_METHOD"],
        shift=int(members.feature_shifts[i]))
    outlier = cfg["OUTLIER_REMOVAL_STD"]
    if outlier == "auto":
        kind = "CLASSIFICATION" if model.classification else "REGRESSION"
        outlier = cfg[f"_{kind}_DEFAULT_OUTLIER_REMOVAL_STD"]
    return preprocessing.model_input(fit, train, preprocessing.transform_member(fit, rows.test),
                                     outlier)


def member_logits(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray,
                  x_test: np.ndarray, n_classes: int, settings: Settings,
                  progress: Callable[[int, int], None] | None = None,
                  categorical_indices: list[int] | None = None) -> np.ndarray:
    """Every member's logits for ``x_test`` (members × M × C), class permutations undone."""
    rows = clean_rows(model, x_train, x_test, categorical_indices)
    m = n_members(settings.n_estimators, model.inference_config)
    members = ensemble.draw_members(m, len(rows.transforms), settings.random_state,
                                    n_classes=n_classes,
                                    class_shift_method=model.inference_config["CLASS_SHIFT_METHOD"])
    y = np.asarray(y_train, dtype=np.int64)
    n = len(rows.train)
    out = np.empty((m, len(rows.test), n_classes), dtype=np.float32)
    for i in range(m):
        x = member_input(model, rows, members, i)
        perm = members.class_perms[i] if members.class_perms is not None else np.arange(n_classes)
        out[i] = forward(model, x[:n], perm[y], x[n:])[:, perm]
        if progress is not None:
            progress(i + 1, m)
    return out


def regression_members(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray,
                       x_test: np.ndarray, settings: Settings,
                       progress: Callable[[int, int], None] | None = None,
                       categorical_indices: list[int] | None = None
                       ) -> tuple[list[np.ndarray], list[regression.TargetFit]]:
    """Every member's bar-distribution logits for ``x_test`` (each M × buckets) and its
    target fit (z-scoring and its ``REGRESSION_Y_PREPROCESS_TRANSFORMS`` entry)."""
    cfg = model.inference_config
    rows = clean_rows(model, x_train, x_test, categorical_indices)
    targets = list(cfg["REGRESSION_Y_PREPROCESS_TRANSFORMS"])
    m = n_members(settings.n_estimators, cfg)
    members = ensemble.draw_members(m, len(rows.transforms), settings.random_state,
                                    n_target_transforms=len(targets))
    n = len(rows.train)
    logits, fits = [], []
    for i in range(m):
        fit, y_member = regression.fit_target(y_train, targets[members.target_index[i]])
        x = member_input(model, rows, members, i)
        logits.append(forward(model, x[:n], y_member, x[n:]))
        fits.append(fit)
        if progress is not None:
            progress(i + 1, m)
    return logits, fits


def predict_regression(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray,
                       x_test: np.ndarray, settings: Settings = Settings(),
                       output_type: str = "mean", quantiles: list[float] | None = None,
                       progress: Callable[[int, int], None] | None = None,
                       categorical_indices: list[int] | None = None
                       ) -> np.ndarray | list[np.ndarray] | dict:
    """``TabPFNRegressor.predict(X_test, output_type, quantiles)`` in y's units (M,).

    A constant ``y_train`` gives ``y_train[0]`` everywhere without a model call, as the
    package does. ``average_before_softmax`` and ``balance_probabilities`` are the
    classifier's (refused here)."""
    if settings.average_before_softmax or settings.balance_probabilities:
        raise ValueError("average_before_softmax and balance_probabilities are classifier "
                         "settings; TabPFN regression averages the members' distributions")
    y = np.asarray(y_train, dtype=np.float64)
    if y.ndim == 1 and len(y) and np.isfinite(y).all() and np.unique(y).size == 1:
        if output_type not in regression.OUTPUT_TYPES:
            raise ValueError(f"output_type {output_type!r} is not one of "
                             f"{regression.OUTPUT_TYPES}")
        const = np.full(len(np.asarray(x_test)), y[0])
        levels = regression.DEFAULT_QUANTILES if quantiles is None else quantiles
        qs = [const.copy() for _ in levels]
        outputs = {"mean": const, "median": const.copy(), "mode": const.copy(), "quantiles": qs}
        return outputs if output_type == "main" else outputs[output_type]
    logits, fits = regression_members(model, x_train, y, x_test, settings, progress,
                                      categorical_indices)
    return regression.predict_from_logits(
        logits, fits, model.borders, temperature_of(model, settings), output_type, quantiles,
        bool(model.inference_config.get("FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM", True)))


def probabilities(logits: np.ndarray, temperature: float, average_before_softmax: bool = False,
                  class_counts: np.ndarray | None = None) -> np.ndarray:
    """The package's ``logits_to_probabilities`` (float32) on members × M × C logits, then
    ``predict_proba``'s row normalisation; ``class_counts`` balances the probabilities."""
    z = np.asarray(logits, dtype=np.float32)
    if temperature != 1.0:
        z = z / np.float32(temperature)
    p = softmax(z.mean(axis=0)) if average_before_softmax else softmax(z.copy()).mean(axis=0)
    if class_counts is not None:
        p = p / (class_counts / class_counts.sum()).astype(np.float32)
        p = p / p.sum(axis=-1, keepdims=True)
    p = p.astype(np.float64)
    return p / p.sum(axis=1, keepdims=True)


def temperature_of(model: TabPFNModel, settings: Settings) -> float:
    if settings.softmax_temperature is not None:
        return float(settings.softmax_temperature)
    return float(model.inference_config.get("SOFTMAX_TEMPERATURE", DEFAULT_SOFTMAX_TEMPERATURE))


def predict_proba(model: TabPFNModel, x_train: np.ndarray, y_train: np.ndarray,
                  x_test: np.ndarray, n_classes: int, settings: Settings = Settings(),
                  progress: Callable[[int, int], None] | None = None,
                  categorical_indices: list[int] | None = None) -> np.ndarray:
    """Class probabilities (M × ``n_classes``) for labels ``y_train`` in 0 … C−1;
    ``categorical_indices`` as :func:`clean_rows` takes them."""
    y = np.asarray(y_train)
    check_classes(model, n_classes)
    raw = member_logits(model, x_train, y, x_test, n_classes, settings, progress,
                        categorical_indices)
    counts = np.bincount(y.astype(np.int64), minlength=n_classes).astype(np.float64) \
        if settings.balance_probabilities else None
    return probabilities(raw, temperature_of(model, settings),
                         settings.average_before_softmax, counts)

