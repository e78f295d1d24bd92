"""The tournament: a suite's splits, every model on every split, the scorecard.

:func:`tournament` is the whole pipeline. The suite and the models are checked first
(a mistake is refused before anything is written); then the splits are made once into
``OUT/splits/`` (reused while their table's fingerprint matches), the pairs that cannot
play are listed as not applicable, and the tasks that have no row yet run, each row
appended to ``OUT/results.csv`` as it finishes (:mod:`.store`). A failure is recorded in
``OUT/failures.csv`` and the others go on. At the end: ``scorecard.csv``,
``leaderboard.csv`` (TabArena's columns, plus improvability per task type),
``report.html``, ``not_applicable.csv`` and ``tournament.json`` (the suite's hash, the
models and their checkpoint hashes, the version, the platform, the start and end).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import pickle
import platform
import sys
import tempfile
import warnings
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import splits as split_io
from ..datasets import resolve
from ..datasets import table as tables
from ..progress import Progress, silenced
from ..tables import write_table
from . import scorecard as cards
from .entrants import Model, as_models
from .execute import execute
from .result import TournamentResult
from .store import Store, sha256_text
from .suite import Entry, as_suite
from .tasks import Board, Task, make_board

RUNNERS = ("python", "webgpu")
NA_COLUMNS = ["table", "model", "reason"]


@dataclass(frozen=True)
class Plan:
    """One table's part of the tournament: what the tasks and the keys need, no data."""

    entry: Entry
    splits_path: Path
    task: str
    n_features: int
    n_classes: int | None
    split_ids: tuple[str, ...]
    table_sha256: str
    splits_sha256: str
    board_path: Path | None = None

    @property
    def name(self) -> str:
        return self.entry.name


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def plan_table(entry: Entry, folder: Path, boards: Path | None = None) -> Plan:
    """Read the table, make its split file or check the one there (made from this table,
    and what the entry's split options make now), and note what its tasks need. With
    ``boards``, the table's board is pickled there, so that its tasks load it at once
    instead of parsing the table file again."""
    table = entry.read()
    path = folder / f"{entry.name}.splits.json"
    made = (entry.make_splits() if resolve.plain_bundled(entry.source, entry.table)
            else tables.make_table_splits(table, **entry.split))  # = entry.make_splits()
    if path.exists():
        persisted = split_io.load(path)
        tables.check_table_splits(table, persisted, str(path))
        if path.read_text(encoding="utf-8") != split_io.to_json(made):
            raise ValueError(f"{path} is not the split file that table {entry.name!r}'s "
                             "split options make now (the options or the file changed); "
                             "its old rows would be mixed with new ones: use another output "
                             "folder (-o)")
    else:
        persisted = made
        split_io.save(persisted, path)
    excluded = set(persisted.get("excluded_columns", ()))
    n_features = sum(c not in excluded for c in table.feature_names)
    fingerprint = json.dumps(table.fingerprint(), sort_keys=True, default=str)
    board_path = None
    if boards is not None:
        board_path = boards / f"{sha256_text(entry.name)[:24]}.pickle"
        with open(board_path, "wb") as handle:
            pickle.dump(make_board(table, persisted), handle, protocol=pickle.HIGHEST_PROTOCOL)
    return Plan(entry, path, table.task, n_features, table.n_classes,
                tuple(e["id"] for e in persisted["splits"]), sha256_text(fingerprint),
                hashlib.sha256(path.read_bytes()).hexdigest(), board_path)


def board_loader(plans: dict[str, Plan]) -> Callable[[str], Board]:
    """Table name → its board, built when asked and kept until another is asked for."""
    held: dict[str, Board] = {}

    def board(name: str) -> Board:
        if name not in held:
            held.clear()
            plan = plans[name]
            if plan.board_path is not None:
                with open(plan.board_path, "rb") as handle:
                    held[name] = pickle.load(handle)
            else:
                held[name] = make_board(plan.entry.read(), split_io.load(plan.splits_path))
        return held[name]

    return board


