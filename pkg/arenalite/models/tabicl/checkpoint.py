"""TabICL checkpoints without torch: the package's ``.ckpt`` files and arenalite's safetensors.

The ``tabicl`` package saves ``torch.save({"config": ..., "state_dict": ..., ...})`` (its
training loop adds ``optimizer_state``, ``scheduler_state`` and ``curr_step``). That is
torch's zip serialization: ``<archive>/data.pkl`` pickles the object, each tensor as
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` with its storage a
persistent id ``("storage", torch.FloatStorage, key, location, numel)`` whose bytes are the
zip record ``<archive>/data/<key>``; ``<archive>/byteorder`` says ``little`` or ``big``.

:func:`read_checkpoint` reads data.pkl with the restricted unpickler of
:mod:`arenalite.models.torch_checkpoint` (shared with TabPFN's reader), which knows only the
classes such a file holds (:data:`ALLOWED`); any other class is refused before anything is
called, so a hostile file cannot run code. Tensors are references until the state dict's
are materialized (the optimizer's are never read). The config is completed with
``TabICL.__init__``'s defaults (:data:`CONFIG_DEFAULTS`) and checked, and the state dict
must hold exactly the tensors :func:`expected_shapes` derives from it, with those shapes.

The same checkpoint as safetensors (:func:`write_safetensors`, :func:`convert`): float32
tensors, metadata ``{"format": "arenalite.tabicl", "version": "1", "config": <JSON>}``.
:func:`read_checkpoint` tells the two formats apart by their first bytes.

:func:`random_checkpoint` makes a checkpoint of random weights for any config in numpy
alone (no torch: in the browser too), for trying the model out and for tests; its
predictions are those of random weights, not of TabICL.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .. import safetensors, state_dict, torch_checkpoint
from .layers import SSMAX_KINDS, ssmax_kind

ALLOWED = torch_checkpoint.ALLOWED
"""Every (module, name) the unpickler resolves (:mod:`arenalite.models.torch_checkpoint`)."""
MAX_PICKLE = torch_checkpoint.MAX_PICKLE
"""Largest data.pkl read (bytes); a TabICL checkpoint's is well under a megabyte."""
FORMAT = "arenalite.tabicl"
VERSION = "1"
CONFIG_DEFAULTS: dict[str, Any] = {
    "max_classes": 10, "num_quantiles": 999, "embed_dim": 128,
    "col_num_blocks": 3, "col_nhead": 8, "col_num_inds": 128, "col_affine": False,
    "col_feature_group": "same", "col_feature_group_size": 3, "col_target_aware": True,
    "col_ssmax": "qassmax-mlp-elementwise",
    "row_num_blocks": 3, "row_nhead": 8, "row_num_cls": 4, "row_rope_base": 100000,
    "row_rope_interleaved": True,
    "icl_num_blocks": 12, "icl_nhead": 8, "icl_ssmax": "qassmax-mlp-elementwise",
    "ff_factor": 2, "dropout": 0.0, "activation": "gelu", "norm_first": True,
    "bias_free_ln": False, "zero_init": True, "recompute": False,
}
"""``tabicl._model.tabicl.TabICL.__init__``'s parameters and defaults (tabicl 2.2.0), in order."""
SSMAX_HIDDEN = 64
"""Hidden width of the SSMax MLPs (fixed in ``tabicl._model.ssmax``)."""
ACTIVATIONS = ("gelu", "relu")
"""The activations ``nn.TransformerEncoderLayer`` takes by name."""


@dataclass(frozen=True)
class Checkpoint:
    """A TabICL checkpoint: its full config and its float32 tensors by state-dict name."""

    config: dict
    tensors: dict[str, np.ndarray]
    path: Path | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[name]


# --- config and the state dict it implies -------------------------------------------------


