"""Write the fixtures of the Google TabFM checkpoint reader in JavaScript
(webgpu_bridge/test/tabfm_checkpoint.test.js) under tests/data/tabfm/js/.

Run with the project's environment (numpy only): ``.venv-pins/bin/python
scripts/make_tabfm_js_fixtures.py``. It writes:

* ``converted.safetensors``: ``arenalite convert tabfm`` of tests/data/tabfm/small's
  regression folder (the single-file form a page may pick);
* ``checkpoints.json``: per good checkpoint (a folder, a parent with the task, the converted
  file, the wide and the wrappers' checkpoints) Python's checked config, its tensors in
  state-dict order with shapes and float64 sums; then per bad case a mutation of
  tests/data/tabfm/small/classification's two files (``ops``, applied by the JavaScript test
  in the same way to the same bytes) and the message Python's ``read_checkpoint`` gives for
  the folder ``bad`` (the test reads its bytes as the folder ``bad`` too);
* ``predict.json``: ``arenalite.models.predict({"name": "tabfm", "weights":
  tests/data/tabfm/wrappers/checkpoint, ...})`` (numpy's Google TabFM) on some of
  tests/data/tabfm/wrappers/cases.json's tables (arrays, and DataFrames with text, dates and
  missing cells) with a few members, for the end-to-end test of the WebGPU predictor
  (webgpu_bridge/test/tabfm_predictor.test.js).
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

from arenalite import models
from arenalite.models.tabfm import checkpoint as ck

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "tabfm"
OUT = DATA / "js"
SMALL = DATA / "small" / "classification"

WRAPPERS = DATA / "wrappers"
PREDICT = {  # case of wrappers/cases.json: members (the JavaScript test runs on SwiftShader)
    "binary": 4, "regression": 4, "multiclass_perms": 3, "subsampled": 3, "frame_multiclass": 4,
    "frame_regression": 3, "frame_binary_dates": 3, "frame_nullable": 3,
}

GOOD = {  # name: (path relative to tests/data/tabfm, task)
    "small_classification": ("small/classification", None),
    "small_parent_regression": ("small", "regression"),
    "wide": ("wide", None),
    "wrappers_classification": ("wrappers/checkpoint", "classification"),
    "wrappers_regression": ("wrappers/checkpoint/regression", "regression"),
    "converted": ("js/converted.safetensors", None),
}

BAD = {  # name: ops applied in order to (config text, weights bytes)
    "truncated": [{"truncate": -100}],
    "five_bytes": [{"truncate_to": 5}],
    "header_longer_than_file": [{"header_length": "file"}],
    "header_three_short": [{"header_length": -3}],
    "header_five_long": [{"header_length": 5}],
    "bf16_tensor": [{"header_set": ["icl_predictor.ln.weight", "dtype", "BF16"]}],
    "f64_tensor": [{"header_set": ["icl_predictor.ln.weight", "dtype", "F64"]}],
    "span_lies": [{"header_set": ["cls_tokens", "shape", [2, 17]]}],
    "shape_swapped": [{"header_set": ["cls_tokens", "shape", [16, 2]]}],
    "renamed_tensor": [{"header_rename": ["row_interactor.tf_row.rope.freqs", "row.extra"]}],
    "overlap": [{"overlap": True}],
    "bad_entry_keys": [{"header_set": ["cls_tokens", "extra", 1]}],
    "metadata_not_strings": [{"header_metadata": {"format": 1}}],
    "nan_weight": [{"nan": "cls_tokens"}],
    "header_not_json": [{"header_text": "{\"a\": 1,}"}],
    "header_bad_utf8": [{"header_bytes_hex": "7b22ff227d"}],
    "header_a_list": [{"header_text": "[1, 2]  "}],
    "config_unknown_key": [{"config": {"use_flash": True}}],
    "config_string_width": [{"config": {"embed_dim": "16"}}],
    "config_float_width": [{"config_text": "{\"embed_dim\": 16.0}"}],
    "config_heads": [{"config": {"row_nhead": 3}}],
    "config_odd_heads": [{"config": {"embed_dim": 12, "row_nhead": 4, "col_nhead": 2,
                                     "icl_nhead": 2}}],
    "config_task": [{"config": {"task": "ranking"}}],
    "config_contradiction": [{"config": {"task": "regression"}}],
    "config_is_classifier": [{"config": {"is_classifier": "yes"}}],
    "config_decoder_hidden": [{"config": {"decoder_hidden": 0}}],
    "config_version": [{"config": {"version": 1}}],
    "config_null_task": [{"config": {"task": None}}],
    "config_not_object": [{"config_text": "[1, 2]"}],
    "config_not_json": [{"config_text": "{not json"}],
    "config_bad_utf8": [{"config_bytes_hex": "7b2261223a20c3"}],
    "config_crlf": [{"config_text": "{\r\n\"a\": 1,\r\n}"}],
    "no_weights": [{"drop_weights": True}],
}


def _header(data: bytes) -> tuple[dict, bytes]:
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n]), data[8 + n:]


def _with_header(header: dict, body: bytes) -> bytes:
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + body


def apply(ops: list[dict], config: str, weights: bytes) -> tuple[bytes, bytes | None]:
    """The mutated (config.json bytes, model.safetensors bytes or None)."""
    cfg: bytes = config.encode()
    out: bytes | None = weights
    for op in ops:
        (kind, arg), = op.items()
        if kind == "truncate":
            out = out[:arg]
        elif kind == "truncate_to":
            out = out[:arg]
        elif kind == "header_length":
            (n,) = struct.unpack("<Q", out[:8])
            n = len(out) if arg == "file" else n + arg
            out = struct.pack("<Q", n) + out[8:]
        elif kind in ("header_set", "header_rename", "header_metadata", "nan", "overlap"):
            header, body = _header(out)
            if kind == "header_set":
                name, key, value = arg
                header[name][key] = value
            elif kind == "header_rename":
                old, new = arg
                header = {(new if k == old else k): v for k, v in header.items()}
            elif kind == "overlap":  # the second tensor starts 4 bytes inside the first
                spans = sorted((v["data_offsets"], k) for k, v in header.items()
                               if k != "__metadata__")
                (begin, end), second = spans[1]
                header[second]["data_offsets"] = [begin - 4, end - 4]
            elif kind == "header_metadata":
                header["__metadata__"] = arg
            else:
                begin = header[arg]["data_offsets"][0]
                body = body[:begin] + np.float32(np.nan).tobytes() + body[begin + 4:]
            out = _with_header(header, body)
        elif kind == "header_text":
            text = arg.encode()
            out = struct.pack("<Q", len(text)) + text + _header(out)[1]
        elif kind == "header_bytes_hex":
            text = bytes.fromhex(arg)
            out = struct.pack("<Q", len(text)) + text + _header(out)[1]
        elif kind == "config":
            cfg = json.dumps({**json.loads(cfg), **arg}, indent=2).encode()
        elif kind == "config_drop":
            cfg = json.dumps({k: v for k, v in json.loads(cfg).items() if k not in arg},
                             indent=2).encode()
        elif kind == "config_text":
            cfg = arg.encode()
        elif kind == "config_bytes_hex":
            cfg = bytes.fromhex(arg)
        elif kind == "drop_weights":
            out = None
        else:
            raise ValueError(f"unknown op {kind!r}")
    return cfg, out


def tensor_summary(checkpoint: ck.Checkpoint) -> list:
    return [[name, list(t.shape), float(np.sum(t, dtype=np.float64))]
            for name, t in checkpoint.tensors.items()]


def predictions() -> dict:
    """Python's arenalite.models.predict on the PREDICT cases."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_tabfm_preprocessing import frames  # noqa: PLC0415  (the cases' DataFrames)

    cases = json.loads((WRAPPERS / "cases.json").read_text(encoding="utf-8"))["cases"]
    out = {}
    for name, members in PREDICT.items():
        case = cases[name]
        x_train, x_test = (frames(case) if case["kind"] == "frame"
                           else (np.array(case["x_train"]), np.array(case["x_test"])))
        options = {**case["options"], "n_estimators": members}
        model = {"name": "tabfm", "weights": str(WRAPPERS / "checkpoint"), **options}
        pred, timings = models.predict_timed(model, x_train, np.array(case["y_train"]), x_test,
                                             case["task"])
        out[name] = {"options": options, "output": np.asarray(pred, dtype=float).tolist(),
                     "layers": len(timings["layers"])}
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    ck.convert(DATA / "small" / "regression", OUT / "converted.safetensors")
    good = {}
    for name, (rel, task) in GOOD.items():
        c = ck.read_checkpoint(DATA / rel, task)
        good[name] = {"path": rel, "task": task, "config": c.config,
                      "tensors": tensor_summary(c)}
    config = (SMALL / "config.json").read_text(encoding="utf-8")
    weights = (SMALL / "model.safetensors").read_bytes()
    bad = {}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for name, ops in BAD.items():
                shutil.rmtree("bad", ignore_errors=True)
                Path("bad").mkdir()
                cfg, out = apply(ops, config, weights)
                Path("bad/config.json").write_bytes(cfg)
                if out is not None:
                    Path("bad/model.safetensors").write_bytes(out)
                try:
                    ck.read_checkpoint("bad")
                except ValueError as exc:
                    bad[name] = {"ops": ops, "message": str(exc)}
                else:
                    raise AssertionError(f"bad case {name} was read")
        finally:
            os.chdir(cwd)
    (OUT / "predict.json").write_text(json.dumps(predictions(), indent=1) + "\n",
                                      encoding="utf-8")
    (OUT / "checkpoints.json").write_text(json.dumps({"good": good, "bad": bad}, indent=1)
                                          + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
