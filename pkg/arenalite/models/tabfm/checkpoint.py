"""Google TabFM checkpoints without torch: the package's ``save_pretrained`` folders and
arenalite's single safetensors file.

The ``tabfm`` package (1.0.1, Apache-2.0) publishes its PyTorch weights as the folder
``PyTorchModelHubMixin.save_pretrained`` writes: ``config.json`` (``TabFM.__init__``'s
arguments, plus on the hub ``task``, ``model_type``, ``version`` and ``framework``) and
``model.safetensors`` (the float32 state dict). The hub repository holds two of them,
``classification/`` and ``regression/``; ``tabfm_v1_0_0.load(model_type, path)`` takes the
parent and picks the subfolder by task, and so does :func:`read_checkpoint`.

:func:`convert` writes one safetensors file with the config as JSON in its metadata
(``{"format": "arenalite.tabfm", "version": "1", "config": ...}``), for a page that picks
one file. :func:`read_checkpoint` takes the folder, its parent, or that file.

Nothing from a file runs until all of it is checked: the config's keys (an unknown one is
refused by name: a later release that adds a switch must not run with the wrong
architecture), its values, then every tensor of :func:`expected_shapes` present, with its
shape, float32, finite, and nothing else. Each failure is a ValueError naming the file and
the culprit.

:func:`random_checkpoint` makes random float32 weights for any config in numpy alone,
every tensor drawn (the Fourier and RoPE frequencies and the RMSNorm scales included, which
the package initialises to zeros, ones or a formula); :func:`save_pretrained` writes it in
the package's folder layout. Its predictions are those of random weights, not of TabFM.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import numpy as np

from .. import safetensors, state_dict

FORMAT = "arenalite.tabfm"
VERSION = "1"
CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.safetensors"
TASKS = ("classification", "regression")
ARCHITECTURE: dict[str, Any] = {
    "embed_dim": 8, "max_classes": 3, "col_num_blocks": 2, "col_nhead": 2,
    "col_num_inds": 4, "row_num_blocks": 2, "row_nhead": 2, "row_num_cls": 2,
    "icl_num_blocks": 2, "icl_nhead": 2, "ff_factor": 2, "feature_group_size": 3,
    "num_freq": 32, "decoder_hidden": None, "is_classifier": True,
}
"""``tabfm.src.pytorch.model.TabFM.__init__``'s parameters and defaults (tabfm 1.0.1), in
order: what a config may say and what a missing key means (as the package fills it)."""
HUB_KEYS = ("task", "model_type", "version", "framework")
"""The keys the hub's config.json adds; the loader derives ``is_classifier`` from ``task``
and drops the other three."""
V1_0_0 = {**ARCHITECTURE, "embed_dim": 256, "max_classes": 10, "col_num_blocks": 3,
          "col_nhead": 4, "col_num_inds": 256, "row_num_blocks": 3, "row_nhead": 8,
          "row_num_cls": 8, "icl_num_blocks": 24, "icl_nhead": 8, "ff_factor": 4,
          "feature_group_size": 3}
"""The v1.0.0 checkpoint's architecture (``hugging_face/convert_and_upload.py``'s
``V1_0_0_CONFIG``; ``decoder_hidden`` is taken from the converted weights there and is
``None`` here, the default width ``2 · embed_dim · row_num_cls``)."""
ROPE_BASE = 100000.0
"""The row transformers' RoPE base (``Encoder``'s default; not in the config). Only
:func:`random_checkpoint` uses it: the forward reads the frequencies from the file."""


@dataclass(frozen=True)
class Checkpoint:
    """A Google TabFM checkpoint: its full config and float32 tensors by state-dict name."""

    config: dict
    tensors: dict[str, np.ndarray]
    path: Path | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[name]

    @property
    def task(self) -> str:
        return "classification" if self.config["is_classifier"] else "regression"


# --- config and the state dict it implies -------------------------------------------------


def _integer(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_config(config: object, where: str = "Google TabFM config") -> dict:
    """``config`` completed with :data:`ARCHITECTURE`'s defaults and checked.

    The hub's keys (:data:`HUB_KEYS`) are kept as given; ``task`` sets ``is_classifier``
    when that is absent and must agree with it when both are there. An unknown key, a
    wrong type, a head count that does not divide its width, or a row head of odd width
    (the package's RoPE rotates pairs) raises ValueError starting with ``where``.
    """
    if not isinstance(config, dict):
        raise ValueError(f"{where}: the config must be a JSON object, got "
                         f"{type(config).__name__}")
    unknown = [k for k in config if k not in ARCHITECTURE and k not in HUB_KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown config key(s) {sorted(map(str, unknown))}: this "
                         f"reader knows tabfm 1.0.1's {list(ARCHITECTURE) + list(HUB_KEYS)} "
                         "and will not guess what a newer release's key changes")
    out = {key: config.get(key, default) for key, default in ARCHITECTURE.items()}
    for key in HUB_KEYS:
        if key in config:
            if not isinstance(config[key], str):
                raise ValueError(f"{where}: {key!r} must be a string, got {config[key]!r}")
            out[key] = config[key]
    task = config.get("task")
    if task is not None and task not in TASKS:
        raise ValueError(f"{where}: 'task' must be one of {list(TASKS)}, got {task!r}")
    if not isinstance(out["is_classifier"], bool):
        raise ValueError(f"{where}: 'is_classifier' must be true or false, got "
                         f"{out['is_classifier']!r}")
    if task is not None:
        if "is_classifier" in config and out["is_classifier"] != (task == "classification"):
            raise ValueError(f"{where}: 'task' {task!r} contradicts 'is_classifier' "
                             f"{out['is_classifier']!r}")
        out["is_classifier"] = task == "classification"

    def fail(key: str, what: str) -> ValueError:
        return ValueError(f"{where}: {key!r} must be {what}, got {out[key]!r}")

    for key in ("embed_dim", "max_classes", "col_nhead", "col_num_inds", "row_nhead",
                "row_num_cls", "icl_nhead", "ff_factor", "feature_group_size", "num_freq"):
        if not _integer(out[key]) or out[key] < 1:
            raise fail(key, "a positive integer")
    for key in ("col_num_blocks", "row_num_blocks", "icl_num_blocks"):
        if not _integer(out[key]) or out[key] < 0:
            raise fail(key, "a non-negative integer")
    if out["decoder_hidden"] is not None and (not _integer(out["decoder_hidden"])
                                              or out["decoder_hidden"] < 1):
        raise fail("decoder_hidden", "null or a positive integer")
    icl_dim = out["embed_dim"] * out["row_num_cls"]
    for key, width, what in (("col_nhead", out["embed_dim"], "embed_dim"),
                             ("row_nhead", out["embed_dim"], "embed_dim"),
                             ("icl_nhead", icl_dim, "embed_dim × row_num_cls")):
        if width % out[key]:
            raise ValueError(f"{where}: {key}={out[key]} does not divide {what} = {width}")
    if (out["embed_dim"] // out["row_nhead"]) % 2:
        raise ValueError(f"{where}: row heads of odd width ({out['embed_dim']} / "
                         f"{out['row_nhead']}) cannot be rotated in pairs (RoPE)")
    return out


def _attention_block(p: str, d: int, heads: int, ff: int) -> dict[str, tuple[int, ...]]:
    """One ``MultiheadAttentionBlock`` (q/k/v/out projections, q/k RMSNorm, softplus
    per-dimension scale, four RMSNorms, a SwiGLU feed-forward), in state-dict order."""
    hd = d // heads
    shapes: dict[str, tuple[int, ...]] = {p + "attn.per_dim_scale": (hd,)}
    for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
        shapes.update({f"{p}attn.{proj}.weight": (d, d), f"{p}attn.{proj}.bias": (d,)})
    shapes.update({p + "attn.query_ln.weight": (hd,), p + "attn.key_ln.weight": (hd,)})
    for norm in ("pre_attn_ln", "post_attn_ln", "pre_ff_ln", "post_ff_ln"):
        shapes[f"{p}{norm}.weight"] = (d,)
    shapes.update({p + "linear1.weight": (ff, d), p + "linear1.bias": (ff,),
                   p + "linear1_gate.weight": (ff, d), p + "linear1_gate.bias": (ff,),
                   p + "linear2.weight": (d, ff), p + "linear2.bias": (d,)})
    return shapes


def _mlp(p: str, dims: list[int]) -> dict[str, tuple[int, ...]]:
    """``MLP``: consecutive Linears ``layers.k`` from ``dims[k]`` to ``dims[k + 1]``."""
    shapes: dict[str, tuple[int, ...]] = {}
    for k, (a, b) in enumerate(zip(dims, dims[1:], strict=False)):
        shapes.update({f"{p}layers.{k}.weight": (b, a), f"{p}layers.{k}.bias": (b,)})
    return shapes


def expected_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every state-dict name of ``TabFM(**config)`` and its shape, in state-dict order
    (parameters and persistent buffers: the Fourier frequencies and the row RoPE's)."""
    c = check_config(config)
    e, ff = c["embed_dim"], c["embed_dim"] * c["ff_factor"]
    icl = e * c["row_num_cls"]
    hidden = c["decoder_hidden"] or 2 * icl
    classes, g, nf = c["max_classes"], c["feature_group_size"], c["num_freq"]
    shapes: dict[str, tuple[int, ...]] = {"cls_tokens": (c["row_num_cls"], e)}
    p = "cell_embedder."
    shapes.update({p + "fourier_frequencies": (g, nf), p + "fourier_frequencies_cat": (g, nf),
                   p + "in_linear.weight": (e, 2 * nf), p + "in_linear.bias": (e,),
                   p + "in_linear_cat.weight": (e, 2 * nf), p + "in_linear_cat.bias": (e,)})
    if c["is_classifier"]:
        shapes[p + "y_embedder_lookup.weight"] = (classes, e)
    else:
        shapes.update(_mlp(p + "y_embedder_lookup.", [1, 6, e]))
    for p in ("col_embedder.", "col_embedder_2."):
        for i in range(c["col_num_blocks"]):
            b = f"{p}tf_col.blocks.{i}."
            shapes[b + "ind_vectors"] = (c["col_num_inds"], e)
            shapes.update(_attention_block(b + "mab1.", e, c["col_nhead"], ff))
            shapes.update(_attention_block(b + "mab2.", e, c["col_nhead"], ff))
        shapes.update({p + "out_w.weight": (e, e), p + "out_w.bias": (e,),
                       p + "ln_w.weight": (e,)})
    for p in ("row_interactor.", "row_interactor_2."):
        hd = e // c["row_nhead"]
        shapes[p + "tf_row.rope.freqs"] = ((hd + 1) // 2,)
        for i in range(c["row_num_blocks"]):
            shapes.update(_attention_block(f"{p}tf_row.blocks.{i}.", e, c["row_nhead"], ff))
        shapes[p + "out_ln.weight"] = (e,)
    p = "icl_predictor."
    for i in range(c["icl_num_blocks"]):
        shapes.update(_attention_block(f"{p}tf_icl.blocks.{i}.", icl, c["icl_nhead"],
                                       icl * c["ff_factor"]))
    shapes[p + "ln.weight"] = (icl,)
    if c["is_classifier"]:
        shapes.update({p + "y_encoder.projection.weight": (icl, classes),
                       p + "y_encoder.projection.bias": (icl,)})
        shapes.update(_mlp(p + "decoder.", [icl, hidden, classes]))
    else:
        shapes.update(_mlp(p + "y_encoder.", [1, hidden, icl]))
        shapes.update(_mlp(p + "decoder.", [icl, hidden, 1]))
    return shapes


def check_tensors(config: dict, tensors: dict[str, np.ndarray],
                  where: str) -> dict[str, np.ndarray]:
    """``tensors`` in state-dict order after checking they are exactly the config's, with
    its shapes; ValueError names the missing, unexpected or wrong-shaped tensor."""
    return state_dict.check(expected_shapes(config), tensors, where,
                            f"Google TabFM with {_brief(config)}")


def _brief(config: dict) -> str:
    keys = ("is_classifier", "max_classes", "embed_dim", "col_num_blocks", "row_num_blocks",
            "icl_num_blocks")
    return ", ".join(f"{k}={config.get(k, ARCHITECTURE[k])}" for k in keys)


# --- reading ------------------------------------------------------------------------------


def resolve(path: str | PathLike, task: str | None = None) -> Path:
    """The checkpoint ``path`` names: a file, a folder holding config.json, or the parent
    of ``classification/`` and ``regression/`` (``task`` picks one; without a task the
    only one there)."""
    p = Path(path)
    if p.is_file():
        return p
    if not p.is_dir():
        raise ValueError(f"Google TabFM checkpoint {str(p)!r} does not exist")
    if task is not None and task not in TASKS:
        raise ValueError(f"Google TabFM checkpoint {str(p)!r}: task must be one of "
                         f"{list(TASKS)}, got {task!r}")
    if (p / CONFIG_NAME).exists() or (p / WEIGHTS_NAME).exists():
        return p
    subs = [t for t in TASKS if (p / t).is_dir()]
    if not subs:
        raise ValueError(f"Google TabFM checkpoint folder {str(p)!r} holds neither "
                         f"{CONFIG_NAME} and {WEIGHTS_NAME} nor classification/ or "
                         "regression/ folders")
    if task is None:
        if len(subs) > 1:
            raise ValueError(f"Google TabFM checkpoint folder {str(p)!r} holds both "
                             "classification/ and regression/: say which task (or give "
                             f"{str(p / 'classification')!r} or {str(p / 'regression')!r})")
        task = subs[0]
    if task not in subs:
        raise ValueError(f"Google TabFM checkpoint folder {str(p)!r} has no {task}/ folder "
                         f"(it holds {', '.join(s + '/' for s in subs)})")
    return p / task


def read_config(path: str | PathLike, task: str | None = None) -> dict:
    """The checked config of a checkpoint (as :func:`read_checkpoint` finds it: config.json
    or the converted file's metadata), without reading a tensor."""
    p = resolve(path, task)
    if p.is_file():
        where = f"Google TabFM checkpoint {str(p)!r}"
        try:
            metadata = safetensors.read_header(p, dtypes=("F32",)).metadata
            config = json.loads(metadata.get("config", ""))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            raise ValueError(f"{where}: {exc}") from None
    else:
        where = f"Google TabFM config {str(p / CONFIG_NAME)!r}"
        try:
            config = json.loads((p / CONFIG_NAME).read_text(encoding="utf-8"))
        except OSError:
            raise ValueError(f"Google TabFM checkpoint folder {str(p)!r} has no "
                             f"{CONFIG_NAME}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{where} is not JSON: {exc}") from None
    return check_config(config, where)


def read_checkpoint(path: str | PathLike, task: str | None = None) -> Checkpoint:
    """Read a Google TabFM checkpoint: a ``save_pretrained`` folder, the parent of
    ``classification/`` and ``regression/`` (``task`` picks), or :func:`convert`'s file.

    Every failure is a ValueError naming the file and the culprit: a missing file, a config
    that is not JSON or has an unknown key or a bad value, a truncated safetensors file, a
    header that lies about its size, a tensor that is missing, unexpected, wrong-shaped,
    not float32 or not finite. A folder's task must agree with ``task`` when both say.
    """
    p = resolve(path, task)
    if p.is_file():
        weights = p
        config, tensors = _read_safetensors(p, f"Google TabFM checkpoint {str(p)!r}",
                                            converted=True)
    else:
        cfg_path, weights = p / CONFIG_NAME, p / WEIGHTS_NAME
        if not cfg_path.is_file():
            raise ValueError(f"Google TabFM checkpoint folder {str(p)!r} has no {CONFIG_NAME}")
        try:
            config = json.loads(cfg_path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"Google TabFM config {str(cfg_path)!r} is not JSON: {exc}"
                             ) from None
        config = check_config(config, f"Google TabFM config {str(cfg_path)!r}")
        if not weights.is_file():
            raise ValueError(f"Google TabFM checkpoint folder {str(p)!r} has no "
                             f"{WEIGHTS_NAME}")
        _, tensors = _read_safetensors(weights, f"Google TabFM weights {str(weights)!r}")
    where = f"Google TabFM weights {str(weights)!r}"
    config = check_config(config, where)
    if task is not None and config["is_classifier"] != (task == "classification"):
        have = "classification" if config["is_classifier"] else "regression"
        raise ValueError(f"{where}: a {have} checkpoint, asked for {task}")
    return Checkpoint(config, check_tensors(config, tensors, where), weights)


def _read_safetensors(p: Path, where: str, converted: bool = False
                      ) -> tuple[object, dict[str, np.ndarray]]:
    """(the metadata's config or None, the tensors); float32 (F32) only, never cast."""
    try:
        header = safetensors.read_header(p, dtypes=("F32",))
        size = p.stat().st_size - header.data_start
        end = max((e.end for e in header.entries.values()), default=0)
        if end != size:  # every byte after the header is a tensor's (as safetensors requires)
            raise ValueError(f"weights file {p.name!r}: its tensors end at byte {end} of a "
                             f"{size}-byte buffer (a header that lies about its size?)")
        metadata, tensors = safetensors.read(p, dtypes=("F32",))
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    if not converted:
        return None, tensors
    for key, want in (("format", FORMAT), ("version", VERSION)):
        if metadata.get(key) != want:
            raise ValueError(f"{where}: safetensors metadata {key!r} must be {want!r}, got "
                             f"{metadata.get(key)!r} (not a Google TabFM checkpoint written "
                             "by `arenalite convert tabfm`; give the folder instead)")
    try:
        config = json.loads(metadata.get("config", ""))
    except json.JSONDecodeError:
        raise ValueError(f"{where}: safetensors metadata 'config' is not JSON: "
                         f"{metadata.get('config')!r}") from None
    return config, tensors


# --- writing ------------------------------------------------------------------------------


def write_safetensors(checkpoint: Checkpoint, out_path: str | PathLike) -> Path:
    """Write ``checkpoint`` as one safetensors file: float32 tensors and the full config as
    JSON in the metadata (:data:`FORMAT`). Returns the path written."""
    config = check_config(checkpoint.config, "checkpoint to write")
    tensors = check_tensors(config, checkpoint.tensors, "checkpoint to write")
    metadata = {"format": FORMAT, "version": VERSION, "config": json.dumps(config)}
    return safetensors.write(out_path, tensors, metadata)


def convert(src: str | PathLike, out_path: str | PathLike, task: str | None = None) -> Path:
    """Read a Google TabFM checkpoint folder (or its parent, ``task`` picking the subfolder)
    and write it as one safetensors file (``arenalite convert tabfm DIR -o OUT``)."""
    return write_safetensors(read_checkpoint(src, task), out_path)


def save_pretrained(checkpoint: Checkpoint, folder: str | PathLike) -> Path:
    """Write ``checkpoint`` in the package's layout: ``folder/config.json`` (the config, the
    hub's keys included) and ``folder/model.safetensors``. Returns the folder."""
    config = check_config(checkpoint.config, "checkpoint to write")
    tensors = check_tensors(config, checkpoint.tensors, "checkpoint to write")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    (out / CONFIG_NAME).write_text(json.dumps(config, indent=2, sort_keys=True) + "\n",
                                   encoding="utf-8")
    safetensors.write(out / WEIGHTS_NAME, tensors, {"format": "pt"})
    return out


# --- random weights -----------------------------------------------------------------------


def rope_frequencies(config: dict) -> np.ndarray:
    """The package's initial row RoPE frequencies, ``1 / base^(2i / head_width)``."""
    c = check_config(config)
    d = c["embed_dim"] // c["row_nhead"]
    exponents = np.arange(0, d, 2).astype(np.float32) / np.float32(d)
    return (1.0 / np.power(ROPE_BASE, exponents.astype(np.float64))).astype(np.float32)


def random_checkpoint(config: dict, seed: int = 0) -> Checkpoint:
    """A checkpoint of ``TabFM(**config)`` with random float32 weights, made in numpy.

    The shared draw (:func:`arenalite.models.state_dict.random_tensors`: matrices
    normal(0, 1/√fan_in), biases, tokens and inducing vectors normal(0, 0.02)) for every
    tensor except those it would leave at a constant or near zero, which are drawn first
    from ``default_rng([seed, 1])``: RMSNorm scales uniform(0.5, 1.5), per-dimension
    attention scales normal(0, 0.5), Fourier frequencies normal(0, 1), the class
    embedding normal(0, 1), the RoPE frequencies the package's values times
    uniform(0.5, 1.5). Nothing is left at an initial zero or one, so every part acts.
    """
    c = check_config(config)
    seed = state_dict.check_seed(seed)
    rng = np.random.default_rng([seed, 1])
    shapes = expected_shapes(c)
    fixed: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        leaf = name.rsplit(".", 1)[-1]
        if name.endswith("rope.freqs"):
            fixed[name] = rope_frequencies(c) * rng.uniform(0.5, 1.5, shape)
        elif leaf in ("fourier_frequencies", "fourier_frequencies_cat") or (
                c["is_classifier"] and name.endswith("y_embedder_lookup.weight")):
            fixed[name] = rng.normal(0.0, 1.0, shape)
        elif leaf == "per_dim_scale":
            fixed[name] = rng.normal(0.0, 0.5, shape)
        elif leaf == "weight" and len(shape) == 1:  # RMSNorm scales
            fixed[name] = rng.uniform(0.5, 1.5, shape)
    return Checkpoint(c, state_dict.random_tensors(shapes, seed, fixed))
