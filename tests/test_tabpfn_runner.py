"""tabpfn through the registry, the Python runner and ``arenalite run`` (random-weight
checkpoints only, tests/data/tabpfn).

``models.predict({"name": "tabpfn", "weights": PATH, ...})`` equals the package's wrappers
(the fixtures of tests/test_tabpfn_predictor.py); ``--model tabpfn:weights=PATH`` runs end
to end on bundled datasets (the classifier's checkpoint on binary and multiclass data, the
regressor's on regression); missing cells go in as they are. A user's mistakes are one
``arenalite: error:`` line each: no weights, a missing file, a classifier on regression
data, a datetime column (``--runner webgpu``: tests/test_node_runner_checkpoints.py); text
and category columns go in as the package takes them (tests/test_tabpfn_frames.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import cli, datasets, models, runner, splits
from arenalite.models import registry

DATA = Path(__file__).parent / "data" / "tabpfn"
CLASSIFIER = DATA / "classifier_small.ckpt"
REGRESSOR = DATA / "regressor_small.ckpt"


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("splits")
    cli.write_splits(["iris", "breast_cancer", "diabetes"], out, kind="random", n_repeats=2)
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


def test_registry_entry() -> None:
    entry = registry.entry("tabpfn")
    assert entry["runners"] == ["python", "webgpu"] and entry["encoding"] == "tabpfn"
    assert registry.defaults("tabpfn") == {"weights": None, "n_estimators": None,
                                           "softmax_temperature": None, "random_state": 0,
                                           "average_before_softmax": False,
                                           "balance_probabilities": False}
    with pytest.raises(ValueError, match="'average_before_softmax' must be true or false, "
                                         "got 1"):
        models.check_model({"name": "tabpfn", "average_before_softmax": 1})
    assert cli.parse_model("tabpfn:average_before_softmax=true")["average_before_softmax"] \
        is True


def test_every_package_option_through_the_registry() -> None:
    """The fixture case with temperature, average_before_softmax and balance_probabilities."""
    o = json.loads((DATA / "wrapper.json").read_text())["cases"]["options"]
    d = np.load(DATA / "wrapper_options.npz")
    out = models.predict({"name": "tabpfn", "weights": CLASSIFIER, **o["options"]},
                         d["X_train"], d["y_train"], d["X_test"], "multiclass", o["n_classes"])
    assert np.abs(out - d["proba"]).max() <= 1e-4
    model = {"name": "tabpfn", "weights": REGRESSOR, "balance_probabilities": True}
    x = np.random.default_rng(0).standard_normal((20, 3))
    with pytest.raises(ValueError, match="classifier settings"):
        models.predict(model, x[:15], x[:15, 0], x[15:], "regression")


def test_predict_equals_the_package_wrappers() -> None:
    wrapper = json.loads((DATA / "wrapper.json").read_text())["cases"]["three_nan"]
    d = np.load(DATA / "wrapper_three_nan.npz")
    assert np.isnan(d["X_train"]).any()  # missing cells go in as they are
    model = {"name": "tabpfn", "weights": str(CLASSIFIER), **wrapper["options"]}
    out = models.predict(model, d["X_train"], d["y_train"], d["X_test"], "multiclass",
                         wrapper["n_classes"])
    assert np.abs(out - d["proba"]).max() <= 1e-4  # see test_tabpfn_predictor
    reg = json.loads((DATA / "regression.json").read_text())["cases"]["plain"]
    r = np.load(DATA / "regression_plain.npz")
    model = {"name": "tabpfn", "weights": REGRESSOR, "n_estimators": reg["n_estimators"],
             "random_state": reg["random_state"]}
    mean = models.predict(model, r["X_train"], r["y_train"], r["X_test"], "regression")
    assert np.abs(mean - r["predict_mean"]).max() <= 1e-4
    mean2, spread = models.predict_distribution(model, r["X_train"], r["y_train"], r["X_test"])
    np.testing.assert_array_equal(mean, mean2)
    assert (spread > 0).all() and np.isfinite(spread).all()


def test_a_frame_with_missing_cells() -> None:
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"a": rng.normal(size=40), "b": rng.integers(0, 5, 40)})
    frame.loc[[3, 7], "a"] = np.nan
    y = (rng.normal(size=40) > 0).astype(int)
    model = {"name": "tabpfn", "weights": CLASSIFIER, "n_estimators": 2}
    out = models.predict(model, frame[:30], y[:30], frame[30:], "binary")
    same = models.predict(model, frame[:30].to_numpy(float), y[:30],
                          frame[30:].to_numpy(float), "binary")
    np.testing.assert_array_equal(out, same)
    frame["c"] = pd.Series(["x", "y", None, "y"] * 10, dtype="str")
    text = models.predict(model, frame[:30], y[:30], frame[30:], "binary")
    frame["c"] = pd.Categorical(frame["c"])  # both categorical, as in the package
    np.testing.assert_array_equal(text, models.predict(model, frame[:30], y[:30], frame[30:],
                                                       "binary"))
    assert np.abs(text - out).max() > 0  # the column is used
    frame["c"] = pd.to_datetime(["2020-01-01"] * 40)
    with pytest.raises(TypeError, match="column 'c' has dtype datetime64"):
        models.predict(model, frame[:30], y[:30], frame[30:], "binary")


def test_run_end_to_end(split_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "runs"
    code, err = run_cli(["run", "iris", "breast_cancer", "--model",
                         f"tabpfn:weights={CLASSIFIER},n_estimators=2,label=pfn", "--model",
                         "knn", "--splits-dir", str(split_dir), "-o", str(out)], capsys)
    assert code == 0, err
    results = pd.read_csv(out / "results.csv")
    pfn = results[results["model"] == "pfn"]
    assert len(pfn) == 4 and pfn["score"].notna().all() and (pfn["runner"] == "python").all()
    code, err = run_cli(["run", "diabetes", "--model",
                         f"tabpfn:weights={REGRESSOR},n_estimators=2", "--splits-dir",
                         str(split_dir), "-o", str(tmp_path / "reg")], capsys)
    assert code == 0, err
    reg = pd.read_csv(tmp_path / "reg" / "results.csv")
    assert (reg["metric"] == "rmse").all() and np.isfinite(reg["score"]).all()
    assert reg["model"].iloc[0] == f"tabpfn(weights={REGRESSOR}, n_estimators=2)"


def test_runner_api() -> None:
    data = {"iris": datasets.load("iris")}
    persisted = {"iris": splits.make_splits(150, "multiclass", y=data["iris"].y, kind="random",
                                            n_repeats=2, dataset="iris")}
    model = {"name": "tabpfn", "weights": CLASSIFIER, "n_estimators": 2, "label": "t"}
    results = runner.run(data, persisted, [model], progress=False)
    assert list(results.columns) == runner.COLUMNS and len(results) == 2
    assert (results["total_ms"] > 0).all()


def test_mistakes_are_one_line(split_dir: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture) -> None:
    base = ["--splits-dir", str(split_dir), "-o", str(tmp_path / "o")]
    line = error_line(["run", "iris", "--model", "tabpfn", *base], capsys)
    assert "model 'tabpfn' needs a TabPFN v3 checkpoint" in line
    line = error_line(["run", "iris", "--model", "tabpfn:weights=nope.ckpt", *base], capsys)
    assert "TabPFN checkpoint 'nope.ckpt' does not exist" in line
    line = error_line(["run", "diabetes", "--model", f"tabpfn:weights={CLASSIFIER}", *base],
                      capsys)
    assert "is a TabPFN v3 classifier; task 'regression' needs" in line
