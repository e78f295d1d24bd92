"""tabicl through the Python runner and ``arenalite run`` (random-weight checkpoints only).

``--model tabicl:weights=PATH`` end to end on bundled datasets (a classifier checkpoint on
binary and multiclass data, the regressor's on regression), in this process and on a
process pool; the results rank next to knn; a checkpoint made by ``random_checkpoint``
runs as well. The mistakes a user makes are one ``arenalite: error:`` line each: no
weights, a missing file, a classifier on regression data, ``--runner webgpu`` (tabicl
runs in Python only, for now).
"""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite import cli, datasets, node_runner, runner, splits
from arenalite.models import registry, tabicl
from arenalite.models.tabicl import checkpoint as ck

DATA = Path(__file__).parent / "data" / "tabicl"
CLASSIFIER = DATA / "classifier_small.ckpt"
REGRESSOR = DATA / "regressor_small.ckpt"
V2_SMALL = {"embed_dim": 16, "col_num_blocks": 1, "col_nhead": 2, "col_num_inds": 8,
            "row_num_blocks": 1, "row_nhead": 2, "row_num_cls": 2,
            "row_rope_interleaved": False, "icl_num_blocks": 1, "icl_nhead": 2,
            "zero_init": False}
WEBGPU_ERROR = ("arenalite: error: model 'tabicl' has no webgpu implementation yet; it runs "
                "in ['python'] (arenalite run --runner python)")
"""What a Python-only tabicl entry gives (the registry says ["python", "webgpu"] since the
bridge port, issue 28; the tests below patch the entry back to ["python"])."""


