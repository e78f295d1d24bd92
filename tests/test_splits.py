"""Persisted splits: protocol (repeats, stratification, seeds), invariants, JSON and validation."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from arenalite import splits as S
from arenalite.splits import (
    effective_training_rows,
    fold_summary,
    fold_summary_table,
    load,
    make_splits,
    n_repeats_for,
    save,
    validate,
)


def _class_counts_within_one_row(y: np.ndarray, tests: list[np.ndarray]) -> None:
    for c in np.unique(y):
        per_fold = [int((y[t] == c).sum()) for t in tests]
        assert max(per_fold) - min(per_fold) <= 1


def _check_partition(sp: dict) -> None:
    n = sp["n_rows"]
    for r in range(sp["n_repeats"]):
        counts = np.zeros(n, dtype=int)
        for e in sp["splits"]:
            if e["repeat"] == r:
                train, test = np.array(e["train"]), np.array(e["test"])
                counts[test] += 1
                assert len(np.intersect1d(train, test)) == 0
                assert len(train) + len(test) == n
                assert list(train) == sorted(train) and list(test) == sorted(test)
        assert (counts == 1).all()


# ----------------------------------------------------------------------------- repeat rule


@pytest.mark.parametrize(("n_train", "repeats"), [
    (1, 20), (499, 20), (500, 10), (2_499, 10), (2_500, 3), (249_999, 3), (250_000, 1),
    (999_999, 1),
])
def test_repeat_rule_on_effective_training_rows(n_train, repeats):
    assert n_repeats_for(n_train) == repeats


@pytest.mark.parametrize(("n_rows", "n_train"), [
    (749, 499), (750, 500), (3_749, 2_499), (3_750, 2_500), (374_999, 249_999),
    (375_000, 250_000),
])
def test_effective_training_rows_is_two_thirds(n_rows, n_train):
    assert effective_training_rows(n_rows) == n_train


@pytest.mark.parametrize(("n_rows", "repeats"), [(749, 20), (750, 10), (3_749, 10), (3_750, 3)])
def test_make_splits_repeat_counts_at_boundaries(n_rows, repeats):
    sp = make_splits(n_rows, "regression")
    assert (sp["kind"], sp["n_repeats"], sp["n_folds"]) == ("iid", repeats, 3)
    assert len(sp["splits"]) == 3 * repeats
    assert sp["seed"] == 4267


def test_one_repeat_below_a_million_rows_and_holdout_from_a_million():
    below = make_splits(999_999, "regression")
    assert (below["kind"], below["n_repeats"], len(below["splits"])) == ("iid", 1, 3)
    y = (np.arange(1_000_000) % 10 == 0).astype(int)  # 10 % positives
    hold = make_splits(1_000_000, "binary", y=y)
    assert (hold["kind"], hold["seed"], hold["n_repeats"], hold["n_folds"]) == (
        "holdout", 42, 1, 1)
    (only,) = hold["splits"]
    test = np.array(only["test"])
    assert only["id"] == "r0-f0" and len(test) == 250_000
    assert len(only["train"]) == 750_000
    assert abs(y[test].sum() - 25_000) <= 1  # class proportions kept


def test_holdout_follows_the_documented_algorithm():
    n = 1_000_003
    sp = make_splits(n, "regression")
    order = np.random.default_rng(42).permutation(n)
    j = np.arange(n, dtype=np.int64)  # (j + 1) * 250_000 passes int32, the wasm32 intp
    is_test = (j + 1) * 250_000 // n > j * 250_000 // n
    assert sp["splits"][0]["test"] == sorted(order[is_test].tolist())


def test_explicit_repeats_override():
    assert make_splits(30, "regression", n_repeats=2)["n_repeats"] == 2


# ----------------------------------------------------------------------------- IID


def _documented_folds(y, n_repeats, n_folds):
    """Each repeat's fold number per row, by the documented algorithm (seed 4267):
    a seeded permutation, stably sorted by class, dealt round-robin into the folds."""
    rng = np.random.default_rng(4267)
    _, codes = np.unique(y, return_inverse=True)
    for _ in range(n_repeats):
        perm = rng.permutation(len(y))
        order = perm[np.argsort(codes[perm], kind="stable")]
        fold = np.empty(len(y), dtype=int)
        fold[order] = np.arange(len(y)) % n_folds
        yield fold


def test_iid_follows_the_documented_algorithm():
    y = np.array(list("aabbbcccccab") * 5)
    sp = make_splits(len(y), "multiclass", y=y)
    for r, fold in enumerate(_documented_folds(y, 2, 3)):
        for f in range(3):
            entry = sp["splits"][3 * r + f]
            assert entry["id"] == f"r{r}-f{f}"
            assert entry["test"] == np.flatnonzero(fold == f).tolist()


@settings(max_examples=30, deadline=None)
@given(st.integers(3, 300), st.integers(2, 5), st.integers(0, 2**31))
def test_stratification_within_one_row_per_class_and_fold(n, k, seed):
    y = np.random.default_rng(seed).integers(0, k, n)
    y[:2] = [0, 1]
    task = "binary" if k == 2 else "multiclass"
    sp = make_splits(n, task, y=y, n_repeats=2)
    _check_partition(sp)
    for r in range(2):
        tests = [np.array(e["test"]) for e in sp["splits"] if e["repeat"] == r]
        sizes = [len(t) for t in tests]
        assert max(sizes) - min(sizes) <= 1
        _class_counts_within_one_row(y, tests)


def test_regression_folds_balanced_and_repeats_differ():
    sp = make_splits(100, "regression")
    _check_partition(sp)
    assert sp["splits"][0]["test"] != sp["splits"][3]["test"]
    assert sorted(len(e["test"]) for e in sp["splits"][:3]) == [33, 33, 34]


def test_deterministic_byte_identical_json(tmp_path):
    y = np.arange(200) % 3
    a = make_splits(200, "multiclass", y=y, dataset="iris")
    b = make_splits(200, "multiclass", y=y, dataset="iris")
    assert a == b
    save(a, tmp_path / "a.json")
    save(b, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    # reloading and saving again gives the same bytes
    save(load(tmp_path / "a.json"), tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "c.json").read_bytes()


def test_json_round_trip_and_schema(tmp_path):
    sp = make_splits(60, "binary", y=np.arange(60) % 2, dataset="bc",
                     leakage_columns=["patient_note"])
    path = save(sp, tmp_path / "s.json")
    raw = json.loads(path.read_text())
    assert list(raw) == ["schema", "version", "dataset", "n_rows", "task", "kind", "seed",
                         "n_repeats", "n_folds", "excluded_columns", "splits"]
    assert raw["schema"] == "arenalite.splits" and raw["version"] == 1
    assert raw["excluded_columns"] == ["patient_note"]
    assert list(raw["splits"][0]) == ["id", "repeat", "fold", "train", "test"]
    assert load(path) == sp


def test_numpy_index_arrays_are_accepted_and_written_as_ints(tmp_path):
    sp = make_splits(12, "regression", n_repeats=1)
    for e in sp["splits"]:
        e["train"] = np.asarray(e["train"], dtype=np.int32)
    path = save(sp, tmp_path / "np.json")
    assert isinstance(load(path)["splits"][0]["train"][0], int)


# ----------------------------------------------------------------------------- grouped


def test_grouped_keeps_entities_disjoint():
    rng = np.random.default_rng(0)
    groups = pd.Series(rng.integers(0, 40, 300), name="patient_id")
    sp = make_splits(300, "binary", y=rng.integers(0, 2, 300), groups=groups,
                     leakage_columns=["leak", "patient_id"])
    assert sp["kind"] == "grouped" and sp["n_repeats"] == 20
    assert sp["excluded_columns"] == ["patient_id", "leak"]
    _check_partition(sp)
    g = groups.to_numpy()
    for e in sp["splits"]:
        assert not set(g[e["train"]]) & set(g[e["test"]])
    validate(sp, groups=g)


def test_grouped_follows_the_documented_algorithm():
    groups = np.array(["b", "a", "c", "a", "d", "b", "e", "e", "f"])
    sp = make_splits(9, "regression", groups=groups, n_repeats=1)
    names, codes = np.unique(groups, return_inverse=True)
    sizes = np.bincount(codes)
    perm = np.random.default_rng(4267).permutation(len(names))
    start = np.cumsum(sizes[perm]) - sizes[perm]
    group_fold = np.empty(len(names), dtype=int)
    group_fold[perm] = start * 3 // 9
    for f in range(3):
        assert sp["splits"][f]["test"] == np.flatnonzero(group_fold[codes] == f).tolist()


def test_grouped_errors():
    with pytest.raises(ValueError, match=r"groups must hold at least 3 distinct ids, got 2"):
        make_splits(10, "regression", groups=[0] * 5 + [1] * 5)
    with pytest.raises(ValueError, match=r"fold \d of repeat 0 has no test rows"):
        make_splits(100, "regression", groups=[0] * 98 + [1, 2], n_repeats=1)
    with pytest.raises(ValueError,
                       match=r"groups has a missing or non-finite value \(None\) at row 2"):
        make_splits(4, "regression", groups=["a", "b", None, "c"])


# ----------------------------------------------------------------------------- temporal


def test_temporal_training_never_follows_test():
    rng = np.random.default_rng(3)
    time = pd.Series(pd.to_datetime("2024-01-01")
                     + pd.to_timedelta(rng.integers(0, 50, 200), unit="D"), name="date")
    sp = make_splits(200, "regression", time=time)
    assert (sp["kind"], sp["seed"], sp["n_repeats"], sp["n_folds"]) == ("temporal", None, 1, 3)
    assert sp["excluded_columns"] == ["date"]
    t = time.to_numpy()
    previous_train: set[int] = set()
    for e in sp["splits"]:
        assert t[e["train"]].max() < t[e["test"]].min()
        assert previous_train <= set(e["train"])  # expanding window
        previous_train = set(e["train"])
    validate(sp, time=t)


def test_temporal_keeps_equal_times_together_and_row_identity():
    time = np.array([5, 1, 1, 1, 2, 2, 3, 4, 4, 4, 6, 7])
    sp = make_splits(12, "regression", time=time, time_column="t")
    first = sp["splits"][0]
    assert first["train"] == [1, 2, 3]  # all rows at time 1, original positions
    assert first["test"] == [4, 5, 6]


def test_temporal_errors():
    with pytest.raises(ValueError, match=r"too few distinct values \(2\)"):
        make_splits(10, "regression", time=[1] * 9 + [2])
    with pytest.raises(TypeError, match=r"time must be numeric or datetime64.*to_datetime"):
        make_splits(4, "regression", time=["2020", "2021", "2022", "2023"])
    with pytest.raises(ValueError,
                       match=r"time has a missing or non-finite value \(nan\) at row 1"):
        make_splits(4, "regression", time=[1.0, np.nan, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"not both"):
        make_splits(10, "regression", groups=np.arange(10), time=np.arange(10))
    with pytest.raises(ValueError, match=r"exactly one repeat"):
        make_splits(10, "regression", time=np.arange(10), n_repeats=3)


# ----------------------------------------------------------------------------- make_splits input


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    ({"n_rows": 10, "task": "ranking"}, ValueError, r"task must be one of .* got 'ranking'"),
    ({"n_rows": 2, "task": "regression"}, ValueError, r"n_rows must be at least 3, got 2"),
    ({"n_rows": 10.0, "task": "regression"}, TypeError, r"n_rows must be an integer, got 10.0"),
    ({"n_rows": True, "task": "regression"}, TypeError, r"n_rows must be an integer"),
    ({"n_rows": 10, "task": "binary"}, ValueError, r"y is needed to stratify .* binary task"),
    ({"n_rows": 4, "task": "binary", "y": [0, 1, 0]}, ValueError,
     r"y has 3 values but n_rows is 4"),
    ({"n_rows": 4, "task": "binary", "y": [0, 1, 2, 0]}, ValueError,
     r"binary task must hold two classes, got 3"),
    ({"n_rows": 4, "task": "multiclass", "y": [1, 1, 1, 1]}, ValueError,
     r"at least two classes, got only 1"),
    ({"n_rows": 4, "task": "binary", "y": [0, 1, None, 0]}, ValueError,
     r"y has a missing or non-finite value \(None\) at row 2"),
    ({"n_rows": 4, "task": "regression", "n_repeats": 0}, ValueError,
     r"n_repeats must be at least 1"),
    ({"n_rows": 4, "task": "regression", "dataset": 3}, TypeError, r"dataset must be a string"),
    ({"n_rows": 4, "task": "regression", "leakage_columns": [3]}, TypeError,
     r"excluded column names must be strings, got 3"),
])
def test_make_splits_bad_input(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make_splits(**kwargs)


# ----------------------------------------------------------------------------- load validation


@pytest.fixture
def saved(tmp_path):
    sp = make_splits(9, "regression", n_repeats=2, dataset="toy")
    return sp, tmp_path / "bad.json"


def _write(path, obj):
    path.write_text(json.dumps(obj))
    return path


def _mutated(sp, fn):
    out = copy.deepcopy(sp)
    fn(out)
    return out


def _set(key, value):
    return lambda d: d.__setitem__(key, value)


def _entry(k, key, value):
    return lambda d: d["splits"][k].__setitem__(key, value)


def _swap_test(d):
    d["splits"][1]["test"], d["splits"][1]["train"] = (d["splits"][0]["test"],
                                                       d["splits"][0]["train"])


LOAD_ERRORS = [
    (_set("schema", "other"), r"schema must be 'arenalite.splits', got 'other'"),
    (_set("version", 2), r"unsupported splits version 2 \(this arenalite reads version 1\)"),
    (lambda d: d.pop("task"), r"missing key\(s\) \['task'\]"),
    (_set("extra", 1), r"unexpected key\(s\) \['extra'\]"),
    (_set("n_rows", "9"), r"n_rows must be a positive integer, got '9'"),
    (_set("n_rows", 0), r"n_rows must be a positive integer, got 0"),
    (_set("task", "rank"), r"task must be one of .* got 'rank'"),
    (_set("kind", "bootstrap"), r"kind must be one of .* got 'bootstrap'"),
    (_set("seed", 1.5), r"seed must be an integer or null, got 1.5"),
    (_set("dataset", 5), r"dataset must be a string or null, got 5"),
    (_set("excluded_columns", "id"), r"excluded_columns must be a list of strings"),
    (_set("n_repeats", 3), r"n_repeats × n_folds = 9 entries, got 6"),
    (_entry(2, "repeat", 5), r"splits\[2\] repeat must be an integer in \[0, 2\), got 5"),
    (_entry(2, "fold", -1), r"splits\[2\] fold must be an integer in \[0, 3\), got -1"),
    (_entry(2, "id", "x"), r"splits\[2\] id must be 'r0-f2', got 'x'"),
    (lambda d: d["splits"][0].pop("train"), r"splits\[0\] must have exactly the keys"),
    (lambda d: d["splits"].__setitem__(1, [1, 2]), r"splits\[1\] must be an object"),
    (lambda d: d["splits"][1].update(repeat=0, fold=0, id="r0-f0"),
     r"split id 'r0-f0' appears more than once"),
    (lambda d: d["splits"][0]["test"].__setitem__(0, 1.5),
     r"split 'r0-f0' test holds a non-integer index 1.5 at position 0"),
    (lambda d: d["splits"][0]["test"].__setitem__(1, "3"),
     r"split 'r0-f0' test holds a non-integer index '3' at position 1"),
    (lambda d: d["splits"][0]["train"].__setitem__(0, 9),
     r"split 'r0-f0' train index 9 at position 0 is out of range for n_rows=9"),
    (lambda d: d["splits"][0]["train"].__setitem__(0, -1),
     r"index -1 at position 0 is out of range"),
    (lambda d: d["splits"][0]["train"].append(d["splits"][0]["train"][0]),
     r"split 'r0-f0' train lists row \d more than once"),
    (lambda d: d["splits"][0]["train"].append(d["splits"][0]["test"][0]),
     r"split 'r0-f0': row \d is in both train and test"),
    (lambda d: d["splits"][0]["train"].pop(),
     r"train and test together hold 8 rows, expected all 9"),
    (_entry(0, "test", []), r"split 'r0-f0' test is empty"),
    (_entry(0, "train", {"a": 1}), r"train must be a list of row indices, got dict"),
    (_swap_test, r"repeat 0 puts row \d in [02] test folds"),
]


@pytest.mark.parametrize(("mutate", "pattern"), LOAD_ERRORS)
def test_load_rejects_invalid_files(saved, mutate, pattern):
    sp, path = saved
    with pytest.raises((ValueError, TypeError), match=pattern):
        load(_write(path, _mutated(sp, mutate)))
    with pytest.raises((ValueError, TypeError), match=pattern):
        validate(_mutated(sp, mutate))


def test_load_rejects_booleans_nulls_and_bad_json(saved):
    sp, path = saved
    text = json.dumps(sp)
    path.write_text(text.replace('"test": [', '"test": [true, ', 1))
    with pytest.raises(ValueError, match=r"'true' at character \d+ is not a row index"):
        load(path)
    path.write_text(text.replace('"train": [', '"train": [null, ', 1))
    with pytest.raises(ValueError, match=r"'null' at character \d+ is not a row index"):
        load(path)
    path.write_text(text[:-5])
    with pytest.raises(ValueError, match=r"is not valid JSON"):
        load(path)
    path.write_text("[1, 2]")
    with pytest.raises(TypeError, match=r"must be a dict"):
        load(path)


def test_load_checks_groups_and_time_when_given(tmp_path):
    sp = make_splits(9, "regression", n_repeats=1)
    path = save(sp, tmp_path / "s.json")
    test0 = sp["splits"][0]["test"]
    train0 = sp["splits"][0]["train"]
    groups = np.arange(9)
    groups[test0[0]] = groups[train0[0]]  # one entity on both sides
    with pytest.raises(ValueError, match=rf"split 'r0-f0': group {groups[test0[0]]} \(row "
                                         rf"{test0[0]}\) is in both train and test"):
        load(path, groups=groups)
    with pytest.raises(ValueError, match=r"training row \d at time \d+ is not before"):
        load(path, time=np.arange(9))
    with pytest.raises(ValueError, match=r"groups has 3 values but n_rows is 9"):
        load(path, groups=[1, 2, 3])
    temporal = make_splits(9, "regression", time=np.arange(9))
    path = save(temporal, tmp_path / "t.json")
    assert load(path, time=np.arange(9)) == temporal
    with pytest.raises(ValueError, match=r"is not before the earliest test time"):
        load(path, time=np.arange(9)[::-1])


def test_save_validates_first(tmp_path):
    sp = make_splits(9, "regression", n_repeats=1)
    sp["version"] = 7
    with pytest.raises(ValueError, match=r"unsupported splits version 7"):
        save(sp, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


# ----------------------------------------------------------------------------- fold summary


def test_fold_summary_golden_and_errors():
    summary = fold_summary([1.0, 2.0, 3.0, 4.0])
    assert summary.mean == 2.5
    assert summary.se == pytest.approx(math.sqrt((5 / 3) / 4))
    assert summary.n_folds == 4
    assert fold_summary([0.7] * 9).se == 0.0
    with pytest.raises(ValueError, match=r"at least 2 fold scores .* got 1"):
        fold_summary([0.5])
    with pytest.raises(ValueError, match=r"scores must be finite; found nan at position 1"):
        fold_summary([0.5, np.nan])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=60))
def test_fold_summary_matches_definition(scores):
    s = np.array(scores)
    summary = fold_summary(s)
    assert summary.mean == pytest.approx(s.mean(), abs=1e-9)
    assert summary.se == pytest.approx(s.std(ddof=1) / math.sqrt(len(s)), abs=1e-9)
    assert summary.se >= 0


def test_fold_summary_table():
    df = pd.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "dataset": ["d"] * 6,
                       "score": [1.0, 2.0, 3.0, 0.5, 0.5, 0.5]})
    table = fold_summary_table(df)
    assert list(table.columns) == ["model", "dataset", "mean", "se", "n_folds"]
    assert table["mean"].tolist() == [2.0, 0.5]
    assert table["se"].tolist() == pytest.approx([math.sqrt(1 / 3), 0.0])
    with pytest.raises(ValueError, match=r"single fold score"):
        fold_summary_table(df.iloc[:4])
    with pytest.raises(ValueError, match=r"missing column\(s\) \['score'\]"):
        fold_summary_table(df.drop(columns="score"))
    with pytest.raises(TypeError, match=r"results must be a DataFrame"):
        fold_summary_table([1, 2])


def test_constants_match_spec():
    assert (S.IID_SEED, S.HOLDOUT_SEED, S.HOLDOUT_TEST_ROWS, S.HOLDOUT_MIN_ROWS) == (
        4267, 42, 250_000, 1_000_000)


# ----------------------------------------------------------------------------- gate protocol kinds

TODAYS_FILE = (
    '{"schema":"arenalite.splits","version":1,"dataset":"toy","n_rows":8,"task":"binary",'
    '"kind":"iid","seed":4267,"n_repeats":2,"n_folds":3,"excluded_columns":["id"],"splits":['
    '{"id":"r0-f0","repeat":0,"fold":0,"train":[1,2,4,6,7],"test":[0,3,5]},'
    '{"id":"r0-f1","repeat":0,"fold":1,"train":[0,1,3,5,6],"test":[2,4,7]},'
    '{"id":"r0-f2","repeat":0,"fold":2,"train":[0,2,3,4,5,7],"test":[1,6]},'
    '{"id":"r1-f0","repeat":1,"fold":0,"train":[0,1,3,5,7],"test":[2,4,6]},'
    '{"id":"r1-f1","repeat":1,"fold":1,"train":[0,2,4,6,7],"test":[1,3,5]},'
    '{"id":"r1-f2","repeat":1,"fold":2,"train":[1,2,3,4,5,6],"test":[0,7]}]}\n'
)
"""Written by arenalite before the kfold / random kinds existed."""


def test_a_file_written_before_the_new_kinds_loads_and_saves_byte_identically(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(TODAYS_FILE, encoding="utf-8")
    sp = load(path)
    y = np.array([0, 1, 0, 1, 1, 0, 0, 1])
    assert sp == make_splits(8, "binary", y=y, dataset="toy", n_repeats=2, leakage_columns=["id"])
    assert S.to_json(sp) == TODAYS_FILE


def test_kfold_defaults_to_the_protocols_two_by_five():
    y = np.arange(50) % 2
    sp = make_splits(50, "binary", y=y, kind="kfold")
    assert (sp["kind"], sp["seed"], sp["n_repeats"], sp["n_folds"]) == ("kfold", 4267, 2, 5)
    assert [e["id"] for e in sp["splits"]] == [f"r{r}-f{f}" for r in range(2) for f in range(5)]
    assert "test_fraction" not in sp
    _check_partition(sp)
    # the adaptive 3-fold rule stays the default
    assert make_splits(50, "binary", y=y)["kind"] == "iid"


def test_kfold_follows_the_documented_algorithm():
    y = np.array(list("aabbbcccccab") * 5)
    sp = make_splits(len(y), "multiclass", y=y, kind="kfold", n_folds=4, n_repeats=3)
    for r, fold in enumerate(_documented_folds(y, 3, 4)):
        for f in range(4):
            entry = sp["splits"][4 * r + f]
            assert (entry["id"], entry["repeat"], entry["fold"]) == (f"r{r}-f{f}", r, f)
            assert entry["test"] == np.flatnonzero(fold == f).tolist()
            assert entry["train"] == np.flatnonzero(fold != f).tolist()


@settings(max_examples=30, deadline=None)
@given(st.integers(10, 300), st.integers(2, 5), st.integers(2, 10), st.integers(1, 3),
       st.integers(0, 2**31))
def test_kfold_each_row_tested_once_per_repeat_and_stratified(n, k, n_folds, repeats, seed):
    y = np.random.default_rng(seed).integers(0, k, n)
    y[:2] = [0, 1]
    task = "binary" if k == 2 else "multiclass"
    sp = make_splits(n, task, y=y, kind="kfold", n_folds=n_folds, n_repeats=repeats)
    assert len(sp["splits"]) == n_folds * repeats
    _check_partition(sp)
    for r in range(repeats):
        _class_counts_within_one_row(y, [np.array(e["test"]) for e in sp["splits"]
                                         if e["repeat"] == r])


def test_random_defaults_to_ten_splits_of_seventy_thirty():
    sp = make_splits(100, "regression", kind="random")
    assert (sp["kind"], sp["seed"], sp["n_repeats"], sp["n_folds"], sp["test_fraction"]) == (
        "random", 4267, 10, 1, 0.3)
    assert [e["id"] for e in sp["splits"]] == [f"r{r}-f0" for r in range(10)]
    for e in sp["splits"]:
        assert (len(e["train"]), len(e["test"])) == (70, 30)
        assert sorted(e["train"] + e["test"]) == list(range(100))
    assert len({tuple(e["test"]) for e in sp["splits"]}) == 10  # the repeats differ


def test_random_follows_the_documented_algorithm():
    y = np.array([0] * 37 + [1] * 9 + [2] * 4)
    sp = make_splits(50, "multiclass", y=y, kind="random", n_repeats=3, test_fraction=0.25)
    t = math.floor(0.25 * 50 + 0.5)
    assert t == 13 == S.random_test_rows(50, 0.25)
    rng = np.random.default_rng(4267)
    j = np.arange(50)
    at_test = (j + 1) * t // 50 > j * t // 50
    for r in range(3):
        perm = rng.permutation(50)
        order = perm[np.argsort(y[perm], kind="stable")]
        assert sp["splits"][r]["test"] == sorted(order[at_test].tolist())
        assert sp["splits"][r]["train"] == sorted(order[~at_test].tolist())


@settings(max_examples=30, deadline=None)
@given(st.integers(10, 400), st.integers(2, 5), st.floats(0.05, 0.95), st.integers(0, 2**31))
def test_random_keeps_each_class_share_within_one_row(n, k, fraction, seed):
    y = np.random.default_rng(seed).integers(0, k, n)
    y[:2] = [0, 1]
    task = "binary" if k == 2 else "multiclass"
    t = S.random_test_rows(n, fraction)
    assume(1 <= t < n)
    sp = make_splits(n, task, y=y, kind="random", n_repeats=2, test_fraction=fraction)
    for e in sp["splits"]:
        test = np.array(e["test"])
        assert len(test) == t and len(e["train"]) == n - t
        for c in np.unique(y):
            assert abs((y[test] == c).sum() - (y == c).sum() * t / n) < 1


@pytest.mark.parametrize("kwargs", [
    {"kind": "kfold"}, {"kind": "kfold", "n_folds": 3, "n_repeats": 4},
    {"kind": "random"}, {"kind": "random", "test_fraction": 0.1, "n_repeats": 2},
])
def test_new_kinds_round_trip_byte_identically(tmp_path, kwargs):
    y = np.arange(40) % 3
    a = make_splits(40, "multiclass", y=y, dataset="iris", **kwargs)
    b = make_splits(40, "multiclass", y=y, dataset="iris", **kwargs)
    save(a, tmp_path / "a.json")
    save(b, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert load(tmp_path / "a.json") == a
    save(load(tmp_path / "a.json"), tmp_path / "c.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "c.json").read_bytes()
    keys = list(json.loads((tmp_path / "a.json").read_text()))
    expected = ["schema", "version", "dataset", "n_rows", "task", "kind", "seed", "n_repeats",
                "n_folds", "excluded_columns", "splits"]
    if kwargs["kind"] == "random":
        expected.insert(9, "test_fraction")
    assert keys == expected


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    ({"kind": "bootstrap"}, ValueError, r"kind must be None .* 'kfold' or 'random', got "
                                        r"'bootstrap'"),
    ({"kind": "iid"}, ValueError, r"kind must be None"),
    ({"kind": "kfold", "groups": np.arange(12) % 4}, ValueError,
     r"kind='kfold' splits rows, not groups or time periods"),
    ({"n_folds": 5}, ValueError, r"n_folds is chosen only with kind='kfold'"),
    ({"kind": "random", "n_folds": 5}, ValueError, r"n_folds is chosen only with kind='kfold'"),
    ({"kind": "kfold", "test_fraction": 0.3}, ValueError,
     r"test_fraction is chosen only with kind='random'"),
    ({"kind": "kfold", "n_folds": 1}, ValueError, r"n_folds must be at least 2, got 1"),
    ({"kind": "kfold", "n_folds": 2.0}, TypeError, r"n_folds must be an integer, got 2.0"),
    ({"kind": "kfold", "n_folds": 13}, ValueError,
     r"n_folds=13 needs at least 13 rows, got n_rows=12"),
    ({"kind": "kfold", "n_repeats": 0}, ValueError, r"n_repeats must be at least 1"),
    ({"kind": "random", "test_fraction": 1.0}, ValueError,
     r"test_fraction must be strictly between 0 and 1, got 1.0"),
    ({"kind": "random", "test_fraction": "0.3"}, TypeError,
     r"test_fraction must be a number between 0 and 1, got '0.3'"),
    ({"kind": "random", "test_fraction": True}, TypeError, r"test_fraction must be a number"),
    ({"kind": "random", "test_fraction": 0.01}, ValueError,
     r"test_fraction=0.01 puts 0 of 12 rows in the test part"),
])
def test_new_kinds_bad_input(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make_splits(12, "regression", **kwargs)


def test_kfold_needs_y_to_stratify_a_classification_task():
    with pytest.raises(ValueError, match=r"y is needed to stratify"):
        make_splits(12, "binary", kind="kfold")


def _kfold_file():
    return make_splits(10, "regression", kind="kfold", n_folds=2, n_repeats=2, dataset="toy")


def _random_file():
    return make_splits(10, "regression", kind="random", n_repeats=2, test_fraction=0.3,
                       dataset="toy")


def _test_twice(d):  # r0-f1 also tests a row of r0-f0's test fold (train and test still 10)
    row = d["splits"][0]["test"][0]
    d["splits"][1]["train"].remove(row)
    d["splits"][1]["test"] = sorted(d["splits"][1]["test"] + [row])


NEW_KIND_ERRORS = [
    (_kfold_file, _set("n_folds", 1), r"n_folds of a kfold split must be at least 2, got 1"),
    (_kfold_file, _test_twice, r"repeat 0 puts row \d+ in 2 test folds"),
    (_kfold_file, _set("test_fraction", 0.5), r"unexpected key\(s\) \['test_fraction'\] .*"
                                              r"\(kind 'kfold'\)"),
    (_random_file, lambda d: d.pop("test_fraction"), r"missing key\(s\) \['test_fraction'\]"),
    (_random_file, _set("test_fraction", 1.5),
     r"test_fraction must be strictly between 0 and 1, got 1.5"),
    (_random_file, _set("test_fraction", "0.3"), r"test_fraction must be a number"),
    (_random_file, _set("test_fraction", 0.4),
     r"split 'r0-f0': test holds 3 rows, but test_fraction=0.4 of n_rows=10 gives 4"),
    (_random_file, _set("n_folds", 2), r"n_folds of a random split must be 1, got 2"),
    (_random_file, lambda d: d["splits"][0]["test"].append(d["splits"][0]["train"].pop()),
     r"split 'r0-f0': test holds 4 rows, but test_fraction=0.3 of n_rows=10 gives 3"),
    (_random_file, lambda d: d["splits"][1]["train"].pop(),
     r"train and test together hold 9 rows, expected all 10 for a random split"),
]


@pytest.mark.parametrize(("make", "mutate", "pattern"), NEW_KIND_ERRORS)
def test_load_rejects_invalid_new_kind_files(tmp_path, make, mutate, pattern):
    path = tmp_path / "bad.json"
    with pytest.raises((ValueError, TypeError), match=pattern):
        load(_write(path, _mutated(make(), mutate)))
    with pytest.raises((ValueError, TypeError), match=pattern):
        validate(_mutated(make(), mutate))


def test_the_python_runner_reads_the_new_kinds():
    from arenalite import datasets, runner

    iris = datasets.load("iris")
    persisted = {
        "kfold": make_splits(iris.n_rows, iris.task, y=iris.y, kind="kfold", n_folds=3,
                             n_repeats=2),
        "random": make_splits(iris.n_rows, iris.task, y=iris.y, kind="random", n_repeats=3),
    }
    for kind, sp in persisted.items():
        results = runner.run({"iris": iris}, {"iris": sp}, [{"name": "knn", "k": 5}],
                             progress=False)
        assert results["split_id"].tolist() == [e["id"] for e in sp["splits"]], kind
        assert results["seed"].tolist() == [e["repeat"] * sp["n_folds"] + e["fold"]
                                            for e in sp["splits"]]
        assert results["n_test"].tolist() == [len(e["test"]) for e in sp["splits"]]
        assert (results["score"] > 0).all()


@pytest.mark.parametrize(("kind", "kwargs"), [
    ("kfold", {"n_folds": 5, "n_repeats": 2}), ("random", {"n_repeats": 3, "test_fraction": 0.3}),
])
def test_the_bridges_split_fixtures_are_what_save_writes(kind, kwargs):
    """webgpu_bridge/test/split_kinds.test.js reads these files: they must be arenalite's own."""
    from pathlib import Path

    y = np.array([0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1])
    fixture = (Path(__file__).resolve().parents[1] / "webgpu_bridge" / "test"
               / f"split_kinds.{kind}.json")
    sp = make_splits(20, "binary", y=y, dataset="toy", kind=kind, **kwargs)
    assert fixture.read_text(encoding="utf-8") == S.to_json(sp)
