"""TabPFN on DataFrames with text, category, bool and missing cells, as the package takes
them (encoding.tabpfn_table; docs/models.md, "TabPFN's table input").

Fixtures of scripts/make_tabpfn_frame_fixtures.py (``tabpfn`` 9.2.0): per case the frames
(JSON columns with their dtype), what the package's cleaning handed its model pipeline
(the float64 rows, the declared categorical indices, the inferred modalities) and its
``predict_proba`` / ``predict``; ``frame_cleaning.json`` holds single-column oddities for
the cleaning alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import models
from arenalite.models import encoding, tabpfn
from arenalite.models.tabpfn import predictor, preprocessing

DATA = Path(__file__).parent / "data" / "tabpfn"
MANIFEST = json.loads((DATA / "frame.json").read_text())
CASES = sorted(MANIFEST["cases"])
CLEANING = json.loads((DATA / "frame_cleaning.json").read_text())
MODALITY = {"numerical": preprocessing.NUMERICAL, "categorical": preprocessing.CATEGORICAL,
            "constant": preprocessing.CONSTANT}


def column(c: dict) -> pd.Series | pd.Categorical:
    """A column the fixture script wrote, with its dtype (its ``frame_from_json``)."""
    if c["dtype"] == "category":
        return pd.Categorical(c["values"], categories=c["categories"])
    if c["dtype"] in ("float64", "object"):
        return pd.Series([np.nan if v is None else v for v in c["values"]], dtype=c["dtype"])
    return pd.Series(c["values"], dtype=c["dtype"])


def frame(columns: list[dict]) -> pd.DataFrame:
    return pd.DataFrame({c["name"]: column(c) for c in columns})


def load(case: str) -> tuple[pd.DataFrame, np.ndarray, pd.DataFrame, dict]:
    j = json.loads((DATA / f"frame_{case}.json").read_text())
    train, test = frame(j["train"]), frame(j["test"])
    assert {c: str(t) for c, t in train.dtypes.items()} == MANIFEST["cases"][case]["dtypes"]
    return train, np.array(j["y_train"]), test, dict(np.load(DATA / f"frame_{case}.npz"))


def modality(table: encoding.TabPFNTable, checkpoint: str) -> np.ndarray:
    net = tabpfn.load_cached(DATA / checkpoint)
    return predictor.clean_rows(net, table.train, table.test, table.categorical_indices).modality


@pytest.mark.parametrize("case", CASES)
def test_rows_and_modalities_are_the_packages(case: str) -> None:
    train, _, test, d = load(case)
    table = encoding.tabpfn_table(train, test)
    np.testing.assert_array_equal(table.train, d["X_train_clean"])
    np.testing.assert_array_equal(table.test, d["X_test_clean"])
    # the package declares its category columns; its string branch makes text columns
    # categorical, which arenalite's inference on codes is told by declaring them too
    assert set(d["provided_categorical_indices"].tolist()) <= set(table.categorical_indices)
    np.testing.assert_array_equal(modality(table, MANIFEST["cases"][case]["checkpoint"]),
                                  d["modalities"])


@pytest.mark.parametrize("case", CASES)
def test_predict_equals_the_package(case: str) -> None:
    o = MANIFEST["cases"][case]
    train, y, test, d = load(case)
    model = {"name": "tabpfn", "weights": str(DATA / o["checkpoint"]), **o["options"]}
    out = models.predict(model, train, y, test, o["task"])
    assert out.shape == d["output"].shape
    # 1e-4, as tests/test_tabpfn_predictor.py: a row fingerprint hash can flip elsewhere
    assert np.abs(out - d["output"]).max() <= 1e-4


@pytest.mark.parametrize("case", sorted(CLEANING))
def test_cleaning_oddities_are_the_packages(case: str) -> None:
    c = CLEANING[case]
    table = encoding.tabpfn_table(frame(c["train"]), frame(c["test"]))

    def floats(rows):
        return np.array([[np.nan if v is None else v for v in row] for row in rows])

    np.testing.assert_array_equal(table.train, floats(c["X_train_clean"]))
    np.testing.assert_array_equal(table.test, floats(c["X_test_clean"]))
    assert set(c["provided_categorical_indices"]) <= set(table.categorical_indices)
    np.testing.assert_array_equal(modality(table, "classifier_small.ckpt"),
                                  [MODALITY[m] for m in c["modalities"]])


def test_encode_table_and_encode() -> None:
    train, _, test, _ = load("text_regression")
    x_train, x_test, categorical = encoding.encode_table("tabpfn", train, test)
    assert categorical == encoding.tabpfn_table(train, test).categorical_indices == [0, 2]
    a, b = encoding.encode("tabpfn", train, test)
    np.testing.assert_array_equal(a, x_train)
    np.testing.assert_array_equal(b, x_test)
    arrays = np.zeros((3, 2)), np.ones((2, 2))
    assert encoding.encode_table("tabpfn", *arrays)[2] is None
    assert encoding.encode_table("knn", train[["x"]], test[["x"]])[2] is None


def pair(train_values, test_values, dtype=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    return (pd.DataFrame({"c": pd.Series(train_values, dtype=dtype)}),
            pd.DataFrame({"c": pd.Series(test_values, dtype=dtype)}))


def test_errors_name_the_column_and_value() -> None:
    with pytest.raises(TypeError, match=r"column 'c' mixes value types \['int', 'str'\]"):
        encoding.tabpfn_table(*pair(["b", 1] * 5, ["b"], object))
    with pytest.raises(TypeError, match="column 'c' holds True/False"):
        encoding.tabpfn_table(*pair([True, None] * 5, [True], object))
    with pytest.raises(TypeError, match="column 'c' has dtype datetime64"):
        encoding.tabpfn_table(*pair(pd.to_datetime(["2020-01-01"] * 4),
                                    pd.to_datetime(["2020-01-02"])))
    with pytest.raises(ValueError, match="column 'c' has 40 distinct values"):
        encoding.tabpfn_table(*pair([f"w{i}" for i in range(40)], ["w1"], "str"))
    with pytest.raises(TypeError, match="X_test column 'c' holds 'x' in row 1"):
        encoding.tabpfn_table(*pair([1.5, 2] * 5, [1, "x"], object))
    with pytest.raises(ValueError, match="X_test column 'c' has an infinite value"):
        encoding.tabpfn_table(*pair([1.5, 2.0] * 5, [1.0, np.inf]))
