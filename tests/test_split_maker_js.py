"""The page's split maker (webgpu_bridge/src/make_splits.js and numpy_random.js) against
arenalite.splits: for every kind of split, the JSON text ``to_json(make_splits(...))`` writes
equals the JavaScript ``toJson(makeSplits(...))`` byte for byte, the row-order warning reads
the same, bad options are refused with the same words, and numpy's ``default_rng`` draws the
same permutations. The JavaScript runs under Node (webgpu_bridge/test/
make_splits_cli_for_tests.mjs); without ``node`` on PATH these tests fail."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from arenalite import cli, splits

pytestmark = pytest.mark.needs_processes

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "webgpu_bridge" / "test" / "make_splits_cli_for_tests.mjs"
NAMES = {"n_rows": "nRows", "group_column": "groupColumn", "time_column": "timeColumn",
         "leakage_columns": "leakageColumns", "n_repeats": "nRepeats", "n_folds": "nFolds",
         "test_fraction": "testFraction", "group_labels": "groupLabels",
         "target_column": "targetColumn", "warn_row_order": "warnRowOrder"}


def run_js(jobs: list[dict], tmp_path: Path) -> list[dict]:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found on PATH: the split maker's tests need Node.js 20 or newer",
                    pytrace=False)
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs), encoding="utf-8")
    run = subprocess.run([node, str(CLI), str(path)], capture_output=True, text=True,
                         timeout=300, encoding="utf-8")
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    assert len(results) == len(jobs)
    return results


def _plain(value: Any) -> Any:
    """A column value as JSON for the Node side (non-finite floats by name)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and not math.isfinite(value):
        return "__NaN__" if math.isnan(value) else "__Infinity__" if value > 0 else "__-Infinity__"
    return value


def js_job(kwargs: dict[str, Any], gap_text: str | None = None,
           fingerprint: dict | None = None, overrides: dict | None = None) -> dict:
    """makeSplits' options for make_splits' keywords (columns as lists, dates as ms), and
    ``overrides`` (options as the page may give them: timeKind "numeric", say)."""
    options: dict[str, Any] = {}
    typed = {}
    for key, value in kwargs.items():
        if key == "time" and value is not None:
            arr = np.asarray(value)
            if arr.dtype.kind == "M":
                options["timeKind"] = "datetime"
                ms = arr.astype("datetime64[ms]").astype(np.int64).astype(float)
                value = np.where(np.isnat(arr), np.nan, ms)
            else:
                options["timeKind"] = "int" if arr.dtype.kind in "iu" else "float"
        if key == "groups" and np.asarray(value).dtype.kind == "f":
            typed["groups"] = "Float64Array"
        if isinstance(value, np.ndarray):
            value = [_plain(v) for v in value.tolist()]
        options[NAMES.get(key, key)] = value
    if gap_text is not None:
        options["gap"] = gap_text
    options.update(overrides or {})
    job: dict[str, Any] = {"options": options, "typed": typed}
    if fingerprint is not None:
        job["fingerprint"] = fingerprint
    return job


def py_result(kwargs: dict[str, Any], gap_text: str | None = None,
              fingerprint: dict | None = None, _overrides: dict | None = None) -> dict:
    """What make_splits + to_json give (or the refusal), as the CLI passes --gap."""
    try:
        if gap_text is not None:
            kwargs = {**kwargs, "gap": cli._gap(gap_text)}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = splits.make_splits(**kwargs)
    except (ValueError, TypeError) as exc:
        return {"error": str(exc), "type": type(exc).__name__}
    if fingerprint is not None:
        made["fingerprint"] = fingerprint
    return {"json": splits.to_json(made),
            "warnings": [str(w.message) for w in caught
                         if issubclass(w.category, splits.RowOrderWarning)]}


def assert_same(case: str, py: dict, js: dict) -> None:
    if "error" in py or "error" in js:
        assert (js.get("type"), js.get("error")) == (py.get("type"), py.get("error")), case
        return
    a, b = py["json"], js["json"]
    if a != b:
        at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                  min(len(a), len(b)))
        pytest.fail(f"{case}: texts differ at character {at} (lengths {len(a)}, {len(b)}):\n"
                    f"python {a[max(0, at - 80):at + 80]!r}\n"
                    f"js     {b[max(0, at - 80):at + 80]!r}")
    assert js["warnings"] == py["warnings"], case


