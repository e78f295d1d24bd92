"""Write the TabPFN checkpoint fixtures that let CI test ``arenalite.models.tabpfn.checkpoint``
without torch.

Needs torch and the ``tabpfn`` package (9.2.0, the ``[tabpfn]`` extra); CI never runs it, it
reads what it wrote. Every model is built by the package's own
``tabpfn.architectures.<generation>.parse_config`` and ``get_architecture`` and saved as the
package saves one (``tabpfn.model_loading.save_tabpfn_model``: ``torch.save`` of
``{"state_dict", "config": asdict(config), "architecture_name", "inference_config"}``), then
loaded back with the package's ``load_model`` to record what it reads. Written to
``tests/data/tabpfn/``:

* ``classifier_small.ckpt``: a small v3 classifier (10 classes), the default switches, an
  inference config of its own (v2.5's multiclass defaults with another temperature and
  ``N_ESTIMATORS`` 4); ``classifier_small_package.safetensors``: the same checkpoint written
  by the package's ``tabpfn.checkpoint.save_as_safetensors``;
* ``regressor_small.ckpt``: a small v3 regressor (64 buckets, the package's spline
  ``regression_borders``), saved without an ``inference_config`` (the package then falls
  back to its v2.5 regression defaults);
* ``regressor_saved.ckpt``: that regressor fitted by ``TabPFNRegressor`` and saved by
  ``save_tabpfn_model`` (its state dict adds ``criterion.borders`` and
  ``criterion.losses_per_bucket``, its inference config is the one the estimator ran with);
* ``classifier_wide.ckpt``: other widths and depths and switches (12 classes, embed 24,
  feature groups of 2, no NaN indicators, grouped ICL keys and values with one KV head for
  test rows, the decoder's softmax scaling, bias-free RMSNorm off), with an empty
  inference config (the package falls back as for none);
* ``v2_5_classifier.ckpt`` (``architecture_name`` ``"base"``), ``v2_6_classifier.ckpt`` and
  ``v3_5.safetensors``: tiny models of the other generations, for the refusals;
* ``shapes.json.gz``: the state dicts' names and shapes (in order) of the full-size v3 configs
  (classifier and 5000-bucket regressor) and of configs covering the architecture switches;
* ``manifest.json``: per fixture, each tensor's shape and the SHA-256 of its float32 bytes as
  saved, and what ``load_model`` returned (architecture config, inference config, the
  regressor's borders' SHA-256).

Weights are random (torch seed 0): the package zero-initialises output projections and
starts its norms at one, so every tensor is drawn afresh (matrices normal(0, 1/√fan_in),
norm weights 1 + normal(0, 0.1), biases and learned tokens normal(0, 0.1)) except the RoPE
frequencies and the regression borders, which keep the package's values. No real TabPFN
weights are used or committed.

    /work/main/.venv-tabpfn/bin/python scripts/make_tabpfn_checkpoints.py
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

torch.set_num_threads(1)

from tabpfn import TabPFNRegressor  # noqa: E402
from tabpfn.architectures import tabpfn_v2_5, tabpfn_v2_6, tabpfn_v3, tabpfn_v3_5  # noqa: E402
from tabpfn.checkpoint import Checkpoint as PackageCheckpoint  # noqa: E402
from tabpfn.checkpoint import save_as_safetensors  # noqa: E402
from tabpfn.constants import ModelVersion  # noqa: E402
from tabpfn.inference_config import InferenceConfig  # noqa: E402
from tabpfn.model_loading import _skip_parameter_init, load_model, save_tabpfn_model  # noqa: E402,E501

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tabpfn"

SMALL = {"embed_dim": 16, "dist_embed_num_blocks": 2, "dist_embed_num_heads": 2,
         "dist_embed_num_inducing_points": 8, "feat_agg_num_blocks": 2,
         "feat_agg_num_heads": 2, "feat_agg_num_cls_tokens": 2, "nlayers": 2,
         "icl_num_heads": 4, "decoder_head_dim": 8, "decoder_num_heads": 2,
         "softmax_scaling_mlp_hidden_dim": 16}
"""v3's switches at their defaults, small."""
WIDE = {"embed_dim": 24, "dist_embed_num_blocks": 1, "dist_embed_num_heads": 3,
        "dist_embed_num_inducing_points": 6, "feature_group_size": 2,
        "feat_agg_num_blocks": 3, "feat_agg_num_heads": 4, "feat_agg_num_cls_tokens": 3,
        "feat_agg_rope_base": 10_000, "nlayers": 3, "icl_num_heads": 6,
        "icl_num_kv_heads": 3, "icl_num_kv_heads_test": 1, "decoder_head_dim": 6,
        "decoder_num_heads": 3, "decoder_use_softmax_scaling": True, "ff_factor": 3,
        "softmax_scaling_mlp_hidden_dim": 8, "use_nan_indicators": False}
