"""Write the fixtures of Google TabFM's preprocessing, ensemble and wrappers
(tests/test_tabfm_preprocessing.py, tests/test_tabfm_predictor.py).

Needs the ``tabfm`` extra (torch and ``tabfm[pytorch]==1.0.1``; CI never installs it):
``/work/main/.venv-tabfm/bin/python scripts/make_tabfm_wrapper_fixtures.py``. It writes
``tests/data/tabfm/wrappers/``:

* ``checkpoint/{classification,regression}/``: a small random-weight checkpoint as the
  package's ``save_pretrained`` writes it (``config.json``, ``model.safetensors``), every
  tensor re-randomised (Fourier and RoPE frequencies, RMSNorm scales, per-dimension
  scales included: the package initialises some to zeros or ones);
* ``cases.json``: per case its table (numpy rows, or a DataFrame's columns: dtype, context
  cells, query cells, JSON null a missing cell), targets and wrapper options, and what
  ``TabFMClassifier(tabfm_v1_0_0.load("classification", DIR, dtype=None), ...)
  .fit(X, y).predict_proba(X_test)`` (or ``TabFMRegressor(...).predict``) returned;
* ``<case>.npz``: the preprocessing pieces of that case: ``TransformToNumerical``'s output,
  the unique filter, each member's draws, the fitted pipelines' outputs and the model's
  inputs (``prepare_ensemble_tensors``), and the members' raw outputs;
* ``bfloat16.json``: on one case, how far the package's default bfloat16 model is from its
  float32 one (reported, not aimed at).
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tabfm.src.classifier_and_regressor import (
    TabFMClassifier,
    TabFMRegressor,
)
from tabfm.src.pytorch import tabfm_v1_0_0
from tabfm.src.pytorch.tabfm_v1_0_0 import TabFM_HF

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "tabfm" / "wrappers"
CONFIG = dict(embed_dim=16, max_classes=10, col_num_blocks=1, col_nhead=2, col_num_inds=4,
              row_num_blocks=2, row_nhead=2, row_num_cls=2, icl_num_blocks=2, icl_nhead=2,
              ff_factor=2, feature_group_size=3)
"""A small architecture (v1.0.0's switches, smaller sizes)."""

CASES = {  # name: (kind, task, context rows, query rows, features or None, options)
    "binary": ("array", "binary", 60, 17, 7, {}),
    "multiclass_perms": ("array", "multiclass", 50, 13, 4, {}),
    "regression": ("array", "regression", 55, 15, 6, {}),
    "two_features_options": ("array", "multiclass", 40, 11, 2,
                             {"n_estimators": 5, "softmax_temperature": 1.3,
                              "average_logits": False, "random_state": 7,
                              "outlier_threshold": 3.0}),
    "subsampled": ("array", "binary", 45, 9, 7, {"max_num_features": 4, "random_state": 3}),
    "frame_multiclass": ("frame", "multiclass", 70, 19, None, {}),
    "frame_regression": ("frame", "regression", 64, 17, None, {"n_estimators": 8}),
    "frame_binary_dates": ("frame", "binary", 52, 14, None, {"dates": True}),
    "frame_nullable": ("frame", "binary", 48, 12, None, {"nullable": True, "n_estimators": 6}),
}


def randomise(model: torch.nn.Module, seed: int) -> None:
    """Every tensor of the state dict drawn anew: matrices ~ N(0, 1/fan_in), vectors by
    kind (norm and per-dimension scales around 1, biases small, frequencies spread)."""
    gen = torch.Generator().manual_seed(seed)
    state = model.state_dict()
    for name, t in state.items():
        shape = t.shape
        if "fourier" in name:
            new = torch.randn(shape, generator=gen) * 1.5
        elif "inv_freq" in name or "freq" in name:
            new = torch.rand(shape, generator=gen) * 0.9 + 0.05
        elif name.endswith("per_dim_scale"):
            new = torch.randn(shape, generator=gen) * 0.5
        elif t.ndim == 1 and ("ln" in name or "norm" in name):
            new = 1 + 0.2 * torch.randn(shape, generator=gen)
        elif t.ndim == 1:
            new = 0.1 * torch.randn(shape, generator=gen)
        else:
            new = torch.randn(shape, generator=gen) / math.sqrt(shape[-1])
        state[name] = new.to(t.dtype)
    model.load_state_dict(state)


def write_checkpoint(root: Path) -> None:
    for seed, (sub, is_classifier) in enumerate((("classification", True),
                                                 ("regression", False))):
        model = TabFM_HF(**CONFIG, is_classifier=is_classifier)
        randomise(model, 1234 + seed)
        model.save_pretrained(root / sub)
        (root / sub / "README.md").unlink(missing_ok=True)  # the hub's model card stub


def make_array(task: str, n: int, m: int, f: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n + m, f)) * rng.uniform(0.5, 3, f) + rng.normal(size=f)
    x[:, 0] = np.exp(x[:, 0] / 2)  # a skewed column for the power transform
    x[rng.integers(0, n), -1] = 40.0  # an outlier in the context
    if f > 2:
        x[:, 1] = rng.integers(0, 4, n + m)  # few distinct values
    signal = x @ rng.normal(size=f) + 0.3 * rng.normal(size=n + m)
    if task == "regression":
        y = 5 + 3 * signal
    else:
        classes = 2 if task == "binary" else 3
        edges = np.quantile(signal[:n], np.linspace(0, 1, classes + 1)[1:-1])
        y = np.searchsorted(edges, signal).astype(np.int64)
    return x, y


