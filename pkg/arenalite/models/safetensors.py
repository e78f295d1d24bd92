"""A small reader and writer of the safetensors layout, numpy only (no torch, no Rust).

The layout (https://huggingface.co/docs/safetensors): an 8-byte little-endian unsigned
header length N, N bytes of UTF-8 JSON, then the byte buffer. The JSON maps each tensor
name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into the buffer) and
may hold ``"__metadata__"``, a string → string map. Every check names the tensor at fault,
so a truncated or hand-edited file is rejected with a message, never read as garbage.

The one reader every loader uses: :func:`read_header` checks the header against the file's
size without reading the tensors (a loader reads its config from the metadata first),
:func:`read` / :func:`parse` read the tensors too.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import numpy as np

DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2"}
"""The dtypes read (and converted to float32); others (BF16, integers) are rejected."""
MAX_HEADER = 100_000_000


@dataclass(frozen=True)
class Entry:
    """One tensor's header entry: dtype name, shape, ``[begin, end)`` in the buffer."""

    dtype: str
    shape: tuple[int, ...]
    begin: int
    end: int


@dataclass(frozen=True)
class Header:
    """A checked header: the metadata, every tensor's :class:`Entry` in file order, and
    where the byte buffer starts in the file."""

    metadata: dict[str, str]
    entries: dict[str, Entry]
    data_start: int


def read_header(path: str | PathLike, *, dtypes: tuple[str, ...] = tuple(DTYPES)) -> Header:
    """The checked header of a safetensors file, read without its tensors' bytes.

    Everything the header says is checked against the file's size: a truncated file, a
    header that lies about its length, an entry whose bytes do not fit its shape or the
    file, overlapping tensors, a dtype outside ``dtypes`` each raise ValueError naming the
    file and the tensor. Loaders read a checkpoint's metadata (its config) with this before
    any tensor is read."""
    p = _existing(path)
    size = p.stat().st_size
    with p.open("rb") as f:
        head = f.read(8)
        n = struct.unpack("<Q", head)[0] if len(head) == 8 else None
        text = f.read(n) if n is not None and n <= min(MAX_HEADER, size - 8) else b""
    return _header(head, text, size, p.name, dtypes)


def read(path: str | PathLike, *, finite: bool = True,
         dtypes: tuple[str, ...] = tuple(DTYPES)) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """``(metadata, tensors)`` of a safetensors file; tensors as C-ordered float32 arrays.

    ``finite=False`` accepts NaN and infinite values (by default a tensor holding one is
    rejected); ``dtypes`` narrows the accepted dtypes (``("F32",)``: float32 only)."""
    p = _existing(path)
    return parse(p.read_bytes(), p.name, finite=finite, dtypes=dtypes)


def parse(data: bytes, name: str = "<bytes>", *, finite: bool = True,
          dtypes: tuple[str, ...] = tuple(DTYPES)) -> tuple[dict[str, str], dict[str, np.ndarray]]:
    """Like :func:`read`, on the file's bytes; ``name`` is used in error messages."""
    n = struct.unpack("<Q", data[:8])[0] if len(data) >= 8 else None
    text = data[8:8 + n] if n is not None and n <= min(MAX_HEADER, len(data) - 8) else b""
    header = _header(data[:8], text, len(data), name, dtypes)
    buffer = memoryview(data)[header.data_start:]
    tensors = {}
    for tensor, entry in header.entries.items():
        arr = np.frombuffer(buffer[entry.begin:entry.end],
                            dtype=DTYPES[entry.dtype]).reshape(entry.shape)
        if finite and not np.isfinite(arr).all():
            raise ValueError(f"weights file {name!r}: tensor {tensor!r} has non-finite values")
        tensors[tensor] = np.ascontiguousarray(arr, dtype=np.float32)
    return header.metadata, tensors


def _existing(path: str | PathLike) -> Path:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"weights file {str(p)!r} does not exist")
    return p


def _header(head: bytes, text: bytes, size: int, name: str, dtypes: tuple[str, ...]) -> Header:
    """Check the 8-byte length ``head`` and the header ``text`` of a ``size``-byte file."""
    if len(head) < 8:
        raise ValueError(f"weights file {name!r} is {size} bytes long; a safetensors "
                         "file starts with an 8-byte header length")
    (n,) = struct.unpack("<Q", head)
    if n > min(MAX_HEADER, size - 8):
        raise ValueError(f"weights file {name!r} declares a {n}-byte header but holds "
                         f"{size - 8} bytes after the length (truncated or not safetensors)")
    try:
        header = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"weights file {name!r} has a header that is not JSON: {exc}") from None
    if not isinstance(header, dict):
        raise ValueError(f"weights file {name!r}: the header must be a JSON object")
    metadata = header.pop("__metadata__", {})
    if not isinstance(metadata, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError(f"weights file {name!r}: '__metadata__' must map strings to strings")
    buffer_size = size - 8 - n
    entries = {tensor: _entry(tensor, value, buffer_size, name, dtypes)
               for tensor, value in header.items()}
    spans = sorted((e.begin, e.end, tensor) for tensor, e in entries.items())
    for (_, end, first), (start, _, second) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise ValueError(f"weights file {name!r}: tensors {first!r} and {second!r} overlap")
    return Header(metadata, entries, 8 + n)


def _entry(tensor: str, entry: object, buffer_size: int, name: str,
           dtypes: tuple[str, ...]) -> Entry:
    if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} must have exactly the keys "
                         f"dtype, shape, data_offsets; got {entry!r}")
    dtype, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if dtype not in dtypes or dtype not in DTYPES:
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} has dtype {dtype!r}; "
                         f"this reader takes {sorted(set(dtypes) & set(DTYPES))}")
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
    if end > buffer_size:
        raise ValueError(f"weights file {name!r}: tensor {tensor!r} ends at byte {end} of a "
                         f"{buffer_size}-byte buffer (the file is truncated)")
    return Entry(dtype, tuple(shape), begin, end)


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