"""Other widths, depths and switches."""
SWITCHES = [
    {"max_num_classes": 10},
    {"num_buckets": 5000},
    {"max_num_classes": 2},
    {"max_num_classes": 40, "decoder_use_softmax_scaling": True},
    {"max_num_classes": 10, "use_nan_indicators": False, "feature_group_size": 1},
    {"max_num_classes": 10, "use_rope": False},
    {"num_buckets": 100, "use_rope": False, "layernorm_elementwise_affine": False},
    {"max_num_classes": 10, "layernorm_elementwise_affine": False,
     "decoder_use_softmax_scaling": True},
    {"max_num_classes": 10, "icl_num_kv_heads": 2},
    {"max_num_classes": 10, "icl_num_kv_heads": 4, "icl_num_kv_heads_test": 1},
    {"num_buckets": 100, "icl_num_kv_heads": 1},
    {"max_num_classes": 10, "ff_factor": 3, "softmax_scaling_mlp_hidden_dim": 32,
     "feature_group_size": 5},
    {"max_num_classes": 5, "decoder_head_dim": 16, "decoder_num_heads": 3},
    {"max_num_classes": 10, "dist_embed_num_blocks": 0, "feat_agg_num_blocks": 0,
     "nlayers": 0},
    {"num_buckets": 1, "nlayers": 1},
    {"max_num_classes": 10, "num_buckets": 20},  # a classifier: borders kept, no regression head
]
"""Switch combinations for shapes.json, on the full-size defaults unless ``SMALL`` is merged."""


def digest(t: torch.Tensor) -> str:
    arr = t.detach().to(torch.float32).contiguous().numpy()
    return hashlib.sha256(np.ascontiguousarray(arr, "<f4").tobytes()).hexdigest()


def shapes(model: torch.nn.Module) -> dict[str, list[int]]:
    return {k: list(v.shape) for k, v in model.state_dict().items()}


def randomise(model: torch.nn.Module, seed: int) -> torch.nn.Module:
    """Every parameter drawn afresh (see the module's docstring), in state-dict order."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if name.endswith("rope.freqs"):
                continue
            if p.ndim == 2 and leaf not in ("inducing_vectors", "cls_tokens"):
                p.copy_(torch.randn(p.shape, generator=g) / math.sqrt(p.shape[1]))
            elif p.ndim == 1 and leaf == "weight":  # norm weights
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:  # biases, inducing vectors, CLS tokens
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
    return model


def build(module, config: dict, seed: int = 0):
    parsed, unused = module.parse_config(config)
    assert not unused, unused
    return parsed, randomise(module.get_architecture(parsed), seed)


def save(obj: dict, name: str) -> Path:
    path = OUT / name
    torch.save(obj, path)
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
    return path


def checkpoint(config, model, architecture: str, inference: InferenceConfig | dict | None,
               **extra) -> dict:
    out = {"state_dict": model.state_dict(), "config": dataclasses.asdict(config),
           "architecture_name": architecture, **extra}
    if inference is not None:
        out["inference_config"] = (dataclasses.asdict(inference)
                                   if isinstance(inference, InferenceConfig) else inference)
    return out


def jsonable(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def record(path: Path, estimator_type: str) -> dict:
    """What the file holds (as saved) and what the package's load_model makes of it."""
    raw = PackageCheckpoint(path).load()
    _, criterion, config, inference = load_model(path=path, estimator_type=estimator_type)
    entry = {
        "tensors": {k: {"shape": list(v.shape), "sha256": digest(v)}
                    for k, v in raw["state_dict"].items()},
        "package_config": jsonable(config),
        "package_inference_config": jsonable(inference),
        "has_inference_config": bool(raw.get("inference_config")),
    }
    if estimator_type == "regressor":
        entry["package_borders_sha256"] = digest(criterion.borders)
    return entry


def write_json(obj: object, name: str) -> None:
    """``name`` ending in .gz: compact JSON, gzipped without a timestamp (the same bytes on
    every run)."""
    path = OUT / name
    if name.endswith(".gz"):
        text = json.dumps(obj, separators=(",", ":")) + "\n"
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    else:
        path.write_text(json.dumps(obj, indent=1) + "\n")
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")


