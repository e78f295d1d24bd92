"""The decoder (``ICLearning``'s last RMSNorm and ``decoder`` MLP): the ICL output (M, D)
→ RMSNorm → Linear(D, hidden) → tanh GELU → Linear(hidden, out): ``max_classes`` logits,
or one value for regression."""

from __future__ import annotations

import numpy as np

from .layers import Block, mlp, rms_norm


class Decoder:
    """The decoder's tensors."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "icl_predictor.")
        self.is_classifier = bool(config["is_classifier"])

    def __call__(self, hidden: np.ndarray) -> np.ndarray:
        """(M, D) → (M, max_classes) logits or (M, 1) regression values."""
        return mlp(self.root.sub("decoder"), rms_norm(hidden, self.root["ln.weight"]))
