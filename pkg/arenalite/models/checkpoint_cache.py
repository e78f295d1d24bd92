"""The one cache of loaded weights: a model's reader runs once per file and modification
time, so a run's many splits read a checkpoint once, and a file rewritten in place (a
retrained or re-converted checkpoint) is read again.

Every loader of weights from a path goes through :func:`load` (``tabicl``, ``tabpfn``,
``icl_transformer``, ``tabular_fm``); the key is the reader, the resolved path, the file's
modification time (ns) and size.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from os import PathLike
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

MAX_ENTRIES = 8
"""Loaded models kept (least recently used dropped first)."""


def load(path: str | PathLike, reader: Callable[[str], T], missing: str | None = None) -> T:
    """``reader(path)`` of the resolved ``path``, cached by file and modification time.

    A path that is not a file raises ValueError: ``missing`` when given (the model's message
    saying where weights come from), else one naming the path."""
    p = Path(path).resolve()
    if not p.is_file():
        raise ValueError(missing if missing is not None
                         else f"weights file {str(path)!r} does not exist")
    stat = p.stat()
    return _cached(reader, str(p), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=MAX_ENTRIES)
def _cached(reader: Callable[[str], T], path: str, mtime_ns: int, size: int) -> T:
    return reader(path)


def clear() -> None:
    """Forget every loaded model."""
    _cached.cache_clear()
