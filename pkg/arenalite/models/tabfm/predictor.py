"""What Google TabFM's scikit-learn wrappers do around the raw model, end to end: the
table as numbers (:mod:`.preprocessing`), the ensemble's member inputs (:mod:`.ensemble`),
the raw forward once per member with its KV cache (:mod:`.model`), and the aggregation, so
that :func:`predict` equals ``TabFMClassifier(model, ...).fit(X, y).predict_proba(X_test)``
/ ``TabFMRegressor(model, ...).fit(X, y).predict(X_test)`` on the wrappers' default path
(``model = tabfm_v1_0_0.load(task, DIR, dtype=None)``, the float32 model).

:func:`encode` and :func:`reference` are the registry entry's ``encoding`` and
``reference`` (registry.json, model ``tabfm``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from . import ensemble
from .checkpoint import read_config
from .ensemble import Settings
from .model import TabFMModel, fit_context, load, predict_queries
from .preprocessing import numeric_table

WHERE_WEIGHTS = (
    "download the google/tabfm-1.0.0-pytorch folder from the Hugging Face hub (under "
    "Google's own terms) and pass {'name': 'tabfm', 'weights': DIR} (on the command line "
    "--model tabfm:weights=DIR): DIR holding classification/ and regression/, or one of "
    "them; optionally convert it first with 'arenalite convert tabfm DIR -o OUT.safetensors'")
NO_WEIGHTS = "model 'tabfm' needs a Google TabFM checkpoint: " + WHERE_WEIGHTS
SETTING_KEYS = ("n_estimators", "softmax_temperature", "average_logits", "random_state",
                "outlier_threshold", "max_num_features", "class_shift")
"""The registry parameters of ``tabfm`` that are wrapper options (all but ``weights``)."""


def checkpoint_task(task: str) -> str:
    """The checkpoint folder an arenalite task needs: classification or regression."""
    return "regression" if task == "regression" else "classification"


def check_task(model: TabFMModel, task: str, where: str) -> None:
    """ValueError when the checkpoint cannot do ``task`` (its config's ``is_classifier``)."""
    if model.task != checkpoint_task(task):
        raise ValueError(f"{where} is a Google TabFM {model.task} checkpoint; task {task!r} "
                         f"needs its {checkpoint_task(task)} checkpoint")


def member_outputs(model: TabFMModel, inputs: ensemble.MemberInputs,
                   clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, dict]:
    """Every member's raw output (members × M × out_width), in plan order, and the stage
    timings (ms) summed over the members."""
    n = inputs.n_train
    outs, total = [], None
    for i in range(len(inputs.methods)):
        x = inputs.member_x(i)
        context = fit_context(model, x[:n], inputs.y_train[i], int(inputs.d[i]),
                              inputs.cat_mask[i], clock)
        outs.append(predict_queries(model, context, x[n:], clock, context.timings))
        t = context.timings.as_dict()
        total = t if total is None else {
            k: ([a + b for a, b in zip(v, t[k], strict=True)] if isinstance(v, list)
                else v + t[k]) for k, v in total.items()}
    return np.stack(outs), total


def predict(model: TabFMModel, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
            task: str, n_classes: int | None = None, settings: Settings | None = None,
            n_categorical: int = 0, clock: Callable[[], float] = time.perf_counter
            ) -> tuple[np.ndarray, dict]:
    """The wrappers' prediction and its timings (ms: T_fold's parts, over all members).

    ``x_train``/``x_test``: the numeric table (numbers as given, or :func:`encode`'s), its
    first ``n_categorical`` columns categorical codes. Classification: m × ``n_classes``
    probabilities (a class absent from ``y_train`` gets 0: the package predicts the
    context's classes); regression: m predictions in the target's units. ``settings``:
    the wrappers' options (:func:`.ensemble.settings_from` refuses the unported ones).
    """
    check_task(model, task, "the checkpoint")
    settings = Settings() if settings is None else settings
    t0 = clock()
    plan = ensemble.fit_members(x_train, y_train, task, n_categorical, settings,
                                model.max_classes if model.is_classifier else None)
    inputs = ensemble.member_inputs(plan, x_test)
    prep_ms = (clock() - t0) * 1e3
    raw, stage = member_outputs(model, inputs, clock)
    t0 = clock()
    if task == "regression":
        output = ensemble.aggregate_regression(raw, plan).astype(np.float64)
    else:
        proba = ensemble.aggregate_proba(raw, plan, settings.softmax_temperature,
                                         settings.average_logits)
        width = int(n_classes) if n_classes is not None else int(plan.classes.max()) + 1
        output = np.zeros((proba.shape[0], width), dtype=np.float64)
        output[:, plan.classes.astype(np.int64)] = proba
    timings = {"embed": prep_ms + stage["cells"] + sum(stage["column"]),
               "layers": list(stage["row"]) + list(stage["icl"]),
               "head": stage["decoder"] + (clock() - t0) * 1e3}
    return output, timings


def encode(train: pd.DataFrame, test: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The registry's ``encoding`` of ``tabfm``: the package's ``TransformToNumerical`` on a
    DataFrame pair, and its leading categorical columns' indices."""
    from ..encoding import check_frames

    check_frames(train, test)
    table = numeric_table(train, test)
    return table.train, table.test, list(range(table.n_categorical))


def applicable(model: dict[str, Any], task: str, n_features: int,
               n_classes: int | None) -> None:
    """The registry's ``applicable`` of ``tabfm``: ValueError when the checkpoint cannot
    take a table of this task and class count, read from its config alone (a tournament
    asks before it runs; past ``max_num_features`` columns the members subsample)."""
    weights = model.get("weights")
    if weights is None:
        raise ValueError(NO_WEIGHTS)
    config = read_config(weights, checkpoint_task(task))
    if config["is_classifier"] != (task != "regression"):
        have = "classification" if config["is_classifier"] else "regression"
        raise ValueError(f"Google TabFM checkpoint {str(weights)!r} is a {have} checkpoint; "
                         f"task {task!r} needs its {checkpoint_task(task)} checkpoint")
    if task != "regression" and n_classes:
        ensemble.check_classes(n_classes, int(config["max_classes"]))


def load_model(weights: Any, task: str) -> TabFMModel:
    """The checkpoint of a ``weights`` parameter for ``task``; None: where to get one."""
    if weights is None:
        raise ValueError(NO_WEIGHTS)
    return load(weights, checkpoint_task(task))


def reference(model: dict[str, Any], prep: Any, clock: Callable[[], float]
              ) -> tuple[np.ndarray, dict]:
    """The registry's ``reference`` of ``tabfm``: :func:`predict` on the validated,
    unstandardized table (``prep.raw_train``/``raw_test``) with the registry parameters
    as the wrapper's options."""
    net = load_model(model["weights"], prep.task)
    check_task(net, prep.task, f"checkpoint {str(model['weights'])!r}")
    settings = ensemble.settings_from({k: model[k] for k in SETTING_KEYS})
    n_cat = len(prep.categorical_indices or [])
    return predict(net, prep.raw_train, prep.y_train, prep.raw_test, prep.task, prep.n_classes,
                   settings, n_cat, clock)
