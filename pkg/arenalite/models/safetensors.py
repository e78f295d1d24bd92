"""A small reader and writer of the safetensors layout, numpy only (no torch, no Rust).

The layout (https://huggingface.co/docs/safetensors): an 8-byte little-endian unsigned
header length N, N bytes of UTF-8 JSON, then the byte buffer. The JSON maps each tensor
name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the buffer) and
may hold ``"__metadata__"``, a string → string map. Every check names the tensor at fault,
so a truncated or hand-edited file is rejected with a message, never read as garbage.
"""

from __future__ import annotations

import json
import math
import struct
from os import PathLike
from pathlib import Path

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2"}
"""The dtypes read (and converted to float32); others (BF16, integers) are rejected."""
MAX_HEADER = 100_000_000


def read(path: str | PathLike, *,
         finite: bool = True) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """``(metadata, tensors)`` of a safetensors file; tensors as C-ordered float32 arrays.

    ``finite=False`` accepts NaN and infinite values (by default a tensor holding one is
    rejected)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"weights file {str(p)!r} does not exist")
    return parse(p.read_bytes(), p.name, finite=finite)


def parse(data: bytes, name: str = "<bytes>", *,
          finite: bool = True) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Like :func:`read`, on the file's bytes; ``name`` is used in error messages."""
    if len(data) < 8:
        raise ValueError(f"weights file {name!r} is {len(data)} bytes long; a safetensors "
                         "file starts with an 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > min(MAX_HEADER, len(data) - 8):
        raise ValueError(f"weights file {name!r} declares a {n}-byte header but holds "
                         f"{len(data) - 8} bytes after the length (truncated or not safetensors)")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"weights file {name!r} has a header that is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ValueError(f"weights file {name!r}: the header must be a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError(f"weights file {name!r}: '__metadata__' must map strings to strings")
    buffer = memoryview(data)[8 + n:]
    tensors, spans = {}, []
    for tensor, entry in header.items():
        arr, span = _tensor(tensor, entry, buffer, name, finite)
        tensors[tensor] = arr
        spans.append((*span, tensor))
    spans.sort()
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ValueError(f"weights file {name!r}: tensors {first!r} and {second!r} overlap")
    return metadata, tensors


def _tensor(tensor: str, entry: object, buffer: memoryview, name: str, finite: bool = True):
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} must have exactly the keys "
                         f"dtype, shape, data_offsets; got {entry!r}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype not in DTYPES:
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} has dtype {dtype!r}; "
                         f"this reader takes {sorted(DTYPES)}")
    if not isinstance(shape, list) or not all(
            isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} has shape {shape!r}, "
                         "not a list of non-negative integers")
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
            or not 0 <= offsets[0] <= offsets[1]):
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} has data_offsets "
                         f"{offsets!r}, not [begin, end] with 0 <= begin <= end")
    itemsize = np.dtype(DTYPES[dtype]).itemsize
    begin, end = offsets
    if end - begin != itemsize * math.prod(shape):
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} spans {end - begin} bytes "
                         f"but shape {shape} of {dtype} needs {itemsize * math.prod(shape)}")
    if end > len(buffer):
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} ends at byte {end} of a "
                         f"{len(buffer)}-byte buffer (the file is truncated)")
    arr = np.frombuffer(buffer[begin:end], dtype=DTYPES[dtype]).reshape(shape)
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} has non-finite values")
    return np.ascontiguousarray(arr, dtype=np.float32), (begin, end)


def write(path: str | PathLike, tensors: dict[str, np.ndarray],
          metadata: dict[str, str] | None = None, *, finite: bool = True) -> Path:
    """Write float32 ``tensors`` (sorted by name, contiguous) and string ``metadata``;
    ``finite=False`` writes NaN and infinite values too (by default they are refused)."""
    header: dict = {"__metadata__": dict(metadata or {})}
    chunks, offset = [], 0
    for tensor in sorted(tensors):
        arr = np.asarray(tensors[tensor], dtype=np.float64)
        if finite and not np.isfinite(arr).all():
            raise ValueError(f"tensor {tensor!r} has non-finite values")
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[tensor] = {"dtype": "F32", "shape": list(arr.shape),
                          "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    p = Path(path)
    p.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(chunks))
    return p
