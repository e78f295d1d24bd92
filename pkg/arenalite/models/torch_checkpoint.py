"""``torch.save`` files read without torch: the restricted unpickler the checkpoint readers share.

``torch.save`` (torch 1.6 and later) writes a zip: ``<archive>/data.pkl`` pickles the object,
each tensor as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)`` with
its storage a persistent id ``("storage", torch.FloatStorage, key, location, numel)`` whose
bytes are the zip record ``<archive>/data/<key>``; ``<archive>/byteorder`` says ``little``
or ``big``.

:func:`read_zip` reads data.pkl with an unpickler that resolves only :data:`ALLOWED` (the
classes such a file holds for a dict of configs and state dicts); any other class, by
GLOBAL, STACK_GLOBAL or INST, is refused before anything is called, so a hostile file cannot
run code. Tensors are :class:`TensorRef` records until the state dict's are materialized as
C-ordered float32 arrays (no other tensor of the file, an optimizer's say, is ever read).
Every failure is a ValueError that starts with ``where`` (the file) and names the culprit;
``model`` names the checkpoint's kind in them (``"TabICL"``: "a TabICL checkpoint never
contains"). Used by :mod:`arenalite.models.tabicl.checkpoint` and
:mod:`arenalite.models.tabpfn.checkpoint`.
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MAX_PICKLE = 1 << 28
"""Largest data.pkl read (bytes); a model checkpoint's is well under a megabyte."""

STORAGES = {
    "FloatStorage": "f4", "HalfStorage": "f2", "BFloat16Storage": "bf16",
    "DoubleStorage": "f8", "LongStorage": "i8", "IntStorage": "i4", "ShortStorage": "i2",
    "CharStorage": "i1", "ByteStorage": "u1", "BoolStorage": "b1",
}
"""torch's typed storage classes as pickled by ``torch.save`` → element type."""
FLOAT_STORAGES = ("FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage")
ALLOWED = (
    ("torch._utils", "_rebuild_tensor_v2"), ("torch._utils", "_rebuild_tensor"),
    ("torch._utils", "_rebuild_parameter"), ("torch._utils", "_rebuild_parameter_with_state"),
    ("collections", "OrderedDict"), ("torch", "Size"),
    ("builtins", "set"), ("builtins", "frozenset"),
    *(("torch", name) for name in STORAGES),
)
"""Every (module, name) the unpickler resolves; anything else is refused."""


def few(names: list[str], limit: int = 8) -> str:
    """``names`` for a message: the first ``limit`` quoted, then how many more."""
    shown = ", ".join(repr(n) for n in names[:limit])
    return f"[{shown}{f', … {len(names) - limit} more' if len(names) > limit else ''}]"


def sniff(path: Path, where: str) -> str:
    """``"zip"`` or ``"safetensors"``, told by the file's first bytes (not its name).

    A directory, a missing file, a bare pickle (torch's legacy format) and anything else
    raise ValueError starting with ``where``."""
    if path.is_dir():
        raise ValueError(f"{where} is a directory, not a file")
    if not path.is_file():
        raise ValueError(f"{where} does not exist")
    with path.open("rb") as f:
        head = f.read(16)
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    if head[:1] == b"\x80":
        raise ValueError(f"{where} is a bare pickle (torch's legacy format, before torch 1.6, "
                         "or not torch's at all), which is not read; torch.save of torch 1.6 "
                         "or later writes the zip format read here")
    raise ValueError(f"{where} is neither a torch checkpoint (a zip archive holding "
                     "data.pkl) nor a safetensors file")


# --- the restricted unpickler -------------------------------------------------------------


def _no_build(self: object, state: object) -> None:
    """``__setstate__`` of the records below: a pickle's BUILD opcode on one is refused."""
    raise Refused(f"sets the state of a {type(self).__name__.strip('_')} record, which "
                  "torch.save never does")


# Frozen and slotted (no __dict__ for BUILD to fill), and their own __setstate__ (the one
# dataclasses gives a frozen slotted class would set the fields from any BUILD state).
@dataclass(frozen=True, slots=True)
class StorageType:
    """A torch storage class named in data.pkl (``torch.FloatStorage``)."""

    name: str
    __setstate__ = _no_build


@dataclass(frozen=True, slots=True)
class Storage:
    """A storage record: its element kind, its key (``data/<key>``), its element count."""

    kind: str
    key: str
    numel: int
    __setstate__ = _no_build


@dataclass(frozen=True, slots=True)
class TensorRef:
    """A tensor of data.pkl, not yet read: a view of ``storage``."""

    storage: Storage
    offset: int
    size: tuple[int, ...]
    stride: tuple[int, ...]
    __setstate__ = _no_build


class Refused(Exception):
    """A class outside :data:`ALLOWED` (or a malformed tensor record), raised mid-load."""