def compare(cases: dict[str, tuple], tmp_path: Path) -> list[dict]:
    """Each case: (make_splits kwargs, --gap text or None, fingerprint or None[, JS-only
    option overrides])."""
    jobs = [js_job(*case) for case in cases.values()]
    results = run_js(jobs, tmp_path)
    for (name, case), js in zip(cases.items(), results, strict=True):
        assert_same(name, py_result(*case), js)
    return results


# ----------------------------------------------------------------------------- inputs


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _classes(n: int, k: int, seed: int) -> np.ndarray:
    return _rng(seed).integers(0, k, n).astype(np.int64)


def _target(n: int, seed: int) -> np.ndarray:
    return _rng(seed).standard_normal(n) * 3 + 1


def _dates(n: int, seed: int, spread_days: int = 400) -> np.ndarray:
    ms = _rng(seed).integers(0, spread_days * 86_400_000, n) + 1_577_836_800_000
    ms -= ms % 3_600_000  # whole hours, so that many rows share a time
    return ms.astype("datetime64[ms]").astype("datetime64[us]")


def kind_cases() -> dict[str, tuple]:
    n = 300
    y2, y5, yr = _classes(n, 2, 1), _classes(n, 5, 2), _target(n, 3)
    ids = _rng(4).integers(0, 40, n)
    names = np.array([f"user-{i:03d}" for i in _rng(5).integers(0, 25, n)], dtype=object)
    per_group = ids % 3  # one class per group
    t_int = _rng(6).integers(0, 50, n).astype(np.int64)
    t_float = _rng(7).uniform(0, 100, n).round(1)
    dates = _dates(n, 8)
    fp = {"n_rows": n, "columns": ["a", "b", "y", "é\n"], "target": "y",
          "target_sha256": "ab" * 32}
    return {
        "iid binary, 20 repeats": ({"n_rows": n, "task": "binary", "y": y2}, None, None),
        "iid multiclass, 10 repeats": (
            {"n_rows": 1000, "task": "multiclass", "y": _classes(1000, 5, 9)}, None, None),
        "iid regression, 3 repeats": (
            {"n_rows": 4000, "task": "regression", "y": _target(4000, 10)}, None, None),
        "iid regression without y": ({"n_rows": 50, "task": "regression"}, None, None),
        "iid explicit n_repeats, dataset, leakage": (
            {"n_rows": n, "task": "multiclass", "y": y5, "n_repeats": 2, "dataset": "tbl é",
             "leakage_columns": ["id", "stamp", "id"]}, None, None),
        "iid with a fingerprint": (
            {"n_rows": n, "task": "binary", "y": y2, "dataset": "t", "leakage_columns": ["a"]},
            None, fp),
        "kfold default": ({"n_rows": n, "task": "binary", "y": y2, "kind": "kfold"}, None, None),
        "kfold 4 x 3 multiclass": (
            {"n_rows": n, "task": "multiclass", "y": y5, "kind": "kfold", "n_folds": 4,
             "n_repeats": 3}, None, None),
        "kfold regression": (
            {"n_rows": n, "task": "regression", "y": yr, "kind": "kfold"}, None, None),
        "random default": ({"n_rows": n, "task": "binary", "y": y2, "kind": "random"},
                           None, None),
        "random 0.25 x 4 multiclass": (
            {"n_rows": 301, "task": "multiclass", "y": _classes(301, 5, 11), "kind": "random",
             "test_fraction": 0.25, "n_repeats": 4}, None, {**fp, "n_rows": 301}),
        "random 1e-05 regression": (
            {"n_rows": 200_000, "task": "regression", "y": _target(200_000, 12), "kind": "random",
             "test_fraction": 1e-05, "n_repeats": 1}, None, None),
        "grouped per sample, int ids": (
            {"n_rows": n, "task": "binary", "y": y2, "groups": ids, "group_column": "user"},
            None, None),
        "grouped per sample, text ids, no y": (
            {"n_rows": n, "task": "multiclass", "groups": names, "n_repeats": 3}, None, None),
        "grouped per sample, float ids": (
            {"n_rows": n, "task": "regression", "y": yr, "groups": ids / 4.0}, None, None),
        "grouped per group, classification": (
            {"n_rows": n, "task": "multiclass", "y": per_group, "groups": ids,
             "group_labels": "per_group", "group_column": "g", "leakage_columns": ["g", "x"]},
            None, None),
        "grouped per group, regression": (
            {"n_rows": n, "task": "regression", "y": (ids * 0.5)[:n], "groups": ids,
             "group_labels": "per_group"}, None, None),
        "grouped per_sample named": (
            {"n_rows": n, "task": "binary", "y": y2, "groups": names,
             "group_labels": "per_sample"}, None, None),
        "temporal int time": (
            {"n_rows": n, "task": "binary", "y": y2, "time": t_int, "time_column": "day"},
            None, None),
        "temporal int time, gap 3": (
            {"n_rows": n, "task": "binary", "y": y2, "time": t_int, "time_column": "day"},
            "3", None),
        "temporal float time, gap 2.5": (
            {"n_rows": n, "task": "regression", "y": yr, "time": t_float}, "2.5", None),
        "temporal float time, gap 1e1": (
            {"n_rows": n, "task": "regression", "time": t_float}, "1e1", None),
        "temporal dates": (
            {"n_rows": n, "task": "multiclass", "y": y5, "time": dates, "time_column": "when",
             "leakage_columns": ["when", "other"]}, None, fp),
        "temporal dates, gap 7D": (
            {"n_rows": n, "task": "binary", "y": y2, "time": dates}, "7D", None),
        "temporal dates, gap 1 days 02:30:00": (
            {"n_rows": n, "task": "binary", "y": y2, "time": dates}, "1 days 02:30:00", None),
        "temporal dates, gap 36h": (
            {"n_rows": n, "task": "binary", "time": dates}, "36h", None),
        "temporal float time around -0.0": (
            {"n_rows": n, "task": "regression", "time": _rng(21).uniform(-5, 5, n).round(0)},
            "0.5", None),
        "temporal int time as the page gives it (timeKind numeric)": (
            {"n_rows": n, "task": "binary", "y": y2, "time": t_int}, "2", None,
            {"timeKind": "numeric"}),
        "temporal dates, 60,000 rows, gap 2D": (
            {"n_rows": 60_000, "task": "binary", "y": _classes(60_000, 2, 22),
             "time": _dates(60_000, 23, spread_days=3000)}, "2D", None),
        "grouped per sample, 60,000 rows of text ids": (
            {"n_rows": 60_000, "task": "regression", "y": _target(60_000, 24),
             "groups": np.array([f"id{i}" for i in _rng(25).integers(0, 5000, 60_000)])},
            None, None),
    }


