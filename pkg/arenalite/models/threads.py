"""The worker threads the numpy models spread independent chunks of work over.

numpy's element-wise loops and BLAS release the GIL, so chunks of rows or columns that do
not depend on each other (a stage's row chunks, its column chunks) run side by side on
threads of one process; BLAS keeps its own threads for the large products. The count is
every core this process may use (``os.sched_getaffinity``), or ``ARENALITE_THREADS``, or
what :func:`set_count` sets; in Pyodide and wasm32 it is 1 (no threads there), and with 1
nothing is handed to a pool. Results do not depend on the count beyond float32 round-off:
each chunk computes what it would alone, and only how rows are grouped into BLAS calls
changes (docs/models.md, "Threads").

BLAS's own threads and the pool's would fight over the same cores (measured: TabICL's
member at 1,024 + 256 × 30 on 2 cores, 2.60 s with the pool over single-threaded BLAS,
4.20 s with both on 2 threads), so while chunks run on the pool OpenBLAS is held to one
thread (:func:`single_threaded_blas`, through its ``*_set_num_threads`` in this process);
where no OpenBLAS can be found (another BLAS), the chunks run one after another unless
``OPENBLAS_NUM_THREADS`` / ``OMP_NUM_THREADS`` already say 1.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

ENV = "ARENALITE_THREADS"
NO_THREADS = ("emscripten", "wasi")
"""Platforms without threads (Pyodide, wasm32-wasip1): always one."""

POOL_NAME = "arenalite-worker"
_inside = threading.local()
"""``chunk`` is True in a thread while it runs a chunk of :func:`map_chunks`."""
_count: int | None = None
_pool: ThreadPoolExecutor | None = None


def default_count() -> int:
    """1 without threads; else ``ARENALITE_THREADS`` when set, else the usable cores."""
    if sys.platform in NO_THREADS:
        return 1
    text = os.environ.get(ENV, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{ENV} must be a positive whole number, got {text!r}")
        return int(text)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def count() -> int:
    """The number of threads chunks are spread over."""
    global _count
    if _count is None:
        _count = default_count()
    return _count


def set_count(n: int | None) -> None:
    """Use ``n`` threads from now on (None: :func:`default_count`)."""
    global _count, _pool
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"the thread count must be a positive integer or None, got {n!r}")
    if sys.platform in NO_THREADS and n not in (None, 1):
        raise ValueError(f"{sys.platform} has no threads: the count stays 1")
    if _pool is not None:
        _pool.shutdown(wait=True)
        _pool = None
    _count = n


def spread(n: int, most: int) -> int:
    """A chunk size for ``n`` items when one chunk may hold ``most`` (its scratch budget):
    the budget shared out between the threads (the chunks in flight together hold what one
    did alone), and within it the size that leaves the threads the most even shares, the
    chunks dealt out in turn (the larger size on a tie). 30 columns within 9 a chunk on 2
    threads go as six chunks of 5 (15 a thread), not 9, 9, 9, 3 (18 and 12): the stage
    waits for its busiest thread."""
    k = count()
    cap = max(1, int(most) // k)
    if k == 1 or n <= 1:
        return min(cap, max(n, 1))
    fewest = math.ceil(n / cap)
    sizes = {cap} | {math.ceil(n / pieces) for pieces in range(fewest, fewest + 2 * k)}
    return min(sizes, key=lambda size: (_heaviest_share(n, size, k), -size))


def _heaviest_share(n: int, size: int, k: int) -> int:
    """The most items one of ``k`` threads gets when chunks of ``size`` go to them in turn."""
    sizes = [min(size, n - start) for start in range(0, n, size)]
    return max(sum(sizes[i::k]) for i in range(k))


def _forget_after_fork() -> None:
    """A forked child (a process pool's worker) has none of its parent's threads: it starts
    its own pool and lock when it needs them."""
    global _pool, _blas_lock, _blas_depth
    _pool, _blas_lock, _blas_depth = None, threading.RLock(), 0


@lru_cache(maxsize=1)
def _openblas() -> tuple[tuple[Any, Any], ...]:
    """The ``(get, set)`` thread-count functions of every OpenBLAS loaded in this process
    (numpy's wheels bundle one as ``scipy_openblas``), found through /proc/self/maps."""
    try:
        import ctypes  # not in every wasm32 build: only needed with threads
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = sorted({line.split()[-1] for line in maps
                            if "openblas" in line.lower() and line.split()[-1].startswith("/")})
    except (OSError, ImportError):
        return ()
    found = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas", "openblas"):
            for suffix in ("64_", ""):
                get = getattr(lib, f"{name}_get_num_threads{suffix}", None)
                put = getattr(lib, f"{name}_set_num_threads{suffix}", None)
                if get is not None and put is not None:
                    get.restype = ctypes.c_int
                    put.argtypes = [ctypes.c_int]
                    found.append((get, put))
                    break
            else:
                continue
            break
    return tuple(found)


def _blas_single_by_environment() -> bool:
    return any(os.environ.get(v, "").strip() == "1"
               for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"))


_blas_lock = threading.RLock()
_blas_depth = 0
_blas_before: list[int] = []


@contextmanager
def single_threaded_blas() -> Iterator[bool]:
    """Hold every OpenBLAS of the process to one thread inside the block (re-entrant;
    restored when the outermost block ends); yields whether BLAS is single-threaded there
    (False: no OpenBLAS found and the environment does not say 1)."""
    global _blas_depth, _blas_before
    libs = _openblas()
    if not libs:
        yield _blas_single_by_environment()
        return
    with _blas_lock:
        if _blas_depth == 0:
            _blas_before = [get() for get, _ in libs]
            for _, put in libs:
                put(1)
        _blas_depth += 1
    try:
        yield True
    finally:
        with _blas_lock:
            _blas_depth -= 1
            if _blas_depth == 0:
                for (_, put), n in zip(libs, _blas_before, strict=True):
                    put(n)


@contextmanager
def pooled() -> Iterator[None]:
    """A model call whose parallel parts run on the pool: BLAS single-threaded throughout
    when there is more than one thread. An OpenBLAS worker spins for a while after each
    multi-threaded product and takes a core from the pool's next chunks (measured 3.57 s
    against 2.60 s for BLAS held to one thread for the whole call)."""
    if count() == 1:
        yield
        return
    with single_threaded_blas():
        yield


SMALL_STAGE_ROWS = 384
"""Below this many rows an ICL layer's products are too small to split into row chunks
between the pool's threads (each thread's product of 64 or 32 rows runs far below what
BLAS does on 128): the ICL layers of TabICL, TabPFN and Google TabFM then run as shares of
their heads and hidden units instead, every thread on all the rows (``tabicl.icl.shares``,
``tabpfn.icl.shares``, ``tabfm.icl.shares``). Measured on 2 AVX-512 cores, a member's
whole call back to back at 128 + 48 rows: TabICL 0.222 → 0.188 s, TabPFN 0.374 → 0.292 s
(row chunks → shares). At 1,024 context rows both take the same time (TabICL 2.30 against
2.32 s, TabPFN 3.63 against 3.65 s), and row chunks bound each thread's score matrix where
a share would hold its heads' scores over every row pair, so larger stages keep row
chunks."""


def map_chunks(fn: Callable[[Any], Any], chunks: Sequence[Any]) -> list[Any]:
    """``[fn(c) for c in chunks]``, the chunks on the worker threads (BLAS single-threaded
    meanwhile) when there are more than one of each; results in the chunks' order, the
    first error raised (no chunk is started after one has failed).

    The calling thread takes chunks too, beside ``count() − 1`` pool threads, all drawing
    the next chunk from one queue: a call wakes one thread fewer and does not sleep while
    the others work. Waking a thread costs tens of µs on a VM's cores, as much as a small
    product; a member's small call makes about a hundred such calls (measured on 2 AVX-512
    cores, alternating runs, 128 + 48 rows: TabPFN 289 → 265 ms, TabICL 183 → 173 ms;
    bench/README.md, "Issue 45", fifth session). A chunk that maps chunks of its own runs
    them itself (no pool within the pool)."""
    global _pool
    if count() == 1 or len(chunks) <= 1 or getattr(_inside, "chunk", False):
        return [fn(c) for c in chunks]
    with single_threaded_blas() as single:
        if not single:  # another BLAS with its own threads: no second layer of threads
            return [fn(c) for c in chunks]
        if _pool is None:
            _pool = ThreadPoolExecutor(count() - 1, thread_name_prefix=POOL_NAME)
        results: list[Any] = [None] * len(chunks)
        errors: dict[int, BaseException] = {}
        claim, claiming = iter(range(len(chunks))), threading.Lock()

        def drain() -> None:
            _inside.chunk = True
            try:
                while not errors:
                    with claiming:
                        i = next(claim, None)
                    if i is None:
                        return
                    try:
                        results[i] = fn(chunks[i])
                    except BaseException as error:  # re-raised below, in the caller
                        errors[i] = error
            finally:
                _inside.chunk = False

        helpers = [_pool.submit(drain) for _ in range(min(count(), len(chunks)) - 1)]
        try:
            drain()
        finally:
            for helper in helpers:
                helper.result()
        if errors:
            raise errors[min(errors)]
        return results


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)
