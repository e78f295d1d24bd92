"""The Node runner on a user's table with categorical and missing cells.

``arenalite run TABLE.csv --target COL --splits-dir DIR --runner webgpu`` sends the table's
typed columns (:func:`arenalite.browser.table_payload`) and the bridge encodes them per
split and model as the registry's ``encoding`` says (webgpu_bridge/src/encoding.js; its
bit-for-bit equality with :mod:`arenalite.models.encoding` is webgpu_bridge/test/
encoding.test.js). On the same split file its CSV must be the Python runner's within 1e-4
(scores and errors; regression relative to std(y)), for knn and tabicl (the random-weight
fixture checkpoints, 2 members: SwiftShader is slow) on a binary, a 3-class and a regression
table.
The payload and the manifest's ``encoding`` key are checked without Node.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import browser, cli, runner
from arenalite.datasets import table
from arenalite.models import encoding, registry
from node_harness import require_swiftshader

DATA = Path(__file__).parent / "data" / "tabicl"
CHECKPOINTS = {"binary": DATA / "classifier_small.ckpt",
               "multiclass": DATA / "classifier_small.ckpt",
               "regression": DATA / "regressor_small.safetensors"}
TOL = 1e-4
ROWS = 150


def write_table(path: Path, task: str, rows: int = ROWS, seed: int = 0) -> Path:
    """A CSV with text columns (one of 12 levels, more than one-hot takes), number columns,
    missing cells in each, a leakage id column and a text (binary, 3 classes) or number
    target."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue", "Teal"], rows).astype(object)
    colour[rng.random(rows) < 0.1] = None
    city = rng.choice([f"city{i:02d}" for i in range(12)], rows).astype(object)
    city[rng.random(rows) < 0.05] = None
    size = rng.normal(size=rows).round(4)
    size[rng.random(rows) < 0.1] = np.nan
    weight = rng.uniform(0, 10, rows).round(3)
    weight[rng.random(rows) < 0.1] = np.nan
    signal = ((colour == "red") * 1.5 + np.nan_to_num(size) + np.nan_to_num(weight) / 5
              + rng.normal(scale=0.5, size=rows))
    target = {"binary": lambda: np.where(signal > np.median(signal), "yes", "no"),
              "multiclass": lambda: np.array(["lo", "mid", "hi"])[
                  np.searchsorted(np.quantile(signal, [1 / 3, 2 / 3]), signal)],
              "regression": lambda: (10 + 2 * signal).round(4)}[task]()
    pd.DataFrame({"id": np.arange(rows), "colour": colour, "size": size, "city": city,
                  "weight": weight, "y": target}).to_csv(path, index=False)
    return path


def read(path: Path) -> table.Table:
    return table.read_table(path, target="y", leakage_columns=["id"])


# ----------------------------------------------------------------- without Node


def test_table_payload_sends_typed_columns(tmp_path: Path) -> None:
    t = read(write_table(tmp_path / "shop.csv", "binary"))
    ds = table.to_dataset(t, drop=t.excluded_columns)
    payload = json.loads(json.dumps(browser.dataset_payload(ds)))  # JSON, as the job is
    assert "x" not in payload and payload["featureNames"] == ["colour", "size", "city", "weight"]
    columns = {f["name"]: f for f in payload["features"]}
    assert [f["kind"] for f in payload["features"]] == ["categorical", "numeric", "categorical",
                                                        "numeric"]
    colour = columns["colour"]
    assert colour["categories"] == ["Teal", "blue", "green", "red"]  # Python's sorted()
    cells = t.features["colour"]
    assert [None if c < 0 else colour["categories"][c] for c in colour["codes"]] == [
        None if pd.isna(v) else v for v in cells]
    size = np.array([np.nan if v is None else v for v in columns["size"]["values"]])
    np.testing.assert_array_equal(size, t.features["size"].to_numpy())
    assert payload["y"] == t.y.tolist() and payload["nClasses"] == 2
    typed = browser.dataset_payload(ds, typed=True)["features"]
    assert typed[0]["codes"].format == "i" and typed[1]["values"].format == "d"
    np.testing.assert_array_equal(np.asarray(typed[0]["codes"]), colour["codes"])


