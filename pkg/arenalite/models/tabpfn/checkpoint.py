"""TabPFN v3 checkpoints without torch: the package's files and arenalite's safetensors.

The ``tabpfn`` package (9.2.0) saves a model as ``torch.save({"state_dict": ...,
"config": asdict(TabPFNV3Config), "architecture_name": "tabpfn_v3", "inference_config":
asdict(InferenceConfig)})`` (``tabpfn.model_loading.save_tabpfn_model``; a regressor's
state dict adds its bar distribution's state as ``criterion.borders`` and
``criterion.losses_per_bucket``), and reads it back with ``load_model``: the architecture
named by ``architecture_name`` (none: ``"tabpfn_v2"``; ``"base"``: ``"tabpfn_v2_5"``), its
config parsed by that architecture, the state dict without the ``criterion.`` entries
loaded strictly into ``get_architecture(config)``, the regression borders taken from
``criterion.borders`` when saved, else from the model's ``regression_borders`` buffer, and
the inference config from the checkpoint, or, when it has none (or an empty one), the
package's defaults of v2.5 (``InferenceConfig.get_default(task, ModelVersion.V2_5)``; v2's
for a file without ``architecture_name``). ``tabpfn.checkpoint.Checkpoint`` also loads a
``.safetensors`` file: the state dict as its tensors, every other key JSON in its metadata.

:func:`read_checkpoint` does the same without torch, for TabPFN v3 only: the zip through
the restricted unpickler of :mod:`arenalite.models.torch_checkpoint` (nothing from the file
runs), the generation checked before any tensor is read (v2, v2.5, v2.6 and v3.5 files are
refused by name, by ``architecture_name`` or by what their config holds), the config
completed with ``TabPFNV3Config``'s defaults (:data:`CONFIG_DEFAULTS`) and checked, the
state dict exactly :func:`expected_shapes`, the inference config completed with
``InferenceConfig``'s defaults as the package does (or its v2.5 fallback, said so in
:attr:`Checkpoint.description`). Unlike the package, unknown config keys are refused (the
package ignores them; a key of another generation would change what the model is).

The same checkpoint as safetensors (:func:`write_safetensors`, :func:`convert`): the float32
state dict (``criterion.`` entries included) and the package's metadata layout, every value
JSON, plus ``"format": "arenalite.tabpfn"`` and ``"version": "1"``; the package loads such a
file too. :func:`read_checkpoint` tells the formats apart by their first bytes.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .. import safetensors, state_dict, torch_checkpoint

FORMAT = "arenalite.tabpfn"
VERSION = "1"
ARCHITECTURE = "tabpfn_v3"
"""The ``architecture_name`` read; every other is refused (:data:`GENERATIONS`)."""
GENERATIONS = {"tabpfn_v2": "v2", "base": "v2.5", "tabpfn_v2_5": "v2.5",
               "tabpfn_v2_6": "v2.6", "tabpfn_v3": "v3", "tabpfn_v3_5": "v3.5"}
"""``architecture_name`` → generation, as ``tabpfn.architectures.ARCHITECTURES`` (9.2.0)
names them (``"base"`` is v2.5's, remapped by ``load_model``)."""
CONFIG_NAMES = {"TabPFN-v2": "v2", "TabPFN-v2.5": "v2.5", "TabPFN-v2.6": "v2.6",
                "TabPFN-v3.5": "v3.5"}
"""The ``name`` default of the other generations' configs."""
OTHER_CONFIG_KEYS = {
    "v3.5": ("fourier_encoding_num_frequencies", "cell_ecdf_num_frequencies",
             "cell_ecdf_num_buckets", "cell_embed_row_chunk_size"),
    "v2.5 or v2.6": ("encoder_type", "encoder_mlp_hidden_dim", "num_thinking_rows"),
    "v2": ("emsize", "nhead", "features_per_group", "seed"),
}
"""Config keys of another generation's config that v3's lacks (checked in this order: v2.5
and v2.6 configs hold v2's ``emsize``, ``nhead`` and ``features_per_group`` too)."""

CONFIG_DEFAULTS: dict[str, Any] = {
    "max_num_classes": -1, "num_buckets": -1, "name": "TabPFN-v3",
    "embed_dim": 128, "dist_embed_num_blocks": 3, "dist_embed_num_heads": 8,
    "dist_embed_num_inducing_points": 128, "feature_group_size": 3,
    "feat_agg_num_blocks": 3, "feat_agg_num_heads": 8, "feat_agg_num_cls_tokens": 4,
    "feat_agg_rope_base": 100_000, "use_rope": True,
    "nlayers": 24, "icl_num_heads": 8, "icl_num_kv_heads": None, "icl_num_kv_heads_test": None,
    "decoder_head_dim": 64, "decoder_num_heads": 6, "decoder_use_softmax_scaling": False,
    "ff_factor": 2, "dropout": 0.0, "softmax_scaling_mlp_hidden_dim": 64,
    "layernorm_elementwise_affine": True, "use_nan_indicators": True,
    "inference_chunk_cells": 2048 * 768, "max_batched_estimator_rows": 32768,
    "max_batched_estimator_cells": 768_000_000, "inference_col_chunk_size": 4,
}
"""``tabpfn.architectures.tabpfn_v3.TabPFNV3Config``'s fields and defaults (tabpfn 9.2.0), in
order (``max_num_classes`` and ``num_buckets`` from ``ArchitectureConfig``). The defaults
make neither a classifier nor a regressor: a checkpoint sets one of the two."""
_POSITIVE = ("embed_dim", "dist_embed_num_heads", "dist_embed_num_inducing_points",
             "feature_group_size", "feat_agg_num_heads", "feat_agg_num_cls_tokens",
             "icl_num_heads", "decoder_head_dim", "decoder_num_heads", "ff_factor",
             "softmax_scaling_mlp_hidden_dim", "inference_chunk_cells",
             "max_batched_estimator_rows", "max_batched_estimator_cells",
             "inference_col_chunk_size")
_COUNTS = ("dist_embed_num_blocks", "feat_agg_num_blocks", "nlayers")
_INTEGERS = ("max_num_classes", "num_buckets")
_OPTIONAL = ("icl_num_kv_heads", "icl_num_kv_heads_test")
_FLAGS = ("use_rope", "decoder_use_softmax_scaling", "layernorm_elementwise_affine",
          "use_nan_indicators")

INFERENCE_DEFAULTS: dict[str, Any] = {
    "PREPROCESS_TRANSFORMS": None,  # required: no default
    "MAX_UNIQUE_FOR_CATEGORICAL_FEATURES": 30, "MIN_UNIQUE_FOR_NUMERICAL_FEATURES": 4,
    "MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE": 100, "MIN_CARDINALITY_FOR_TEXT": 30,
    "SOFTMAX_TEMPERATURE": 0.9, "N_ESTIMATORS": "auto", "TRANSFORM_DATES": False,
    "TRANSFORM_TEXT": False, "TEXT_N_COMPONENTS": 30, "OUTLIER_REMOVAL_STD": "auto",
    "FEATURE_SHIFT_METHOD": "shuffle", "CLASS_SHIFT_METHOD": "shuffle",
    "FINGERPRINT_FEATURE": True, "POLYNOMIAL_FEATURES": "no", "SUBSAMPLE_SAMPLES": None,
    "SAMPLE_SUBSAMPLING_METHOD": "auto", "ENABLE_GPU_PREPROCESSING": False,
    "FEATURE_SUBSAMPLING_METHOD": "balanced", "FEATURE_SUBSAMPLING_CONSTANT_FEATURE_COUNT": 50,
    "FEATURE_SUBSAMPLING_IMPORTANCE_TOP_K_COUNT": "auto",
    "REGRESSION_Y_PREPROCESS_TRANSFORMS": (None, "safepower"),
    "USE_SKLEARN_16_DECIMAL_PRECISION": False, "MAX_NUMBER_OF_CLASSES": 10,
    "MAX_NUMBER_OF_FEATURES": 500, "MAX_NUMBER_OF_SAMPLES": 10_000, "MAX_CPU_SAMPLES": 1000,
    "FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM": True, "PASSTHROUGH_INF": False,
    "_REGRESSION_DEFAULT_OUTLIER_REMOVAL_STD": None,
    "_CLASSIFICATION_DEFAULT_OUTLIER_REMOVAL_STD": 12.0,
}
"""``tabpfn.inference_config.InferenceConfig``'s fields and defaults (9.2.0), in order;
``PREPROCESS_TRANSFORMS`` has none (a checkpoint's inference config must give it)."""
PREPROCESSOR_DEFAULTS: dict[str, Any] = {
    "name": None,  # required: no default
    "categorical_name": "none", "append_original": False, "max_features_per_estimator": 500,
    "global_transformer_name": None, "max_onehot_cardinality": None, "differentiable": False,
}
"""``tabpfn.preprocessing.PreprocessorConfig``'s fields and defaults, in order (``name``
required): one entry of ``PREPROCESS_TRANSFORMS``."""


def _preprocessor(**given: Any) -> dict[str, Any]:
    return {**PREPROCESSOR_DEFAULTS, **given}


_SQUASHING_SVD = _preprocessor(name="squashing_scaler_default",
                               categorical_name="ordinal_very_common_categories_shuffled",
                               global_transformer_name="svd_quarter_components")
_V2_5_CHANGES = {"FEATURE_SUBSAMPLING_METHOD": "random", "MAX_NUMBER_OF_FEATURES": 2000,
                 "MAX_NUMBER_OF_SAMPLES": 50_000}
V2_5_INFERENCE_CONFIG: dict[str, dict[str, Any]] = {
    "classification": {**INFERENCE_DEFAULTS, **_V2_5_CHANGES, "PREPROCESS_TRANSFORMS": [
        _SQUASHING_SVD, _preprocessor(name="none", categorical_name="numeric")]},
    "regression": {**INFERENCE_DEFAULTS, **_V2_5_CHANGES, "PREPROCESS_TRANSFORMS": [
        _preprocessor(name="quantile_uni_coarse", categorical_name="numeric",
                      append_original="auto"), _SQUASHING_SVD]},
}
"""What a v3 checkpoint without an inference config runs with, as in the package:
``InferenceConfig.get_default("multiclass" | "regression", ModelVersion.V2_5)``
(``tabpfn.inference_config._get_v2_5_config`` with ``v2_5_classifier_preprocessor_configs``
/ ``v2_5_regressor_preprocessor_configs``)."""
CRITERION_KEYS = ("borders", "losses_per_bucket")
"""The bar distribution's state a regressor's state dict may carry as ``criterion.<key>``."""


@dataclass(frozen=True)
class Checkpoint:
    """A TabPFN v3 checkpoint: its full config, its float32 state dict by name (the model's,
    ``regression_borders`` included), the ``criterion.`` entries (without the prefix), the
    full inference config and where it came from (``"checkpoint"``, or ``"v2.5 defaults"``
    when the file has none)."""

    config: dict
    tensors: dict[str, np.ndarray]
    inference_config: dict
    inference_config_source: str = "checkpoint"
    criterion: dict[str, np.ndarray] = field(default_factory=dict)
    path: Path | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[name]

    @property
    def task(self) -> str:
        """``"classification"`` (``max_num_classes`` ≥ 2, as ``TabPFNV3Config``'s
        ``is_classification``) or ``"regression"``."""
        return task_of(self.config)

    @property
    def borders(self) -> np.ndarray | None:
        """A regressor's bucket borders (``num_buckets + 1``), as ``load_model`` takes them:
        ``criterion.borders`` when the file has it, else the ``regression_borders`` buffer;
        ``None`` for a classifier."""
        if self.task != "regression":
            return None
        return self.criterion.get("borders", self.tensors["regression_borders"])

    @property
    def description(self) -> str:
        """One line: what the checkpoint is and where its inference config came from."""
        c = self.config
        head = (f"{c['max_num_classes']} classes" if self.task == "classification"
                else f"{c['num_buckets']} buckets")
        params = sum(a.size for n, a in self.tensors.items() if n != "regression_borders")
        kind = "classifier" if self.task == "classification" else "regressor"
        where = f" from {self.path.name}" if self.path is not None else ""
        text = (f"TabPFN v3 {kind}{where} ({head}, embed_dim {c['embed_dim']}, "
                f"{c['nlayers']} ICL layers, {params:,} parameters); ")
        if self.inference_config_source == "checkpoint":
            return text + "inference config from the checkpoint"
        task = "multiclass" if self.task == "classification" else "regression"
        return text + ("the checkpoint has no inference config, so the tabpfn package's v2.5 "
                       f"{task} defaults, as the package falls back "
                       f"(InferenceConfig.get_default({task!r}, ModelVersion.V2_5))")


# --- the generation, the config and the state dict it implies ---------------------------


def task_of(config: dict) -> str:
    """The task of a (checked) config: classification when ``max_num_classes`` ≥ 2."""
    return "classification" if config["max_num_classes"] >= 2 else "regression"


def check_generation(checkpoint: dict, where: str) -> None:
    """ValueError unless ``checkpoint`` (the file's dict) is TabPFN v3's, naming the
    generation it is: by ``architecture_name`` as ``load_model`` reads it, then by its
    config's ``name`` and keys."""
    name = checkpoint.get("architecture_name", "tabpfn_v2")
    config = checkpoint.get("config")
    if "architecture_name" not in checkpoint and not (
            isinstance(config, dict) and any(k in config for k in OTHER_CONFIG_KEYS["v2"])):
        keys = sorted(map(str, config))[:8] if isinstance(config, dict) else config
        raise ValueError(f"{where}: not a TabPFN checkpoint: no 'architecture_name' (the tabpfn "
                         "package reads such a file as TabPFN v2) and its config is not "
                         f"v2's (no 'emsize', 'nhead' or 'features_per_group'; it holds "
                         f"{keys})")
    if not isinstance(name, str):
        raise ValueError(f"{where}: 'architecture_name' must be a string, got {name!r}")
    if name != ARCHITECTURE:
        if name not in GENERATIONS:
            raise ValueError(f"{where}: architecture_name {name!r} is none of the tabpfn "
                             f"package's ({sorted(GENERATIONS)}); only TabPFN v3 checkpoints "
                             f"({ARCHITECTURE!r}) are read")
        said = (f"architecture_name {name!r}" if "architecture_name" in checkpoint else
                "no architecture_name, which the tabpfn package reads as v2")
        raise ValueError(f"{where}: TabPFN {GENERATIONS[name]} checkpoints are not supported "
                         f"yet ({said}); only TabPFN v3 is read")
    if not isinstance(config, dict):
        return  # check_config says what is wrong with it
    if config.get("name") in CONFIG_NAMES:
        generation = CONFIG_NAMES[config["name"]]
        raise ValueError(f"{where}: TabPFN {generation} checkpoints are not supported yet "
                         f"(architecture_name {name!r}, but its config's name is "
                         f"{config['name']!r})")
    for generation, keys in OTHER_CONFIG_KEYS.items():
        found = [k for k in keys if k in config]
        if found:
            raise ValueError(f"{where}: TabPFN {generation} checkpoints are not supported yet "
                             f"(architecture_name {name!r}, but its config holds "
                             f"{generation}'s keys {found})")


def check_config(config: object, where: str = "TabPFN v3 config") -> dict:
    """``config`` completed with :data:`CONFIG_DEFAULTS` (in their order) and checked.

    Integral floats of integer fields become ints (as the package's pydantic config makes
    them); unknown keys, wrong types, head counts that do not divide their width, an odd
    rotary head width and a config that is neither a classifier (``max_num_classes`` ≥ 2)
    nor a regressor (``num_buckets`` ≥ 1) raise ValueError starting with ``where``.
    """
    if not isinstance(config, dict):
        raise ValueError(f"{where}: the config must be a dict, got {type(config).__name__}")
    unknown = [k for k in config if k not in CONFIG_DEFAULTS]
    if unknown:
        raise ValueError(f"{where}: unknown config keys {sorted(map(str, unknown))} (TabPFN v3 "
                         f"takes {list(CONFIG_DEFAULTS)})")
    out = {key: config.get(key, default) for key, default in CONFIG_DEFAULTS.items()}

    def fail(key: str, what: str) -> ValueError:
        return ValueError(f"{where}: {key!r} must be {what}, got {out[key]!r}")

    def integer(key: str) -> bool:
        value = out[key]
        if isinstance(value, float) and value.is_integer():
            out[key] = value = int(value)
        return isinstance(value, int) and not isinstance(value, bool)

    for key in _POSITIVE:
        if not integer(key) or out[key] < 1:
            raise fail(key, "a positive integer")
    for key in _COUNTS:
        if not integer(key) or out[key] < 0:
            raise fail(key, "a non-negative integer")
    for key in _INTEGERS:
        if not integer(key):
            raise fail(key, "an integer")
    for key in _OPTIONAL:
        if out[key] is not None and (not integer(key) or out[key] < 1):
            raise fail(key, "null or a positive integer")
    for key in _FLAGS:
        if not isinstance(out[key], bool):
            raise fail(key, "true or false")
    if not isinstance(out["name"], str):
        raise fail("name", "a string")
    base = out["feat_agg_rope_base"]
    if isinstance(base, bool) or not isinstance(base, int | float) or not 1 <= base < math.inf:
        raise fail("feat_agg_rope_base", "a number of at least 1")
    dropout = out["dropout"]
    if isinstance(dropout, bool) or not isinstance(dropout, int | float) or not 0 <= dropout <= 1:
        raise fail("dropout", "a number in [0, 1]")
    if out["max_num_classes"] < 2 and out["num_buckets"] < 1:
        raise ValueError(f"{where}: neither a classifier (max_num_classes "
                         f"{out['max_num_classes']}, at least 2) nor a regressor (num_buckets "
                         f"{out['num_buckets']}, at least 1)")
    e = out["embed_dim"]
    icl = e * out["feat_agg_num_cls_tokens"]
    for key, width, what in (("dist_embed_num_heads", e, "embed_dim"),
                             ("feat_agg_num_heads", e, "embed_dim"),
                             ("icl_num_heads", icl, "embed_dim × feat_agg_num_cls_tokens")):
        if width % out[key]:
            raise ValueError(f"{where}: {key}={out[key]} does not divide {what} = {width}")
    if out["use_rope"] and (e // out["feat_agg_num_heads"]) % 2:
        raise ValueError(f"{where}: rotary embedding needs an even head width; embed_dim "
                         f"{e} / feat_agg_num_heads {out['feat_agg_num_heads']} = "
                         f"{e // out['feat_agg_num_heads']}")
    heads, kv, kv_test = out["icl_num_heads"], out["icl_num_kv_heads"], out["icl_num_kv_heads_test"]
    if kv is not None and heads % kv:
        raise ValueError(f"{where}: icl_num_kv_heads={kv} does not divide icl_num_heads={heads}")
    if kv_test is not None:
        if heads % kv_test:
            raise ValueError(f"{where}: icl_num_kv_heads_test={kv_test} does not divide "
                             f"icl_num_heads={heads}")
        if kv_test > (kv if kv is not None else heads):
            raise ValueError(f"{where}: icl_num_kv_heads_test={kv_test} is more than the train "
                             f"rows' KV heads ({kv if kv is not None else heads})")
    return out


def _softmax_scaling(p: str, heads: int, head_dim: int,
                     hidden: int) -> dict[str, tuple[int, ...]]:
    """``SoftmaxScalingMLP(num_heads, head_dim, n_hidden)``'s entries."""
    return {p + "base_mlp.0.weight": (hidden, 1), p + "base_mlp.0.bias": (hidden,),
            p + "base_mlp.2.weight": (heads * head_dim, hidden),
            p + "base_mlp.2.bias": (heads * head_dim,),
            p + "query_mlp.0.weight": (hidden, head_dim), p + "query_mlp.0.bias": (hidden,),
            p + "query_mlp.2.weight": (head_dim, hidden), p + "query_mlp.2.bias": (head_dim,)}


def _projections(p: str, d: int, names: tuple[str, ...]) -> dict[str, tuple[int, ...]]:
    return {f"{p}{n}_projection.weight": (d, d) for n in names}


def _mlp(p: str, d: int, ff: int) -> dict[str, tuple[int, ...]]:
    """``MLP(d, ff)``: two bias-free linears around GELU."""
    return {p + "mlp.0.weight": (ff, d), p + "mlp.2.weight": (d, ff)}


def _norms(p: str, names: tuple[str, ...], d: int, affine: bool) -> dict[str, tuple[int, ...]]:
    """RMSNorms: a weight each when affine, nothing otherwise."""
    return {f"{p}{n}.weight": (d,) for n in names} if affine else {}


def expected_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every state-dict name of ``get_architecture(TabPFNV3Config(**config))`` and its shape,
    in state-dict order (``criterion.`` entries are not the model's).

    ``config`` may omit keys (the defaults fill them) and is checked (:func:`check_config`).
    Derived from ``tabpfn.architectures.tabpfn_v3`` (9.2.0): the one buffer is
    ``regression_borders`` (``num_buckets + 1`` long, empty without buckets); the RoPE
    frequencies are a parameter that is never trained (``column_aggregator.rope.freqs``).
    """
    c = check_config(config)
    e, ff, affine = c["embed_dim"], c["ff_factor"], c["layernorm_elementwise_affine"]
    hidden = c["softmax_scaling_mlp_hidden_dim"]
    classes = c["max_num_classes"] if task_of(c) == "classification" else None
    icl = e * c["feat_agg_num_cls_tokens"]
    shapes: dict[str, tuple[int, ...]] = {
        "regression_borders": (max(c["num_buckets"] + 1, 0),),
        "x_embed.weight": (e, c["feature_group_size"] * (2 if c["use_nan_indicators"] else 1)),
        "x_embed.bias": (e,)}
    if classes:
        shapes["col_y_encoder.embedding.weight"] = (classes, e)
    else:
        shapes.update({"col_y_encoder.weight": (e, 1), "col_y_encoder.bias": (e,)})
    heads = c["dist_embed_num_heads"]
    for i in range(c["dist_embed_num_blocks"]):
        p = f"feature_distribution_embedder.layers.{i}."
        shapes[p + "inducing_vectors"] = (c["dist_embed_num_inducing_points"], e)
        for block in ("cross_attn_block1", "cross_attn_block2"):
            b = f"{p}{block}."
            if block == "cross_attn_block1":
                shapes.update(_softmax_scaling(b + "attn.softmax_scaling_layer.", heads,
                                               e // heads, hidden))
            shapes.update(_projections(b + "attn.", e, ("q", "k", "v", "out")))
            shapes.update(_mlp(b, e, e * ff))
            shapes.update(_norms(b, ("layernorm_q", "layernorm_kv", "layernorm2"), e, affine))
    p = "column_aggregator."
    shapes[p + "cls_tokens"] = (c["feat_agg_num_cls_tokens"], e)
    for i in range(c["feat_agg_num_blocks"]):
        b = f"{p}blocks.{i}."
        shapes.update(_projections(b + "attention.", e, ("q", "k", "v", "out")))
        shapes.update(_norms(b, ("layernorm", "layernorm_mlp"), e, affine))
        shapes.update(_mlp(b, e, e * ff))
    if c["use_rope"]:
        shapes[p + "rope.freqs"] = ((e // c["feat_agg_num_heads"] + 1) // 2,)
    shapes.update(_norms(p, ("out_ln",), e, affine))
    if classes:
        shapes["icl_y_encoder.embedding.weight"] = (classes, icl)
    else:
        shapes.update({"icl_y_encoder.weight": (icl, 1), "icl_y_encoder.bias": (icl,)})
    heads = c["icl_num_heads"]
    head_dim = icl // heads
    kv = (c["icl_num_kv_heads"] or heads) * head_dim
    for i in range(c["nlayers"]):
        b = f"icl_blocks.{i}."
        shapes.update(_softmax_scaling(b + "icl_attention.softmax_scaling_layer.", heads,
                                       head_dim, hidden))
        shapes.update(_projections(b + "icl_attention.", icl, ("q", "out")))
        shapes.update({b + "icl_attention.k_projection.weight": (kv, icl),
                       b + "icl_attention.v_projection.weight": (kv, icl)})
        shapes.update(_norms(b, ("layernorm", "layernorm_mlp"), icl, affine))
        shapes.update(_mlp(b, icl, icl * ff))
    shapes.update(_norms("", ("output_norm",), icl, affine))
    if classes:
        p, width = "many_class_decoder.", c["decoder_head_dim"] * c["decoder_num_heads"]
        for n in ("q", "k"):
            shapes.update({f"{p}{n}_projection.weight": (width, icl),
                           f"{p}{n}_projection.bias": (width,)})
        if c["decoder_use_softmax_scaling"]:
            shapes.update(_softmax_scaling(p + "softmax_scaling_layer.", c["decoder_num_heads"],
                                           c["decoder_head_dim"], hidden))
    else:
        shapes.update({"output_projection.0.weight": (icl * ff, icl),
                       "output_projection.0.bias": (icl * ff,),
                       "output_projection.2.weight": (c["num_buckets"], icl * ff),
                       "output_projection.2.bias": (c["num_buckets"],)})
    return shapes


def check_tensors(config: dict, tensors: dict[str, np.ndarray],
                  where: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """``(the model's tensors in state-dict order, the criterion entries without their
    prefix)`` after checking the state dict holds exactly the config's tensors with its
    shapes, and at most :data:`CRITERION_KEYS` besides (a regressor's: ``num_buckets + 1``
    borders, ``num_buckets`` losses); ValueError names the culprit."""
    shapes = expected_shapes(config)
    criterion = {n[len("criterion."):]: a for n, a in tensors.items()
                 if n.startswith("criterion.")}
    model = {n: a for n, a in tensors.items() if not n.startswith("criterion.")}
    model = state_dict.check(shapes, model, where, f"TabPFN v3 with {_brief(config)}",
                             unexpected=[f"criterion.{n}" for n in criterion
                                         if n not in CRITERION_KEYS])
    c = check_config(config)
    want = {"borders": (c["num_buckets"] + 1,), "losses_per_bucket": (c["num_buckets"],)}
    for name, arr in criterion.items():
        got = tuple(np.shape(arr))
        if (got != want[name]) if task_of(c) == "regression" else len(got) != 1:
            expected = list(want[name]) if task_of(c) == "regression" else "1-D"
            raise ValueError(f"{where}: tensor 'criterion.{name}' has shape {list(got)}, "
                             f"expected {expected} for its config")
    order = [n for n in CRITERION_KEYS if n in criterion]
    return model, {n: criterion[n] for n in order}


def _brief(config: dict) -> str:
    keys = ("max_num_classes", "num_buckets", "embed_dim", "dist_embed_num_blocks",
            "feat_agg_num_blocks", "nlayers")
    return ", ".join(f"{k}={config.get(k, CONFIG_DEFAULTS[k])}" for k in keys)


# --- the inference config ----------------------------------------------------------------


def check_inference_config(value: object, where: str) -> dict:
    """A checkpoint's inference config as ``InferenceConfig(**value)`` completes it: the
    old key ``CONSTANT_FEATURE_COUNT`` renamed (``_rename_old_inference_config_keys``),
    every field of :data:`INFERENCE_DEFAULTS` in order, each ``PREPROCESS_TRANSFORMS`` entry
    completed with :data:`PREPROCESSOR_DEFAULTS`, ``REGRESSION_Y_PREPROCESS_TRANSFORMS`` a
    tuple. Unknown keys (the package forbids them), a missing ``PREPROCESS_TRANSFORMS`` or
    preprocessor ``name`` raise ValueError starting with ``where``; values are kept as given
    (the stages that use them check them)."""
    if not isinstance(value, dict):
        raise ValueError(f"{where}: 'inference_config' must be a dict, got "
                         f"{type(value).__name__}")
    given = copy.deepcopy(value)
    if "CONSTANT_FEATURE_COUNT" in given:
        given["FEATURE_SUBSAMPLING_CONSTANT_FEATURE_COUNT"] = given.pop("CONSTANT_FEATURE_COUNT")
    unknown = [k for k in given if k not in INFERENCE_DEFAULTS]
    if unknown:
        raise ValueError(f"{where}: unknown inference_config keys {sorted(map(str, unknown))} "
                         "(the tabpfn package's InferenceConfig refuses them)")
    if "PREPROCESS_TRANSFORMS" not in given:
        raise ValueError(f"{where}: inference_config has no 'PREPROCESS_TRANSFORMS', which "
                         "the tabpfn package's InferenceConfig requires")
    out = {key: given.get(key, default) for key, default in INFERENCE_DEFAULTS.items()}
    transforms = out["PREPROCESS_TRANSFORMS"]
    if not isinstance(transforms, list | tuple):
        raise ValueError(f"{where}: inference_config 'PREPROCESS_TRANSFORMS' must be a list, "
                         f"got {type(transforms).__name__}")
    completed = []
    for i, entry in enumerate(transforms):
        what = f"inference_config PREPROCESS_TRANSFORMS[{i}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: {what} must be a dict, got {type(entry).__name__}")
        unknown = [k for k in entry if k not in PREPROCESSOR_DEFAULTS]
        if unknown:
            raise ValueError(f"{where}: {what} has unknown keys {sorted(map(str, unknown))} "
                             f"(PreprocessorConfig takes {list(PREPROCESSOR_DEFAULTS)})")
        if "name" not in entry:
            raise ValueError(f"{where}: {what} has no 'name'")
        completed.append({key: entry.get(key, d) for key, d in PREPROCESSOR_DEFAULTS.items()})
    out["PREPROCESS_TRANSFORMS"] = completed
    targets = out["REGRESSION_Y_PREPROCESS_TRANSFORMS"]
    if isinstance(targets, list):
        out["REGRESSION_Y_PREPROCESS_TRANSFORMS"] = tuple(targets)
    return out


def inference_config_of(checkpoint: dict, task: str, where: str) -> tuple[dict, str]:
    """``(the inference config, "checkpoint" | "v2.5 defaults")`` as
    ``_get_inference_config_from_checkpoint`` picks it for a v3 file: the checkpoint's when
    it is there and not empty, else :data:`V2_5_INFERENCE_CONFIG` of the task."""
    value = checkpoint.get("inference_config")
    if value:
        return check_inference_config(value, where), "checkpoint"
    return copy.deepcopy(V2_5_INFERENCE_CONFIG[task]), "v2.5 defaults"


# --- reading ------------------------------------------------------------------------------


def read_checkpoint(path: str | PathLike) -> Checkpoint:
    """Read a TabPFN v3 checkpoint: the package's ``.ckpt`` (or ``.safetensors``) or
    arenalite's ``.safetensors``, told by content, not the name.

    Every failure is a ValueError naming the file and the culprit: a missing, truncated or
    corrupt file, a foreign class in data.pkl (refused before anything is called), another
    generation (by name: "TabPFN v2.6 checkpoints are not supported yet"), a missing
    ``config``/``state_dict``, unknown config or inference-config keys, missing, unexpected
    or wrong-shaped tensors. Non-finite values are not checked.
    """
    p = Path(path)
    where = f"checkpoint {str(p)!r}"

    def inspect(obj: dict) -> None:  # before any tensor is read
        check_generation(obj, where)
        check_config(obj["config"], where)

    if torch_checkpoint.sniff(p, where) == "zip":
        obj, tensors = torch_checkpoint.read_zip(p, where, model="TabPFN",
                                                 required=("config", "state_dict"),
                                                 inspect=inspect)
    else:
        obj = _safetensors_checkpoint(p, where)
        inspect(obj)
        tensors = _read_safetensors_tensors(p, where)
    config = check_config(obj["config"], where)
    model, criterion = check_tensors(config, tensors, where)
    inference, source = inference_config_of(obj, task_of(config), where)
    return Checkpoint(config, model, inference, source, criterion, p)


def _safetensors_checkpoint(p: Path, where: str) -> dict:
    """The checkpoint dict of a safetensors file as ``tabpfn.checkpoint.Checkpoint`` makes
    it (each metadata value JSON), from the header alone; ``format``/``version``, when
    there, must be arenalite's."""
    metadata = safetensors.read_header(p).metadata
    obj: dict[str, Any] = {}
    for key, value in metadata.items():
        try:
            obj[key] = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"{where}: safetensors metadata {key!r} is not JSON: "
                             f"{value[:80]!r} (not a TabPFN checkpoint's metadata)") from None
    for key, want in (("format", FORMAT), ("version", VERSION)):
        if key in obj and obj[key] != want:
            raise ValueError(f"{where}: safetensors metadata {key!r} must be {want!r}, got "
                             f"{obj[key]!r}")
    if "config" not in obj:
        raise ValueError(f"{where}: safetensors metadata has no 'config' (its keys: "
                         f"{sorted(metadata)}; not a TabPFN checkpoint)")
    return obj


def _read_safetensors_tensors(p: Path, where: str) -> dict[str, np.ndarray]:
    _, tensors = safetensors.read(p, finite=False)
    return tensors


# --- writing ------------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


BIAS_STD = 0.02
"""The spread of a random checkpoint's biases, learned tokens and inducing vectors."""


def rope_frequencies(config: dict) -> np.ndarray:
    """``column_aggregator.rope.freqs`` as the package sets them (never trained):
    ``1 / base ** (arange(0, d, 2) / d)`` in float32, d the column heads' width rounded up to
    even, base ``feat_agg_rope_base``."""
    c = check_config(config)
    d = 2 * ((c["embed_dim"] // c["feat_agg_num_heads"] + 1) // 2)
    exponents = np.arange(0, d, 2, dtype=np.float32) / np.float32(d)
    return (np.float32(1.0) / np.float32(c["feat_agg_rope_base"]) ** exponents).astype(np.float32)


def random_borders(num_buckets: int) -> np.ndarray:
    """A regressor's bucket borders for random weights: standard-normal quantiles at
    ``num_buckets + 1`` levels from 0.001 to 0.999 (float32; a real checkpoint brings its
    own)."""
    from scipy import special

    return special.ndtri(np.linspace(0.001, 0.999, num_buckets + 1)).astype(np.float32)


def random_checkpoint(config: dict, seed: int = 0) -> Checkpoint:
    """A TabPFN v3 checkpoint of random float32 weights, made in numpy (no torch).

    Every tensor of :func:`expected_shapes`, drawn in state-dict order from
    ``numpy.random.default_rng(seed)`` by :func:`arenalite.models.state_dict.random_tensors`:
    matrices normal(0, 1/√fan_in) (fan_in: the last axis), norm weights 1, biases, tokens and
    inducing vectors normal(0, :data:`BIAS_STD`), the RoPE frequencies their exact values
    (:func:`rope_frequencies`), a regressor's borders :func:`random_borders`. Nothing is zeroed
    (the package zeroes its output projections), so every block acts. The inference config is
    the package's v2.5 defaults for the task, as for a file without one. What it predicts is
    what random weights predict, never TabPFN's quality.
    """
    c = check_config(config)
    shapes = expected_shapes(c)
    fixed = {name: rope_frequencies(c) for name in shapes if name.endswith("rope.freqs")}
    if "regression_borders" in shapes:
        fixed["regression_borders"] = random_borders(c["num_buckets"]) \
            if task_of(c) == "regression" else np.zeros(shapes["regression_borders"])
    tensors = state_dict.random_tensors(shapes, seed, fixed, BIAS_STD)
    task = task_of(c)
    return Checkpoint(config=c, tensors=tensors,
                      inference_config=copy.deepcopy(V2_5_INFERENCE_CONFIG[task]),
                      inference_config_source="v2.5 defaults")


def write_safetensors(checkpoint: Checkpoint, out_path: str | PathLike) -> Path:
    """Write ``checkpoint`` as safetensors: its float32 state dict (``criterion.`` entries
    included; the file orders tensors by name, reading restores state-dict order) and
    JSON metadata ``format``, ``version``, ``architecture_name``, ``config`` and, when the
    checkpoint had one, ``inference_config`` (so a checkpoint without one falls back again
    when read). Returns the path written."""
    config = check_config(checkpoint.config, "checkpoint to write")
    tensors = {**checkpoint.tensors,
               **{f"criterion.{n}": a for n, a in checkpoint.criterion.items()}}
    model, criterion = check_tensors(config, tensors, "checkpoint to write")
    metadata = {"format": json.dumps(FORMAT), "version": json.dumps(VERSION),
                "architecture_name": json.dumps(ARCHITECTURE),
                "config": json.dumps(config)}
    if checkpoint.inference_config_source == "checkpoint":
        inference = check_inference_config(checkpoint.inference_config, "checkpoint to write")
        metadata["inference_config"] = json.dumps(_jsonable(inference))
    out = {**model, **{f"criterion.{n}": a for n, a in criterion.items()}}
    return safetensors.write(out_path, out, metadata, finite=False)


def convert(ckpt_path: str | PathLike, out_path: str | PathLike) -> Path:
    """Read a TabPFN v3 checkpoint (``.ckpt`` or ``.safetensors``) and write it as
    safetensors."""
    return write_safetensors(read_checkpoint(ckpt_path), out_path)
