"""Where tasks run: in this process, in a process pool, or on Dask (the WebGPU runner:
:mod:`.webgpu`).

Every executor takes boards (one per table) and tasks, and yields each task's
:class:`~.tasks.Outcome` as it finishes. A worker receives each board once: the pool's
workers load it from a file written once per table and keep it while its tasks run; Dask
scatters it once and moves it to a worker once. A worker process that dies (out of memory,
killed) in the pool becomes a recorded failure of its task, and the pool is replaced: the
tasks that were running beside it run again one at a time, so that only the task that
kills its worker is blamed. On Dask, a task whose workers died ``allowed-failures`` times
(``KilledWorker``) is recorded alike; Dask itself reruns a task whose worker died once.

Each worker's model threads (:mod:`arenalite.models.threads`) are set to its share of the
cores (cores / workers, at least 1) and its BLAS to one thread during a task, so that the
pool, Dask's threads, the model thread pool and BLAS do not oversubscribe the machine.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, wait
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..models import threads
from .entrants import Model
from .tasks import Board, Outcome, Task, play

Boards = Callable[[str], Board]
"""Table name → its board, built when first asked for (one table in memory at a time)."""


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def set_threads(n: int) -> None:
    """Hold this process's model thread pool to ``n`` threads (BLAS is held to one thread
    around each task, :func:`_play_shared`)."""
    n = max(1, int(n))
    if threads.count() != n:  # set_count restarts the pool: only when the share changes
        threads.set_count(n)


def _play_shared(board: Board, model: Model, task: Task) -> Outcome:
    """:func:`play` in a worker that shares the machine: BLAS on one thread (the worker's
    model threads are its share of the cores), so that workers × BLAS threads do not
    oversubscribe the cores."""
    with threads.single_threaded_blas():
        return play(board, model, task)


# ----------------------------------------------------------------------------- in process


def in_process(tasks: Sequence[Task], boards: Boards, models: dict[str, Model]
               ) -> Iterator[Outcome]:
    """Play the tasks one after another here (the only way in Pyodide and on WASI)."""
    for task in tasks:
        yield play(boards(task.table), models[task.model], task)


# ----------------------------------------------------------------------------- process pool


@lru_cache(maxsize=2)
def _load_board(path: str) -> Board:
    with open(path, "rb") as handle:
        return pickle.load(handle)


def _worker_init(n_threads: int) -> None:
    set_threads(n_threads)


def _play_file(path: str, model: Model, task: Task) -> Outcome:
    return _play_shared(_load_board(path), model, task)


def _died(task: Task, error: BaseException) -> Outcome:
    return Outcome(task, kind="worker died", exception=type(error).__name__,
                   message="the worker process running it died (killed, or out of memory)")


def process_pool(tasks: Sequence[Task], boards: Boards, models: dict[str, Model],
                 workers: int) -> Iterator[Outcome]:
    """Play the tasks on ``workers`` processes; a dead worker's task is recorded as
    failed (blamed only when it kills a worker running alone) and the pool replaced."""
    from concurrent.futures import ProcessPoolExecutor  # not on wasm32: imported when used
    from concurrent.futures.process import BrokenProcessPool

    share = max(1, cores() // workers)
    with tempfile.TemporaryDirectory(prefix="arenalite-boards-") as folder:
        paths: dict[str, str] = {}

        def path_of(name: str) -> str:
            if name not in paths:  # each table written once, read once per worker
                path = str(Path(folder) / f"{len(paths)}.pickle")
                with open(path, "wb") as handle:
                    pickle.dump(boards(name), handle, protocol=pickle.HIGHEST_PROTOCOL)
                paths[name] = path
            return paths[name]

        def new_pool(n: int) -> Any:
            return ProcessPoolExecutor(n, initializer=_worker_init, initargs=(share,))

        pending = list(reversed(tasks))
        suspects: list[Task] = []
        pool = new_pool(workers)
        running: dict[Any, Task] = {}

        def replace_pool() -> Any:
            """The running tasks become suspects; a fresh pool takes over."""
            suspects.extend(running.values())
            running.clear()
            pool.shutdown(wait=False, cancel_futures=True)
            return new_pool(workers)

        try:
            while pending or suspects or running:
                alone = bool(suspects)
                limit = 1 if alone else 2 * workers
                broken = False
                while len(running) < limit and (suspects or (pending and not alone)):
                    queue = suspects if suspects else pending
                    task = queue.pop()
                    try:
                        future = pool.submit(_play_file, path_of(task.table),
                                             models[task.model], task)
                    except BrokenProcessPool:  # a worker died since the last wait
                        queue.append(task)  # it never ran: back where it was
                        broken = True
                        break
                    running[future] = task
                if broken:
                    pool = replace_pool()
                    continue
                done, _ = wait(list(running), return_when=FIRST_COMPLETED)
                for future in done:
                    task = running.pop(future)
                    try:
                        yield future.result()
                    except BrokenProcessPool as error:
                        broken = True
                        if alone:
                            yield _died(task, error)
                        else:
                            suspects.append(task)
                if broken:
                    pool = replace_pool()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


# ----------------------------------------------------------------------------- Dask


def _dask_play(board: Board, model: Model, task: Task, host_threads: dict[str, int]
               ) -> Outcome:
    from distributed import get_worker

    try:
        host = get_worker().address.rsplit(":", 1)[0]
    except ValueError:
        host = ""
    total = host_threads.get(host, 1)
    set_threads(max(1, cores() // max(total, 1)))
    return _play_shared(board, model, task)


def _hold(board: Any) -> Any:
    """A board as a Dask task's result: its worker keeps it for the table's tasks, and the
    scheduler can make it again if that worker dies (scattered data would be lost)."""
    return board


def dask_client(executor: Any) -> Any:
    """The ``distributed.Client`` behind ``executor`` (a Client, its ``get_executor()``,
    or a scheduler address), or None when it is not Dask."""
    if isinstance(executor, str):
        from distributed import Client

        return Client(executor)
    module = type(executor).__module__
    if module.startswith("distributed"):
        return getattr(executor, "_client", executor)
    return None


def on_dask(tasks: Sequence[Task], boards: Boards, models: dict[str, Model],
            client: Any) -> Iterator[Outcome]:
    """Play the tasks on a Dask cluster: each board sent once (a task holding it, which
    the scheduler can rerun when its worker dies), each task a future; ``KilledWorker``
    (the task's workers died ``allowed-failures`` times) is a failure."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    info = client.scheduler_info()["workers"]
    host_threads: dict[str, int] = {}
    for address, worker in info.items():
        host = address.rsplit(":", 1)[0]
        host_threads[host] = host_threads.get(host, 0) + int(worker.get("nthreads", 1))
    scattered: dict[str, Any] = {}
    futures = {}
    held = {label: client.submit(_hold, m, pure=False) for label, m in models.items()}
    for task in tasks:
        if task.table not in scattered:
            scattered[task.table] = client.submit(_hold, boards(task.table), pure=False)
        future = client.submit(_dask_play, scattered[task.table], held[task.model], task,
                               host_threads, pure=False)
        futures[future] = task
    for future in as_completed(list(futures)):
        task = futures.pop(future)
        try:
            yield future.result()
        except KilledWorker as error:
            yield _died(task, error)
        future.release()


# ----------------------------------------------------------------------------- choice


def execute(tasks: Sequence[Task], boards: Boards, models: dict[str, Model],
            executor: Any = None, workers: int = 0) -> Iterator[Outcome]:
    """The outcomes of ``tasks``: in process (``executor=None``, ``workers=0``), on a
    process pool of ``workers`` (or a ``ProcessPoolExecutor``'s size), or on Dask (a
    ``distributed.Client``, its executor, or a scheduler address)."""
    if executor is None and not workers:
        return in_process(tasks, boards, models)
    if executor is None:
        return process_pool(tasks, boards, models, workers)
    client = dask_client(executor)
    if client is not None:
        if isinstance(executor, str):  # our own client: closed when the tasks are done
            return _closing(on_dask(tasks, boards, models, client), client)
        return on_dask(tasks, boards, models, client)
    if type(executor).__name__ == "ProcessPoolExecutor":  # a fresh pool of its size, ours
        return process_pool(tasks, boards, models, executor._max_workers)
    if isinstance(executor, Executor):
        return _generic(tasks, boards, models, executor)
    raise TypeError(f"executor must be None, a concurrent.futures Executor, a Dask Client or "
                    f"a scheduler address, got {type(executor).__name__}")


def _closing(outcomes: Iterator[Outcome], client: Any) -> Iterator[Outcome]:
    try:
        yield from outcomes
    finally:
        client.close()


def _generic(tasks: Sequence[Task], boards: Boards, models: dict[str, Model],
             executor: Executor) -> Iterator[Outcome]:
    """Any other Executor (a thread pool, say): one future per task."""
    futures = {executor.submit(play, boards(t.table), models[t.model], t): t for t in tasks}
    while futures:
        done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
        for future in done:
            futures.pop(future)
            yield future.result()