def test_table_payload_refuses_what_the_encodings_treat_apart() -> None:
    from arenalite.datasets import Dataset

    def payload(frame: pd.DataFrame) -> dict:
        return browser.table_payload(Dataset("t", frame, np.zeros(len(frame)), "regression",
                                             None, tuple(frame.columns)))

    with pytest.raises(TypeError, match="column 'flag' is a numpy bool column"):
        payload(pd.DataFrame({"flag": [True, False]}))
    with pytest.raises(TypeError, match="column 'when' has dtype datetime64"):
        payload(pd.DataFrame({"when": pd.to_datetime(["2020-01-01", "2020-01-02"])}))
    with pytest.raises(TypeError, match=r"column 'mix' mixes value types \['int', 'str'\]"):
        payload(pd.DataFrame({"mix": pd.Series(["a", 1], dtype=object)}))
    with pytest.raises(ValueError, match="column 'x' has an infinite value inf in row 1"):
        payload(pd.DataFrame({"x": [1.0, np.inf]}))
    ordered = payload(pd.DataFrame({"c": pd.Categorical(["b", None, "a"], categories=["b", "a"])}))
    assert ordered["features"][0] == {"name": "c", "kind": "categorical", "codes": [1, -1, 0],
                                      "categories": ["a", "b"]}


def test_encode_reads_the_models_encoding_from_the_manifest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    entries = json.loads(registry.PATH.read_text())["models"]
    assert {e["name"]: e["encoding"] for e in entries} == {
        "knn": "common", "attention": "common", "icl_transformer": "common",
        "tabular_fm": "common", "tabicl": "tabicl", "tabpfn": "tabpfn",
        "tabfm": "arenalite.models.tabfm.predictor:encode"}
    frame = pd.DataFrame({"n": [1.0, np.nan, 3.0], "c": pd.Categorical(["a", "b", None])})
    common, _ = encoding.encode("knn", frame, frame)
    assert common.shape == (3, 3)  # n, then c one-hot
    monkeypatch.setitem(registry.REGISTRY, "knn", {**registry.REGISTRY["knn"],
                                                   "encoding": "tabicl"})
    codes, _ = encoding.encode("knn", frame, frame)
    np.testing.assert_array_equal(codes, [[0, 1], [1, 2], [-1, 3]])  # c's codes first
    with pytest.raises(ValueError,
                       match=r"encoding must be one of \['tabicl', 'common', 'tabpfn'\]"):
        registry._check_entry({**registry.REGISTRY["knn"], "encoding": "onehot"}, 0)
    with pytest.raises(ValueError, match=r"lacks \['encoding'\]"):
        registry._check_entry({k: v for k, v in registry.REGISTRY["knn"].items()
                               if k != "encoding"}, 0)


# ----------------------------------------------------------------- under Node


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    assert cli.main(argv) == 0, capsys.readouterr().err


@pytest.mark.needs_processes
@pytest.mark.slow
@pytest.mark.parametrize("task", ["binary", "multiclass", "regression"])
def test_node_runner_on_a_table_matches_the_python_runner(task: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture) -> None:
    icd = require_swiftshader()
    path = write_table(tmp_path / f"shop_{task}.csv", task, seed=len(task))
    splits_dir = tmp_path / "splits"
    flags = ["--target", "y", "--leakage-columns", "id"]
    run_cli(["splits", str(path), *flags, "--n-repeats", "1", "-o", str(splits_dir)], capsys)
    models = ["knn", "attention", "icl_transformer", "tabular_fm",
              f"tabicl:weights={CHECKPOINTS[task]},n_estimators=2"]
    argv = ["run", str(path), *flags, "--splits-dir", str(splits_dir)]
    for spec in models:
        argv += ["--model", spec]
    run_cli([*argv, "--runner", "webgpu", "--vulkan-icd", str(icd), "-o", str(tmp_path / "web")],
            capsys)
    run_cli([*argv, "--runner", "python", "-o", str(tmp_path / "py")], capsys)
    web = pd.read_csv(tmp_path / "web" / "results.csv")
    py = pd.read_csv(tmp_path / "py" / "results.csv")
    assert list(web.columns) == runner.COLUMNS and (web["runner"] == "webgpu").all()
    keys = ["model", "dataset", "split_id"]
    both = web.merge(py, on=keys, suffixes=("_web", "_py"), validate="one_to_one")
    assert len(both) == len(web) == len(py) == len(models) * 3
    for col in ("task", "metric", "seed", "n_train", "n_test", "repeat", "fold"):
        assert (both[f"{col}_web"] == both[f"{col}_py"]).all(), col
    scale = float(np.std(read(path).y)) if task == "regression" else 1.0
    for col in ("score", "error"):
        diff = (both[f"{col}_web"] - both[f"{col}_py"]).abs() / scale
        worst = both.loc[diff.idxmax()]
        print(f"{task} {col}: max |web - python| / {scale:.4g} = {diff.max():.3g} "
              f"({worst['model']}, {worst['split_id']})")
        for model, d in diff.groupby(both["model"]):
            print(f"  {model}: {d.max():.3g}")
        assert diff.max() < TOL, both[keys + [f"{col}_web", f"{col}_py"]]