def check_arenalite_round_trip(path: Path, estimator_type: str) -> None:
    """arenalite reads the file as the package does, and the package loads arenalite's
    converted safetensors to the same model."""
    sys.path.insert(0, str(ROOT / "pkg"))
    from arenalite.models.tabpfn import checkpoint as ck

    ours = ck.read_checkpoint(path)
    with tempfile.TemporaryDirectory() as tmp:
        out = ck.convert(path, Path(tmp) / "c.safetensors")
        model_a, crit_a, _, inf_a = load_model(path=path, estimator_type=estimator_type)
        model_b, crit_b, _, inf_b = load_model(path=out, estimator_type=estimator_type)
        a, b = model_a.state_dict(), model_b.state_dict()
        assert list(a) == list(b) and all(torch.equal(a[k], b[k]) for k in a), path
        assert inf_a == inf_b, path
        if estimator_type == "regressor":
            assert torch.equal(crit_a.borders, crit_b.borders)
        for name, arr in ours.tensors.items():
            assert np.array_equal(arr, a[name].numpy()), name
    assert jsonable(ours.inference_config) == jsonable(inf_a), path


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    manifest: dict[str, dict] = {}

    # --- the v3 checkpoints ---------------------------------------------------------------
    own = dataclasses.replace(InferenceConfig.get_default("multiclass", ModelVersion.V2_5),
                              SOFTMAX_TEMPERATURE=0.75, N_ESTIMATORS=4)
    config, model = build(tabpfn_v3, {**SMALL, "max_num_classes": 10}, seed=1)
    path = save(checkpoint(config, model, "tabpfn_v3", own), "classifier_small.ckpt")
    manifest["classifier_small.ckpt"] = record(path, "classifier")
    st = OUT / "classifier_small_package.safetensors"
    save_as_safetensors(checkpoint(config, model, "tabpfn_v3", own), st)
    print(f"wrote {st.relative_to(ROOT)} ({st.stat().st_size:,} bytes)")
    manifest[st.name] = record(st, "classifier")

    config, model = build(tabpfn_v3, {**SMALL, "num_buckets": 64}, seed=2)
    path = save(checkpoint(config, model, "tabpfn_v3", None), "regressor_small.ckpt")
    manifest["regressor_small.ckpt"] = record(path, "regressor")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(48, 3))
    y = X[:, 0] - 0.5 * X[:, 1] + 0.1 * rng.normal(size=48)
    regressor = TabPFNRegressor(model_path=str(path), device="cpu", n_estimators=2,
                                random_state=0).fit(X, y)
    saved = OUT / "regressor_saved.ckpt"
    save_tabpfn_model(regressor, saved)
    print(f"wrote {saved.relative_to(ROOT)} ({saved.stat().st_size:,} bytes)")
    manifest[saved.name] = record(saved, "regressor")

    config, model = build(tabpfn_v3, {**WIDE, "max_num_classes": 12}, seed=3)
    path = save(checkpoint(config, model, "tabpfn_v3", {}), "classifier_wide.ckpt")
    manifest["classifier_wide.ckpt"] = record(path, "classifier")

    for name, kind in (("classifier_small.ckpt", "classifier"),
                       ("classifier_small_package.safetensors", "classifier"),
                       ("regressor_small.ckpt", "regressor"), ("regressor_saved.ckpt", "regressor"),
                       ("classifier_wide.ckpt", "classifier")):
        check_arenalite_round_trip(OUT / name, kind)

    # --- other generations, for the refusals ------------------------------------------------
    tiny_v2 = {"emsize": 8, "nhead": 2, "nlayers": 1, "max_num_classes": 3,
               "features_per_group": 2}
    config, model = build(tabpfn_v2_5, tiny_v2)
    path = save(checkpoint(config, model, "base", None), "v2_5_classifier.ckpt")
    load_model(path=path, estimator_type="classifier")  # the package reads it as v2.5
    config, model = build(tabpfn_v2_6, tiny_v2)
    inference = InferenceConfig.get_default("multiclass", ModelVersion.V2_5)
    path = save(checkpoint(config, model, "tabpfn_v2_6", inference), "v2_6_classifier.ckpt")
    load_model(path=path, estimator_type="classifier")
    tiny_v35 = {"embed_dim": 8, "dist_embed_num_blocks": 1, "dist_embed_num_heads": 2,
                "dist_embed_num_inducing_points": 4, "feat_agg_num_blocks": 1,
                "feat_agg_num_heads": 2, "feat_agg_num_cls_tokens": 2, "nlayers": 1,
                "icl_num_heads": 2, "icl_num_kv_heads_test": 1, "decoder_head_dim": 4,
                "decoder_num_heads": 2, "max_num_classes": 3, "num_buckets": 8,
                "fourier_encoding_num_frequencies": 4, "cell_ecdf_num_frequencies": 2,
                "cell_ecdf_num_buckets": 16, "softmax_scaling_mlp_hidden_dim": 8}
    config, model = build(tabpfn_v3_5, tiny_v35)
    st = OUT / "v3_5.safetensors"
    save_as_safetensors(checkpoint(config, model, "tabpfn_v3_5", inference), st)
    print(f"wrote {st.relative_to(ROOT)} ({st.stat().st_size:,} bytes)")
    load_model(path=st, estimator_type="classifier")

    # --- expected shapes ------------------------------------------------------------------
    cases = []
    for small in (False, True):
        for switch in SWITCHES:
            given = {**(SMALL if small else {}), **switch}
            parsed, _ = tabpfn_v3.parse_config(given)
            with _skip_parameter_init():  # only the shapes are wanted
                model = tabpfn_v3.get_architecture(parsed)
            cases.append({"config": given, "shapes": shapes(model)})
    write_json(cases, "shapes.json.gz")
    write_json(manifest, "manifest.json")
    defaults = {task: jsonable(InferenceConfig.get_default(task, ModelVersion.V2_5))
                for task in ("multiclass", "regression")}
    write_json(defaults, "inference_defaults_v2_5.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