def make_frame(task: str, n: int, m: int, seed: int, dates: bool, nullable: bool = False
               ) -> tuple[pd.DataFrame, np.ndarray]:
    """Text (rare and unseen values, missing cells), category, bool, int and float (NaN)
    columns, and optionally a datetime and a date-as-text column, or pandas' nullable
    ``str``, ``Int64`` and ``boolean`` columns and numbers spelled as text."""
    rng = np.random.default_rng(seed)
    rows = n + m
    colour = rng.choice(["red", "green", "blue", "amber"], rows).astype(object)
    colour[rng.random(rows) < 0.12] = None
    colour[3] = "teal"  # seen once in the context: rarer than min_cat_frequency, unknown
    colour[n + 1] = "violet"  # only ever seen at test time
    size = pd.Categorical(rng.choice(["S", "M", "L"], rows), categories=["S", "M", "L", "XL"])
    size[rng.random(rows) < 0.08] = np.nan
    size[n + 2] = "XL"
    amount = np.exp(rng.normal(size=rows))
    amount[rng.random(rows) < 0.15] = np.nan
    count = rng.integers(0, 40, rows)
    member = rng.random(rows) < 0.5
    cols = {"colour": pd.Series(colour, dtype=object), "amount": amount, "size": size,
            "count": count, "member": member}
    if dates:
        stamp = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 900, rows), "D")
        when = pd.Series(stamp)
        when[rng.random(rows) < 0.1] = pd.NaT
        cols["when"] = when
        text = pd.Series(stamp.strftime("%Y-%m-%d"), dtype=object)
        text[rng.random(rows) < 0.1] = None
        cols["day"] = text
    if nullable:
        cols["colour"] = pd.Series(colour, dtype="str")
        cols["count"] = pd.Series(count, dtype="Int64")
        cols["count"][rng.random(rows) < 0.1] = pd.NA
        flag = pd.Series(member, dtype="boolean")
        flag[rng.random(rows) < 0.1] = pd.NA
        cols["member"] = flag
        cols["grade"] = pd.Series(rng.choice(["1", "2", "3"], rows), dtype=object)
    frame = pd.DataFrame(cols)
    signal = (np.nan_to_num(amount, nan=1.0) + 0.05 * count
              + pd.Series(colour).map({"red": 1.0, "green": -1.0}).fillna(0).to_numpy()
              + 0.4 * np.asarray(size.codes) + rng.normal(scale=0.3, size=rows))
    if task == "regression":
        y = 10 * signal - 4
    else:
        classes = 2 if task == "binary" else 4
        edges = np.quantile(signal[:n], np.linspace(0, 1, classes + 1)[1:-1])
        y = np.searchsorted(edges, signal).astype(np.int64)
    return frame, y


def cell(v: object) -> object:
    if v is None or v is pd.NaT or (not isinstance(v, str) and pd.isna(v)):
        return None
    if isinstance(v, pd.Timestamp):
        return v.isoformat()
    if isinstance(v, np.generic):
        return v.item()
    return v


def frame_json(frame: pd.DataFrame, n: int) -> dict:
    return {c: {"dtype": str(frame[c].dtype),
                "train": [cell(v) for v in frame[c].iloc[:n].tolist()],
                "test": [cell(v) for v in frame[c].iloc[n:].tolist()]} for c in frame.columns}


WRAPPER_KEYS = ("n_estimators", "softmax_temperature", "average_logits", "random_state",
                "outlier_threshold", "max_num_features")


