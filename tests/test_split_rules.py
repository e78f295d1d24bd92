"""Split rules adopted from DataFoundry (docs/splits.md): temporal gap, per-group folds,
leakage guards after building, and the row-order warning; the old files stay byte-identical."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from arenalite import datasets
from arenalite import splits as S
from arenalite.splits import RowOrderWarning, load, make_splits, row_order_correlation, validate

warned_splits = functools.partial(make_splits, warn_row_order=True)


def _digest(sp: dict) -> str:
    return hashlib.sha256(S.to_json(sp).encode()).hexdigest()


def _quiet(make, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RowOrderWarning)
        return make(**kwargs)


def _arrays(e: dict) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(e["train"], dtype=np.int64), np.asarray(e["test"], dtype=np.int64)


# ----------------------------------------------------------------------------- old files unchanged

_I = np.arange(1_000_000, dtype=np.int64)
_Y3 = (_I[:200] * 7 + _I[:200] // 3) % 3
_YB = (_I * 7919 // 13) % 2
_G = (_I[:300] * 37) % 41
_DAYS = np.datetime64("2020-01-01") + ((_I[:300] * 97) % 400).astype("timedelta64[D]")

CASES = {
    "iid_multiclass": dict(n_rows=200, task="multiclass", y=_Y3, dataset="toy"),
    "iid_regression": dict(n_rows=100, task="regression"),
    "kfold_binary": dict(n_rows=50, task="binary", y=_YB[:50], kind="kfold"),
    "kfold_4x3": dict(n_rows=200, task="multiclass", y=_Y3, kind="kfold", n_folds=4,
                      n_repeats=3),
    "random_025": dict(n_rows=200, task="multiclass", y=_Y3, kind="random", n_repeats=3,
                       test_fraction=0.25),
    "grouped_regression": dict(n_rows=300, task="regression", groups=_G, group_column="g"),
    "grouped_binary": dict(n_rows=300, task="binary", y=_YB[:300],
                           groups=np.char.add("id", _G.astype(str))),
    "temporal_numeric": dict(n_rows=200, task="regression", time=(_I[:200] * 53) % 50,
                             time_column="t"),
    "temporal_datetime": dict(n_rows=300, task="binary", y=_YB[:300], time=_DAYS,
                              leakage_columns=["x"]),
    "holdout_binary": dict(n_rows=1_000_000, task="binary", y=_YB),
}
DIGESTS = {  # sha256 of to_json, recorded with splits.py before these options existed
    "iid_multiclass": "781bbe5b465a4f2b44d6cc0a7cfce40cd9bdfa4ca67c2f6fa69ce767dd9737ca",
    "iid_regression": "fb8098511091eb369d9693519e0023c3cfa0cc98a6a26418ec95e96163b8fedd",
    "kfold_binary": "044aad1e51f19c4517f337c0593d9e7539e8fecb2cd0337ba3288bb38a708b67",
    "kfold_4x3": "0f1f68ee4c4d12ddb64c5d258918d89305c340d671e77bfee22a8837949b45db",
    "random_025": "de6d1bc2ba10d1050c9a02f86b587ee4a74d9bc39e05e32188daf2516064fd66",
    "grouped_regression": "a6ed0fff6df84475f7b2d2a3a850866e7039ad64c64430b9d5270cf1fd3b1309",
    "grouped_binary": "9c91aeba36fd40a3c0689eb486e0515a65a5678fbb8adf55e2501c19a2d81bfe",
    "temporal_numeric": "ea111d8b7967d0509d8c97e611bdc7fbf0dd036f54b257fe8230459a1d77e74f",
    "temporal_datetime": "2d241d7b634db1c0036c5f32c94869a43e1215c7793a954215426f6bc0216f5f",
    "holdout_binary": "a98fde632262209951665ba6ad8db818d95c41662fc2d772e165476d31848b14",
    "bundled_breast_cancer": "be328f37217abcbbf63878c68190e9c21e116bc0a9cac27c65ce36d94d3bce68",
    "bundled_diabetes": "516ac63f6ac9022b7f8ccdbcdccc2d5ea3b8b963bde36e467e62a5c5bda7b889",
    "bundled_iris": "d9181466683c1b471fe1301cd86f80dc706bbfd320c86a0bf6b23c6ebcd586dd",
    "bundled_wine": "c0a8a5d5de29ff308334b3843020604b54174489d9702e7617c713b1d24b15c4",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_existing_options_write_the_same_bytes_as_before(name):
    sp = _quiet(make_splits, **CASES[name])
    assert _digest(sp) == DIGESTS[name]
    same = {"warn_row_order": False}
    if "time" in CASES[name]:
        same["gap"] = 0
    if "groups" in CASES[name]:
        same["group_labels"] = "per_sample"
    assert _digest(make_splits(**CASES[name], **same)) == DIGESTS[name]


@pytest.mark.parametrize("name", datasets.names())
def test_bundled_datasets_split_files_are_unchanged(name):
    d = datasets.load(name)
    sp = _quiet(make_splits, n_rows=d.n_rows, task=d.task, y=d.y, dataset=name)
    assert _digest(sp) == DIGESTS[f"bundled_{name}"]


# ----------------------------------------------------------------------------- temporal gap


@settings(max_examples=80, deadline=None)
@given(times=st.lists(st.integers(0, 30), min_size=8, max_size=60),
       gap=st.one_of(st.integers(0, 12), st.floats(0, 12, allow_nan=False)))
def test_gap_only_drops_training_rows_within_the_gap(times, gap):
    t = np.array(times)
    try:
        base = make_splits(len(t), "regression", time=t)
    except ValueError:
        return  # too few distinct times for 4 blocks: not a gap matter
    try:
        gapped = make_splits(len(t), "regression", time=t, gap=gap)
    except ValueError as err:
        assert "leaves fold" in str(err)
        starts = [t[e["test"]].min() for e in base["splits"]]
        assert any(not (t.min() < s - gap) for s in starts)
        return
    assert gapped["n_folds"] == base["n_folds"] and gapped["kind"] == "temporal"
    for b, g in zip(base["splits"], gapped["splits"], strict=True):
        assert g["test"] == b["test"]
        start = t[b["test"]].min()
        assert g["train"] == [r for r in b["train"] if t[r] < start - gap]
        assert t[g["train"]].max() < start - gap
    validate(gapped, time=t, gap=gap)


def test_gap_zero_is_todays_expanding_window():
    t = np.repeat(np.arange(10), 3)
    assert make_splits(30, "regression", time=t, gap=0) == make_splits(30, "regression", time=t)
    assert make_splits(30, "regression", time=t, gap=0.0) == make_splits(30, "regression",
                                                                          time=t)


def test_gap_on_integer_times_is_exact_near_int64_limits():
    t = np.int64(2**62) + np.arange(40, dtype=np.int64)
    sp = make_splits(40, "regression", time=t, gap=3)
    for e in sp["splits"]:
        start = int(t[e["test"]].min())
        assert [int(v) for v in t[e["train"]]] == list(range(2**62, start - 3))
    u = np.arange(40, dtype=np.uint8)
    assert [e["train"][-1] for e in make_splits(40, "regression", time=u, gap=2)["splits"]] == [
        7, 17, 27]


@pytest.mark.parametrize("gap", [np.timedelta64(3, "D"), dt.timedelta(days=3),
                                 pd.Timedelta(days=3), pd.Timedelta(hours=72)])
def test_gap_on_datetimes_takes_a_timedelta(gap):
    days = np.datetime64("2024-01-01") + np.arange(40).astype("timedelta64[D]")
    sp = make_splits(40, "regression", time=pd.Series(days, name="date"), gap=gap)
    assert [(e["train"][-1], e["test"][0]) for e in sp["splits"]] == [(6, 10), (16, 20),
                                                                      (26, 30)]
    validate(sp, time=days, gap=gap)
    half = make_splits(40, "regression", time=days, gap=pd.Timedelta(hours=60))
    assert [e["train"][-1] for e in half["splits"]] == [7, 17, 27]  # day 7 < day 10 - 2.5 days


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    (dict(gap=2), ValueError, r"gap applies to temporal splits \(give time=...\), got gap=2"),
    (dict(time=np.arange(20), gap=-1), ValueError, r"gap must be a finite number at least 0"),
    (dict(time=np.arange(20), gap=float("nan")), ValueError, r"at least 0, got nan"),
    (dict(time=np.arange(20), gap=True), TypeError, r"must be a number in its units, got True"),
    (dict(time=np.arange(20), gap=np.timedelta64(1, "D")), TypeError, r"must be a number"),
    (dict(time=np.arange(20), gap="1"), TypeError, r"must be a number in its units, got '1'"),
    (dict(time=np.datetime64("2024-01-01") + np.arange(20), gap=3), TypeError,
     r"gap for a datetime64\[D\] time column must be a timedelta .*got 3"),
    (dict(time=np.datetime64("2024-01-01") + np.arange(20), gap=np.timedelta64(-1, "D")),
     ValueError, r"gap must be a non-negative timedelta"),
    (dict(time=pd.Series(np.arange(20), name="day"), gap=5), ValueError,
     r"gap=5 leaves fold 0 no training rows: its test block starts at row 5 \(day 5\)"),
])
def test_gap_errors(kwargs, exc, pattern):
    with pytest.raises(exc, match=pattern):
        make_splits(20, "regression", **kwargs)


def test_validate_and_load_check_the_gap(tmp_path):
    t = np.arange(20)
    sp = make_splits(20, "regression", time=t)
    validate(sp, time=t, gap=0)
    with pytest.raises(ValueError, match=r"split 'r0-f0': training row 4 at time 4 is not more "
                                         r"than gap=2 before the earliest test time 5"):
        validate(sp, time=t, gap=2)
    path = S.save(make_splits(20, "regression", time=t, gap=2), tmp_path / "gap.json")
    assert load(path, time=t, gap=2)["kind"] == "temporal"
    with pytest.raises(ValueError, match=r"is not more than gap=3"):
        load(path, time=t, gap=3)
    with pytest.raises(ValueError, match=r"gap is checked against time"):
        validate(sp, gap=2)


# ----------------------------------------------------------------------------- per-group folds


@st.composite
def _per_group_tables(draw):
    n_groups = draw(st.integers(3, 30))
    sizes = draw(st.lists(st.integers(1, 6), min_size=n_groups, max_size=n_groups))
    k = draw(st.sampled_from([2, 3]))
    labels = draw(st.lists(st.integers(0, k - 1), min_size=n_groups, max_size=n_groups))
    if len(set(labels)) < 2:
        labels[0], labels[1] = 0, 1
    order = np.random.default_rng(draw(st.integers(0, 2**16))).permutation(sum(sizes))
    groups = np.repeat(np.arange(n_groups), sizes)[order]
    y = np.asarray(labels)[groups]
    return groups, y, "binary" if k == 2 else "multiclass"


@settings(max_examples=60, deadline=None)
@given(table=_per_group_tables())
def test_per_group_folds_keep_groups_whole_and_balance_classes_over_groups(table):
    groups, y, task = table
    sp = make_splits(len(y), task, y=y, groups=groups, group_labels="per_group")
    n_groups = len(np.unique(groups))
    assert sp["kind"] == "grouped" and sp["n_folds"] == 3
    assert sp["n_repeats"] == S.n_repeats_for(S.effective_training_rows(n_groups))
    validate(sp, groups=groups)  # disjoint groups, each row tested once per repeat
    group_class = {g: y[groups == g][0] for g in np.unique(groups)}
    for r in range(sp["n_repeats"]):
        tests = [_arrays(e)[1] for e in sp["splits"] if e["repeat"] == r]
        for c in set(group_class.values()):
            per_fold = [sum(group_class[g] == c for g in np.unique(groups[t])) for t in tests]
            assert max(per_fold) - min(per_fold) <= 1


def test_per_group_follows_the_documented_algorithm():
    groups = np.array(list("aabbbcddeefgghhh"))
    y = np.array([0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1])
    sp = make_splits(len(y), "binary", y=y, groups=groups, group_labels="per_group")
    ids, codes = np.unique(groups, return_inverse=True)
    classes = np.array([y[groups == g][0] for g in ids])
    rng = np.random.default_rng(4267)
    assert sp["n_repeats"] == 20
    for r in range(sp["n_repeats"]):
        perm = rng.permutation(len(ids))
        perm = perm[np.argsort(classes[perm], kind="stable")]
        group_fold = np.empty(len(ids), dtype=int)
        group_fold[perm] = np.arange(len(ids)) % 3
        for e in sp["splits"][3 * r:3 * r + 3]:
            assert e["test"] == np.flatnonzero(group_fold[codes] == e["fold"]).tolist()


def test_per_group_regression_is_unstratified_and_counts_groups():
    groups = np.repeat(np.arange(900), 2)  # 1,800 rows, 900 groups: 600 effective groups
    y = np.repeat(np.linspace(0, 1, 900), 2)
    sp = make_splits(1800, "regression", y=y, groups=groups, group_labels="per_group")
    assert sp["n_repeats"] == 10  # 1,200 effective training rows would also give 10
    per_sample = make_splits(1800, "regression", y=y, groups=groups)
    assert sp["splits"] != per_sample["splits"]
    validate(sp, groups=groups)


def test_per_group_needs_one_label_per_group():
    groups = pd.Series(np.repeat(["p1", "p2", "p3", "p4"], 3), name="patient")
    y = pd.Series([1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0], name="outcome")
    with pytest.raises(ValueError, match=r"group_labels='per_group' needs one target value per "
                       r"group, but group 'p3' \(column 'patient'\) has column 'outcome' = 1 at "
                       r"row 6 but 0 at row 8; use group_labels='per_sample'"):
        make_splits(12, "binary", y=y, groups=groups, group_labels="per_group")
    make_splits(12, "binary", y=y, groups=groups, group_labels="per_sample")


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    (dict(group_labels="per_group"), ValueError, r"applies to grouped splits \(give groups"),
    (dict(groups=np.arange(12) % 4, group_labels="group"), ValueError,
     r"group_labels must be None, 'per_sample' or 'per_group', got 'group'"),
    (dict(groups=np.arange(12) % 4, group_labels="per_group", y=None), ValueError,
     r"group_labels='per_group' needs y"),
    (dict(target_column=3), TypeError, r"target_column must be a string or None, got 3"),
    (dict(warn_row_order="no"), TypeError, r"warn_row_order must be True or False"),
])
def test_new_option_errors(kwargs, exc, pattern):
    kwargs = {"y": np.arange(12) % 2, **kwargs}
    with pytest.raises(exc, match=pattern):
        make_splits(12, "binary", **kwargs)


# ----------------------------------------------------------------------------- guards


def _leak_a_row(splits: list[dict]) -> list[dict]:
    """Copy one test row of the first split into its train list (a builder bug)."""
    e = splits[0]
    e["train"] = sorted(e["train"] + [e["test"][0]])
    e["test"] = e["test"][1:]
    return splits


def test_make_splits_refuses_a_group_in_train_and_test(monkeypatch):
    groups = np.repeat(np.arange(6), 2)
    real = S._grouped
    monkeypatch.setattr(S, "_grouped", lambda *a: _leak_a_row(real(*a)))
    with pytest.raises(ValueError, match=r"make_splits: split 'r0-f0': group \d+ \(row \d+\) is "
                                         r"in both train and test"):
        make_splits(12, "regression", groups=groups)
    real_pg = S._grouped_per_group
    monkeypatch.setattr(S, "_grouped_per_group", lambda *a: _leak_a_row(real_pg(*a)))
    with pytest.raises(ValueError, match=r"make_splits: split 'r0-f0': group"):
        make_splits(12, "binary", y=groups % 2, groups=groups, group_labels="per_group")


def test_make_splits_refuses_training_at_or_after_the_test_period(monkeypatch):
    t = np.arange(12)
    real = S._temporal
    monkeypatch.setattr(S, "_temporal", lambda *a: real(a[0], a[1]))  # ignores the gap
    with pytest.raises(ValueError, match=r"make_splits: split 'r0-f0': training row 2 at time 2 "
                                         r"is not more than gap=1 before the earliest test "
                                         r"time 3"):
        make_splits(12, "regression", time=t, gap=1)

    def shifted(*a):  # test block 0 starts one row early: row 2 is in train and test
        splits = real(*a)
        splits[0]["test"] = [2] + splits[0]["test"]
        return splits

    monkeypatch.setattr(S, "_temporal", shifted)
    with pytest.raises(ValueError, match=r"training row 2 at time 2 is not before the earliest "
                                         r"test time 2"):
        make_splits(12, "regression", time=t)


# ----------------------------------------------------------------------------- row order


def _spearman_position(y) -> float:
    if len(np.unique(y)) < 2:
        return 0.0
    return float(stats.spearmanr(np.arange(len(y)), y).statistic)


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.integers(-3, 3), min_size=3, max_size=80))
def test_row_order_correlation_is_spearman(values):
    y = np.array(values, dtype=float)
    rho, label = row_order_correlation(y, "regression")
    assert label is None and rho == pytest.approx(_spearman_position(y), abs=1e-9)
    classes = np.unique(y)
    if len(classes) < 2:
        assert rho == 0.0
        return
    rho, label = row_order_correlation(y.astype(int), "multiclass")
    per_class = [_spearman_position(y == c) for c in classes]
    assert abs(rho) == pytest.approx(max(map(abs, per_class)), abs=1e-9)
    assert rho == pytest.approx(per_class[list(classes).index(label)], abs=1e-9)


def test_binary_rho_is_datafoundrys_rho_on_the_codes():
    y = pd.Series(datasets.load("breast_cancer").y)
    theirs = y.astype(float).corr(pd.Series(np.arange(len(y), dtype=float)), method="spearman")
    assert abs(row_order_correlation(y, "binary")[0]) == pytest.approx(abs(theirs), abs=1e-12)


def test_multiclass_rho_does_not_depend_on_the_label_order():
    y = np.r_[np.tile([0, 2], 100), np.ones(100, int)]  # class 1 only at the end
    theirs = pd.Series(y.astype(float)).corr(pd.Series(np.arange(300.0)), method="spearman")
    assert abs(theirs) < 0.01  # a code-based rho misses it
    assert row_order_correlation(y, "multiclass") == (pytest.approx(0.8165, abs=1e-4), 1)


def test_sorted_target_warns_naming_the_column_class_and_rows():
    y = pd.Series(np.repeat(["setosa", "versicolor", "virginica"], 50), name="species")
    with pytest.warns(RowOrderWarning, match=r"row order leaks the target: column 'species' "
                      r"follows the row order \(Spearman rho=-0.82 for class 'setosa', whose rows "
                      r"average row 24.5 of 0..149\); \|rho\| > 0.27 over 150 rows") as caught:
        warned_splits(150, "multiclass", y=y)
    assert len(caught) == 1 and caught[0].filename == __file__
    with pytest.warns(RowOrderWarning, match=r"column 'price' follows the row order \(Spearman "
                      r"rho=\+1.00: mean 49.5 in rows 0..99, 149.5 in rows 100..199\)"):
        warned_splits(200, "regression", y=np.arange(200.0), target_column="price")
    with pytest.warns(RowOrderWarning, match=r"^row order leaks the target: y follows"):
        warned_splits(150, "multiclass", y=y.to_numpy(), kind="kfold")


@pytest.mark.parametrize("kwargs", [dict(kind="random"), dict(kind="kfold"), {}])
def test_the_warning_leaves_the_file_unchanged(kwargs):
    y = np.repeat([0, 1], 60)
    with pytest.warns(RowOrderWarning):
        warned = warned_splits(120, "binary", y=y, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        silent = warned_splits(120, "binary", y=y, warn_row_order=False, **kwargs)
    assert S.to_json(warned) == S.to_json(silent)


def test_holdout_warns_too():
    y = (np.arange(1_000_000) >= 500_000).astype(int)
    with pytest.warns(RowOrderWarning, match=r"The holdout split draws rows at random"):
        warned_splits(1_000_000, "binary", y=y)


def test_no_warning_for_grouped_temporal_small_or_shuffled_tables():
    y = np.repeat([0, 1], 60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warned_splits(120, "binary", y=y, groups=np.arange(120) // 4)
        warned_splits(120, "binary", y=y, time=np.arange(120))
        warned_splits(49, "binary", y=np.repeat([0, 1], [25, 24]))
        warned_splits(120, "binary", y=np.random.default_rng(1).permutation(y))


def test_shuffled_tables_rarely_warn_unlike_a_fixed_bound():
    rng = np.random.default_rng(2026)
    ours = theirs = 0
    for _ in range(300):
        y = rng.integers(0, 3, 60)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            warned_splits(60, "multiclass", y=y)
        ours += any(w.category is RowOrderWarning for w in caught)
        theirs += abs(pd.Series(y.astype(float)).corr(pd.Series(np.arange(60.0)),
                                                      method="spearman")) > 0.15
    assert ours <= 3 and theirs >= 45  # about 0.1 % vs 25 % of shuffled 60-row tables


@pytest.mark.parametrize(("n", "rho", "warns"), [
    (1000, 0.151, True), (1000, -0.151, True), (1000, 0.149, False),
    (100, 0.32, False), (100, 0.34, True), (49, 0.99, False),
])
def test_the_bound_is_the_larger_of_015_and_329_over_root_n(monkeypatch, n, rho, warns):
    monkeypatch.setattr(S, "row_order_correlation", lambda y, task: (rho, None))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warned_splits(n, "regression", y=np.zeros(n))
    assert any(w.category is RowOrderWarning for w in caught) is warns


def test_row_order_correlation_errors():
    with pytest.raises(ValueError, match=r"task must be one of"):
        row_order_correlation([0, 1], "ranking")
    with pytest.raises(ValueError, match=r"y has a missing or non-finite value \(nan\) at row 1"):
        row_order_correlation([0.0, np.nan, 1.0], "regression")
    assert row_order_correlation(np.ones(10), "regression") == (0.0, None)