@pytest.fixture
def python_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.REGISTRY, "tabicl",
                        {**registry.REGISTRY["tabicl"], "runners": ["python"]})


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two random 70/30 splits per bundled dataset, persisted as ``arenalite splits`` does."""
    out = tmp_path_factory.mktemp("splits")
    cli.write_splits(["iris", "breast_cancer", "diabetes"], out, kind="random", n_repeats=2)
    return out


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> tuple[int, list[str], str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out.strip().splitlines(), captured.err


def error_line(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    """The one line ``arenalite`` prints for a mistake (exit status 2, no traceback)."""
    code, _, err = run_cli(argv, capsys)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arenalite: error: "), err
    return lines[0]


def model_spec(path: Path, **options: object) -> str:
    extra = "".join(f",{k}={v}" for k, v in options.items())
    return f"tabicl:weights={path},n_estimators=2{extra}"


def test_run_classification_end_to_end(split_dir: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "runs"
    code, printed, err = run_cli(["run", "iris", "breast_cancer", "--model",
                                  model_spec(CLASSIFIER, label="tabicl-random"), "--model",
                                  "knn", "--splits-dir", str(split_dir), "-o", str(out)],
                                 capsys)
    assert code == 0, err
    assert printed == [str(out / "results.csv"), str(out / "summary.csv")]
    results = pd.read_csv(out / "results.csv")
    assert list(results.columns) == runner.COLUMNS
    assert len(results) == 2 * 2 * 2  # datasets × models × splits
    assert set(results["model"]) == {"tabicl-random", "knn"}
    assert (results["runner"] == "python").all() and results["score"].notna().all()
    tab = results[results["model"] == "tabicl-random"]
    assert set(zip(tab["dataset"], tab["metric"], strict=True)) == {
        ("iris", "log_loss"), ("breast_cancer", "roc_auc")}
    assert (tab["total_ms"] > 0).all() and (tab["n_train"] + tab["n_test"] > 100).all()
    summary = pd.read_csv(out / "summary.csv")
    assert len(summary) == 4 and (summary["n_folds"] == 2).all()
    # the table ranks as it is: each split a match day
    bench = arenalite.load_csv(out / "results.csv", seed="seed",
                               metric_type_bounds={"roc_auc": (0.0, 1.0),
                                                   "log_loss": (0.0, "knn")})
    assert set(bench.models_) == {"tabicl-random", "knn"}
    assert set(bench.aggregate_ranking().table["model"]) == {"tabicl-random", "knn"}


def test_run_regression_with_the_regressor_checkpoint(split_dir: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "runs"
    code, _, err = run_cli(["run", "diabetes", "--model", model_spec(REGRESSOR), "--model",
                            "knn:k=15", "--splits-dir", str(split_dir), "-o", str(out)], capsys)
    assert code == 0, err
    results = pd.read_csv(out / "results.csv")
    tab = results[results["model"].str.startswith("tabicl")]
    assert len(tab) == 2 and (tab["metric"] == "rmse").all()
    y = datasets.load("diabetes").y
    assert np.isfinite(tab["score"]).all() and (tab["score"] < 2 * np.std(y)).all()
    # without a label the model's name in the table carries its non-default parameters
    assert tab["model"].iloc[0] == f"tabicl(weights={REGRESSOR}, n_estimators=2)"


def test_run_a_random_checkpoint_from_numpy(split_dir: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture) -> None:
    """What the notebook does: random weights made without torch, written as safetensors."""
    path = ck.write_safetensors(ck.random_checkpoint(V2_SMALL, seed=0),
                                tmp_path / "random.safetensors")
    code, _, err = run_cli(["run", "iris", "--model", model_spec(path, label="random"),
                            "--splits-dir", str(split_dir), "-o", str(tmp_path / "o")], capsys)
    assert code == 0, err
    results = pd.read_csv(tmp_path / "o" / "results.csv")
    assert len(results) == 2 and np.isfinite(results["score"]).all()
    assert (results["score"] > 0).all()  # a log loss, and random weights are not perfect


def test_runner_api_takes_a_path_object(tmp_path: Path) -> None:
    data = {"iris": datasets.load("iris")}
    persisted = {"iris": splits.make_splits(150, "multiclass", y=data["iris"].y, kind="random",
                                            n_repeats=2, dataset="iris")}
    model = {"name": "tabicl", "weights": CLASSIFIER, "n_estimators": 2, "label": "t"}
    results = runner.run(data, persisted, [model], progress=False)
    again = runner.run(data, persisted, [{**model, "weights": str(CLASSIFIER)}],
                       progress=False)
    assert list(results.columns) == runner.COLUMNS and len(results) == 2
    np.testing.assert_array_equal(results["score"], again["score"])


@pytest.mark.needs_processes
def test_a_process_pool_gives_the_same_table(split_dir: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture) -> None:
    """The model dict (a path) pickles to the workers; each loads the checkpoint itself."""
    data = {"iris": datasets.load("iris")}
    persisted = {"iris": splits.load(split_dir / "iris.splits.json")}
    models = [{"name": "tabicl", "weights": str(CLASSIFIER), "n_estimators": 2},
              {"name": "knn"}]
    here = runner.run(data, persisted, models, progress=False)
    with ProcessPoolExecutor(2) as pool:
        pooled = runner.run(data, persisted, models, executor=pool, progress=False)
    # each pool worker holds its model threads to its share of the cores (1 of 2 here),
    # which regroups float32 row chunks: equal to float32 round-off (docs/models.md, "Threads")
    pd.testing.assert_frame_equal(here[["model", "split_id", "score"]],
                                  pooled[["model", "split_id", "score"]], rtol=1e-6)
    # and through the command line
    code, _, err = run_cli(["run", "iris", "--model", model_spec(CLASSIFIER), "--workers", "2",
                            "--splits-dir", str(split_dir), "-o", str(tmp_path / "o")], capsys)
    assert code == 0, err
    cli_scores = pd.read_csv(tmp_path / "o" / "results.csv")["score"].to_numpy()
    np.testing.assert_allclose(cli_scores, here["score"].to_numpy()[:2], rtol=1e-6)


@pytest.mark.needs_processes
def test_the_entry_point(split_dir: Path, tmp_path: Path) -> None:
    """``python -m arenalite run``: files written; a mistake is one line, exit status 2."""
    def arenalite_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "arenalite", "run", *args, "--splits-dir",
                               str(split_dir), "-o", str(tmp_path / "o")],
                              capture_output=True, text=True, cwd=tmp_path)

    done = arenalite_run("iris", "--model", model_spec(CLASSIFIER))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "o" / "results.csv").is_file()
    done = arenalite_run("iris", "--model", model_spec(CLASSIFIER), "--runner", "webgpu",
                         "--bridge-dir", str(tmp_path))  # it runs there: the bridge is looked for
    assert done.returncode == 2 and "the WebGPU bridge was not found" in done.stderr, done.stderr


# --- mistakes: one line each ----------------------------------------------------------------


def test_webgpu_runner_names_the_missing_implementation(tmp_path: Path, python_only: None,
                                                        capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(ValueError) as caught:  # the registry's message, word for word
        registry.check_runner("tabicl", "webgpu")
    assert f"arenalite: error: {caught.value}" == WEBGPU_ERROR
    # before the bridge or Node is looked for: a folder without the bridge, or no node
    for extra in (["--bridge-dir", str(tmp_path)], []):
        line = error_line(["run", "iris", "--model", model_spec(CLASSIFIER), "--runner",
                           "webgpu", "-o", str(tmp_path / "o"), *extra], capsys)
        assert line == WEBGPU_ERROR
    assert error_line(["run", "iris", "--model", "knn", "--model", "tabicl", "--runner",
                       "webgpu", "-o", str(tmp_path / "o")], capsys) == WEBGPU_ERROR
    data = {"iris": datasets.load("iris")}
    persisted = {"iris": splits.make_splits(150, "multiclass", y=data["iris"].y)}
    with pytest.raises(ValueError, match="no webgpu implementation yet"):
        node_runner.run_to_csv(data, persisted, [{"name": "tabicl", "weights": "x.ckpt"}],
                               tmp_path / "r.csv", bridge_dir=tmp_path, node="no-such-node")


def test_no_weights_says_where_the_checkpoint_comes_from(split_dir: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    line = error_line(["run", "iris", "--model", "tabicl", "--splits-dir", str(split_dir),
                       "-o", str(tmp_path / "o")], capsys)
    assert line == f"arenalite: error: {tabicl.NO_WEIGHTS}"
    assert "jingang/TabICL" in line and "--model tabicl:weights=PATH" in line
    assert "arenalite convert tabicl" in line
    # an empty value is no weights too
    assert error_line(["run", "iris", "--model", "tabicl:weights=", "--splits-dir",
                       str(split_dir), "-o", str(tmp_path / "o")], capsys) == line


def test_missing_checkpoint_file(split_dir: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture) -> None:
    missing = tmp_path / "nope.ckpt"
    line = error_line(["run", "iris", "--model", f"tabicl:weights={missing}", "--splits-dir",
                       str(split_dir), "-o", str(tmp_path / "o")], capsys)
    assert line.startswith(f"arenalite: error: TabICL checkpoint {str(missing)!r} does not "
                           "exist; download tabicl-classifier-v2-20260212.ckpt")


def test_a_classifier_on_regression_data(split_dir: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture) -> None:
    line = error_line(["run", "diabetes", "--model", model_spec(CLASSIFIER), "--splits-dir",
                       str(split_dir), "-o", str(tmp_path / "o")], capsys)
    assert "is a TabICL classifier" in line and "needs a TabICL regressor checkpoint" in line


def test_a_bad_parameter_is_the_registry_s_message(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    line = error_line(["run", "iris", "--model", model_spec(CLASSIFIER, n_estimator=3),
                       "-o", str(tmp_path / "o")], capsys)
    assert line.startswith("arenalite: error: model 'tabicl' has unknown parameters "
                           "['n_estimator']")
