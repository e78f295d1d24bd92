"""The table loader: kinds, missing cells, target mapping, every refused table, the
fingerprint, SPEC §6 on tables (grouped, temporal, the 1 M-row holdout) and the CLI."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite import cli, runner, splits
from arenalite.datasets import table


def frame(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "x": rng.normal(size=n),
        "colour": pd.Series(["red", "green", None] * (n // 3)),
        "flag": [True, False] * (n // 2),
        "code": np.arange(n) % 4,
        "label": ["yes", "no", "maybe"] * (n // 3),
    })


def write(tmp_path, text: str, name: str = "t.csv"):
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path


def test_kinds_target_mapping_and_missing_cells(tmp_path):
    path = write(tmp_path, "x,c,y\n1.5,a,dog\n,b,cat\nNA,,dog\n2,a,cat\n3,n/a,dog\n4,b,cat\n"
                 "5,a,dog\n6,b,cat\n7,a,bird\n8,a,bird\n9,b,bird\n", "sales.csv.gz")
    t = table.read_table(path, target="y")
    assert t.name == "sales"
    assert t.task == "multiclass" and t.classes == ("bird", "cat", "dog")
    assert t.y.tolist() == [2, 1, 2, 1, 2, 1, 2, 1, 0, 0, 0]
    assert t.kinds == {"x": "numeric", "c": "categorical"}
    assert t.missing_counts() == {"x": 2, "c": 2}


def test_dataframe_kinds_and_forced_categorical():
    t = table.read_table(frame(), target="label", categorical=["code"], name="demo")
    assert t.kinds == {"x": "numeric", "colour": "categorical", "flag": "categorical",
                       "code": "categorical"}
    assert table.read_table(frame(), target="label", name="d").kinds["code"] == "numeric"


def test_task_rule():
    df = frame()
    df["reg"] = np.linspace(0, 1, len(df))
    df["few"] = np.arange(len(df)) % 2
    assert table.read_table(df, target="reg", name="d").task == "regression"
    assert table.read_table(df, target="few", name="d").task == "binary"
    assert table.read_table(df, target="code", name="d").task == "multiclass"
    df["many"] = np.arange(len(df))
    assert table.read_table(df, target="many", name="d").task == "regression"


def test_bundled_name():
    t = table.read_table("iris")
    assert t.n_rows == 150 and t.task == "multiclass" and t.n_classes == 3


@pytest.mark.parametrize("text, options, match", [
    ("a,b\n1,2\n", {"target": "y"}, r"target column 'y' is not a column.*\['a', 'b'\]"),
    ("a,y\n1,\n2,1\n3,\n4,0\n", {"target": "y"},
     r"'y' has 2 missing value\(s\), first at rows \[0, 2\]"),
    ("a,y\n1,1\n2,1\n3,1\n", {"target": "y", "task": "binary"}, r"one class only \(1\)"),
    ("a,y\n1,p\n2,p\n3,p\n4,q\n", {"target": "y"},
     r"class 'q' .* has 1 row\(s\) \(first at row 3\)"),
    ("a,a,y\n1,2,3\n", {"target": "y"}, r"column name 'a' appears twice"),
    ("", {"target": "y"}, r"is empty"),
    ("a,y\n", {"target": "y"}, r"no data rows"),
    ("a,g,y\n1,k,0\n2,k,1\n3,k,0\n4,k,1\n5,k,0\n6,k,1\n", {"target": "y", "group_column": "g"},
     r"group column 'g' has a single group \('k'\)"),
    ("a,t,y\n1,2024-01-01,0\n2,soon,1\n3,2024-01-03,0\n4,2024-01-04,1\n5,2024-01-05,0\n"
     "6,2024-01-06,1\n", {"target": "y", "time_column": "t"},
     r"time column 't': row 1 has 'soon'"),
    ("a,y\n1,0\n2,1\n3,0\n4,1\n5,0\n6,1\n", {"target": "y", "leakage_columns": ["y"]},
     r"leakage column 'y' is the target"),
    ("a,y\n1,0\ninf,1\n3,0\n4,1\n5,0\n6,1\n", {"target": "y"},
     r"column 'a' has an infinite value \(inf\) at row 1"),
    ("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(9)) + "oops,1\n", {"target": "y"},
     r"column 'a' holds numbers but row 9 has 'oops'"),
    ("name,y\n" + "".join(f"n{i},{i % 2}\n" for i in range(12)), {"target": "y"},
     r"column 'name' is text with a different value in every row \(row 0: 'n0'\)"),
    ("a,y\n1,0\n", {}, r"name the target column with target="),
])
def test_bad_tables(tmp_path, text, options, match):
    with pytest.raises(ValueError, match=match):
        table.read_table(write(tmp_path, text), **options)


def test_parquet_without_pyarrow(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name == "pyarrow":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(ValueError, match=r"Parquet needs pyarrow.*arenalite\[parquet\]"):
        table.read_table(path, target="y")


def test_unique_text_is_fine_as_leakage_or_group(tmp_path):
    text = "name,a,y\n" + "".join(f"n{i},{i},{i % 2}\n" for i in range(12))
    t = table.read_table(write(tmp_path, text), target="y", leakage_columns=["name"])
    assert t.excluded_columns == ("name",) and t.kinds == {"a": "numeric"}


def test_fingerprint_refuses_another_table(tmp_path):
    t = table.read_table(frame(), target="label", name="demo")
    persisted = table.make_table_splits(t)
    splits.validate(persisted)
    table.check_table_splits(t, persisted, "demo.splits.json")
    other = frame()
    other.loc[3, "label"] = "no"
    with pytest.raises(ValueError, match=r"another table than 'demo': target_sha256 differs"):
        table.check_table_splits(table.read_table(other, target="label", name="demo"),
                                 persisted, "demo.splits.json")
    renamed = frame().rename(columns={"x": "z"})
    with pytest.raises(ValueError, match=r"in the split file only: \['x'\].*only: \['z'\]"):
        table.check_table_splits(table.read_table(renamed, target="label", name="demo"),
                                 persisted, "demo.splits.json")


def test_fingerprint_round_trips_through_the_file(tmp_path):
    t = table.read_table(frame(), target="label", name="demo")
    path = splits.save(table.make_table_splits(t), tmp_path / "demo.splits.json")
    loaded = splits.load(path)
    assert loaded["fingerprint"] == table.fingerprint(t)
    assert list(loaded)[list(loaded).index("excluded_columns") + 1] == "fingerprint"


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=12, max_size=60))
def test_grouped_tables_keep_groups_disjoint(ids):
    if len(set(ids)) < 3:
        return
    df = pd.DataFrame({"g": [f"e{i}" for i in ids], "a": np.arange(len(ids), dtype=float),
                       "y": np.linspace(0, 1, len(ids))})
    t = table.read_table(df, target="y", group_column="g", name="d")
    try:
        persisted = table.make_table_splits(t)
    except ValueError as error:
        assert "fold" in str(error)
        return
    groups = np.asarray(df["g"])
    for entry in persisted["splits"]:
        assert not set(groups[entry["train"]]) & set(groups[entry["test"]])
    assert persisted["excluded_columns"] == ["g"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 9), st.none()), min_size=12, max_size=60))
def test_temporal_tables_keep_time_order(times):
    df = pd.DataFrame({"t": pd.array(times, dtype="Int64"), "a": np.arange(len(times)),
                       "y": np.linspace(0, 1, len(times))})
    if any(v is None for v in times):
        with pytest.raises(ValueError, match=r"time column 't' has \d+ missing value"):
            table.read_table(df, target="y", time_column="t", name="d")
        return
    t = table.read_table(df, target="y", time_column="t", name="d")
    try:
        persisted = table.make_table_splits(t)
    except ValueError as error:
        assert "distinct values" in str(error)
        return
    tv = np.asarray(times)
    for entry in persisted["splits"]:
        assert tv[entry["train"]].max() < tv[entry["test"]].min()


def test_a_million_rows_get_the_holdout():
    n = 1_000_000
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=n).astype(np.float32),
                       "c": pd.Categorical(rng.integers(0, 5, n).astype(str)),
                       "y": rng.integers(0, 2, n)})
    t = table.read_table(df, target="y", name="big")
    persisted = table.make_table_splits(t)
    assert persisted["kind"] == "holdout" and persisted["seed"] == 42
    assert len(persisted["splits"][0]["test"]) == 250_000


def test_to_dataset_keeps_typed_columns_for_the_models():
    t = table.read_table(frame(), target="label", categorical=["code"], name="demo")
    assert all(isinstance(t.features[c].dtype, pd.CategoricalDtype)
               for c in ("colour", "flag", "code"))
    data = table.to_dataset(t)
    assert isinstance(data.X, pd.DataFrame) and data.feature_names == ("x", "colour", "flag",
                                                                        "code")
    numeric = table.to_dataset(t, drop=["colour", "flag", "code"])
    assert numeric.feature_names == ("x",) and numeric.X.dtype == np.float64
    persisted = table.make_table_splits(t)
    results = runner.run({"demo": data}, {"demo": persisted},
                         [{"name": "knn", "k": 3}, {"name": "attention"}], progress=False)
    assert len(results) == 2 * len(persisted["splits"])
    assert results["score"].notna().all()


# ----------------------------------------------------------------------------- CLI


def numeric_csv(tmp_path):
    rng = np.random.default_rng(2)
    n = 60
    df = pd.DataFrame({"shop": [f"s{i % 6}" for i in range(n)],
                       "day": pd.date_range("2024-01-01", periods=n).astype(str),
                       "a": rng.normal(size=n), "b": rng.normal(size=n),
                       "sold": rng.integers(0, 2, n)})
    path = tmp_path / "sales.csv"
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("flags, kind", [([], None), (["--group-column", "shop"], "grouped"),
                                         (["--time-column", "day"], "temporal")])
def test_cli_splits_describe_and_run_on_a_file(tmp_path, capsys, flags, kind):
    path = numeric_csv(tmp_path)
    other = ["--leakage-columns", "day"] if kind != "temporal" else ["--leakage-columns", "shop"]
    if kind is None:
        other = ["--leakage-columns", "shop,day"]
    common = [str(path), "--target", "sold", *flags, *other]
    assert cli.main(["splits", *common, "-o", str(tmp_path / "s")]) == 0
    written = json.loads((tmp_path / "s" / "sales.splits.json").read_text())
    assert written["kind"] == (kind or "iid")
    assert written["fingerprint"]["n_rows"] == 60
    assert cli.main(["describe", *common]) == 0
    out = capsys.readouterr().out
    assert "table 'sales': 60 rows" in out and "splits:" in out
    assert cli.main(["run", *common, "--splits-dir", str(tmp_path / "s"), "--model", "knn",
                     "-o", str(tmp_path / "r")]) == 0
    results = pd.read_csv(tmp_path / "r" / "results.csv")
    assert set(results["dataset"]) == {"sales"}


def test_cli_runs_a_table_with_text_and_missing_cells(tmp_path, capsys):
    rng = np.random.default_rng(5)
    n = 90
    amount = rng.normal(size=n).round(3).astype(object)
    amount[::9] = ""
    colour = rng.choice(["red", "green", "blue", ""], n)
    df = pd.DataFrame({"colour": colour, "amount": amount, "member": rng.random(n) < 0.5,
                       "bought": np.where(rng.random(n) < 0.5, "yes", "no")})
    path = tmp_path / "shop.csv"
    df.to_csv(path, index=False)
    common = [str(path), "--target", "bought"]
    assert cli.main(["splits", *common, "-o", str(tmp_path / "s")]) == 0
    assert cli.main(["run", *common, "--splits-dir", str(tmp_path / "s"), "--model", "knn",
                     "--model", "icl_transformer", "-o", str(tmp_path / "r")]) == 0
    results = pd.read_csv(tmp_path / "r" / "results.csv")
    assert set(results["model"]) == {"knn", "icl_transformer"}
    assert results["score"].notna().all()


def test_cli_refuses_a_foreign_split_file(tmp_path, capsys):
    path = numeric_csv(tmp_path)
    assert cli.main(["splits", str(path), "--target", "sold", "--leakage-columns", "shop,day",
                     "-o", str(tmp_path / "s")]) == 0
    df = pd.read_csv(path)
    df["sold"] = 1 - df["sold"]
    df.to_csv(path, index=False)
    capsys.readouterr()
    assert cli.main(["run", str(path), "--target", "sold", "--leakage-columns", "shop,day",
                     "--splits-dir", str(tmp_path / "s"), "--model", "knn",
                     "-o", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "made from another table than 'sales': target_sha256 differs" in err
    assert "Traceback" not in err


def test_cli_file_without_target_is_one_message(tmp_path, capsys):
    path = numeric_csv(tmp_path)
    assert cli.main(["describe", str(path)]) == 2
    assert "needs --target COL" in capsys.readouterr().err


def test_cli_splits_gap_and_group_labels(tmp_path, capsys):
    path = numeric_csv(tmp_path)
    base = [str(path), "--target", "sold"]
    assert cli.main(["splits", *base, "--time-column", "day", "--leakage-columns", "shop",
                     "-o", str(tmp_path / "a")]) == 0
    assert cli.main(["splits", *base, "--time-column", "day", "--leakage-columns", "shop",
                     "--gap", "3D", "-o", str(tmp_path / "b")]) == 0
    plain, gapped = (json.loads((tmp_path / d / "sales.splits.json").read_text())
                     for d in ("a", "b"))
    for a, b in zip(plain["splits"], gapped["splits"], strict=True):
        assert a["test"] == b["test"] and set(b["train"]) < set(a["train"])
    for bad in ("soon", "", "NaT"):  # pandas reads the last two as NaT: refused, no traceback
        with pytest.raises(SystemExit) as stop:
            cli.main(["splits", *base, "--time-column", "day", "--gap", bad,
                      "-o", str(tmp_path / "c")])
        assert stop.value.code == 2
        assert "--gap must be a number or a duration" in capsys.readouterr().err
    df = pd.read_csv(path)
    df["sold"] = df["shop"].map({f"s{i}": i % 2 for i in range(6)})
    df.to_csv(path, index=False)
    assert cli.main(["splits", *base, "--group-column", "shop", "--leakage-columns", "day",
                     "--group-labels", "per_group", "-o", str(tmp_path / "d")]) == 0
    written = json.loads((tmp_path / "d" / "sales.splits.json").read_text())
    assert written["kind"] == "grouped"
