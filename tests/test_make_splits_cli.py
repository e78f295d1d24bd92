"""``node webgpu_bridge/bin/make_splits.mjs PATH --target COL [flags] -o DIR`` writes the very
file ``arenalite splits`` writes for the same table and flags, on every kind of split (IID
with categorical and missing cells, grouped, temporal with a gap, a leakage column, the
1,000,000-row holdout), and refuses a bad table with the Python message."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import cli
from node_harness import BRIDGE, require_node

pytestmark = pytest.mark.needs_processes  # node

SCRIPT = BRIDGE / "bin" / "make_splits.mjs"


def node_splits(path: Path, flags: list[str], out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([require_node(), str(SCRIPT), str(path), *flags, "-o", str(out)],
                          capture_output=True, text=True, timeout=600)


def both(path: Path, flags: list[str], tmp_path: Path) -> str:
    js = node_splits(path, flags, tmp_path / "js")
    assert js.returncode == 0, js.stderr
    assert cli.main(["splits", str(path), *flags, "-o", str(tmp_path / "py")]) == 0
    name = Path(js.stdout.strip()).name
    js_text = (tmp_path / "js" / name).read_text(encoding="utf-8")
    assert js_text == (tmp_path / "py" / name).read_text(encoding="utf-8")
    return js_text


def shop_table(path: Path, rows: int, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    day = pd.Timestamp("2023-03-01") + pd.to_timedelta(rng.integers(0, 400, rows), unit="D")
    frame = pd.DataFrame({
        "order": [f"o{i}" for i in range(rows)],
        "store": rng.choice([f"s{k:02d}" for k in range(12)], rows),
        "day": day.strftime("%Y-%m-%d"),
        "hour": rng.integers(0, 24, rows),
        "amount": np.where(rng.random(rows) < 0.08, np.nan, rng.gamma(2, 20, rows).round(2)),
        "channel": np.where(rng.random(rows) < 0.05, "", rng.choice(["web", "shop", "app"], rows)),
        "returned": rng.choice(["yes", "no", "maybe"], rows, p=[0.2, 0.7, 0.1]),
        "spend": rng.normal(50, 10, rows).round(3),
    })
    frame.to_csv(path, index=False)
    return path


CASES = {
    "iid multiclass": ["--target", "returned", "--leakage-columns", "order,day"],
    "iid regression": ["--target", "spend", "--leakage-columns", "order,day",
                       "--categorical", "hour"],
    "grouped": ["--target", "returned", "--group-column", "store",
                "--leakage-columns", "order,day"],
    "grouped per group": [],  # a per-store label, made below
    "temporal": ["--target", "returned", "--time-column", "day", "--leakage-columns", "order"],
    "temporal gap": ["--target", "spend", "--time-column", "day", "--leakage-columns", "order",
                     "--gap", "7D"],
    "temporal numeric": ["--target", "returned", "--time-column", "hour",
                         "--leakage-columns", "order,day", "--gap", "2"],
    "kfold": ["--target", "returned", "--leakage-columns", "order,day", "--kind", "kfold"],
    "random": ["--target", "spend", "--leakage-columns", "order,day", "--kind", "random",
               "--n-repeats", "4", "--test-fraction", "0.25"],
    "repeats": ["--target", "returned", "--leakage-columns", "order,day", "--n-repeats", "2"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_node_writes_the_python_split_file(case: str, tmp_path: Path) -> None:
    path = shop_table(tmp_path / "shop.csv", 900)
    flags = CASES[case]
    if case == "grouped per group":
        frame = pd.read_csv(path)
        frame["label"] = frame["store"].map({f"s{k:02d}": "ab"[k % 2] for k in range(12)})
        frame.to_csv(path, index=False)
        flags = ["--target", "label", "--group-column", "store", "--leakage-columns",
                 "order,day", "--group-labels", "per_group"]
    both(path, flags, tmp_path)


def test_a_bad_table_gets_the_python_message(tmp_path: Path, capsys) -> None:
    path = shop_table(tmp_path / "shop.csv", 200)
    js = node_splits(path, ["--target", "returned"], tmp_path / "js")
    assert js.returncode == 2
    assert cli.main(["splits", str(path), "--target", "returned", "-o", str(tmp_path)]) != 0
    py_message = capsys.readouterr().err.strip().removeprefix("arenalite: error: ")
    assert js.stderr.strip() == f"make_splits: error: {py_message}"
    assert "'order' is text with a different value in every row" in py_message


@pytest.mark.slow
def test_a_million_rows_give_the_same_holdout(tmp_path: Path) -> None:
    rows = 1_000_300
    rng = np.random.default_rng(2)
    path = tmp_path / "big.csv.gz"
    pd.DataFrame({"x": rng.normal(size=rows).round(3),
                  "c": rng.choice(["a", "b", "c", ""], rows),
                  "y": rng.choice(["no", "yes"], rows, p=[0.8, 0.2])}).to_csv(path, index=False)
    persisted = json.loads(both(path, ["--target", "y"], tmp_path))
    assert persisted["kind"] == "holdout" and len(persisted["splits"]) == 1
    assert len(persisted["splits"][0]["test"]) == 250_000
