"""Write the TabICL checkpoint fixtures that let CI test ``arenalite.models.tabicl.checkpoint``
without torch.

Needs torch and the ``tabicl`` package (2.2.0); CI never runs it, it reads what it wrote.
Every config is built the way tabicl's trainer builds it (``tabicl.train._run``'s
``model_config``, from ``tabicl.train._train_config.build_parser`` and the TabICLv2 recipe's
architecture flags of ``scripts/train_v2_{clf,reg}_stage1.sh`` in the tabicl repository), so it
carries every key ``TabICL.__init__`` takes, with the trainer's types. Written to
``tests/data/tabicl/``:

* ``classifier_small.ckpt``: the v2 classifier architecture, small; saved as the trainer saves
  a checkpoint (``config``, ``state_dict``, ``optimizer_state`` (Muon), ``scheduler_state``,
  ``curr_step``), after one optimizer step on random gradients;
* ``regressor_small.ckpt``: the v2 regressor (max_classes 0, 999 quantiles, bias-free
  LayerNorm), small; saved as the released checkpoints are loaded (``config``, ``state_dict``);
* ``classifier_wide.ckpt``: other widths and depths (embed 24, 3 heads, 3 CLS tokens, ff 3);
* ``tiny*.ckpt``: one tiny model whose weights are bfloat16 values, saved as float32, bfloat16,
  float16, float64 and as strided views into one shared storage; ``bad_*.ckpt``: the tiny model
  with an extra tensor, a missing one, a wrong shape, an integer tensor, an unknown config key,
  no ``state_dict``;
* ``v2_{classifier,regressor}_config.json`` and ``..._shapes.json``: the full-size v2 configs
  and their state dicts' names and shapes (in order), and ``shape_cases.json``: the same for
  configs covering every architecture switch (ssmax kinds, feature grouping, affine, target
  awareness, norm placement, bias-free LayerNorm, regression).

Weights are random (torch seed 0) and none is all zeros or constant: ``zero_init`` is off
and a tensor the package initialises to a constant (LayerNorm, biases, QASSMax's zeroed
query MLP output) gets random noise around it; the RoPE frequencies keep their values.

    /work/venv-tabicl/bin/python scripts/make_tabicl_checkpoints.py
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from collections import OrderedDict
from pathlib import Path

import torch

torch.set_num_threads(1)


def _stand_in(module: str, *names: str) -> None:
    """Register ``module`` (when it is not installed) with ``names`` that refuse to run.

    tabicl.train imports transformers (four schedules, not the v2 recipe's
    cosine_with_restarts, which is tabicl's own) and, through the prior its config module
    reads, xgboost (the tree prior): neither is needed to build a model, an optimizer, a
    schedule or the trainer's argument parser.
    """
    if importlib.util.find_spec(module) is not None:
        return

    def absent(*_, **__):
        raise RuntimeError(f"{module} is not installed")

    stub = types.ModuleType(module)
    for name in names:
        setattr(stub, name, absent)
    sys.modules[module] = stub


_stand_in("transformers", "get_constant_schedule", "get_linear_schedule_with_warmup",
          "get_cosine_schedule_with_warmup", "get_polynomial_decay_schedule_with_warmup")
_stand_in("xgboost", "XGBRegressor")

from tabicl._model.tabicl import TabICL  # noqa: E402
from tabicl.train._muon import Muon  # noqa: E402
from tabicl.train._optim import get_scheduler  # noqa: E402
from tabicl.train._train_config import build_parser  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tabicl"

V2_FLAGS = [
    "--embed_dim", "128", "--col_num_blocks", "3", "--col_nhead", "8", "--col_num_inds", "128",
    "--col_affine", "False", "--col_feature_group", "same", "--col_feature_group_size", "3",
    "--col_target_aware", "True", "--col_ssmax", "True", "--row_num_blocks", "3",
    "--row_nhead", "8", "--row_num_cls", "4", "--row_rope_base", "100000",
    "--row_rope_interleaved", "False", "--icl_num_blocks", "12", "--icl_nhead", "8",
    "--icl_ssmax", "True", "--ssmax_type", "qassmax-mlp-elementwise", "--ff_factor", "2",
    "--norm_first", "True", "--zero_init", "False", "--max_classes", "10",
    # the optimizer and schedule of the v2 scripts (for the trainer-style checkpoint)
    "--lr", "8e-4", "--muon", "True", "--beta1", "0.9", "--weight_decay", "0.01",
    "--use_cautious_wd", "False", "--scheduler", "cosine_with_restarts",
    "--warmup_proportion", "0.01", "--cosine_num_cycles", "1", "--cosine_amplitude_decay", "1",
    "--cosine_lr_end", "1e-7", "--max_steps", "500000",
]
REGRESSOR_FLAGS = ["--regression_method", "quantile", "--num_quantiles", "999",
                   "--norm_type", "layernorm_nobias"]
SMALL = ["--embed_dim", "16", "--col_num_inds", "8", "--col_nhead", "2", "--row_nhead", "2",
         "--icl_nhead", "2", "--col_num_blocks", "2", "--row_num_blocks", "2",
         "--icl_num_blocks", "2", "--row_num_cls", "2"]
WIDE = ["--embed_dim", "24", "--col_num_inds", "8", "--col_nhead", "3", "--row_nhead", "3",
        "--icl_nhead", "3", "--col_num_blocks", "1", "--row_num_blocks", "2",
        "--icl_num_blocks", "3", "--row_num_cls", "3", "--ff_factor", "3"]
TINY = ["--embed_dim", "8", "--col_num_inds", "4", "--col_nhead", "2", "--row_nhead", "2",
        "--icl_nhead", "2", "--col_num_blocks", "1", "--row_num_blocks", "1",
        "--icl_num_blocks", "1", "--row_num_cls", "1", "--max_classes", "3"]


def trainer_args(*flags: list[str]):
    return build_parser().parse_args([f for group in flags for f in group])


def model_config(args) -> dict:
    """The config dict ``tabicl.train._run.Trainer`` builds and saves (same keys, order)."""
    regression = args.regression_method is not None
    bias_free_ln = {"default": False, "layernorm_nobias": True}[args.norm_type]
    return {
        "max_classes": 0 if regression else args.max_classes,
        "num_quantiles": args.num_quantiles,
        "embed_dim": args.embed_dim,
        "col_num_blocks": args.col_num_blocks,
        "col_nhead": args.col_nhead,
        "col_num_inds": args.col_num_inds,
        "col_affine": args.col_affine,
        "col_feature_group": args.col_feature_group,
        "col_feature_group_size": args.col_feature_group_size,
        "col_target_aware": args.col_target_aware,
        "col_ssmax": args.ssmax_type if args.col_ssmax else False,
        "row_num_blocks": args.row_num_blocks,
        "row_nhead": args.row_nhead,
        "row_num_cls": args.row_num_cls,
        "row_rope_base": args.row_rope_base,
        "row_rope_interleaved": args.row_rope_interleaved,
        "icl_num_blocks": args.icl_num_blocks,
        "icl_nhead": args.icl_nhead,
        "icl_ssmax": args.ssmax_type if args.icl_ssmax else False,
        "ff_factor": args.ff_factor,
        "dropout": args.dropout,
        "activation": args.activation,
        "norm_first": args.norm_first,
        "bias_free_ln": bias_free_ln,
        "zero_init": args.zero_init,
        "recompute": args.recompute,
    }


def random_model(config: dict) -> TabICL:
    """``TabICL(**config)`` with no all-zero or constant tensor (RoPE frequencies kept)."""
    model = TabICL(**config)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("rope.freqs"):
                continue
            if p.numel() == 1 or float(p.std()) == 0.0:
                p.add_(0.1 * torch.randn_like(p))
    for name, t in model.state_dict().items():
        assert t.abs().max() > 0 and (t.numel() == 1 or t.std() > 0), name
    return model


def save(obj: dict, name: str) -> None:
    path = OUT / name
    torch.save(obj, path)
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")


def trainer_checkpoint(args, model: TabICL) -> dict:
    """A checkpoint as ``Trainer.save_checkpoint`` writes it, after one Muon step on random
    gradients (so the optimizer and scheduler states are those of a real run)."""
    optimizer = Muon(param_groups=[dict(params=list(model.parameters()), use_muon=True)],
                     lr=args.lr, weight_decay=args.weight_decay, matched_adamw_rms=0.2,
                     momentum=args.beta1, nesterov=True, ns_steps=5,
                     adamw_betas=(args.beta1, args.beta2), adamw_eps=1e-8,
                     use_cautious_wd=args.use_cautious_wd)
    scheduler = get_scheduler(config=args, optimizer=optimizer)
    for p in model.parameters():
        if p.requires_grad:
            p.grad = torch.randn_like(p)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    return {"config": model_config(args), "state_dict": model.state_dict(),
            "optimizer_state": optimizer.state_dict(), "scheduler_state": scheduler.state_dict(),
            "curr_step": 1}


def shapes(config: dict) -> dict[str, list[int]]:
    return {k: list(v.shape) for k, v in TabICL(**config).state_dict().items()}


def strided_views(state: dict) -> OrderedDict:
    """The same tensors as views into one flat storage: each at an offset, 2-d ones
    transposed (column-major), 1-d ones with stride 2, so offsets and strides matter."""
    total = sum(2 * t.numel() + 3 for t in state.values())
    flat = torch.full((total,), -7.0)
    out, at = OrderedDict(), 1
    for name, t in state.items():
        if t.dim() == 2:
            r, c = t.shape
            view = flat.as_strided((r, c), (1, r), at)
            at += r * c + 2
        elif t.dim() == 1:
            view = flat.as_strided(t.shape, (2,), at)
            at += 2 * t.numel() + 1
        else:
            view = flat.as_strided(t.shape, t.stride(), at)
            at += t.numel() + 1
        view.copy_(t)
        out[name] = view
    assert at <= total
    return out


def shape_cases() -> list[dict]:
    """Small configs covering every switch of the architecture, and the empty config."""
    base = {"embed_dim": 8, "col_num_inds": 4, "col_nhead": 2, "row_nhead": 2, "icl_nhead": 2,
            "col_num_blocks": 1, "row_num_blocks": 1, "icl_num_blocks": 1, "row_num_cls": 2,
            "max_classes": 4}
    kinds = ["none", "ssmax", "ssmax-mlp", "ssmax-mlp-elementwise", "qassmax-mlp",
             "qassmax-mlp-elementwise", True, False]
    variants = [{"col_ssmax": k, "icl_ssmax": kinds[-1 - i]} for i, k in enumerate(kinds)]
    variants += [{"col_feature_group": g, "col_feature_group_size": s}
                 for g, s in ((False, 3), (True, 2), ("same", 4), ("valid", 1), ("valid", 5))]
    variants += [{"col_target_aware": ta, "max_classes": mc, "num_quantiles": 7}
                 for ta in (False, True) for mc in (0, 2)]
    variants += [{"col_affine": a, "norm_first": nf, "bias_free_ln": b}
                 for a in (False, True) for nf in (False, True) for b in (False, True)]
    variants += [{"embed_dim": 12, "col_nhead": 3, "row_nhead": 4, "icl_nhead": 6,
                  "row_num_cls": 3, "ff_factor": 1, "col_num_blocks": 2, "row_num_blocks": 0,
                  "icl_num_blocks": 3, "row_rope_base": 10000.0, "activation": "relu"},
                 {"embed_dim": 10, "row_nhead": 2, "col_nhead": 1, "icl_nhead": 4,
                  "max_classes": 0, "num_quantiles": 3, "bias_free_ln": True,
                  "col_num_blocks": 0, "icl_num_blocks": 0},
                 {"embed_dim": 6, "row_nhead": 1, "col_nhead": 6, "row_num_cls": 1,
                  "icl_nhead": 3, "col_ssmax": "ssmax", "icl_ssmax": "qassmax-mlp"}]
    cases = [{"config": {}, "shapes": shapes({})}]
    for v in variants:
        config = {**base, **v}
        cases.append({"config": config, "shapes": shapes(config)})
    return cases


def write_json(obj: object, name: str) -> None:
    path = OUT / name
    path.write_text(json.dumps(obj, indent=None, separators=(",", ":")) + "\n")
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size} bytes")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)

    args = trainer_args(V2_FLAGS, SMALL)
    save(trainer_checkpoint(args, random_model(model_config(args))), "classifier_small.ckpt")

    config = model_config(trainer_args(V2_FLAGS, SMALL, REGRESSOR_FLAGS))
    save({"config": config, "state_dict": random_model(config).state_dict()},
         "regressor_small.ckpt")

    config = model_config(trainer_args(V2_FLAGS, WIDE))
    save({"config": config, "state_dict": random_model(config).state_dict()},
         "classifier_wide.ckpt")

    config = model_config(trainer_args(V2_FLAGS, TINY))
    state = OrderedDict((k, v.to(torch.bfloat16).to(torch.float32))
                        for k, v in random_model(config).state_dict().items())
    save({"config": config, "state_dict": state}, "tiny.ckpt")
    for dtype, suffix in ((torch.bfloat16, "bf16"), (torch.float16, "f16"),
                          (torch.float64, "f64")):
        save({"config": config,
              "state_dict": OrderedDict((k, v.to(dtype)) for k, v in state.items())},
             f"tiny_{suffix}.ckpt")
    save({"config": config, "state_dict": strided_views(state)}, "tiny_views.ckpt")

    extra = OrderedDict(state)
    extra["icl_predictor.extra.weight"] = torch.ones(3, 2)
    save({"config": config, "state_dict": extra}, "bad_extra_tensor.ckpt")
    missing = OrderedDict((k, v) for k, v in state.items() if k != "row_interactor.cls_tokens")
    save({"config": config, "state_dict": missing}, "bad_missing_tensor.ckpt")
    reshaped = OrderedDict(state)
    reshaped["icl_predictor.decoder.2.weight"] = torch.randn(4, 16)
    save({"config": config, "state_dict": reshaped}, "bad_shape.ckpt")
    integer = OrderedDict(state)
    integer["row_interactor.cls_tokens"] = torch.ones(1, 8, dtype=torch.int64)
    save({"config": config, "state_dict": integer}, "bad_dtype.ckpt")
    save({"config": {**config, "use_magic": True}, "state_dict": state},
         "bad_config_key.ckpt")
    save({"config": config, "model": state}, "bad_no_state_dict.ckpt")

    for kind, flags in (("classifier", []), ("regressor", REGRESSOR_FLAGS)):
        config = model_config(trainer_args(V2_FLAGS, flags))
        write_json(config, f"v2_{kind}_config.json")
        write_json(shapes(config), f"v2_{kind}_shapes.json")
    write_json(shape_cases(), "shape_cases.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
