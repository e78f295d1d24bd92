"""The page's table reader (webgpu_bridge/src/table/, run under Node as the page's worker
runs it) against arenalite's Python loader: the same typed cells, target codes, classes,
missing counts and fingerprint on awkward files, and the same refusal, word for word."""

from __future__ import annotations

import gzip
import json
import subprocess

import numpy as np
import pytest

from arenalite.datasets.table import read_table
from node_harness import BRIDGE, require_node

pytestmark = pytest.mark.needs_processes  # node

DUMP = BRIDGE / "test" / "table_dump.mjs"
OPTION_NAMES = {"group_column": "groupColumn", "time_column": "timeColumn",
                "leakage_columns": "leakageColumns"}


def js_view(path, **options) -> dict:
    js_options = {OPTION_NAMES.get(k, k): v for k, v in options.items()}
    run = subprocess.run([require_node(), str(DUMP), str(path), json.dumps(js_options)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def _plain(values) -> list:
    return [None if isinstance(v, float) and np.isnan(v) else v
            for v in (x.item() if isinstance(x, np.generic) else x for x in values)]


def py_view(path, **options) -> dict:
    try:
        table = read_table(path, **options)
    except (ValueError, TypeError) as exc:
        return {"error": str(exc)}
    features = []
    for name in table.features.columns:
        column = table.features[name]
        if table.kinds[name] == "numeric":
            features.append({"name": name, "kind": "numeric",
                             "values": _plain(column.to_numpy(np.float64, na_value=np.nan))})
        else:
            features.append({"name": name, "kind": "categorical",
                             "codes": column.cat.codes.tolist(),
                             "categories": _plain(column.cat.categories)})
    time = None
    if table.time is not None:
        time = (table.time.astype("datetime64[ns]").astype(np.int64) / 1e6).tolist() \
            if table.time.dtype.kind == "M" else table.time.astype(float).tolist()
    return {"name": table.name, "n_rows": table.n_rows, "task": table.task,
            "classes": None if table.classes is None else list(table.classes),
            "y": table.y.astype(float).tolist(), "features": features,
            "missing": table.missing_counts(), "excluded": list(table.excluded_columns),
            "columns": list(table.columns), "fingerprint": table.fingerprint(), "time": time,
            "groups": None if table.groups is None else _plain(table.groups)}


def same(path, **options) -> dict:
    py, js = py_view(path, **options), js_view(path, **options)
    assert json.loads(json.dumps(py)) == js
    return js


AWKWARD = (
    "\ufeffnum,text,\"quoted, name\",flag,flag_na,spaced,y\r\n"
    "1,apple,\"a, b\",True,true, 7 ,yes\r\n"
    "\r\n"
    "   \r\n"
    "2.5,,\"say \"\"hi\"\"\",False,,+3,no\r\n"
    "NA,pear,\"two\r\nlines\",true,FALSE,.5,yes\r\n"
    "1E+05,n/a,x,FALSE,True,1e-3,no\r\n"
    "-7,#N/A,x,True,,5.,yes\r\n"
)


def _awkward_rows(n: int) -> str:
    rng = np.random.default_rng(3)
    rows = []
    for i in range(n):
        num = "" if i % 7 == 0 else repr(float(rng.normal() * 10.0 ** rng.integers(-5, 5)))
        text = ["Zebra", "apple", "émile", "a b", "NULL", "None", " NA"][i % 7]
        rows.append(f"{num},{text},\"c,{i % 3}\",{['True', 'false'][i % 2]},"
                    f"{['TRUE', '', 'False'][i % 3]},{i % 4},{['yes', 'no', 'maybe'][i % 3]}")
    return "\n".join(rows)


def test_awkward_csv_reads_as_pandas_does(tmp_path):
    require_node()
    path = tmp_path / "awkward.csv"
    header = "num,text,\"quoted, name\",flag,flag_na,small,y\r\n"
    path.write_text("\ufeff" + header + _awkward_rows(60).replace("\n", "\r\n") + "\r\n\r\n",
                    encoding="utf-8")
    view = same(path, target="y")
    assert view["task"] == "multiclass"
    assert {f["kind"] for f in view["features"]} == {"numeric", "categorical"}
    same(path, target="y", categorical=["small"], leakage_columns=["flag"])


def test_quotes_newlines_blank_lines_and_na_strings(tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text(AWKWARD + "".join(f"{i},x,y,True,,{i},{['yes', 'no'][i % 2]}\r\n"
                                      for i in range(6)), encoding="utf-8")
    view = same(path, target="y")
    assert view["n_rows"] == 11


def test_tsv_and_gzip(tmp_path):
    rows = "a\tb\ty\n" + "".join(f"{i * 0.1}\t{'xy'[i % 2]}\t{i % 3}\n" for i in range(30))
    (tmp_path / "t.tsv").write_text(rows, encoding="utf-8")
    same(tmp_path / "t.tsv", target="y")
    with gzip.open(tmp_path / "t.csv.gz", "wt", encoding="utf-8") as handle:
        handle.write(rows.replace("\t", ","))
    same(tmp_path / "t.csv.gz", target="y")


def test_floats_read_to_the_bit_as_pandas_reads_them(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=3000) * 10.0 ** rng.integers(-12, 12, 3000)
    lines = ["x,short,y"] + [f"{float(v)!r},{v:.4e},{float(t)!r}" for v, t in
                             zip(x, rng.normal(size=3000), strict=True)]
    path = tmp_path / "floats.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    view = same(path, target="y")
    assert view["task"] == "regression"


def test_late_text_in_a_number_column_and_unicode_order(tmp_path):
    """Text after 1,000 number rows (pandas' sniff misses it; a second pass reads it)."""
    n = 1400
    col = [str(i % 50) for i in range(1100)] + ["ünï", "Ab", "ab", "😀", "_"] * 60
    lines = ["mixed,y"] + [f"{c},{i % 2}" for i, c in enumerate(col[:n])]
    path = tmp_path / "late.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    view = same(path, target="y")
    assert view["features"][0]["kind"] == "categorical"


def test_groups_and_dates(tmp_path):
    lines = ["when,shop,x,y"] + [
        f"2024-0{1 + i % 9}-{10 + i % 17}{' 12:30:05' if i % 2 else ''},{i % 5},{i},{i % 2}"
        for i in range(80)]
    path = tmp_path / "dated.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    same(path, target="y", time_column="when")
    same(path, target="y", group_column="shop", leakage_columns=["when"])
    same(path, target="y", group_column="when")


BAD = {
    "duplicate": ("a,b,a\n1,2,3\n", {"target": "b"}),
    "empty": ("", {"target": "y"}),
    "header only": ("a,y\n", {"target": "y"}),
    "no target": ("a,y\n1,2\n", {}),
    "unknown target": ("a,y\n1,2\n", {"target": "z"}),
    "missing target": ("a,y\n1,0\n2,\n3,1\n4,NA\n", {"target": "y"}),
    "one class": ("a,y\n1,k\n2,k\n3,k\n", {"target": "y"}),
    "small class": ("a,y\n" + "".join(f"{i},{'k' if i < 5 else 'm'}\n" for i in range(7)),
                    {"target": "y"}),
    "not binary": ("a,y\n" + "".join(f"{i},{i % 3}\n" for i in range(9)),
                   {"target": "y", "task": "binary"}),
    "bad task": ("a,y\n1,2\n", {"target": "y", "task": "ranking"}),
    "text regression": ("a,y\n" + "".join(f"{i},v{i}\n" for i in range(9)),
                        {"target": "y", "task": "regression"}),
    "stray text": ("a,y\n" + "".join(f"{'oops' if i == 13 else i},{i % 2}\n"
                                     for i in range(30)), {"target": "y"}),
    "id column": ("a,y\n" + "".join(f"id{i},{i % 2}\n" for i in range(12)), {"target": "y"}),
    "infinite": ("a,y\n" + "".join(f"{'-inf' if i in (4, 6) else i},{i % 2}\n"
                                   for i in range(12)), {"target": "y"}),
    "one group": ("g,a,y\n" + "".join(f"7,{i},{i % 2}\n" for i in range(9)),
                  {"target": "y", "group_column": "g"}),
    "bad time": ("t,a,y\n" + "".join(f"{'soon' if i == 5 else '2024-01-0' + str(1 + i % 9)},"
                                     f"{i},{i % 2}\n" for i in range(9)),
                 {"target": "y", "time_column": "t"}),
    "leakage target": ("a,y\n1,2\n", {"target": "y", "leakage_columns": ["y"]}),
    "no features": ("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(9)),
                    {"target": "y", "leakage_columns": ["a"]}),
    "both roles": ("a,y\n1,2\n", {"target": "y", "group_column": "a", "time_column": "a"}),
    "unknown categorical": ("a,y\n1,2\n", {"target": "y", "categorical": ["b"]}),
    "group is target": ("a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(9)),
                        {"target": "y", "group_column": "y"}),
    "too many fields": ("a,y\n1,0\n2,1,3\n", {"target": "y"}),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_tables_get_the_python_message(tmp_path, case):
    text, options = BAD[case]
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    if case == "too many fields":
        import pandas as pd

        with pytest.raises(pd.errors.ParserError) as caught:
            read_table(path, **options)
        assert js_view(path, **options) == {"error": str(caught.value).strip()}
        return
    py = py_view(path, **options)
    assert "error" in py, py
    assert js_view(path, **options) == py


def test_unsupported_and_missing_files(tmp_path):
    assert js_view(tmp_path / "t.xlsx", target="y") == py_view(tmp_path / "t.xlsx", target="y") \
        or "unsupported table file type" in js_view(tmp_path / "t.xlsx", target="y")["error"]
    missing = js_view(tmp_path / "nope.csv", target="y")
    assert missing == {"error": f"table file {str(tmp_path / 'nope.csv')!r} does not exist"}
