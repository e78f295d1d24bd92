"""The weights file format: a JSON manifest plus a little-endian float32 blob.

``NAME.json`` names the model, its config, the blob file and its sha256, and lists
every tensor (name, shape, byte offset); ``NAME.bin`` holds the tensors row-major.
Python writes it (:func:`write_weights`) and both Python (:func:`read_weights`) and
the JavaScript bridge read it, so trained weights can be dropped in. Exact layout in
docs/models.md.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

FORMAT = "arenalite-weights"
VERSION = 1
MODEL = "icl_transformer"
CONFIG_KEYS = ("d_in", "d_model", "n_heads", "n_layers", "d_mlp", "max_classes", "ln_eps")
DEFAULT_PATH = Path(__file__).parent / "weights" / "icl_transformer.json"


@dataclass(frozen=True)
class Weights:
    """A validated config and its float32 tensors by name."""

    config: dict
    tensors: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.tensors[name]


def check_config(config: object) -> dict:
    """Validate an ``icl_transformer`` config; returns a plain dict with typed values."""
    return check_transformer_config(config, CONFIG_KEYS, "weights config")


def check_transformer_config(config: object, keys: tuple[str, ...], what: str) -> dict:
    """A transformer config with exactly ``keys``: positive integers, then ``ln_eps`` in
    (0, 1) (the last key); d_model divisible by n_heads; at least 2 classes. Messages start
    with ``what``."""
    if not isinstance(config, dict):
        raise ValueError(f"{what} must be an object, got {type(config).__name__}")
    missing = [k for k in keys if k not in config]
    extra = sorted(set(config) - set(keys))
    if missing or extra:
        raise ValueError(f"{what} keys: missing {missing}, unexpected {extra}")
    out: dict = {}
    for key in keys[:-1]:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{what} {key!r} must be a positive integer, got {value!r}")
        out[key] = int(value)
    eps = config["ln_eps"]
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        raise ValueError(f"{what} 'ln_eps' must be a number in (0, 1), got {eps!r}")
    out["ln_eps"] = float(eps)
    if out["d_model"] % out["n_heads"]:
        raise ValueError(f"{what} d_model={out['d_model']} is not divisible by "
                         f"n_heads={out['n_heads']}")
    if out["max_classes"] < 2:
        raise ValueError(f"{what} 'max_classes' must be at least 2, got {out['max_classes']}")
    return out


def tensor_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor name of a config and its shape, in file order."""
    d, f, m, c = config["d_model"], config["d_in"], config["d_mlp"], config["max_classes"]
    shapes: dict[str, tuple[int, ...]] = {
        "embed.w": (f, d), "embed.b": (d,), "label.w": (c, d), "label.reg": (d,),
    }
    for layer in range(config["n_layers"]):
        p = f"layers.{layer}."
        shapes[p + "ln1.g"] = (d,)
        shapes[p + "ln1.b"] = (d,)
        for name in ("wq", "wk", "wv", "wo"):
            shapes[p + "attn." + name] = (d, d)
        for name in ("bq", "bk", "bv", "bo"):
            shapes[p + "attn." + name] = (d,)
        shapes[p + "ln2.g"] = (d,)
        shapes[p + "ln2.b"] = (d,)
        shapes[p + "mlp.w1"] = (d, m)
        shapes[p + "mlp.b1"] = (m,)
        shapes[p + "mlp.w2"] = (m, d)
        shapes[p + "mlp.b2"] = (d,)
    shapes.update({"head.ln.g": (d,), "head.ln.b": (d,), "head.cls.w": (d, c),
                   "head.cls.b": (c,), "head.reg.w": (d,), "head.reg.b": (1,)})
    return shapes


def check_tensor_names(shapes: dict[str, tuple[int, ...]], tensors: dict, where: str) -> None:
    """Raise ValueError naming the tensors a config needs but ``tensors`` lacks, and extras."""
    missing = [n for n in shapes if n not in tensors]
    extra = sorted(set(tensors) - set(shapes))
    if missing or extra:
        raise ValueError(f"{where}: tensors missing {missing}, unexpected {extra}")


def _manifest_path(path: str | PathLike) -> Path:
    p = Path(path)
    if p.suffix != ".json":
        raise ValueError(f"weights path must name the .json manifest, got {str(p)!r}")
    return p