def _index_tuple(value: object, what: str) -> tuple[int, ...]:
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise Refused(f"has a tensor whose {what} is {value!r}, not a tuple of non-negative "
                      "integers")
    return value


def _rebuild_tensor(storage: object = None, offset: object = None, size: object = None,
                    stride: object = None, *_: object) -> TensorRef:
    if not isinstance(storage, Storage):
        raise Refused(f"has a tensor built on a {type(storage).__name__}, not a saved storage")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise Refused(f"has a tensor whose storage offset is {offset!r}")
    size, stride = _index_tuple(size, "size"), _index_tuple(stride, "stride")
    if len(size) != len(stride):
        raise Refused(f"has a tensor of size {list(size)} but stride {list(stride)}")
    return TensorRef(storage, offset, size, stride)


def _rebuild_parameter(data: object = None, *_: object) -> object:
    if not isinstance(data, TensorRef):
        raise Refused(f"has a parameter wrapping a {type(data).__name__}, not a tensor")
    return data


class Unpickler(pickle.Unpickler):
    """Resolves only :data:`ALLOWED`; storages become :class:`Storage` records.

    ``model`` names the checkpoint's kind in the refusal of any other class."""

    _FUNCTIONS = {"_rebuild_tensor_v2": _rebuild_tensor, "_rebuild_tensor": _rebuild_tensor,
                  "_rebuild_parameter": _rebuild_parameter,
                  "_rebuild_parameter_with_state": _rebuild_parameter}

    def __init__(self, file: io.BytesIO, model: str) -> None:
        super().__init__(file)
        self.model = model

    def find_class(self, module: str, name: str) -> Any:
        module = "builtins" if module == "__builtin__" else module
        if (module, name) not in ALLOWED:
            raise Refused(f"refers to class {f'{module}.{name}'!r}, which a {self.model} "
                          "checkpoint never contains; refusing to load it")
        if module == "torch._utils":
            return self._FUNCTIONS[name]
        if module == "collections":
            from collections import OrderedDict

            return OrderedDict
        if name == "Size":
            return tuple
        if module == "builtins":
            return set if name == "set" else frozenset
        return StorageType(name)

    def persistent_load(self, pid: Any) -> Storage:
        if (not isinstance(pid, tuple) or len(pid) != 5 or pid[0] != "storage"
                or not isinstance(pid[1], StorageType) or not isinstance(pid[2], str)
                or isinstance(pid[4], bool) or not isinstance(pid[4], int) or pid[4] < 0):
            raise Refused(f"has a persistent id {pid!r} that is not a torch storage record")
        return Storage(pid[1].name, pid[2], pid[4])


# --- reading ------------------------------------------------------------------------------