def check_config(config: object, where: str = "TabICL config") -> dict:
    """``config`` completed with :data:`CONFIG_DEFAULTS` (in their order) and checked.

    Values are kept as given (``col_ssmax`` may be a bool or a name, ``col_feature_group``
    a bool, ``"same"`` or ``"valid"``). Unknown keys, wrong types and head counts that do not
    divide their width raise ValueError starting with ``where``.
    """
    if not isinstance(config, dict):
        raise ValueError(f"{where}: the config must be a dict, got {type(config).__name__}")
    unknown = [k for k in config if k not in CONFIG_DEFAULTS]
    if unknown:
        raise ValueError(f"{where}: unknown config keys {sorted(map(str, unknown))} (TabICL "
                         f"takes {list(CONFIG_DEFAULTS)})")
    out = {key: config.get(key, default) for key, default in CONFIG_DEFAULTS.items()}

    def fail(key: str, what: str) -> ValueError:
        return ValueError(f"{where}: {key!r} must be {what}, got {out[key]!r}")

    def integer(value: object) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    for key in ("embed_dim", "col_nhead", "col_num_inds", "col_feature_group_size",
                "row_nhead", "row_num_cls", "icl_nhead", "ff_factor"):
        if not integer(out[key]) or out[key] < 1:
            raise fail(key, "a positive integer")
    for key in ("max_classes", "num_quantiles", "col_num_blocks", "row_num_blocks",
                "icl_num_blocks"):
        if not integer(out[key]) or out[key] < 0:
            raise fail(key, "a non-negative integer")
    if out["max_classes"] == 0 and out["num_quantiles"] < 1:
        raise fail("num_quantiles", "positive for a regressor (max_classes 0)")
    for key in ("col_affine", "col_target_aware", "row_rope_interleaved", "norm_first",
                "bias_free_ln", "zero_init", "recompute"):
        if not isinstance(out[key], bool):
            raise fail(key, "true or false")
    if out["col_feature_group"] not in (False, True, "same", "valid") or not isinstance(
            out["col_feature_group"], bool | str):
        raise fail("col_feature_group", "false, true, 'same' or 'valid'")
    for key in ("col_ssmax", "icl_ssmax"):
        if not isinstance(out[key], bool) and out[key] not in SSMAX_KINDS:
            raise fail(key, f"true, false or one of {list(SSMAX_KINDS)}")
    rope = out["row_rope_base"]
    if isinstance(rope, bool) or not isinstance(rope, int | float) or not 0 < rope < math.inf:
        raise fail("row_rope_base", "a positive number")
    dropout = out["dropout"]
    if isinstance(dropout, bool) or not isinstance(dropout, int | float) or not 0 <= dropout <= 1:
        raise fail("dropout", "a number in [0, 1]")
    if out["activation"] not in ACTIVATIONS:
        raise fail("activation", f"one of {list(ACTIVATIONS)}")
    icl_dim = out["embed_dim"] * out["row_num_cls"]
    for key, width in (("col_nhead", out["embed_dim"]), ("row_nhead", out["embed_dim"]),
                       ("icl_nhead", icl_dim)):
        if width % out[key]:
            what = "embed_dim" if key != "icl_nhead" else "embed_dim × row_num_cls"
            raise ValueError(f"{where}: {key}={out[key]} does not divide {what} = {width}")
    if out["embed_dim"] // out["row_nhead"] == 2:
        raise ValueError(f"{where}: row heads of width 2 (embed_dim={out['embed_dim']}, "
                         f"row_nhead={out['row_nhead']}) are not possible: TabICL's rotary "
                         "embedding divides by the head width minus 2")
    return out


def _attention_block(p: str, d: int, heads: int, ff: int, ssmax: str,
                     bias_free_ln: bool) -> dict[str, tuple[int, ...]]:
    """One ``MultiheadAttentionBlock`` (an ``nn.TransformerEncoderLayer`` whose self_attn is
    replaced by ``attn``): its state-dict entries in order."""
    shapes: dict[str, tuple[int, ...]] = {
        p + "linear1.weight": (ff, d), p + "linear1.bias": (ff,),
        p + "linear2.weight": (d, ff), p + "linear2.bias": (d,)}
    for norm in ("norm1", "norm2"):
        shapes[p + norm + ".weight"] = (d,)
        if not bias_free_ln:
            shapes[p + norm + ".bias"] = (d,)
    shapes.update({p + "attn.in_proj_weight": (3 * d, d), p + "attn.in_proj_bias": (3 * d,),
                   p + "attn.out_proj.weight": (d, d), p + "attn.out_proj.bias": (d,)})
    s, h, hd = p + "attn.ssmax_layer.", SSMAX_HIDDEN, d // heads
    if ssmax == "ssmax":
        shapes[s + "scales"] = (heads,)
    elif ssmax.startswith("ssmax-mlp"):
        out = d if ssmax.endswith("elementwise") else heads
        shapes.update({s + "mlp.0.weight": (h, 1), s + "mlp.0.bias": (h,),
                       s + "mlp.2.weight": (out, h), s + "mlp.2.bias": (out,)})
    elif ssmax.startswith("qassmax-mlp"):
        base, query = (d, hd) if ssmax.endswith("elementwise") else (heads, 1)
        shapes.update({s + "base_mlp.0.weight": (h, 1), s + "base_mlp.0.bias": (h,),
                       s + "base_mlp.2.weight": (base, h), s + "base_mlp.2.bias": (base,),
                       s + "query_mlp.0.weight": (h, hd), s + "query_mlp.0.bias": (h,),
                       s + "query_mlp.2.weight": (query, h), s + "query_mlp.2.bias": (query,)})
    return shapes