def test_every_kind_writes_the_python_file(tmp_path: Path) -> None:
    results = compare(kind_cases(), tmp_path)
    kinds = {json.loads(r["json"])["kind"] for r in results}
    assert kinds == {"iid", "grouped", "temporal", "kfold", "random"}


def test_the_million_row_holdout_is_the_python_file(tmp_path: Path) -> None:
    n = 1_200_000
    y = np.zeros(n, dtype=np.int64)
    y[_rng(13).random(n) < 0.3] = 1
    y[_rng(14).random(n) < 0.05] = 2
    case = {"n_rows": n, "task": "multiclass", "y": y, "dataset": "big"}
    (js,) = compare({"holdout": (case, None, None)}, tmp_path)
    made = json.loads(js["json"])
    assert (made["kind"], made["seed"], len(made["splits"][0]["test"])) == ("holdout", 42, 250_000)
    assert js["ms"] < 5000, js["ms"]


def test_row_order_warning_reads_the_same(tmp_path: Path) -> None:
    n = 400
    sorted_y = np.sort(_classes(n, 3, 15))
    ramp = np.linspace(0, 10, n) + _rng(16).standard_normal(n)
    shuffled = _classes(n, 2, 17)
    ties = np.zeros(100, dtype=np.int64)
    ties[[0, 1, 2, 6]] = 1  # class 1 averages row 2.25: Python rounds the tie to 2.2
    base = {"n_rows": n, "warn_row_order": True}
    cases = {
        "sorted multiclass": ({**base, "task": "multiclass", "y": sorted_y,
                               "target_column": "label"}, None, None),
        "ramp regression": ({**base, "task": "regression", "y": ramp}, None, None),
        "ramp regression kfold": ({**base, "task": "regression", "y": ramp, "kind": "kfold",
                                   "target_column": "price"}, None, None),
        "sorted random": ({**base, "task": "multiclass", "y": sorted_y, "kind": "random"},
                          None, None),
        "shuffled: no warning": ({**base, "task": "binary", "y": shuffled}, None, None),
        "tie in the mean row": ({"n_rows": 100, "task": "binary", "y": ties,
                                 "warn_row_order": True}, None, None),
        "grouped: no warning": ({**base, "task": "multiclass", "y": sorted_y,
                                 "groups": np.arange(n) % 17}, None, None),
        "warn_row_order off": ({"n_rows": n, "task": "multiclass", "y": sorted_y}, None, None),
    }
    results = compare(cases, tmp_path)
    assert [bool(r["warnings"]) for r in results] == [True, True, True, True, False, True,
                                                       False, False]


