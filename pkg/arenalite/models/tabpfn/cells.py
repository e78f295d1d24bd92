"""Cells (``TabPFNV3._preprocess_raw``, ``_group_features``, ``x_embed``): what each cell
of a table turns into before the column stage.

1. NaN/inf indicators, read off the raw cells (``use_nan_indicators``): −2 for NaN, +2 for
   +inf, +4 for −inf, 0 otherwise.
2. Non-finite cells imputed with their column's mean over the finite context cells (0 for a
   column with none).
3. Standardised with the imputed context rows' mean and standard deviation (N − 1; a zero
   standard deviation, or a single context row, counts as 1): ``(x − mean) / (std + eps)``,
   clipped to ±100. These statistics and the imputation means are the cells' part of the
   cache (:class:`Scaler`).
4. Feature groups by circular shifts: column j becomes ``(x[(j + 1) % F], x[(j + 2) % F],
   …, x[(j + 2^(G−1)) % F])`` (G = ``feature_group_size``; wraps for F < 2^(G−1)), the
   indicators grouped the same way and appended → (rows, F, G or 2G).
5. ``x_embed`` (a linear layer) → (rows, F, E); the context rows add their target's
   embedding (``col_y_encoder``: a class's row, or a linear map of the target), in
   :mod:`.column`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .layers import Block, linear

NAN_INDICATOR = np.float32(-2.0)
POS_INF_INDICATOR = np.float32(2.0)
NEG_INF_INDICATOR = np.float32(4.0)
CLIP = np.float32(100.0)
EPS = np.float32(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class Scaler:
    """Per column: the imputation value (finite context mean) and the scaler's statistics
    fitted on the imputed context rows."""

    impute: np.ndarray
    mean: np.ndarray
    std: np.ndarray


def indicators(x: np.ndarray) -> np.ndarray:
    """(rows, F) → the NaN/inf indicator of every cell."""
    out = np.zeros(x.shape, dtype=np.float32)
    out[np.isnan(x)] = NAN_INDICATOR
    out[np.isposinf(x)] = POS_INF_INDICATOR
    out[np.isneginf(x)] = NEG_INF_INDICATOR
    return out


def fit_scaler(x_train: np.ndarray) -> Scaler:
    """The imputation means and standardisation of the context rows (N, F)."""
    finite = np.isfinite(x_train)
    x64 = x_train.astype(np.float64)
    count = finite.sum(axis=0)
    sums = np.where(finite, x64, 0.0).sum(axis=0)
    impute = np.where(count > 0, sums / np.maximum(count, 1), 0.0).astype(np.float32)
    imputed = np.where(finite, x_train, impute).astype(np.float64)
    n = imputed.shape[0]
    mean = imputed.mean(axis=0) if n else np.zeros(imputed.shape[1])
    var = ((imputed - mean) ** 2).sum(axis=0) / max(n - 1, 1)
    std = np.sqrt(var).astype(np.float32)
    std[std == 0] = 1.0
    if n == 1:
        std[:] = 1.0
    return Scaler(impute, mean.astype(np.float32), std)


def standardise(scaler: Scaler, x: np.ndarray) -> np.ndarray:
    """Rows (rows, F) imputed and standardised with the context's statistics."""
    x = np.where(np.isfinite(x), x, scaler.impute).astype(np.float32)
    x = (x - scaler.mean) / (scaler.std + EPS)
    return np.clip(x, -CLIP, CLIP)


def group(x: np.ndarray, size: int) -> np.ndarray:
    """(rows, F) → (rows, F, size): column j's group ``x[:, (j + 2^i) % F]``, i < size."""
    f = x.shape[1]
    idx = np.arange(f)
    return np.stack([x[:, (idx + 2 ** i) % f] for i in range(size)], axis=-1)


class CellStage:
    """The cell embedding's tensors and settings, read from a checkpoint's config."""

    def __init__(self, tensors: dict[str, np.ndarray], config: dict):
        self.root = Block(tensors, "")
        self.group_size = int(config["feature_group_size"])
        self.use_indicators = bool(config["use_nan_indicators"])

    def grouped(self, scaler: Scaler, x: np.ndarray) -> np.ndarray:
        """Raw rows (rows, F) → the grouped inputs of ``x_embed`` (rows, F, G or 2G)."""
        out = group(standardise(scaler, x), self.group_size)
        if self.use_indicators:
            out = np.concatenate([out, group(indicators(x), self.group_size)], axis=-1)
        return out

    def embed(self, grouped: np.ndarray) -> np.ndarray:
        """``x_embed``: (…, G') → (…, E)."""
        return linear(grouped, self.root["x_embed.weight"], self.root["x_embed.bias"])


def embed_target(block: Block, y: np.ndarray, classification: bool) -> np.ndarray:
    """A target encoder (``col_y_encoder`` / ``icl_y_encoder``) on targets (N,) → (N, E):
    a row of the class embedding, or ``Linear(1, E)`` of the value."""
    if classification:
        return block["embedding.weight"][y.astype(np.int64)]
    return y[:, None] * block["weight"][:, 0] + block["bias"]
