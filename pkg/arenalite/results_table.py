"""The runners' long results table: its columns, and how one split's output is scored.

Both runners (:mod:`arenalite.runner`, the tournament's tasks, and the WebGPU bridge)
write these columns (docs/ARCHITECTURE.md, "Results table"); ``load_df`` reads them.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable
from functools import lru_cache

import numpy as np

from . import metrics

BASE_COLUMNS = ["model", "dataset", "task", "metric", "score", "error", "split_id", "repeat",
                "fold", "seed", "n_train", "n_test", "runner", "device", "embed_ms", "layers_ms",
                "head_ms", "total_ms", "rows_per_s"]
"""The results table's first columns: every table written so far has them."""
GPU_COLUMNS = ["gpu_embed_ms", "gpu_layers_ms", "gpu_head_ms", "gpu_total_ms"]
"""Added at the end: stage times from GPU timestamps (WebGPU with ``timestamp-query``);
empty (NaN) for the Python runner and adapters without timestamps."""
LAYER_COLUMNS = ["layer_times_ms", "gpu_layer_times_ms"]
"""Added at the end: each layer's time (ms, in layer order, joined by ";"; wall, and GPU
timestamps where the bridge has them), so T_fold's Σ_l T_layer(l) is there per layer;
tables written before them load without them."""
COLUMNS = BASE_COLUMNS + GPU_COLUMNS + LAYER_COLUMNS
METRIC_OF_TASK = {"binary": "roc_auc", "multiclass": "log_loss", "regression": "rmse"}


@lru_cache(maxsize=1)
def device_description() -> str:
    """A short description of this CPU (model name where the OS tells it)."""
    name = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"CPU {platform.machine()}" + (f" ({name})" if name else "") + ", numpy"


TIE_TOLERANCE = 1e-5
"""Positive-class probabilities this close to their sorted neighbour count as tied in the
ROC AUC of both runners (docs/models.md, "Scores"); the bridge's metrics.js has the same."""


def merge_near_ties(score: np.ndarray, tol: float = TIE_TOLERANCE) -> np.ndarray:
    """``score`` with each run of sorted values whose consecutive gaps are ≤ ``tol``
    replaced by the run's smallest value: near-ties become exact ties.

    Float64 (numpy) and float32 (WebGPU) outputs of one model differ by < 1e-6, so values
    tied in one runner are within ``tol`` of each other in the other: both see one tie.
    """
    values = np.asarray(score, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.r_[True, np.diff(ordered) > tol]
    out = np.empty_like(values)
    out[order] = ordered[starts][np.cumsum(starts) - 1]
    return out


def task_metric(task: str, y_true: np.ndarray, output: np.ndarray) -> tuple[float, float]:
    """(score, error) of a task's metric: 1 − AUC for binary (on the positive-class
    probabilities with near-ties merged, :func:`merge_near_ties`), log loss, RMSE."""
    if task == "binary":
        auc = metrics.roc_auc(y_true, merge_near_ties(output[:, 1]))
        return auc, 1.0 - auc
    if task == "multiclass":
        loss = metrics.log_loss(y_true, output)
        return loss, loss
    err = metrics.rmse(y_true, output)
    return err, err


def layer_times(layers: Iterable[float]) -> str:
    """Per-layer ms in one CSV field, ";"-joined, 6 significant digits (the bridge's layerTimes)."""
    return ";".join(f"{float(v):.6g}" for v in layers)