def run_case(name: str, spec: tuple, ckpt: Path) -> tuple[dict, dict]:
    kind, task, n, m, f, options = spec
    seed = 1000 + sum(map(ord, name))
    if kind == "array":
        x, y = make_array(task, n, m, f, seed)
        x_train, x_test = x[:n], x[n:]
    else:
        frame, y = make_frame(task, n, m, seed, bool(options.get("dates")),
                              bool(options.get("nullable")))
        x_train, x_test = frame.iloc[:n].reset_index(drop=True), \
            frame.iloc[n:].reset_index(drop=True)
    y_train = y[:n]
    kwargs = {k: options[k] for k in WRAPPER_KEYS if k in options}
    if task == "regression":
        wrapper_kwargs = {k: v for k, v in kwargs.items()
                          if k not in ("softmax_temperature", "average_logits")}
        est = TabFMRegressor(tabfm_v1_0_0.load("regression", str(ckpt), dtype=None),
                             **wrapper_kwargs)
    else:
        est = TabFMClassifier(tabfm_v1_0_0.load("classification", str(ckpt), dtype=None),
                              **kwargs)
    est.fit(x_train, y_train)
    out = est.predict(x_test) if task == "regression" else est.predict_proba(x_test)
    gen = est.ensemble_generator_
    enc = est.X_encoder_
    num_train = enc.transform(x_train)
    num_test = enc.transform(x_test)
    n_cat = len(enc.tfm_.transformers_[0][2]) if hasattr(enc.tfm_, "transformers_") else 0
    data = gen.transform(num_test)
    xs, ys, cat_masks, ds, _ = gen.prepare_ensemble_tensors(data)
    if task == "regression":
        raw = est._predict_internal(x_test)
    else:
        raw = est._predict_proba_internal(x_test)
    pieces = {"numeric_train": np.asarray(num_train, dtype=np.float64),
              "numeric_test": np.asarray(num_test, dtype=np.float64),
              "n_categorical": np.int64(n_cat),
              "features_kept": gen.unique_filter_.features_to_keep_,
              "xs": xs, "ys": ys, "cat_masks": cat_masks, "ds": ds,
              "raw": raw, "output": np.asarray(out)}
    offsets, patterns, methods = [], [], []
    for method, configs in gen.ensemble_configs_.items():
        for pattern, shift, _, _ in configs:
            methods.append(method)
            patterns.append(np.asarray(pattern))
            offsets.append(shift)
    pieces["patterns"] = np.stack(patterns)
    pieces["offsets"] = np.array(offsets, dtype=np.int64)
    pieces["methods"] = np.array(methods)
    for method, pre in gen.preprocessors_.items():
        pieces[f"pipeline_{method}_train"] = pre.X_transformed_
        pieces[f"pipeline_{method}_test"] = pre.transform(gen.unique_filter_.transform(num_test))
    if task == "regression":
        pieces["y_mean"] = est.y_scaler_.mean_
        pieces["y_scale"] = est.y_scaler_.scale_
    entry = {"kind": kind, "task": task, "options": {k: v for k, v in options.items()
                                                     if k not in ("dates", "nullable")},
             "y_train": y_train.tolist(), "output": np.asarray(out).tolist()}
    if kind == "array":
        entry["x_train"] = x_train.tolist()
        entry["x_test"] = x_test.tolist()
    else:
        entry["frame"] = frame_json(frame, n)
    return entry, pieces


def bfloat16_distance(ckpt: Path) -> dict:
    """The package's default bfloat16 model against its float32 one on the binary case."""
    x, y = make_array("binary", 60, 17, 7, 1000 + sum(map(ord, "binary")))
    out = {}
    for label, dtype in (("float32", None), ("bfloat16", torch.bfloat16)):
        est = TabFMClassifier(tabfm_v1_0_0.load("classification", str(ckpt), dtype=dtype,
                                                use_cache=False))
        out[label] = est.fit(x[:60], y[:60]).predict_proba(x[60:])
    diff = np.abs(out["float32"] - out["bfloat16"])
    return {"case": "binary", "max_abs_probability_difference": float(diff.max()),
            "mean_abs_probability_difference": float(diff.mean())}


def main() -> None:
    torch.manual_seed(0)
    warnings.simplefilter("ignore")
    OUT.mkdir(parents=True, exist_ok=True)
    ckpt = OUT / "checkpoint"
    write_checkpoint(ckpt)
    cases = {}
    for name, spec in CASES.items():
        entry, pieces = run_case(name, spec, ckpt)
        cases[name] = entry
        np.savez_compressed(OUT / f"{name}.npz", **pieces)
        print(name, np.asarray(entry["output"]).shape)
    doc = {"package": "tabfm 1.0.1 (pytorch backend, float32: dtype=None)",
           "torch": torch.__version__, "pandas": pd.__version__, "config": CONFIG,
           "cases": cases}
    (OUT / "cases.json").write_text(json.dumps(doc, indent=1) + "\n")
    bf = bfloat16_distance(ckpt)
    (OUT / "bfloat16.json").write_text(json.dumps(bf, indent=1) + "\n")
    print(bf)


if __name__ == "__main__":
    main()
