"""What the package's scikit-learn wrappers do around the raw model, end to end: the
ensemble's member inputs (:mod:`.ensemble`), the raw forward once per member with both KV
caches (:mod:`.model`), and the aggregation, so that :func:`predict` equals
``TabICLClassifier(...).predict_proba`` / ``TabICLRegressor(...).predict`` at the
package's defaults.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import column, ensemble
from .model import SharedColumns, TabICLModel, Timings, fit_context, predict_queries

WHERE_WEIGHTS = (
    "download tabicl-classifier-v2-20260212.ckpt "
    "(classification) or the TabICL regressor checkpoint from the Hugging Face hub (repo "
    "jingang/TabICL) and pass {'name': 'tabicl', 'weights': PATH} (on the command line "
    "--model tabicl:weights=PATH); optionally convert it first with "
    "'arenalite convert tabicl CKPT -o OUT.safetensors'")
NO_WEIGHTS = "model 'tabicl' needs a TabICL checkpoint: " + WHERE_WEIGHTS


@dataclass(frozen=True)
class Settings:
    """The inference settings a user sets (the registry's parameters of ``tabicl``)."""

    n_estimators: int = 8
    softmax_temperature: float = 0.9
    outlier_threshold: float = 4.0
    random_state: int = 42


def check_task(model: TabICLModel, task: str, where: str) -> None:
    """ValueError when the checkpoint cannot do ``task`` (its config's ``max_classes``)."""
    if task == "regression" and model.max_classes > 0:
        raise ValueError(f"{where} is a TabICL classifier (max_classes {model.max_classes}); "
                         "task 'regression' needs a TabICL regressor checkpoint")
    if task != "regression" and model.max_classes == 0:
        raise ValueError(f"{where} is a TabICL regressor (max_classes 0); task {task!r} "
                         "needs a TabICL classifier checkpoint")


def member_outputs(model: TabICLModel, plan: ensemble.EnsemblePlan, x_test: np.ndarray,
                   settings: Settings, clock: Callable[[], float],
                   progress: Callable[[int, int], None] | None = None
                   ) -> tuple[np.ndarray, Timings]:
    """Every member's raw output (members × M × C logits, or × Q quantiles), in plan
    order, and the timings summed over the members.

    A classifier checkpoint without feature groups (TabICLv1's layout) shares each model
    call's first column stage with the call's other members, as the package does
    (:class:`SharedColumns`; the calls are ``ensemble.model_batches``).
    """
    inputs = ensemble.member_inputs(plan, x_test)
    n = inputs.n_train
    total = Timings(row=[0.0] * len(model.row.blocks), icl=[0.0] * len(model.icl.blocks))
    share = plan.class_perms is not None and not model.config["col_feature_group"]
    first_of = {int(i): int(batch[0]) for batch in ensemble.model_batches(plan) for i in batch}
    sources: dict[int, SharedColumns] = {}
    outs = []
    for i in range(plan.n_members):
        shared = None
        if share and first_of[i] != i:
            shared = (sources[first_of[i]], inputs.feature_perms[i])
        elif share:
            t0 = clock()
            emb, cache = column.embed_context(model.column, inputs.x[i, :n],
                                              inputs.y_train[i])
            sources[i] = SharedColumns(emb, cache, inputs.feature_perms[i])
            shared = (sources[i], inputs.feature_perms[i])
            total.embed += (clock() - t0) * 1e3
        context = fit_context(model, inputs.x[i, :n], inputs.y_train[i], clock, shared)
        outs.append(predict_queries(model, context, inputs.x[i, n:], clock, context.timings,
                                    temperature=settings.softmax_temperature))
        t = context.timings
        total.embed += t.embed
        total.head += t.head
        total.row = [a + b for a, b in zip(total.row, t.row, strict=True)]
        total.icl = [a + b for a, b in zip(total.icl, t.icl, strict=True)]
        if progress is not None:
            progress(i + 1, plan.n_members)
    return np.stack(outs), total


def predict(model: TabICLModel, x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray,
            task: str, n_classes: int | None, settings: Settings = Settings(),
            clock: Callable[[], float] = time.perf_counter) -> tuple[np.ndarray, dict]:
    """The wrappers' prediction and its timings (ms: T_fold's parts, over all members).

    Classification: m × ``n_classes`` probabilities; the package predicts the classes of
    the context, so a class absent from ``y_train`` gets 0. Regression: m × 2, the mean
    (``TabICLRegressor.predict``) and the spread (standard deviation of the members'
    quantile mixture, see docs/models.md), in the target's units.
    """
    t0 = clock()
    plan = ensemble.fit_members(x_train, y_train, task, n_estimators=settings.n_estimators,
                                outlier_threshold=settings.outlier_threshold,
                                random_state=settings.random_state)
    prep_ms = (clock() - t0) * 1e3
    raw, timings = member_outputs(model, plan, x_test, settings, clock)
    t0 = clock()
    if task == "regression":
        mean = ensemble.predict_regression(raw, plan, "mean")
        member_mean = raw.mean(axis=-1, dtype=np.float64) * plan.y_scale + plan.y_mean
        member_var = raw.var(axis=-1, ddof=1, dtype=np.float64) * plan.y_scale ** 2
        spread = np.sqrt(member_var.mean(axis=0) + member_mean.var(axis=0))
        output = np.stack([mean.astype(np.float64), spread], axis=1)
    else:
        proba = ensemble.aggregate_proba(raw, plan, settings.softmax_temperature)
        width = int(n_classes) if n_classes is not None else int(plan.classes.max()) + 1
        output = np.zeros((proba.shape[0], width), dtype=np.float64)
        output[:, plan.classes.astype(np.int64)] = proba
    timings.embed += prep_ms
    timings.head += (clock() - t0) * 1e3
    return output, timings.as_dict()
