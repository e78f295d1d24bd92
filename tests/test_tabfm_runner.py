"""Google TabFM through the Python runner and ``arenalite run`` (the random-weight
checkpoint of tests/data/tabfm/wrappers, its parent folder holding classification/ and
regression/: the task picks one).

``--model tabfm:weights=DIR`` runs end to end on bundled datasets; a user's mistakes are
one ``arenalite: error:`` line each: no weights, a missing folder, a classification folder
on regression data. (``--runner webgpu``: tests/test_node_runner_checkpoints.py.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import cli, datasets, runner, splits

CKPT = Path(__file__).parent / "data" / "tabfm" / "wrappers" / "checkpoint"


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("splits")
    cli.write_splits(["iris", "diabetes"], out, kind="random", n_repeats=2)
    return out


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = cli.main(argv)
    return code, capsys.readouterr().err


def error_line(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    code, err = run_cli(argv, capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arenalite: error: "), err
    return lines[0]


def test_run_end_to_end(split_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "runs"
    code, err = run_cli(["run", "iris", "--model", f"tabfm:weights={CKPT},n_estimators=2,"
                         "label=gtfm", "--model", "knn", "--splits-dir", str(split_dir),
                         "-o", str(out)], capsys)
    assert code == 0, err
    results = pd.read_csv(out / "results.csv")
    fm = results[results["model"] == "gtfm"]
    assert len(fm) == 2 and fm["score"].notna().all() and (fm["runner"] == "python").all()
    code, err = run_cli(["run", "diabetes", "--model", f"tabfm:weights={CKPT},n_estimators=2",
                         "--splits-dir", str(split_dir), "-o", str(tmp_path / "reg")], capsys)
    assert code == 0, err
    reg = pd.read_csv(tmp_path / "reg" / "results.csv")
    assert (reg["metric"] == "rmse").all() and np.isfinite(reg["score"]).all()


def test_runner_api() -> None:
    data = {"iris": datasets.load("iris")}
    persisted = {"iris": splits.make_splits(150, "multiclass", y=data["iris"].y, kind="random",
                                            n_repeats=2, dataset="iris")}
    model = {"name": "tabfm", "weights": CKPT, "n_estimators": 2, "label": "t"}
    results = runner.run(data, persisted, [model], progress=False)
    assert list(results.columns) == runner.COLUMNS and len(results) == 2
    assert (results["total_ms"] > 0).all()


def test_mistakes_are_one_line(split_dir: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture) -> None:
    base = ["--splits-dir", str(split_dir), "-o", str(tmp_path / "o")]
    line = error_line(["run", "iris", "--model", "tabfm", *base], capsys)
    assert "model 'tabfm' needs a Google TabFM checkpoint" in line
    line = error_line(["run", "iris", "--model", "tabfm:weights=nope", *base], capsys)
    assert "'nope'" in line and "does not exist" in line
    line = error_line(["run", "diabetes", "--model",
                       f"tabfm:weights={CKPT / 'classification'}", *base], capsys)
    assert "is a classification checkpoint, asked for regression" in line