def error_cases() -> dict[str, tuple]:
    n = 30
    y = _classes(n, 2, 18)
    dates = _dates(n, 19)
    t = np.arange(n, dtype=np.int64)
    nan_y = _target(n, 20)
    nan_y[7] = np.nan
    two_targets = np.arange(n) % 3
    two_targets[4] = 2
    return {
        "n_rows float": ({"n_rows": 2.5, "task": "binary", "y": y[:2]}, None, None),
        "n_rows small": ({"n_rows": 2, "task": "binary", "y": y[:2]}, None, None),
        "n_rows text": ({"n_rows": "30", "task": "binary", "y": y}, None, None),
        "task": ({"n_rows": n, "task": "ranking", "y": y}, None, None),
        "dataset": ({"n_rows": n, "task": "binary", "y": y, "dataset": 5}, None, None),
        "groups and time": ({"n_rows": n, "task": "binary", "y": y, "groups": t, "time": t},
                            None, None),
        "kind": ({"n_rows": n, "task": "binary", "y": y, "kind": "bootstrap"}, None, None),
        "kind with groups": ({"n_rows": n, "task": "binary", "y": y, "kind": "kfold",
                              "groups": t}, None, None),
        "n_folds without kfold": ({"n_rows": n, "task": "binary", "y": y, "n_folds": 4},
                                  None, None),
        "test_fraction without random": ({"n_rows": n, "task": "binary", "y": y,
                                          "kind": "kfold", "test_fraction": 0.2}, None, None),
        "gap without time": ({"n_rows": n, "task": "binary", "y": y}, "7D", None),
        "number gap without time": ({"n_rows": n, "task": "binary", "y": y}, "2.5", None),
        "group_labels": ({"n_rows": n, "task": "binary", "y": y, "groups": t,
                          "group_labels": "both"}, None, None),
        "group_labels without groups": ({"n_rows": n, "task": "binary", "y": y,
                                         "group_labels": "per_group"}, None, None),
        "per_group without y": ({"n_rows": n, "task": "binary", "groups": t % 5,
                                 "group_labels": "per_group"}, None, None),
        "target_column": ({"n_rows": n, "task": "binary", "y": y, "target_column": 3},
                          None, None),
        "warn_row_order": ({"n_rows": n, "task": "binary", "y": y, "warn_row_order": 1},
                           None, None),
        "n_repeats": ({"n_rows": n, "task": "binary", "y": y, "n_repeats": 0}, None, None),
        "y length": ({"n_rows": n, "task": "binary", "y": y[:-1]}, None, None),
        "y text": ({"n_rows": n, "task": "binary", "y": "abc"}, None, None),
        "y missing": ({"n_rows": n, "task": "regression", "y": nan_y}, None, None),
        "y one class": ({"n_rows": n, "task": "binary", "y": np.ones(n, dtype=np.int64)},
                        None, None),
        "y three classes binary": ({"n_rows": n, "task": "binary", "y": np.arange(n) % 3},
                                   None, None),
        "no y": ({"n_rows": n, "task": "multiclass"}, None, None),
        "kfold too many folds": ({"n_rows": n, "task": "binary", "y": y, "kind": "kfold",
                                  "n_folds": 31}, None, None),
        "kfold one fold": ({"n_rows": n, "task": "binary", "y": y, "kind": "kfold",
                            "n_folds": 1}, None, None),
        "random fraction 1.5": ({"n_rows": n, "task": "binary", "y": y, "kind": "random",
                                 "test_fraction": 1.5}, None, None),
        "random fraction too small": ({"n_rows": n, "task": "binary", "y": y, "kind": "random",
                                       "test_fraction": 0.01}, None, None),
        "random fraction text": ({"n_rows": n, "task": "binary", "y": y, "kind": "random",
                                  "test_fraction": "0.2"}, None, None),
        "two groups": ({"n_rows": n, "task": "binary", "y": y, "groups": t % 2}, None, None),
        "uneven groups": ({"n_rows": n, "task": "binary", "y": y,
                           "groups": np.r_[np.zeros(n - 2, dtype=np.int64), 1, 2]}, None, None),
        "per_group two targets": ({"n_rows": n, "task": "multiclass", "y": two_targets,
                                   "groups": np.arange(n) % 10, "group_labels": "per_group",
                                   "target_column": "label", "group_column": "user"},
                                  None, None),
        "per_group two regression targets": (
            {"n_rows": n, "task": "regression", "y": two_targets / 2,
             "groups": np.array([f"g{i % 10}" for i in range(n)]),
             "group_labels": "per_group"}, None, None),
        "groups missing": ({"n_rows": 4, "task": "regression",
                            "groups": np.array(["a", None, "b", "c"], dtype=object)}, None, None),
        "temporal repeats": ({"n_rows": n, "task": "binary", "y": y, "time": t,
                              "n_repeats": 2}, None, None),
        "time too few values": ({"n_rows": n, "task": "binary", "y": y,
                                 "time": np.r_[np.zeros(n - 1, dtype=np.int64), 1]}, None, None),
        "time missing date": ({"n_rows": 3, "task": "regression",
                               "time": np.array(["2020-01-01", "NaT", "2020-01-03"],
                                                dtype="datetime64[us]")}, None, None),
        "time float missing": ({"n_rows": 3, "task": "regression",
                                "time": np.array([1.0, np.inf, 2.0])}, None, None),
        "gap too large": ({"n_rows": n, "task": "binary", "y": y, "time": t, "time_column": "d"},
                          "10", None),
        "gap too large, timeKind numeric": ({"n_rows": n, "task": "binary", "y": y, "time": t},
                                            "10", None, {"timeKind": "numeric"}),
        "float gap too large": ({"n_rows": n, "task": "binary", "y": y,
                                 "time": t.astype(float)}, "7.5", None),
        "date gap too large": ({"n_rows": n, "task": "binary", "y": y, "time": dates},
                               "200D", None),
        "number gap on dates": ({"n_rows": n, "task": "binary", "y": y, "time": dates},
                                "7", None),
        "duration gap on numbers": ({"n_rows": n, "task": "binary", "y": y, "time": t},
                                    "7D", None),
        "negative gap": ({"n_rows": n, "task": "binary", "y": y, "time": t}, "-1", None),
        "negative duration": ({"n_rows": n, "task": "binary", "y": y, "time": dates},
                              "-1D", None),
        "infinite gap": ({"n_rows": n, "task": "binary", "y": y, "time": t}, "inf", None),
        "leakage not text": ({"n_rows": n, "task": "binary", "y": y,
                              "leakage_columns": ["a", 5]}, None, None),
        "holdout repeats": ({"n_rows": 1_000_000, "task": "regression", "n_repeats": 3},
                            None, None),
    }


