"""Tasks on the WebGPU runner: the bridge under Node (:mod:`arenalite.node_runner`).

Kept apart from :mod:`.execute` so that the Python runner's path never imports the
Node runner (which imports the browser payloads, which read the runner's columns).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .entrants import Model
from .tasks import Outcome, Task


def on_webgpu(tasks: Sequence[Task], plans: dict[str, Any], models: dict[str, Model],
              bridge_dir: Any = None, vulkan_icd: Any = None) -> Iterator[Outcome]:
    """Play the tasks on the WebGPU bridge under Node (:mod:`arenalite.node_runner`), one
    Node run per table for the models with tasks there. The Node runner's own failure (no
    Node, no bridge, no WebGPU adapter) is raised as an OSError: it is the machine's, not
    a task's, and nothing is recorded for the table."""
    import pandas as pd

    from .. import node_runner
    from .. import splits as split_io
    from ..datasets import table as tables

    by_table: dict[str, list[Task]] = {}
    for task in tasks:
        by_table.setdefault(task.table, []).append(task)
    for name, todo in by_table.items():
        plan = plans[name]
        labels = list(dict.fromkeys(t.model for t in todo))
        table = plan.entry.read()
        persisted = split_io.load(plan.splits_path)
        data = tables.to_dataset(table, drop=persisted.get("excluded_columns", ()))
        persisted = {**persisted, "excluded_columns": []}
        with tempfile.TemporaryDirectory(prefix="arenalite-webgpu-") as folder:
            try:
                path = node_runner.run_to_csv(
                    {name: data}, {name: persisted},
                    [{**getattr(models[label], "spec", {}), "label": label}
                     for label in labels], Path(folder) / "results.csv",
                    bridge_dir=bridge_dir, vulkan_icd=vulkan_icd)
            except node_runner.NodeRunnerError as error:
                raise OSError(str(error)) from None
            rows = pd.read_csv(path, dtype={"split_id": str}).to_dict("records")
        found = {(r["model"], str(r["split_id"])): r for r in rows}
        for task in todo:
            row = found.get((task.model, task.split_id))
            yield (Outcome(task, row=row) if row is not None else
                   Outcome(task, kind="raised", exception="MissingRow",
                           message="the WebGPU runner wrote no row for this split"))
