"""Google TabFM's JavaScript CPU side (webgpu_bridge/src/tabfm/checkpoint.js and
preprocessing.js) against Python's, live: the same paths refused with the same message by
``read_checkpoint`` / ``load`` and by their JavaScript twins (folders, parents with a task,
converted files, broken and linked files), and ``TransformToNumerical`` (Python's
``numeric_table``) equal to JavaScript's ``numericTable`` on random tables with text,
category, bool, nullable, date and missing cells.

Runs node (webgpu_bridge's npm install); no GPU.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite.models import safetensors
from arenalite.models.tabfm import checkpoint as ck
from arenalite.models.tabfm import model as tabfm_model
from arenalite.models.tabfm.preprocessing import numeric_table
from node_harness import node_json

pytestmark = pytest.mark.needs_processes

DATA = Path(__file__).parent / "data" / "tabfm"
SMALL = DATA / "small"


def python_message(kind: str, path: str, task: str | None) -> str | None:
    try:
        if kind == "load":
            tabfm_model.load(path, task)
        else:
            ck.read_checkpoint(path, task)
    except ValueError as exc:
        return str(exc)
    return None


def js_messages(calls: list[dict]) -> list:
    script = f"""
import {{ loadTabfmPath, readTabfmCheckpoint }} from "./src/tabfm/checkpoint.js";
const calls = {json.dumps(calls)};
const out = [];
for (const c of calls) {{
  try {{
    await (c.kind === "load" ? loadTabfmPath : readTabfmCheckpoint)(c.path, c.task);
    out.push(null);
  }} catch (error) {{
    out.push(error.message);
  }}
}}
console.log(JSON.stringify(out));
"""
    return node_json(script)


def test_paths_are_refused_alike(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "one" / "regression").mkdir(parents=True)
    noweights = tmp_path / "noweights"
    noweights.mkdir()
    shutil.copy(SMALL / "classification" / "config.json", noweights)
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "config.json").write_text("{}")
    (linked / "model.safetensors").symlink_to(SMALL / "regression" / "model.safetensors")
    bare = tmp_path / "bare.safetensors"
    shutil.copy(SMALL / "classification" / "model.safetensors", bare)
    converted = tmp_path / "converted.safetensors"
    ck.convert(SMALL, converted, "regression")
    broken = tmp_path / "broken.safetensors"
    broken.write_bytes(converted.read_bytes()[:-9])
    oops = tmp_path / "oops.safetensors"
    tensors = ck.read_checkpoint(SMALL / "regression").tensors
    safetensors.write(oops, tensors, {"format": "arenalite.tabfm", "version": "1",
                                      "config": "{oops"})
    paths = [
        (str(tmp_path / "nowhere"), None), (str(tmp_path / "empty"), None),
        (str(SMALL), None), (str(SMALL) + "/", "ranking"),
        (str(tmp_path / "one"), "classification"),
        (str(SMALL / "classification"), "regression"), (str(noweights), None),
        (str(noweights), "classification"), (str(linked), "classification"),
        (str(linked), "regression"), (str(bare), None), (str(converted), "classification"),
        (str(broken), None), (str(oops), "regression"), (str(SMALL / "." / "classification"),
                                                           "regression"),
    ]
    calls = [{"kind": kind, "path": p, "task": task} for p, task in paths
             for kind in ("load", "read")]
    want = [python_message(c["kind"], c["path"], c["task"]) for c in calls]
    assert sum(m is not None for m in want) >= 24
    assert js_messages(calls) == want


def random_frame(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Context and query frames of mixed dtypes with missing cells (the query rows hold an
    unseen value and dates outside the context's)."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(8, 40)), int(rng.integers(3, 12))
    rows = n + m

    def missing(values: list, share: float) -> list:
        return [None if rng.random() < share else v for v in values]

    words = ["red", "green", "blue", "teal", "nan", "amber"]
    colour = missing([str(rng.choice(words)) for _ in range(rows)], 0.2)
    colour[-1] = "violet"
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 2000, rows), unit="D")
    day = missing([d.strftime("%Y-%m-%d") for d in days], 0.3)
    frame = pd.DataFrame({
        "colour": pd.Series(colour, dtype=object),
        "size": pd.Series(missing(list(rng.choice(["S", "M", "L"], rows)), 0.1),
                          dtype=object).astype("category"),
        "amount": pd.Series(missing(list(rng.lognormal(0, 1, rows)), 0.25), dtype=float),
        "count": pd.Series(missing(list(rng.integers(0, 5, rows)), 0.2), dtype="Int64"),
        "flag": pd.Series(rng.random(rows) < 0.4),
        "maybe": pd.Series(missing(list(rng.random(rows) < 0.5), 0.2), dtype="boolean"),
        "label": pd.Series(missing(list(rng.choice(["1", "2", "3"], rows)), 0.1), dtype="str"),
        "day": pd.Series(day, dtype=object),
        "empty": pd.Series([np.nan] * rows),
    })
    return frame.iloc[:n].reset_index(drop=True), frame.iloc[n:].reset_index(drop=True)


def js_columns(train: pd.DataFrame, test: pd.DataFrame) -> list[dict]:
    """The frames' columns in the bridge's table format, each with its pandas dtype."""
    cols = []
    for name in train.columns:
        cells = pd.concat([train[name], test[name]], ignore_index=True).astype(object)
        values = [None if pd.isna(v) else (bool(v) if isinstance(v, (bool, np.bool_)) else
                                          v.item() if hasattr(v, "item") else v) for v in cells]
        dtype = str(train[name].dtype)
        if dtype in ("float64", "Int64"):
            cols.append({"name": name, "kind": "numeric", "values": values})
            continue
        categories = sorted({v for v in values if v is not None})
        cols.append({"name": name, "kind": "categorical", "dtype": dtype,
                     "categories": categories,
                     "codes": [-1 if v is None else categories.index(v) for v in values]})
    return cols


def js_numeric_table(train: pd.DataFrame, test: pd.DataFrame) -> dict:
    cols = js_columns(train, test)
    n, m = len(train), len(test)
    script = f"""