def read_zip(path: Path, where: str, *, model: str, required: Iterable[str],
             inspect: Callable[[dict], None] | None = None,
             state_key: str = "state_dict") -> tuple[dict, dict[str, np.ndarray]]:
    """``(the unpickled dict, its state dict's tensors as float32 arrays in their order)``.

    The object must be a dict holding each of ``required`` and a dict ``state_key`` of
    tensors; ``inspect(obj)``, when given, runs after unpickling and before any tensor is
    read (to refuse the file on its config alone). Every failure is a ValueError starting
    with ``where``: a truncated or corrupt zip, a foreign class, a missing key or storage, a
    non-float tensor, a tensor beyond its storage. In the dict, tensors other than the state
    dict's stay :class:`TensorRef` records, never read.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            return _read_archive(archive, where, model, tuple(required), inspect, state_key)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, struct.error,
            NotImplementedError, RuntimeError) as exc:  # RuntimeError: an encrypted record
        raise ValueError(f"{where} is not a readable zip archive (truncated or corrupt): "
                         f"{exc}") from None


def _read_archive(archive: zipfile.ZipFile, where: str, model: str, required: tuple[str, ...],
                  inspect: Callable[[dict], None] | None,
                  state_key: str) -> tuple[dict, dict[str, np.ndarray]]:
    infos = {info.filename: info for info in archive.infolist()}
    pickles = [n for n in infos if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pickles) != 1:
        raise ValueError(f"{where}: a torch checkpoint holds one <archive>/data.pkl; this zip "
                         f"holds {len(pickles)} ({few(sorted(infos))})")
    prefix = pickles[0][:-len("data.pkl")]
    if infos[pickles[0]].file_size > MAX_PICKLE:
        raise ValueError(f"{where}: data.pkl is {infos[pickles[0]].file_size} bytes, more "
                         f"than a {model} checkpoint's ({MAX_PICKLE})")
    order = archive.read(prefix + "byteorder").decode("ascii", "replace").strip() \
        if prefix + "byteorder" in infos else "little"
    if order not in ("little", "big"):
        raise ValueError(f"{where}: byteorder record says {order!r}, not little or big")
    try:
        obj = Unpickler(io.BytesIO(archive.read(pickles[0])), model).load()
    except Refused as exc:
        raise ValueError(f"{where}: data.pkl {exc}") from None
    except Exception as exc:  # whatever malformed opcodes raise: the pickle is not valid
        raise ValueError(f"{where}: data.pkl is not a valid pickle ({type(exc).__name__}: "
                         f"{exc})") from None
    if not isinstance(obj, dict):
        wanted = " and ".join(repr(k) for k in required)
        raise ValueError(f"{where}: the checkpoint holds a {type(obj).__name__}, not a dict "
                         f"with {wanted}")
    for key in required:
        if key not in obj:
            raise ValueError(f"{where}: the checkpoint has no {key!r} (its keys: "
                             f"{sorted(map(str, obj))})")
    state = obj[state_key]
    if not isinstance(state, dict):
        raise ValueError(f"{where}: {state_key!r} is a {type(state).__name__}, not a dict")
    _check_storages(obj, infos, prefix, where)
    if inspect is not None:
        inspect(obj)
    uses: dict[str, int] = {}
    for name, ref in state.items():
        if not isinstance(name, str) or not isinstance(ref, TensorRef):
            raise ValueError(f"{where}: {state_key} entry {name!r} is a "
                             f"{type(ref).__name__}, not a tensor")
        uses[ref.storage.key] = uses.get(ref.storage.key, 0) + 1
    storages: dict[str, tuple[Storage, np.ndarray]] = {}
    tensors = {}
    for name, ref in state.items():
        tensors[name] = _materialize(name, ref, storages, archive, infos, prefix, order, where,
                                     model, state_key)
        uses[ref.storage.key] -= 1
        if not uses[ref.storage.key]:  # its last tensor: let the storage go
            storages.pop(ref.storage.key)
    return obj, tensors


def _check_storages(obj: object, infos: dict, prefix: str, where: str) -> None:
    """Every storage the pickle refers to (state dict or not) must be a record of the zip."""
    seen: set[int] = set()
    stack = [obj]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, TensorRef):
            if prefix + "data/" + item.storage.key not in infos:
                raise ValueError(f"{where}: storage {item.storage.key!r} is referred to but "
                                 f"the archive has no record {prefix}data/{item.storage.key}")
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)


def _materialize(name: str, ref: TensorRef, storages: dict[str, tuple[Storage, np.ndarray]],
                 archive: zipfile.ZipFile, infos: dict, prefix: str, order: str,
                 where: str, model: str, state_key: str) -> np.ndarray:
    storage = ref.storage
    if storage.kind not in FLOAT_STORAGES:
        raise ValueError(f"{where}: tensor {name!r} is stored as torch.{storage.kind}; a "
                         f"{model} {state_key} holds floating-point tensors only")
    if storage.key in storages and storages[storage.key][0] != storage:
        raise ValueError(f"{where}: tensor {name!r} declares storage {storage.key!r} as "
                         f"{storage.numel} elements of torch.{storage.kind}, another tensor "
                         f"as {storages[storage.key][0].numel} of "
                         f"torch.{storages[storage.key][0].kind}")
    if storage.key not in storages:
        code = STORAGES[storage.kind]
        itemsize = 2 if code == "bf16" else int(code[1:])
        info = infos[prefix + "data/" + storage.key]
        if info.file_size != storage.numel * itemsize:
            raise ValueError(f"{where}: storage {storage.key!r} (of tensor {name!r}) holds "
                             f"{info.file_size} bytes but declares {storage.numel} elements "
                             f"of torch.{storage.kind} ({storage.numel * itemsize} bytes)")
        raw = archive.read(info)
        end = "<" if order == "little" else ">"
        if code == "bf16":
            bits = np.frombuffer(raw, dtype=end + "u2").astype(np.uint32) << 16
            flat = bits.view(np.float32)
        else:
            flat = np.frombuffer(raw, dtype=end + code).astype(np.float32, copy=False)
        storages[storage.key] = (storage, flat)
    flat = storages[storage.key][1]
    if 0 not in ref.size:
        last = ref.offset + sum((n - 1) * s for n, s in zip(ref.size, ref.stride, strict=True))
        if last >= flat.size:
            raise ValueError(f"{where}: tensor {name!r} (size {list(ref.size)}, stride "
                             f"{list(ref.stride)}, offset {ref.offset}) reaches element "
                             f"{last} of storage {storage.key!r}, which holds "
                             f"{storage.numel}")
        view = np.lib.stride_tricks.as_strided(
            flat[ref.offset:], shape=ref.size,
            strides=tuple(s * flat.itemsize for s in ref.stride), writeable=False)
    else:
        view = np.zeros(ref.size, np.float32)
    return np.array(view, dtype=np.float32, order="C")
