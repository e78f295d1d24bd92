"""Weights file format: round trip, the shipped defaults, and every reader/writer error."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models import read_weights, write_weights
from arenalite.models.weights import DEFAULT_PATH, tensor_shapes

ROOT = Path(__file__).resolve().parents[1]
CONFIG = {"d_in": 4, "d_model": 8, "n_heads": 2, "n_layers": 1, "d_mlp": 6, "max_classes": 3,
          "ln_eps": 1e-5}


def tensors(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {n: rng.normal(size=s) for n, s in tensor_shapes(CONFIG).items()}


@pytest.fixture
def written(tmp_path):
    t = tensors()
    return write_weights(tmp_path / "w.json", CONFIG, t), t


def test_round_trip(written):
    path, t = written
    w = read_weights(path)
    assert w.config == CONFIG
    assert list(w.tensors) == list(tensor_shapes(CONFIG))
    for name, arr in t.items():
        assert w[name].dtype == np.float32
        assert np.array_equal(w[name], arr.astype(np.float32))
    manifest = json.loads(path.read_text())
    assert manifest["blob"] == "w.bin"
    blob = path.with_suffix(".bin").read_bytes()
    first = manifest["tensors"][0]
    assert first["name"] == "embed.w" and first["offset"] == 0
    # Little-endian float32, row-major.
    assert np.frombuffer(blob[:32], "<f4").tolist() == t["embed.w"].astype("<f4")[0].tolist()


def test_default_weights_reproducible_from_script(tmp_path):
    spec = importlib.util.spec_from_file_location("mdw", ROOT / "scripts" /
                                                  "make_default_weights.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = write_weights(tmp_path / "icl_transformer.json", module.CONFIG, module.build())
    assert path.with_suffix(".bin").read_bytes() == DEFAULT_PATH.with_suffix(".bin").read_bytes()
    assert path.read_text() == DEFAULT_PATH.read_text()
    assert read_weights().config == module.CONFIG


def edit(path: Path, change) -> None:
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


def set_blob(path: Path, blob: bytes) -> None:
    path.with_suffix(".bin").write_bytes(blob)
    edit(path, lambda m: m.update(blob_sha256=hashlib.sha256(blob).hexdigest()))


def entry(name):
    def change(m):
        return next(e for e in m["tensors"] if e["name"] == name)
    return change


MANIFEST_ERRORS = [
    (lambda m: m.update(format="other"), "'format' must be 'arenalite-weights'"),
    (lambda m: m.update(version=2), "'version' 2 is not supported"),
    (lambda m: m.update(model="mlp"), "'model' must be 'icl_transformer', got 'mlp'"),
    (lambda m: m["config"].pop("d_mlp"), r"missing \['d_mlp'\]"),
    (lambda m: m["config"].update(n_heads=3), "not divisible by n_heads=3"),
    (lambda m: m["config"].update(d_in=0), "'d_in' must be a positive integer, got 0"),
    (lambda m: m["config"].update(ln_eps="x"), "'ln_eps' must be a number"),
    (lambda m: m.update(blob="../w.bin"), "'blob' must be a file name"),
    (lambda m: m.update(blob="missing.bin"), "does not exist"),
    (lambda m: m.update(blob_sha256="00"), "records '00'"),
    (lambda m: m["tensors"].pop(3), r"lacks tensors \['label.reg'\]"),
    (lambda m: m["tensors"].append(dict(m["tensors"][0])), "'embed.w' is listed twice"),
    (lambda m: m["tensors"][0].update(name="embed.x"), "unexpected name 'embed.x'"),
    (lambda m: m["tensors"][0].update(shape=[8, 4]), r"'embed.w' has shape \[8, 4\], expected"),
    (lambda m: m["tensors"][1].update(offset=130), "offset 130; offsets are non-negative "
                                                   "multiples of 4"),
    (lambda m: m["tensors"][-1].update(offset=10**6), "runs past the end of blob"),
    (lambda m: m["tensors"][1].update(offset=4), "overlap"),
    (lambda m: m["tensors"][0].pop("offset"), "must have exactly the keys"),
    (lambda m: m.update(tensors={}), "'tensors' must be a list"),
]


@pytest.mark.parametrize("change,match", MANIFEST_ERRORS, ids=[m for _, m in MANIFEST_ERRORS])
def test_reader_errors(written, change, match):
    path, _ = written
    edit(path, change)
    with pytest.raises(ValueError, match=match):
        read_weights(path)


def test_reader_file_errors(written, tmp_path):
    path, _ = written
    with pytest.raises(ValueError, match="must name the .json manifest"):
        read_weights(path.with_suffix(".bin"))
    with pytest.raises(ValueError, match="does not exist"):
        read_weights(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="is not valid JSON"):
        read_weights(bad)
    blob = bytearray(path.with_suffix(".bin").read_bytes())
    blob[:4] = np.array([np.nan], "<f4").tobytes()
    set_blob(path, bytes(blob))
    with pytest.raises(ValueError, match="'embed.w' has non-finite values"):
        read_weights(path)


def test_writer_errors(tmp_path):
    t = tensors()
    with pytest.raises(ValueError, match=r"missing \['head.reg.b'\]"):
        write_weights(tmp_path / "w.json", CONFIG, {k: v for k, v in t.items()
                                                    if k != "head.reg.b"})
    with pytest.raises(ValueError, match=r"'embed.b' has shape \[3\], expected \[8\]"):
        write_weights(tmp_path / "w.json", CONFIG, {**t, "embed.b": np.zeros(3)})
    with pytest.raises(ValueError, match="'embed.b' has non-finite values"):
        write_weights(tmp_path / "w.json", CONFIG, {**t, "embed.b": np.full(8, np.inf)})
    with pytest.raises(ValueError, match="must name the .json manifest"):
        write_weights(tmp_path / "w.bin", CONFIG, t)