import {{ numericTable }} from "./src/tabfm/preprocessing.js";
const cols = {json.dumps(cols)}.map((c) => (c.kind === "numeric"
  ? {{ ...c, values: Float64Array.from(c.values, (v) => (v === null ? NaN : v)) }}
  : {{ ...c, codes: Int32Array.from(c.codes) }}));
const range = (a, b) => Array.from({{ length: b - a }}, (_, i) => a + i);
const t = numericTable(cols, range(0, {n}), range({n}, {n + m}));
console.log(JSON.stringify({{ train: Array.from(t.xTrain), test: Array.from(t.xTest),
  nCategorical: t.nCategorical, nFeatures: t.nFeatures }}));
"""
    return node_json(script)


def same_table(got: dict, want: object) -> None:
    assert got["nCategorical"] == want.n_categorical
    assert got["nFeatures"] == want.train.shape[1]
    np.testing.assert_array_equal(np.array(got["train"]).reshape(want.train.shape), want.train)
    np.testing.assert_array_equal(np.array(got["test"]).reshape(want.test.shape), want.test)


@pytest.mark.parametrize("seed", range(6))
def test_numeric_table_equals_pythons(seed: int) -> None:
    train, test = random_frame(seed)
    same_table(js_numeric_table(train, test), numeric_table(train, test))


@pytest.mark.parametrize("seed", range(6))
def test_the_date_test_samples_500_cells_as_pandas(seed: int) -> None:
    """Past 500 context cells pandas looks at Series.sample(500, random_state=0); near the
    80 % share of unreadable dates the sample decides, and JavaScript draws the same one.

    (Python's numeric_table fails when every query cell of a date column is missing or
    unreadable: pandas then reads them as datetime64[s], which cannot hold the context's
    mean timestamp; JavaScript gives the mean there.)"""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(501, 800))
    days = (pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 900, n + 4), unit="D"))
    cells = [None if rng.random() < 0.8 else d.strftime("%Y-%m-%d") for d in days]
    cells[-1] = days[-1].strftime("%Y-%m-%d")  # a query date (all-missing query dates: see below)
    frame = pd.DataFrame({"day": pd.Series(cells, dtype=object),
                          "x": pd.Series(rng.normal(size=n + 4))})
    train, test = frame.iloc[:n].reset_index(drop=True), frame.iloc[n:].reset_index(drop=True)
    same_table(js_numeric_table(train, test), numeric_table(train, test))