def _layer_norm(p: str, d: int, bias_free_ln: bool) -> dict[str, tuple[int, ...]]:
    return {p + "weight": (d,)} if bias_free_ln else {p + "weight": (d,), p + "bias": (d,)}


def expected_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every state-dict name of ``TabICL(**config)`` and its shape, in state-dict order.

    ``config`` may omit keys (the defaults fill them) and is checked (:func:`check_config`).
    Derived from ``tabicl._model`` (2.2.0): no buffer is persistent except the row
    transformer's RoPE frequencies, a parameter that is never trained
    (``row_interactor.tf_row.rope.freqs``, half a row head's width).
    """
    c = check_config(config)
    e, bias_free, norm_first = c["embed_dim"], c["bias_free_ln"], c["norm_first"]
    icl = e * c["row_num_cls"]
    classes = c["max_classes"]
    shapes: dict[str, tuple[int, ...]] = {}
    # column embedder (tabicl._model.embedding.ColEmbedding, SetTransformer of ISAB blocks)
    p = "col_embedder."
    width = c["col_feature_group_size"] if c["col_feature_group"] else 1
    shapes.update({p + "in_linear.weight": (e, width), p + "in_linear.bias": (e,)})
    for i in range(c["col_num_blocks"]):
        b = f"{p}tf_col.blocks.{i}."
        shapes[b + "ind_vectors"] = (c["col_num_inds"], e)
        shapes.update(_attention_block(b + "multihead_attn1.", e, c["col_nhead"],
                                       e * c["ff_factor"], ssmax_kind(c["col_ssmax"]),
                                       bias_free))
        shapes.update(_attention_block(b + "multihead_attn2.", e, c["col_nhead"],
                                       e * c["ff_factor"], "none", bias_free))
    if c["col_target_aware"]:
        shapes.update({p + "y_encoder.weight": (e, classes if classes else 1),
                       p + "y_encoder.bias": (e,)})
    if c["col_affine"]:
        for part in ("w", "b"):
            shapes.update({f"{p}out_{part}.weight": (e, e), f"{p}out_{part}.bias": (e,)})
            if norm_first:
                shapes.update(_layer_norm(f"{p}ln_{part}.", e, bias_free))
    # row interactor (tabicl._model.interaction.RowInteraction)
    p = "row_interactor."
    shapes[p + "cls_tokens"] = (c["row_num_cls"], e)
    for i in range(c["row_num_blocks"]):
        shapes.update(_attention_block(f"{p}tf_row.blocks.{i}.", e, c["row_nhead"],
                                       e * c["ff_factor"], "none", bias_free))
    shapes[p + "tf_row.rope.freqs"] = ((e // c["row_nhead"]) // 2,)
    if norm_first:
        shapes.update(_layer_norm(p + "out_ln.", e, bias_free))
    # in-context learner (tabicl._model.learning.ICLearning)
    p = "icl_predictor."
    for i in range(c["icl_num_blocks"]):
        shapes.update(_attention_block(f"{p}tf_icl.blocks.{i}.", icl, c["icl_nhead"],
                                       icl * c["ff_factor"], ssmax_kind(c["icl_ssmax"]),
                                       bias_free))
    if norm_first:
        shapes.update(_layer_norm(p + "ln.", icl, bias_free))
    out_dim = classes if classes else c["num_quantiles"]
    shapes.update({p + "y_encoder.weight": (icl, classes if classes else 1),
                   p + "y_encoder.bias": (icl,),
                   p + "decoder.0.weight": (2 * icl, icl), p + "decoder.0.bias": (2 * icl,),
                   p + "decoder.2.weight": (out_dim, 2 * icl), p + "decoder.2.bias": (out_dim,)})
    return shapes


def check_tensors(config: dict, tensors: dict[str, np.ndarray],
                  where: str) -> dict[str, np.ndarray]:
    """``tensors`` in state-dict order after checking they are exactly the config's, with
    its shapes; ValueError names the missing, unexpected or wrong-shaped tensor."""
    return state_dict.check(expected_shapes(config), tensors, where,
                            f"TabICL with {_brief(config)}")


def _brief(config: dict) -> str:
    keys = ("max_classes", "embed_dim", "col_num_blocks", "row_num_blocks", "icl_num_blocks")
    return ", ".join(f"{k}={config.get(k, CONFIG_DEFAULTS[k])}" for k in keys)


# --- reading ------------------------------------------------------------------------------


def read_checkpoint(path: str | PathLike) -> Checkpoint:
    """Read a TabICL checkpoint: the package's ``.ckpt`` or arenalite's ``.safetensors``.

    The format is told by content (a zip's ``PK`` or a safetensors header), not the name.
    Every failure is a ValueError naming the file and the culprit: a truncated or corrupt
    file, a foreign class in data.pkl, a missing ``config``/``state_dict`` or storage, a
    tensor beyond its storage, unknown config keys, missing, unexpected or wrong-shaped
    tensors. Non-finite values are not checked.
    """
    p = Path(path)
    where = f"checkpoint {str(p)!r}"
    if torch_checkpoint.sniff(p, where) == "zip":
        obj, tensors = torch_checkpoint.read_zip(p, where, model="TabICL",
                                                 required=("config", "state_dict"))
        config = obj["config"]
    else:
        config, tensors = _read_safetensors(p, where)
    config = check_config(config, where)
    return Checkpoint(config, check_tensors(config, tensors, where), p)


def _read_safetensors(p: Path, where: str) -> tuple[object, dict[str, np.ndarray]]:
    metadata, tensors = safetensors.read(p, finite=False)
    for key, want in (("format", FORMAT), ("version", VERSION)):
        if metadata.get(key) != want:
            raise ValueError(f"{where}: safetensors metadata {key!r} must be {want!r}, got "
                             f"{metadata.get(key)!r} (not a TabICL checkpoint written by "
                             "arenalite)")
    try:
        config = json.loads(metadata.get("config", ""))
    except json.JSONDecodeError:
        raise ValueError(f"{where}: safetensors metadata 'config' is not JSON: "
                         f"{metadata.get('config')!r}") from None
    return config, tensors


# --- writing ------------------------------------------------------------------------------


def write_safetensors(checkpoint: Checkpoint, out_path: str | PathLike) -> Path:
    """Write ``checkpoint`` as safetensors: its float32 tensors (the file orders them by
    name; reading it back restores state-dict order) and its full config as JSON in the
    metadata. Returns the path written."""
    config = check_config(checkpoint.config, "checkpoint to write")
    tensors = check_tensors(config, checkpoint.tensors, "checkpoint to write")
    metadata = {"format": FORMAT, "version": VERSION, "config": json.dumps(config)}
    return safetensors.write(out_path, tensors, metadata, finite=False)


def convert(ckpt_path: str | PathLike, out_path: str | PathLike) -> Path:
    """Read a TabICL checkpoint (``.ckpt`` or ``.safetensors``) and write it as safetensors."""
    return write_safetensors(read_checkpoint(ckpt_path), out_path)


# --- random weights -----------------------------------------------------------------------

TOKEN_STD = 0.02
"""Standard deviation of the learned tokens (``ind_vectors``, ``cls_tokens``), as the
package initialises them (``trunc_normal_(std=0.02)``), and of every bias (small, not zero)."""


def rope_frequencies(config: dict) -> np.ndarray:
    """``row_interactor.tf_row.rope.freqs`` of ``config`` as torch computes them in float32:
    ``1.0 / (base ** (torch.arange(0, d, 2)[: d // 2].float() / d))``, d = the row heads'
    width (``tabicl._model.rope.RotaryEmbedding``).

    The exponents are float32 quotients as in torch, the power is rounded once to float32
    from float64 and the reciprocal is a float32 division: bit for bit torch's values for
    TabICL's bases (1e4, 1e5) at head widths below 64 (torch then takes the C library's
    ``powf``); elsewhere within an ulp of them (torch's vectorised ``pow`` and ``powf`` are
    not correctly rounded).
    """
    c = check_config(config)
    d = c["embed_dim"] // c["row_nhead"]
    exponents = np.arange(0, d, 2)[: d // 2].astype(np.float32) / np.float32(d)
    base = np.float64(np.float32(float(c["row_rope_base"])))
    powers = np.power(base, exponents.astype(np.float64)).astype(np.float32)
    return np.float32(1.0) / powers


def random_checkpoint(config: dict, seed: int = 0) -> Checkpoint:
    """A checkpoint of ``TabICL(**config)`` with random float32 weights, made in numpy.

    Every tensor of :func:`expected_shapes`, drawn in state-dict order from
    ``numpy.random.default_rng(seed)`` by :func:`arenalite.models.state_dict.random_tensors`
    (the same seed, the same weights): matrices normal(0, 1/√fan_in), LayerNorm weights 1,
    biases and the learned tokens normal(0, :data:`TOKEN_STD`), SSMax's ``scales`` 1 (the
    package's initial values), and the RoPE frequencies their exact values
    (:func:`rope_frequencies`). ``zero_init`` is not applied (nothing is zeroed), so every
    block acts. ``config`` is completed and checked (:func:`check_config`). Write it with
    :func:`write_safetensors`; what it predicts is what random weights predict, not TabICL.
    """
    c = check_config(config)
    shapes = expected_shapes(c)
    fixed = {name: np.ones(shape) for name, shape in shapes.items() if name.endswith(".scales")}
    fixed["row_interactor.tf_row.rope.freqs"] = rope_frequencies(c)
    return Checkpoint(c, state_dict.random_tensors(shapes, seed, fixed, TOKEN_STD))