def _check_options(models: list[Model], workers: Any, runner: str, n_bootstrap: Any,
                   impute: Any) -> None:
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 0:
        raise ValueError(f"workers must be a whole number ≥ 0, got {workers!r}")
    if runner not in RUNNERS:
        raise ValueError(f"runner must be one of {list(RUNNERS)}, got {runner!r}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int) or n_bootstrap < 0:
        raise ValueError(f"n_bootstrap must be a whole number ≥ 0, got {n_bootstrap!r}")
    labels = [m.label for m in models]
    if impute is not None and impute not in labels:
        raise ValueError(f"impute model {impute!r} is not one of the models {labels}")


def tournament(suite: Any, models: Any, out: str | Path | None = None, executor: Any = None,
               *, workers: int = 0, runner: str = "python", n_bootstrap: int = 1000,
               retry_failed: bool = False, impute: str | None = None, random_state: Any = 0,
               progress: bool | None = None, report: bool = True,
               log: Callable[[str], None] | None = None, bridge_dir: str | Path | None = None,
               vulkan_icd: str | Path | None = None, **table_options: Any
               ) -> TournamentResult:
    """Every model on every split of every table of ``suite``; the scorecard.

    ``suite``: a suite file (TOML or JSON), a :class:`~.suite.Suite`, or one table (a
    bundled name, a table file or a DataFrame) with its ``table_options`` (``target=``,
    ``group_column=``, ...). ``models``: model dicts (``{"name": "knn", "k": 15}``),
    ``"knn:k=15"`` texts or :class:`~.entrants.Model` objects. ``out``: the folder written
    and resumed (None: a temporary one, nothing kept). ``executor``: None (in this process,
    or ``workers`` processes), a ``concurrent.futures`` executor, a ``distributed.Client``
    or a Dask scheduler address. ``impute``: a model whose score on the same split fills a
    failed cell (TabArena's rule). ``runner="webgpu"`` plays on the WebGPU bridge under Node
    (``bridge_dir``, ``vulkan_icd`` as ``arenalite run``'s flags). Returns a
    :class:`~.result.TournamentResult`.
    """
    say = log or (lambda text: print(text, file=sys.stderr))
    started = _now()
    suite = as_suite(suite, **table_options)
    entrants = as_models(models)
    _check_options(entrants, workers, runner, n_bootstrap, impute)
    labels = [m.label for m in entrants]
    by_label = {m.label: m for m in entrants}
    scratch = tempfile.TemporaryDirectory(prefix="arenalite-tournament-") if out is None else None
    boards = tempfile.TemporaryDirectory(prefix="arenalite-boards-")
    folder = Path(scratch.name if scratch is not None else out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OSError(f"cannot create the output folder {str(folder)!r}: {error.strerror}"
                      ) from error
    try:
        (folder / "splits").mkdir(exist_ok=True)
        plans = {entry.name: plan_table(entry, folder / "splits", Path(boards.name))
                 for entry in suite.entries}
        not_applicable = []
        for plan in plans.values():
            for model in entrants:
                reason = model.not_applicable(plan.task, plan.n_features, plan.n_classes,
                                              runner)
                if reason:
                    not_applicable.append({"table": plan.name, "model": model.label,
                                           "reason": reason})
                    say(f"arenalite: not applicable: {model.label} on {plan.name}: {reason}")
        na_frame = pd.DataFrame(not_applicable, columns=NA_COLUMNS)
        write_table(na_frame, folder / "not_applicable.csv")
        skipped = {(r["table"], r["model"]) for r in not_applicable}
        model_sha = {m.label: sha256_text(m.key()) for m in entrants}
        store = Store(folder)
        try:
            if store.results.dropped_torn_line or store.failures.dropped_torn_line:
                say("arenalite: note: dropped a torn last line (a run stopped while writing it)")
            store.check_keys({p.name: (p.table_sha256, p.splits_sha256)
                              for p in plans.values()}, model_sha)
            done = store.done(retry_failed)
            tasks = [Task(p.name, m.label, i, sid) for p in plans.values() for m in entrants
                     if (p.name, m.label) not in skipped
                     for i, sid in enumerate(p.split_ids) if (p.name, m.label, sid) not in done]
            if done:
                say(f"arenalite: resuming: {len(done)} task(s) already recorded, "
                    f"{len(tasks)} to run")
            _play(tasks, plans, by_label, store, model_sha, executor, workers,
                  (runner, bridge_dir, vulkan_icd), progress, say)
            results = store.results.read()
            failures = store.failures.read()
        finally:
            store.close()
        results = results[results["dataset"].isin(plans) & results["model"].isin(labels)]
        results = results.reset_index(drop=True)
        failures = failures[failures["table"].isin(plans) & failures["model"].isin(labels)]
        failures = failures.reset_index(drop=True)
        scored, imputed = (cards.impute(results, failures, impute) if impute
                           else (results.assign(imputed=False), {}))
        expected = sum(len(p.split_ids) for p in plans.values())
        played = scored["model"].value_counts()
        missed = {m: expected - int(played.get(m, 0)) for m in labels}
        with silenced() if progress is False else nullcontext():
            card = cards.scorecard(scored, labels, missed, imputed, n_bootstrap,
                                   random_state)
            leaderboard = _leaderboard(scored, n_bootstrap, random_state, say)
        result = TournamentResult(card, results=results, leaderboard=leaderboard,
                                  failures=failures, not_applicable=na_frame,
                                  out=None if scratch is not None else folder,
                                  suite=suite.name, models=labels, impute=impute,
                                  n_bootstrap=n_bootstrap)
        if scratch is None:
            with silenced() if progress is False else nullcontext():
                _write(result, folder, suite, entrants, started, scored, report, say)
        return result
    finally:
        boards.cleanup()
        if scratch is not None:
            scratch.cleanup()


def _play(tasks: list[Task], plans: dict[str, Plan], models: dict[str, Model], store: Store,
          model_sha: dict[str, str], executor: Any, workers: int, runner: tuple,
          progress: bool | None, say: Callable[[str], None]) -> None:
    """Run the tasks, appending each row or failure as it comes; ``runner`` is (name,
    bridge folder, Vulkan driver manifest)."""
    boards = board_loader(plans)
    if runner[0] == "webgpu":
        from .webgpu import on_webgpu

        outcomes = on_webgpu(tasks, plans, models, runner[1], runner[2])
    else:
        outcomes = execute(tasks, boards, models, executor, workers)
    with Progress(len(tasks), "tournament", enabled=progress, eta=True) as bar:
        if tasks:
            bar.update(0, status=f"{tasks[0].table} · {tasks[0].model}")
        for outcome in outcomes:
            task = outcome.task
            plan = plans[task.table]
            keys = {"table_sha256": plan.table_sha256, "splits_sha256": plan.splits_sha256,
                    "model_sha256": model_sha[task.model]}
            if outcome.ok:
                store.results.append({**outcome.row, **keys})
            else:
                store.failures.append({"table": task.table, "model": task.model,
                                       "split_id": task.split_id, "kind": outcome.kind,
                                       "exception": outcome.exception,
                                       "message": outcome.message, **keys})
                if bar.enabled:  # the note on its own line, under the bar
                    bar.stream.write("\n")
                say(f"arenalite: failed: {task.model} on {task.table}, split "
                    f"{task.split_id}: {outcome.kind}: {outcome.exception}: {outcome.message}")
            upcoming = tasks[min(bar.done + 1, len(tasks) - 1)]
            bar.update(status=f"{upcoming.table} · {upcoming.model}")


def _benchmark(frame: pd.DataFrame) -> Any:
    from ..load import load_df

    columns = [c for c in frame.columns if c not in ("imputed", "table_sha256",
                                                     "splits_sha256", "model_sha256")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return load_df(frame[columns])
        except ValueError:
            return load_df(frame[columns], drop_incomplete=True)


def _leaderboard(scored: pd.DataFrame, n_bootstrap: int, random_state: Any,
                 say: Callable[[str], None]) -> pd.DataFrame | None:
    """TabArena's leaderboard of the played (and imputed) cells, with improvability per
    task type (``improvability_binary``, ...); None when the results cannot make one
    (fewer than two models with complete tables)."""
    from ..rankings.leaderboard import TABARENA_ORDER

    if scored["model"].nunique() < 2:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            board = _benchmark(scored).leaderboard(n_bootstrap=min(n_bootstrap, 200),
                                                   random_state=random_state)
            table = board.table[[c for c in TABARENA_ORDER if c in board.table.columns]]
            for task in sorted(scored["task"].unique()):
                part = scored[scored["task"] == task]
                if part["model"].nunique() < 2:
                    continue
                sub = _benchmark(part).leaderboard(n_bootstrap=0).table
                table = table.merge(sub[["model", "improvability"]].rename(
                    columns={"improvability": f"improvability_{task}"}), on="model", how="left")
    except ValueError as error:
        say(f"arenalite: note: no leaderboard: {error}")
        return None
    return table


def _write(result: TournamentResult, folder: Path, suite: Any, models: list[Model],
           started: str, scored: pd.DataFrame, report: bool,
           say: Callable[[str], None]) -> None:
    from .. import __version__

    write_table(result.scorecard, folder / "scorecard.csv")
    if report and result.leaderboard is not None:
        _report(result, folder, scored, say)
    if result.leaderboard is not None:
        write_table(result.leaderboard, folder / "leaderboard.csv")
    info = {"suite": {"name": suite.name, "sha256": suite.hash(),
                      "path": str(suite.path) if suite.path is not None else None},
            "models": [m.info() for m in models], "arenalite": __version__,
            "python": platform.python_version(), "platform": platform.platform(),
            "machine": platform.machine(), "started": started, "ended": _now(),
            "tasks": {"played": len(result.results), "failed": len(result.failures),
                      "not_applicable_pairs": len(result.not_applicable)},
            "impute": result.params.get("impute"),
            "n_bootstrap": result.params.get("n_bootstrap")}
    (folder / "tournament.json").write_text(json.dumps(info, indent=2, default=str) + "\n",
                                            encoding="utf-8")


def _report(result: TournamentResult, folder: Path, scored: pd.DataFrame,
            say: Callable[[str], None]) -> None:
    """report.html: arenalite's report of the results, the scorecard first."""
    from ..methods import get
    from ..report import write_report
    from ..tables import html_table

    benchmark = _benchmark(scored)
    lead = ("<h2 id='scorecard'>Tournament scorecard</h2><p class='note'>One split of one "
            "table is a match between two models that both have a score on it; the lower "
            "error wins. Elo: the Bradley-Terry MLE of those matches, 95 % split-bootstrap "
            "interval.</p>" + html_table(result.scorecard.round(3)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_report(benchmark, folder, lambda name: getattr(benchmark, get(name).function)(),
                     log=lambda text: None, source="results.csv", style="tabarena",
                     lead_html=lead)