def write_weights(path: str | PathLike, config: dict, tensors: dict[str, np.ndarray]) -> Path:
    """Write ``NAME.json`` and ``NAME.bin`` for ``tensors``; returns the manifest path.

    Every tensor of the config must be given with its exact shape and finite values.
    """
    manifest_path = _manifest_path(path)
    config = check_config(config)
    shapes = tensor_shapes(config)
    check_tensor_names(shapes, tensors, "weights")
    entries, chunks, offset = [], [], 0
    for name, shape in shapes.items():
        arr = np.asarray(tensors[name], dtype=np.float64)
        if arr.shape != shape:
            raise ValueError(f"tensor {name!r} has shape {list(arr.shape)}, expected {list(shape)}")
        if not np.isfinite(arr).all():
            raise ValueError(f"tensor {name!r} has non-finite values")
        data = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        entries.append({"name": name, "shape": list(shape), "offset": offset})
        chunks.append(data)
        offset += len(data)
    blob = b"".join(chunks)
    blob_path = manifest_path.with_suffix(".bin")
    manifest = {"format": FORMAT, "version": VERSION, "model": MODEL, "config": config,
                "blob": blob_path.name, "blob_sha256": hashlib.sha256(blob).hexdigest(),
                "tensors": entries}
    blob_path.write_bytes(blob)
    manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest_path


def read_weights(path: str | PathLike | None = None) -> Weights:
    """Read and validate a weights manifest and its blob (default: the shipped weights).

    Checks format and version, the model name, the config, that the blob exists, has
    the recorded sha256, and holds every expected tensor (no more) at a 4-byte aligned,
    in-bounds, non-overlapping offset with the expected shape and finite values.
    """
    manifest_path = _manifest_path(DEFAULT_PATH if path is None else path)
    try:
        manifest = json.loads(manifest_path.read_text())
    except FileNotFoundError:
        raise ValueError(f"weights manifest {str(manifest_path)!r} does not exist") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"weights manifest {str(manifest_path)!r} is not valid JSON: "
                         f"{exc}") from None
    if not isinstance(manifest, dict):
        raise ValueError(f"weights manifest {str(manifest_path)!r} must be a JSON object")
    if manifest.get("format") != FORMAT:
        raise ValueError(f"weights manifest 'format' must be {FORMAT!r}, "
                         f"got {manifest.get('format')!r}")
    if manifest.get("version") != VERSION:
        raise ValueError(f"weights manifest 'version' {manifest.get('version')!r} is not "
                         f"supported (this reader knows version {VERSION})")
    if manifest.get("model") != MODEL:
        raise ValueError(f"weights manifest 'model' must be {MODEL!r}, "
                         f"got {manifest.get('model')!r}")
    config = check_config(manifest.get("config"))
    blob_name = manifest.get("blob")
    if not isinstance(blob_name, str) or Path(blob_name).name != blob_name:
        raise ValueError(f"weights manifest 'blob' must be a file name next to the manifest, "
                         f"got {blob_name!r}")
    blob_path = manifest_path.parent / blob_name
    if not blob_path.is_file():
        raise ValueError(f"weights blob {str(blob_path)!r} does not exist")
    blob = blob_path.read_bytes()
    digest = hashlib.sha256(blob).hexdigest()
    if manifest.get("blob_sha256") != digest:
        raise ValueError(f"weights blob {blob_name!r} has sha256 {digest}, but the manifest "
                         f"records {manifest.get('blob_sha256')!r}")
    return Weights(config, _tensors(manifest.get("tensors"), config, blob, blob_name))


def _tensors(entries: object, config: dict, blob: bytes, blob_name: str) -> dict:
    if not isinstance(entries, list):
        raise ValueError("weights manifest 'tensors' must be a list")
    shapes = tensor_shapes(config)
    tensors: dict[str, np.ndarray] = {}
    spans = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or set(entry) != {"name", "shape", "offset"}:
            raise ValueError(f"weights tensor entry {i} must have exactly the keys name, "
                             f"shape, offset; got {entry!r}")
        name, shape, offset = entry["name"], entry["shape"], entry["offset"]
        if name not in shapes:
            raise ValueError(f"weights tensor entry {i} has unexpected name {name!r}")
        if name in tensors:
            raise ValueError(f"weights tensor {name!r} is listed twice")
        if not isinstance(shape, list) or tuple(shape) != shapes[name]:
            raise ValueError(f"weights tensor {name!r} has shape {shape!r}, expected "
                             f"{list(shapes[name])}")
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0 or offset % 4:
            raise ValueError(f"weights tensor {name!r} has offset {offset!r}; offsets are "
                             "non-negative multiples of 4 bytes")
        nbytes = 4 * math.prod(shapes[name])
        if offset + nbytes > len(blob):
            raise ValueError(f"weights tensor {name!r} (offset {offset}, {nbytes} bytes) runs "
                             f"past the end of blob {blob_name!r} ({len(blob)} bytes)")
        arr = np.frombuffer(blob, dtype="<f4", count=nbytes // 4, offset=offset)
        if not np.isfinite(arr).all():
            raise ValueError(f"weights tensor {name!r} has non-finite values")
        tensors[name] = arr.reshape(shapes[name]).astype(np.float32)
        spans.append((offset, offset + nbytes, name))
    missing = [n for n in shapes if n not in tensors]
    if missing:
        raise ValueError(f"weights manifest lacks tensors {missing}")
    spans.sort()
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ValueError(f"weights tensors {first!r} and {second!r} overlap in the blob")
    return tensors
