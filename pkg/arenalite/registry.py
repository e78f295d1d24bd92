"""The metric registry: what a metric name means for ranking.

Each entry says whether higher or lower is better, the metric's natural bounds
(used for normalization with ``metric_type_bounds``), the error optimum (used by
improvability) and the zero-signal anchor (used by normalized improvability).
Names are case-insensitive. Users extend the registry with :func:`register_metric`.

Anchors are either a number (the same for every dataset) or one of the
dataset-specific kinds in :data:`ANCHOR_KINDS`, which must be supplied per dataset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ANCHOR_KINDS = ("majority_rate", "prevalence", "sigma_y", "ln_k")
DIRECTIONS = ("max", "min")


@dataclass(frozen=True)
class MetricSpec:
    """What arenalite knows about one metric."""

    name: str
    direction: str
    bounds: tuple[float, float]
    optimum: float
    anchor: float | str | None = None

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "max"

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.bounds[0]) and math.isfinite(self.bounds[1])


_REGISTRY: dict[str, MetricSpec] = {}


def register_metric(
    name: str,
    direction: str,
    bounds: tuple[float, float],
    optimum: float,
    anchor: float | str | None = None,
) -> MetricSpec:
    """Register (or replace) a metric under ``name`` (case-insensitive)."""
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"metric name must be a non-empty string, got {name!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"direction of metric {name!r} must be 'max' or 'min', got {direction!r}")
    try:
        low, high = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise TypeError(
            f"bounds of metric {name!r} must be a (low, high) pair, got {bounds!r}"
        ) from None
    if not low < high:
        raise ValueError(f"bounds of metric {name!r} must satisfy low < high, got {bounds!r}")
    if isinstance(anchor, str) and anchor not in ANCHOR_KINDS:
        raise ValueError(
            f"anchor of metric {name!r} must be a number, None or one of {ANCHOR_KINDS}, "
            f"got {anchor!r}"
        )
    spec = MetricSpec(name.lower(), direction, (low, high), float(optimum), anchor)
    _REGISTRY[spec.name] = spec
    return spec


def get_metric(name: str) -> MetricSpec | None:
    """The registered spec for ``name`` (case-insensitive), or None if unknown."""
    return _REGISTRY.get(str(name).lower())


def oriented(spec: MetricSpec, direction: str) -> tuple[float, float | str | None]:
    """The optimum and the zero-signal anchor of ``spec``'s scores read in ``direction``.

    In the registry's own direction they are the registry's. Read the other way, the
    scores are taken as the metric's distance form ``optimum − value`` — TabArena's
    ``metric_error`` (1 − AUC for ROC AUC), or a negated loss — whose optimum is 0 and
    whose numeric anchor is ``optimum − anchor`` (0.5 for ROC AUC's chance level).
    """
    if direction == spec.direction:
        return spec.optimum, spec.anchor
    if not math.isfinite(spec.optimum):
        return spec.optimum, None
    anchor = spec.optimum - spec.anchor if isinstance(spec.anchor, (int, float)) else spec.anchor
    return 0.0, anchor


def chance_level(spec: MetricSpec, direction: str) -> float | None:
    """The chance level of a bounded metric with a numeric zero-signal anchor (ROC AUC 0.5),
    in the scores' orientation ``direction``; None for other metrics."""
    if not spec.bounded:
        return None
    anchor = oriented(spec, direction)[1]
    return float(anchor) if isinstance(anchor, (int, float)) else None


def known_metrics() -> list[str]:
    """All registered metric names, sorted."""
    return sorted(_REGISTRY)


_INF = math.inf
_DEFAULTS: list[tuple[tuple[str, ...], str, tuple[float, float], float, float | str | None]] = [
    (
        ("accuracy", "acc", "overall_accuracy", "balanced_accuracy"),
        "max",
        (0, 1),
        1,
        "majority_rate",
    ),
    (("f1", "macro_f1", "multilabel_f1_score", "precision", "recall"), "max", (0, 1), 1, None),
    (("iou", "miou", "jaccard", "multiclass_jaccard_index"), "max", (0, 1), 1, None),
    (("auc", "roc_auc", "auroc"), "max", (0, 1), 1, 0.5),
    (
        ("ap", "average_precision", "auprc", "map", "test_test_map", "test_test_segm_map"),
        "max",
        (0, 1),
        1,
        "prevalence",
    ),
    (("r2",), "max", (-_INF, 1), 1, 0.0),
    (("rmse",), "min", (0, _INF), 0, "sigma_y"),
    (("mae", "mse", "mape"), "min", (0, _INF), 0, None),
    (("logloss", "log_loss", "nll"), "min", (0, _INF), 0, "ln_k"),
    (("brier",), "min", (0, _INF), 0, 0.25),
    (("crps", "crps_gaussian", "gaussian_crps"), "min", (0, _INF), 0, None),
    (("gaussian_nll",), "min", (-_INF, _INF), -_INF, None),
    (("1-auc", "one_minus_auc"), "min", (0, 1), 0, 0.5),
]

for _names, _direction, _bounds, _optimum, _anchor in _DEFAULTS:
    for _name in _names:
        register_metric(_name, _direction, _bounds, _optimum, _anchor)
