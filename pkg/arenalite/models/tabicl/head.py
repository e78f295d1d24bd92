"""The head (``ICLearning``'s final LayerNorm and ``decoder``): the last ICL layer's
output of a query row → class logits (first ``n_classes`` of ``max_classes``) or the
regression quantiles, and the quantiles' summaries (mean, spread)."""

from __future__ import annotations

import numpy as np

from .layers import Block, layer_norm, mlp


class Head:
    """The head's tensors (``icl_predictor.ln``, ``icl_predictor.decoder``)."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "icl_predictor.")
        self.norm_first = config["norm_first"]


def decode(head: Head, hidden: np.ndarray) -> np.ndarray:
    """(M, D) → (M, out_dim): class logits or raw quantiles."""
    if head.norm_first:
        hidden = layer_norm(hidden, head.root["ln.weight"], head.root.get("ln.bias"))
    return mlp(head.root.sub("decoder"), hidden)


def quantile_summary(quantiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance (n − 1 divisor) of each row's quantiles, as the package's
    ``predict_stats`` gives them (its sorting for monotonicity changes neither)."""
    q = np.sort(quantiles, axis=-1)
    return q.mean(axis=-1), q.var(axis=-1, ddof=1)
