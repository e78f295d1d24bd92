"""The results store: OUT/results.csv and OUT/failures.csv, one line appended per task.

Every finished task's row is written and flushed at once, so a stopped run keeps every
finished task and the same command resumes it. A kill during a write leaves a torn last
line (no newline at its end): it is dropped when the store opens. Rows carry the keys that
pin them: the table's fingerprint (``table_sha256``), the split file's (``splits_sha256``)
and the model's (``model_sha256``, its label, parameters and checkpoint hashes). Rows of a
table, split file or model that has changed since are refused by name, never mixed in.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import results_table as runner
from ..datasets.table import CORRECTLY_ROUNDED

KEY_COLUMNS = ["table_sha256", "splits_sha256", "model_sha256"]
RESULT_COLUMNS = runner.COLUMNS + KEY_COLUMNS
FAILURE_COLUMNS = ["table", "model", "split_id", "kind", "exception", "message", *KEY_COLUMNS]


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _field(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same double
    return str(value)


def _line(values: Iterable[Any]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([_field(v) for v in values])
    return buffer.getvalue()


class AppendFile:
    """A CSV file that rows are appended to, each written and flushed at once; a torn last
    line is dropped on opening, and a file with another header is refused."""

    def __init__(self, path: Path, columns: list[str]) -> None:
        self.path, self.columns = path, columns
        self.dropped_torn_line = False
        header = _line(columns)
        if path.exists() and path.stat().st_size:
            data = path.read_bytes()
            if not data.endswith(b"\n"):
                keep = data.rfind(b"\n") + 1
                with open(path, "r+b") as handle:
                    handle.truncate(keep)
                self.dropped_torn_line = True
                data = data[:keep]
            if not data:
                path.write_text(header, encoding="utf-8")
            elif not data.decode("utf-8").startswith(header):
                raise ValueError(f"{path} has other columns than a tournament's {path.name}; "
                                 "use another output folder (-o)")
        else:
            path.write_text(header, encoding="utf-8")
        self._handle = open(path, "a", encoding="utf-8", newline="")

    def append(self, row: dict[str, Any]) -> None:
        self._handle.write(_line(row.get(c) for c in self.columns))
        self._handle.flush()

    def read(self) -> pd.DataFrame:
        # only an empty field is missing: a model or table named "nan" or "NA" stays a name
        return pd.read_csv(self.path, keep_default_na=False, na_values=[""], **CORRECTLY_ROUNDED,
                           dtype={"split_id": str, "dataset": str, "model": str,
                                  "table": str})

    def rewrite(self, frame: pd.DataFrame) -> None:
        """Replace the file's rows with ``frame``'s (written aside, then renamed)."""
        self._handle.close()
        aside = self.path.with_suffix(".csv.tmp")
        with open(aside, "w", encoding="utf-8", newline="") as handle:
            handle.write(_line(self.columns))
            for row in frame.to_dict("records"):
                handle.write(_line(row.get(c) for c in self.columns))
        os.replace(aside, self.path)
        self._handle = open(self.path, "a", encoding="utf-8", newline="")

    def close(self) -> None:
        self._handle.close()


class Store:
    """OUT's results.csv and failures.csv, with what is already done."""

    def __init__(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        self.results = AppendFile(out / "results.csv", RESULT_COLUMNS)
        self.failures = AppendFile(out / "failures.csv", FAILURE_COLUMNS)

    def check_keys(self, tables: dict[str, tuple[str, str]], models: dict[str, str]) -> None:
        """Refuse rows of a table, split file or model that has changed (by name).

        ``tables``: name → (table_sha256, splits_sha256); ``models``: label → model_sha256.
        """
        for frame, name_col, model_col, what in (
                (self.results.read(), "dataset", "model", "results.csv"),
                (self.failures.read(), "table", "model", "failures.csv")):
            if frame.empty:
                continue
            for name, (table_sha, splits_sha) in tables.items():
                rows = frame[frame[name_col] == name]
                if (rows["table_sha256"] != table_sha).any():
                    raise ValueError(f"table {name!r} has changed since {what} was written "
                                     f"(its fingerprint differs); its old rows would be mixed "
                                     "with new ones: use another output folder (-o)")
                if (rows["splits_sha256"] != splits_sha).any():
                    raise ValueError(f"the split file of {name!r} has changed since {what} was "
                                     "written; use another output folder (-o)")
            for label, sha in models.items():
                rows = frame[frame[model_col] == label]
                if (rows["model_sha256"] != sha).any():
                    raise ValueError(f"model {label!r} has changed since {what} was written "
                                     "(other parameters or checkpoint); give it another label "
                                     "or use another output folder (-o)")

    def done(self, retry_failed: bool) -> set[tuple[str, str, str]]:
        """The (table, model, split id) keys with a row, and with a recorded failure unless
        ``retry_failed`` (then the failures are cleared: they run again)."""
        results = self.results.read()
        keys = set(zip(results["dataset"], results["model"], results["split_id"], strict=True))
        failures = self.failures.read()
        if retry_failed:
            if len(failures):
                self.failures.rewrite(failures.iloc[0:0])
        else:
            keys |= set(zip(failures["table"], failures["model"], failures["split_id"],
                            strict=True))
        return keys

    def close(self) -> None:
        self.results.close()
        self.failures.close()