def test_bad_options_are_refused_in_the_same_words(tmp_path: Path) -> None:
    results = compare(error_cases(), tmp_path)
    assert all("error" in r for r in results), [r for r in results if "error" not in r]


GAP_TEXTS = ["7", "7.0", "2.5", " 3 ", "1e3", "1_000", "+4", "-2", "inf", "nan", "7D", "7d",
             "7 days", "1 day", "12h", "12H", "30min", "30m", "30s", "1.5h", "1h30m", "1h 30m",
             "1 days 02:00:00", "02:00:00", "02:00:00.5", "-1D", "1W", "1ms", "1us", "1500ns",
             "2500ns", "1.25ms", "1D2h", "-1D2h", "1 hours", "1 hr", "3 minutes", "1 second",
             "1 millis", "1 micros", "1 nanoseconds", "7DAYS", "1 D 1 h", "0D", "1 days, 02:00:00",
             "-1 days +02:00:00", "-02:00:00", "25:00:00", "1M", "1Y", "7X", "days", "1 weeks",
             "1 secs", "abc"]


def test_gap_text_reads_as_the_cli_reads_it(tmp_path: Path) -> None:
    results = run_js([{"gapText": text} for text in GAP_TEXTS], tmp_path)
    for text, js in zip(GAP_TEXTS, results, strict=True):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = {"gap": repr(cli._gap(text))}
        except Exception as exc:  # argparse.ArgumentTypeError
            expected = {"error": str(exc), "type": "TypeError"}
        assert {k: v for k, v in js.items() if k != "ms"} == expected, text


def test_permutations_are_numpys(tmp_path: Path) -> None:
    sizes = [0, 1, 2, 3, 10, 255, 256, 257, 65_537, 100_003]
    seeds = [0, 1, 42, 4267, 2**32 + 7, 123_456_789_012]
    results = run_js([{"permutations": {"seed": s, "sizes": sizes}} for s in seeds], tmp_path)
    for seed, js in zip(seeds, results, strict=True):
        rng = np.random.default_rng(seed)
        for n, perm in zip(sizes, js["permutations"], strict=True):
            assert perm == rng.permutation(n).tolist(), (seed, n)
