"""The suite file (arenalite.tournament.suite): reading, refusing each mistake in one line,
and suite split files byte-equal to table-by-table ones."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from arenalite.cli import main
from arenalite.datasets import load
from arenalite.tournament import Suite, SuiteError, read_suite


@pytest.fixture
def folder(tmp_path):
    """A folder with a table file (breast cancer with a group column and a text column)."""
    d = load("breast_cancer")
    frame = pd.DataFrame(d.X[:, :6], columns=d.feature_names[:6])
    frame["label"] = np.where(d.y == 1, "yes", "no")
    frame["grp"] = np.arange(len(frame)) % 40
    frame["share"] = np.linspace(0, 1, len(frame))
    frame.to_csv(tmp_path / "cancer.csv", index=False)
    return tmp_path


GOOD = """name = "small"
[[datasets]]
bundled = "wine"

[[datasets]]
name = "bc"
path = "cancer.csv"
target = "label"
group_column = "grp"
leakage_columns = ["share"]

[[datasets]]
bundled = "iris"
kind = "kfold"
n_repeats = 1
n_folds = 4
"""


def test_reads_toml_and_json_alike(folder):
    (folder / "suite.toml").write_text(GOOD)
    suite = read_suite(folder / "suite.toml")
    assert suite.name == "small"
    assert suite.names == ["wine", "bc", "iris"]
    bc = suite.entries[1]
    assert bc.table == {"target": "label", "group_column": "grp",
                        "leakage_columns": ("share",)}
    assert suite.entries[2].split["kind"] == "kfold"
    assert suite.entries[2].split["n_folds"] == 4
    import tomllib

    (folder / "suite.json").write_text(json.dumps(tomllib.loads(GOOD)))
    again = read_suite(folder / "suite.json")
    assert [e.spec() for e in again.entries] == [e.spec() for e in suite.entries]
    assert again.hash() != suite.hash()  # the hash is of the file (its bytes)
    table = bc.read()
    assert table.group_column == "grp" and "share" not in table.feature_names


BAD = [
    ('[[datasets]]\npath = "missing.csv"\ntarget = "label"\n',
     'suite.toml, datasets[1]: path \'missing.csv\' is not a file'),
    ('[[datasets]]\nname = "hmda"\npath = "cancer.csv"\ntarget = "denied"\n',
     'suite.toml, datasets[1] "hmda": target \'denied\' is not a column; its columns are'),
    ('[[datasets]]\nbundled = "wine"\n[[datasets]]\nbundled = "wine"\n',
     'suite.toml, datasets[2] "wine": name \'wine\' is already the name of datasets[1]'),
    ('[[datasets]]\nbundled = "wine"\ncolour = "red"\n',
     "suite.toml, datasets[1]: unknown key 'colour'"),
    ('[[datasets]]\nbundled = "wine"\nn_repeats = "two"\n',
     "suite.toml, datasets[1]: n_repeats must be a whole number, got 'two'"),
    ('[[datasets]]\npath = "cancer.csv"\ntarget = "label"\nleakage_columns = "share"\n',
     "suite.toml, datasets[1]: leakage_columns must be a list of strings, got 'share'"),
    ('[[datasets]]\npath = "cancer.csv"\ntarget = "label"\nleakage_columns = ["nope"]\n',
     "suite.toml, datasets[1] \"cancer\": leakage_columns 'nope' is not a column"),
    ('[[datasets]]\nbundled = "wines"\n', "suite.toml, datasets[1]: bundled 'wines' is not a "
                                          "bundled dataset"),
    ('[[datasets]]\nbundled = "wine"\npath = "cancer.csv"\n',
     "suite.toml, datasets[1]: give exactly one of path"),
    ('[[datasets]]\nbundled = "wine"\ntarget = "x"\n',
     "suite.toml, datasets[1]: target applies to a table file"),
    ('[[datasets]]\nbundled = "wine"\nkind = "loo"\n',
     "suite.toml, datasets[1]: kind must be one of ['adaptive', 'kfold', 'random']"),
    ('[[datasets]]\npath = "cancer.csv"\n', "suite.toml, datasets[1]: target is missing"),
    ('name = "x"\n', "suite.toml: no [[datasets]] entry"),
    ('title = "x"\n[[datasets]]\nbundled = "wine"\n', "suite.toml: unknown key 'title'"),
    ('[[datasets]\n', "suite.toml: not valid TOML"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_each_bad_suite_gets_one_line_and_nothing_is_written(folder, capsys, text, message):
    (folder / "suite.toml").write_text(text)
    with pytest.raises(SuiteError) as caught:
        read_suite(folder / "suite.toml")
    assert str(caught.value).startswith(message), str(caught.value)
    out = folder / "out"
    for argv in (["tournament", str(folder / "suite.toml"), "--model", "knn", "-o", str(out)],
                 ["splits", str(folder / "suite.toml"), "-o", str(out)]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert err == [f"arenalite: error: {caught.value}"]
        assert not out.exists()


def test_missing_suite_file(tmp_path, capsys):
    assert main(["tournament", str(tmp_path / "none.toml"), "--model", "knn",
                 "-o", str(tmp_path / "o")]) == 2
    assert "suite file" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_table_flags_with_a_suite_are_refused(folder, capsys):
    (folder / "suite.toml").write_text(GOOD)
    assert main(["splits", str(folder / "suite.toml"), "--kind", "kfold", "-o",
                 str(folder / "o")]) == 2
    assert "--kind applies to a table, not to the suite" in capsys.readouterr().err


def test_suite_splits_equal_table_by_table_byte_for_byte(folder):
    (folder / "suite.toml").write_text(GOOD)
    assert main(["splits", str(folder / "suite.toml"), "-o", str(folder / "a")]) == 0
    assert main(["splits", "wine", "-o", str(folder / "b")]) == 0
    assert main(["splits", str(folder / "cancer.csv"), "--target", "label", "--group-column",
                 "grp", "--leakage-columns", "share", "-o", str(folder / "b")]) == 0
    assert main(["splits", "iris", "--kind", "kfold", "--n-repeats", "1", "--n-folds", "4",
                 "-o", str(folder / "b")]) == 0
    for a, b in (("wine", "wine"), ("bc", "cancer"), ("iris", "iris")):
        assert (folder / "a" / f"{a}.splits.json").read_bytes() == \
            (folder / "b" / f"{b}.splits.json").read_bytes().replace(
                b'"dataset":"cancer"', b'"dataset":"bc"'), a


def test_describe_and_run_take_a_suite(folder, capsys):
    (folder / "suite.toml").write_text(GOOD)
    assert main(["describe", str(folder / "suite.toml")]) == 0
    text = capsys.readouterr().out
    assert "table 'bc'" in text and "grouped 3-fold by 'grp'" in text
    assert "1 repeat(s) × 4 fold(s)" in text
    assert main(["run", str(folder / "suite.toml"), "--model", "knn", "-o",
                 str(folder / "r")]) == 0
    results = pd.read_csv(folder / "r" / "results.csv")
    assert set(results["dataset"]) == {"wine", "bc", "iris"}


def test_a_suite_in_code():
    frame = pd.DataFrame({"x": np.arange(30.0), "y": ["a", "b", "c"] * 10})
    suite = Suite.of(frame, name="tiny", target="y")
    assert suite.names == ["tiny"]
    assert suite.entries[0].read().n_classes == 3
    with pytest.raises(SuiteError, match="target 'z' is not a column"):
        Suite.of(frame, target="z").check()
