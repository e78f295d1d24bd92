"""Models on DataFrames: tabicl against the tabicl package on mixed tables (committed
fixtures from scripts/make_tabicl_frame_fixtures.py), and the common encoding of the
other models (docs/models.md)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arenalite import models
from arenalite.models import encoding

DATA = Path(__file__).parent / "data" / "tabicl"
FRAME_CASES = ("binary", "multiclass", "regression")
TOL = 1e-5


def frame_case(name: str):
    record = json.loads((DATA / f"frames_{name}.json").read_text())
    columns = {}
    for col, spec in record["columns"].items():
        if spec["dtype"] == "category":
            columns[col] = pd.Categorical(spec["cells"], categories=spec["categories"])
        elif spec["dtype"] in ("str", "object"):
            columns[col] = pd.Series(spec["cells"], dtype=spec["dtype"])
        else:
            columns[col] = pd.Series([np.nan if v is None else v for v in spec["cells"]],
                                     dtype=spec["dtype"])
    frame = pd.DataFrame(columns)
    n = record["context_rows"]
    classes = record["classes"]
    task = "regression" if classes == 0 else "binary" if classes == 2 else "multiclass"
    y = np.asarray(record["y_train"], dtype=np.float64 if task == "regression" else np.int64)
    return record, frame.iloc[:n], frame.iloc[n:], y, task


@pytest.mark.parametrize("name", FRAME_CASES)
def test_tabicl_encoding_is_the_packages_transform_to_numerical(name):
    record, train, test, _, _ = frame_case(name)
    with pytest.warns(UserWarning, match=r"leaves out column\(s\) \['member'\]"):
        a, b = encoding.tabicl_encoding(train, test)
    np.testing.assert_allclose(a, record["encoded_train"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b, record["encoded_test"], rtol=0, atol=1e-12)
    assert (b[1, 0] == -1) and (b[2, 2] == -1)  # categories seen only at test time


@pytest.mark.parametrize("name", FRAME_CASES)
def test_tabicl_on_dataframes_matches_the_package(name):
    record, train, test, y, task = frame_case(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = models.predict({"name": "tabicl", "weights": str(DATA / record["checkpoint"])},
                             train, y, test, task)
    scale = 10 if task == "regression" else 1
    np.testing.assert_allclose(got, record["wrapper"], atol=TOL * scale, rtol=0)


def mixed(rows: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    text = rng.choice(["a", "b", "c"], rows).astype(object)
    text[::7] = None
    number = rng.normal(size=rows)
    number[::5] = np.nan
    return pd.DataFrame({"text": pd.Series(text, dtype="str"), "number": number,
                         "flag": rng.random(rows) < 0.5,
                         "wide": pd.Series([f"v{i % 13}" for i in range(rows)], dtype="str")})


def test_common_encoding_one_hot_codes_and_means():
    frame = mixed()
    train, test = frame.iloc[:20], frame.iloc[20:].copy()
    test.iloc[0, 0] = "zzz"
    a, b = encoding.common_encoding(train, test)
    assert a.shape[1] == 3 + 1 + 2 + 1  # text one-hot (3), number, flag one-hot (2), wide codes
    levels = sorted(train["text"].dropna().unique())
    assert levels == ["a", "b", "c"]
    np.testing.assert_array_equal(a[:, :3].sum(axis=1), train["text"].notna().to_numpy())
    assert b[0, :3].sum() == 0  # unknown category: all zeros
    mean = np.nanmean(train["number"].to_numpy())
    np.testing.assert_allclose(a[:, 3], train["number"].fillna(mean).to_numpy())
    np.testing.assert_allclose(b[:, 3], test["number"].fillna(mean).to_numpy())
    wide_levels = sorted(train["wide"].unique())
    assert len(wide_levels) > encoding.MAX_ONE_HOT_LEVELS
    np.testing.assert_array_equal(a[:, 6], [wide_levels.index(v) for v in train["wide"]])


@pytest.mark.parametrize("name", ["knn", "attention", "icl_transformer", "tabular_fm"])
def test_every_model_takes_a_mixed_dataframe(name):
    frame = mixed(40)
    y = (frame["number"].fillna(0) > 0).astype(np.int64).to_numpy()
    out = models.predict({"name": name}, frame.iloc[:30], y[:30], frame.iloc[30:], "binary")
    assert out.shape == (10, 2) and np.all(np.isfinite(out))
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_numeric_dataframe_equals_its_array(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(25, 3))
    y = rng.integers(0, 3, 20)
    y[:3] = [0, 1, 2]
    frame = pd.DataFrame(x, columns=["a", "b", "c"])
    for name in ("knn", "attention"):
        np.testing.assert_array_equal(
            models.predict({"name": name}, frame.iloc[:20], y, frame.iloc[20:], "multiclass"),
            models.predict({"name": name}, x[:20], y, x[20:], "multiclass"))


@settings(max_examples=25, deadline=None)
@given(st.permutations(list(range(12))))
def test_codes_do_not_depend_on_context_row_order(order):
    frame = mixed(12)
    a, _ = encoding.common_encoding(frame, frame)
    b, _ = encoding.common_encoding(frame.iloc[order], frame)
    np.testing.assert_allclose(a[order], b, rtol=0, atol=1e-12)  # the mean's sum order


@pytest.mark.parametrize("train, test, error, match", [
    (pd.DataFrame({"a": [1.0, 2.0]}), np.ones((2, 1)), TypeError, "both be pandas DataFrames"),
    (pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"b": [1.0]}), ValueError,
     r"X_test lacks \['a'\] and has extra \['b'\]"),
    (pd.DataFrame({"a": [1.0, 2.0]}), pd.DataFrame({"a": ["x"]}), TypeError,
     "column 'a' is float64 in X_train but str in X_test"),
    (pd.DataFrame({"a": [1.0, np.inf]}), pd.DataFrame({"a": [1.0]}), ValueError,
     "X_train column 'a' has an infinite value inf in row 1"),
    (pd.DataFrame({"a": pd.Series(["x", 1], dtype=object)}),
     pd.DataFrame({"a": pd.Series(["x"], dtype=object)}), TypeError,
     r"column 'a' mixes value types \['int', 'str'\]"),
    (pd.DataFrame({"a": pd.to_datetime(["2020-01-01", "2020-01-02"])}),
     pd.DataFrame({"a": pd.to_datetime(["2020-01-03"])}), TypeError,
     "column 'a' has dtype datetime64"),
])
def test_bad_frames_are_refused_by_name(train, test, error, match):
    with pytest.raises(error, match=match):
        models.predict({"name": "knn", "k": 1}, train, np.arange(len(train)) % 2, test,
                       "binary")
