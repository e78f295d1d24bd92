"""Build the default ``icl_transformer`` weights by hand (no training, no randomness).

Run ``python scripts/make_default_weights.py`` to rewrite
pkg/arenalite/models/weights/icl_transformer.{json,bin}; the result is byte-identical
on every run. The construction makes the encoder a two-bandwidth, prior-smoothed
kernel smoother over the context rows, i.e. a similarity-weighted label lookup:

* Residual-stream layout (d_model = 80): dims 0–31 the standardized features x,
  32–41 the one-hot class label, 42 the standardized regression target, 43 a norm
  estimate φ ≈ ‖x‖² / SIGMA, 44–53 the class prediction, 54 the regression
  prediction, 55 a dimension that stays 0, 56–79 a constant B. The constant dims
  dominate every row's spread, so LayerNorm divides by almost the same r0 for every
  row, and subtracting dim 55 cancels LayerNorm's mean exactly.
* Layer 0: attention with zero queries/keys is a uniform average over the context,
  whose values read the label dims: it writes LAMBDA × the class prior (or the mean
  standardized target, 0) into the prediction dims. The GELU MLP computes φ:
  GELU(z) + GELU(−z) ≈ √(2/π) z² for small z, summed over the features.
* Layer 1: head k has queries 2·x and a constant, keys (x_j, φ_j), so its logits are
  (2 x·x_j − ‖x_j‖²) / T_k = −‖x − x_j‖² / T_k + const: distance attention with
  temperature T_k. Its values read the labels; the output projection adds
  (1 − LAMBDA) × the mean of the two heads' label shares to the prediction dims.
* Head: class logits LOGIT_SCALE × prediction dims; regression reads dim 54 and maps
  back to target units.

The constants were chosen by hand (temperatures after a look at the distance-attention
model on the bundled datasets), not fitted.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from arenalite.models.weights import tensor_shapes, write_weights

OUT = (Path(__file__).resolve().parents[1] / "pkg" / "arenalite" / "models" / "weights"
       / "icl_transformer.json")
CONFIG = {"d_in": 32, "d_model": 80, "n_heads": 2, "n_layers": 2, "d_mlp": 64,
          "max_classes": 10, "ln_eps": 1e-5}

X, LABEL, REG, PHI, PRED, PRED_REG, ZERO = 0, 32, 42, 43, 44, 54, 55
CONST = slice(56, 80)
B = 30.0  # value of the constant dims
SIGMA = 10.0  # φ is stored as ‖x‖² / SIGMA to keep it small next to B
ZETA = 4.0  # MLP pre-activation x / ZETA, in GELU's near-quadratic range
TEMPERATURES = (1.5, 6.0)  # one per head of layer 1
LAMBDA = 0.1  # weight of the context prior (uniform attention of layer 0)
LOGIT_SCALE = 5.0


def build() -> dict[str, np.ndarray]:
    """All tensors of CONFIG, constructed as described in the module docstring."""
    d, d_in, c_max = CONFIG["d_model"], CONFIG["d_in"], CONFIG["max_classes"]
    d_h = d // CONFIG["n_heads"]
    n_const = CONST.stop - CONST.start
    r0 = B * math.sqrt(n_const / d - (n_const / d) ** 2)  # LayerNorm scale of a row
    t = {name: np.zeros(shape) for name, shape in tensor_shapes(CONFIG).items()}
    for prefix in [f"layers.{i}." for i in range(CONFIG["n_layers"])] + ["head."]:
        for ln in (("ln1", "ln2") if prefix != "head." else ("ln",)):
            t[f"{prefix}{ln}.g"][:] = 1.0
    feats = np.arange(d_in)
    classes = np.arange(c_max)

    t["embed.w"][feats, X + feats] = 1.0
    t["embed.b"][CONST] = B
    t["label.w"][classes, LABEL + classes] = 1.0
    t["label.reg"][REG] = 1.0

    # Layer 0: uniform attention → LAMBDA × prior; MLP → φ.
    _label_values_and_output(t, "layers.0.attn.", d_h, r0, LAMBDA, heads=(0,))
    w1, w2 = t["layers.0.mlp.w1"], t["layers.0.mlp.w2"]
    s = r0 / ZETA
    w1[X + feats, feats], w1[ZERO, feats] = s, -s
    w1[X + feats, d_in + feats], w1[ZERO, d_in + feats] = -s, s
    w2[:2 * d_in, PHI] = ZETA ** 2 / (math.sqrt(2 / math.pi) * SIGMA)

    # Layer 1: distance attention, one temperature per head.
    p = "layers.1.attn."
    for k, temp in enumerate(TEMPERATURES):
        gamma = r0 ** 2 * math.sqrt(d_h) / temp
        cols = k * d_h + feats
        t[p + "wq"][X + feats, cols], t[p + "wq"][ZERO, cols] = 2 * gamma, -2 * gamma
        t[p + "bq"][k * d_h + d_in] = -gamma * SIGMA / r0
        t[p + "wk"][X + feats, cols], t[p + "wk"][ZERO, cols] = 1.0, -1.0
        t[p + "wk"][PHI, k * d_h + d_in], t[p + "wk"][ZERO, k * d_h + d_in] = 1.0, -1.0
    heads = tuple(range(len(TEMPERATURES)))
    _label_values_and_output(t, p, d_h, r0, (1 - LAMBDA) / len(heads), heads=heads)

    t["head.cls.w"][PRED + classes, classes] = LOGIT_SCALE * r0
    t["head.cls.w"][ZERO, classes] = -LOGIT_SCALE * r0
    t["head.reg.w"][PRED_REG], t["head.reg.w"][ZERO] = r0, -r0
    return t


def _label_values_and_output(t: dict, p: str, d_h: int, r0: float, weight: float,
                             heads: tuple[int, ...]) -> None:
    """Values read the label dims (minus dim ZERO); wo adds weight × r0 × them to PRED."""
    c_max = CONFIG["max_classes"]
    for k in heads:
        for src, dst, n in ((LABEL, PRED, c_max), (REG, PRED_REG, 1)):
            local = k * d_h + (0 if src == LABEL else c_max) + np.arange(n)
            t[p + "wv"][src + np.arange(n), local] = 1.0
            t[p + "wv"][ZERO, local] = -1.0
            t[p + "wo"][local, dst + np.arange(n)] = weight * r0


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    path = write_weights(OUT, CONFIG, build())
    print(f"wrote {path} and {path.with_suffix('.bin').name}")


if __name__ == "__main__":
    main()
