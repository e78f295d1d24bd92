"""arenalite.tournament: the pipeline, its scorecard, failures, applicability and the store.

Stub models are tournament Models defined here only (never registered in the package).
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite.cli import main
from arenalite.models import predict_timed
from arenalite.tournament import Model, Suite
from arenalite.tournament.scorecard import COLUMNS

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
FAST = dict(n_bootstrap=50, report=False, log=lambda text: None)


class Stub(Model):
    """knn, except where ``misbehave`` says otherwise."""

    def __init__(self, label: str, misbehave: str = "", table_task: str = "multiclass"):
        self.label, self.params = label, {"stub": misbehave}
        self.misbehave, self.table_task = misbehave, table_task

    def predict_timed(self, x_train, y_train, x_test, task, n_classes):
        output, t = predict_timed({"name": "knn", "k": 3}, x_train, y_train, x_test, task,
                                  n_classes)
        hit = task == self.table_task
        if hit and self.misbehave == "raise":
            raise RuntimeError("out of ideas")
        if hit and self.misbehave == "nan":
            output = output.copy()
            output[0] = np.nan
        if hit and self.misbehave == "sum":
            output = output * 0.9
        if hit and self.misbehave == "shape":
            output = output[1:]
        if hit and self.misbehave == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.misbehave == "threads":  # a pool worker of 2: its share of the cores
            from arenalite.models import threads
            from arenalite.tournament.execute import cores

            if threads.count() != max(1, cores() // 2):
                raise RuntimeError(f"{threads.count()} model threads in a worker of 2")
        return output, t

    def not_applicable(self, task, n_features, n_classes, runner):
        if self.misbehave == "no-regression" and task == "regression":
            return "the stub takes classification only"
        return None


def test_the_api_plays_every_model_on_every_split(tmp_path):
    result = arenalite.tournament("iris", ["knn", "attention"], out=tmp_path, **FAST)
    n_splits = len(json.loads((tmp_path / "splits" / "iris.splits.json").read_text())["splits"])
    assert len(result.results) == 2 * n_splits
    assert list(result.scorecard.columns) == COLUMNS + ["vs knn", "vs attention"] or \
        list(result.scorecard.columns) == COLUMNS + ["vs attention", "vs knn"]
    assert result.exit_status == 0
    for name in ("results.csv", "scorecard.csv", "failures.csv", "tournament.json",
                 "not_applicable.csv", "leaderboard.csv"):
        assert (tmp_path / name).exists(), name
    loaded = arenalite.load_df(pd.read_csv(tmp_path / "results.csv"))
    assert sorted(loaded.models_) == ["attention", "knn"]
    info = json.loads((tmp_path / "tournament.json").read_text())
    assert info["arenalite"] == arenalite.__version__ and info["suite"]["sha256"]
    assert [m["label"] for m in info["models"]] == ["knn", "attention"]
    board = pd.read_csv(tmp_path / "leaderboard.csv")
    assert {"elo", "elo+", "elo-", "improvability", "improvability_multiclass"} <= set(board)


def test_a_table_in_code_without_split_dicts():
    frame = pd.DataFrame({"a": np.tile(np.arange(20.0), 3), "b": np.repeat([0.0, 1, 2], 20),
                          "id": np.arange(60), "y": np.repeat(["x", "y", "z"], 20)})
    result = arenalite.tournament(frame, ["knn", "attention"], target="y",
                                  leakage_columns=["id"], **FAST)
    assert result.out is None
    assert set(result.results["dataset"]) == {"table"}
    assert result.results["n_train"].min() > 0


def _bradley_terry_mm(wins: np.ndarray) -> np.ndarray:
    """Hunter's MM iteration on a win matrix (ties already half to each): Elo, mean 1000."""
    n = wins + wins.T
    gamma = np.ones(len(wins))
    for _ in range(100000):
        denominator = (n / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = wins.sum(axis=1) / denominator
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(new - gamma)) < 1e-12:
            break
        gamma = new
    theta = np.log(new)
    return 1000 + 400 / np.log(10) * (theta - theta.mean())


def test_the_scorecard_against_wins_losses_ties_and_a_bradley_terry_fit(tmp_path):
    models = ["knn", "knn:k=9", "knn:k=15", "attention"]
    suite = Suite.of("breast_cancer", kind="random", n_repeats=8)
    result = arenalite.tournament(suite, models, out=tmp_path, n_bootstrap=200,
                                  report=False, log=lambda text: None)
    results = pd.read_csv(tmp_path / "results.csv")
    errors = results.pivot(index="split_id", columns="model", values="error")
    labels = list(errors.columns)
    m = len(labels)
    wins = np.zeros((m, m))
    record = {}
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            if i != j:
                w = int((errors[a] < errors[b]).sum())
                lo = int((errors[a] > errors[b]).sum())
                t = int((errors[a] == errors[b]).sum())
                wins[i, j] = w + 0.5 * t
                record[a, b] = f"{w}W – {lo}L – {t}T"
    card = result.scorecard.set_index("model")
    for (a, b), text in record.items():
        assert card.loc[a, f"vs {b}"] == text
    matches = 3 * len(errors)
    assert (card["matches"] == matches).all()
    assert np.allclose(card["win_rate"], (card["wins"] + card["ties"] / 2) / matches)
    elo = _bradley_terry_mm(wins)
    assert np.allclose(card.loc[labels, "elo"], elo, atol=1e-4)
    assert (card["elo_low"] <= card["elo"]).all() and (card["elo"] <= card["elo_high"]).all()
    assert np.allclose(card["elo_margin"], (card["elo_high"] - card["elo_low"]) / 2)
    assert list(card["elo"]) == sorted(card["elo"], reverse=True)


def test_not_applicable_raising_and_bad_outputs_do_not_end_the_tournament(tmp_path, capsys):
    notes = []
    models = [Stub("good"), Stub("raises", "raise"), Stub("nan", "nan"), Stub("sums", "sum"),
              Stub("shape", "shape"), Stub("clf", "no-regression")]
    suite = Suite("s", Suite.of("iris").entries + Suite.of("diabetes").entries)
    result = arenalite.tournament(suite, models, out=tmp_path, n_bootstrap=20, report=False,
                                  log=notes.append)
    na = result.not_applicable
    assert list(na.itertuples(index=False, name=None)) == [
        ("diabetes", "clf", "the stub takes classification only")]
    assert any("not applicable: clf on diabetes" in n for n in notes)
    failures = result.failures  # read as the store does: the model named "nan" stays a name
    n_iris = len(json.loads((tmp_path / "splits" / "iris.splits.json").read_text())["splits"])
    kinds = failures.groupby("model")["kind"].agg(set).to_dict()
    assert kinds == {"raises": {"raised"}, "nan": {"bad output"}, "sums": {"bad output"},
                     "shape": {"bad output"}}
    assert (failures.groupby("model").size() == n_iris).all()
    messages = failures.groupby("model")["message"].first()
    assert messages["raises"] == "out of ideas"
    assert "non-finite" in messages["nan"] and "do not sum to 1" in messages["sums"]
    assert "shape" in messages["shape"]
    assert result.exit_status == 1
    card = result.scorecard.set_index("model")
    n_diabetes = len(json.loads((tmp_path / "splits" / "diabetes.splits.json").read_text())[
        "splits"])
    assert card.loc["raises", "missed"] == n_iris
    assert card.loc["clf", "missed"] == n_diabetes
    assert card.loc["good", "missed"] == 0
    # the rerun runs nothing; --retry-failed runs the failures again (and they fail again)
    again = arenalite.tournament(suite, models, out=tmp_path, n_bootstrap=20, report=False,
                                 log=notes.append)
    assert len(pd.read_csv(tmp_path / "failures.csv")) == len(failures)
    assert again.results.equals(result.results)
    notes.clear()
    arenalite.tournament(suite, models, out=tmp_path, n_bootstrap=20, report=False,
                         log=notes.append, retry_failed=True)
    assert any(f"{len(failures)} to run" in n for n in notes)
    assert len(pd.read_csv(tmp_path / "failures.csv")) == len(failures)


def test_impute_fills_failed_cells_with_the_baselines_score(tmp_path):
    models = [Stub("base"), Stub("raises", "raise"), Stub("clf", "no-regression")]
    suite = Suite("s", Suite.of("iris").entries + Suite.of("diabetes").entries)
    result = arenalite.tournament(suite, models, out=tmp_path, impute="base", n_bootstrap=20,
                                  report=False, log=lambda text: None)
    card = result.scorecard.set_index("model")
    n_iris = len(json.loads((tmp_path / "splits" / "iris.splits.json").read_text())["splits"])
    assert card.loc["raises", "imputed"] == n_iris
    assert card.loc["raises", "missed"] == 0
    assert card.loc["clf", "imputed"] == 0  # not applicable: never imputed
    assert card.loc["clf", "missed"] > 0
    # imputed cells tie with the baseline (on diabetes "raises" plays as "base" does)
    n_all = int((result.results["model"] == "base").sum())
    assert card.loc["raises", "vs base"] == f"0W – 0L – {n_all}T"
    assert len(result.results[result.results["model"] == "raises"]) == len(
        result.results[(result.results["model"] == "base")
                       & (result.results["dataset"] == "diabetes")])
    with pytest.raises(ValueError, match="impute model 'nobody'"):
        arenalite.tournament(suite, models, impute="nobody", **FAST)


@pytest.mark.needs_processes
def test_a_worker_killed_in_the_pool_fails_its_task_only(tmp_path):
    models = [Stub("good", "threads"), Stub("killer", "kill")]
    suite = Suite("s", Suite.of("iris", kind="random", n_repeats=3).entries
                  + Suite.of("diabetes", kind="random", n_repeats=3).entries)
    result = arenalite.tournament(suite, models, out=tmp_path, workers=2, **FAST)
    failures = result.failures
    assert set(failures["model"]) == {"killer"}
    assert set(failures["table"]) == {"iris"}
    assert set(failures["kind"]) == {"worker died"}
    assert len(failures) == 3
    assert len(result.results) == 3 + 3 + 3  # good on both, killer on diabetes
    local = arenalite.tournament(suite, [Stub("good", "threads-ignored")], **FAST)
    key = ["dataset", "split_id"]
    pool = result.results[result.results["model"] == "good"].sort_values(key)
    assert np.array_equal(pool["error"].to_numpy(), local.results.sort_values(key)[
        "error"].to_numpy())


def test_a_changed_model_or_table_is_refused_by_name(tmp_path):
    arenalite.tournament("iris", ["knn"], out=tmp_path, **FAST)
    with pytest.raises(ValueError, match="model 'same' has changed"):
        arenalite.tournament("iris", ["knn:k=5,label=same"], out=tmp_path / "b", **FAST)
        arenalite.tournament("iris", ["knn:k=7,label=same"], out=tmp_path / "b", **FAST)
    frame = pd.DataFrame({"x": np.arange(30.0), "y": ["a", "b", "c"] * 10})
    arenalite.tournament(Suite.of(frame, name="t", target="y"), ["knn"], out=tmp_path / "c",
                         **FAST)
    frame.loc[0, "y"] = "b"
    with pytest.raises(ValueError, match="was made from another table than 't'"):
        arenalite.tournament(Suite.of(frame, name="t", target="y"), ["knn"],
                             out=tmp_path / "c", **FAST)


def test_changed_split_options_or_split_file_are_refused(tmp_path):
    arenalite.tournament(Suite.of("iris", kind="random", n_repeats=3), ["knn"], out=tmp_path,
                         **FAST)
    with pytest.raises(ValueError, match="is not the split file that table 'iris'"):
        arenalite.tournament(Suite.of("iris", kind="random", n_repeats=4), ["knn"],
                             out=tmp_path, **FAST)
    path = tmp_path / "splits" / "iris.splits.json"
    path.write_text(path.read_text().replace('"test":[', '"test":[ ', 1))
    with pytest.raises(ValueError, match="is not the split file that table 'iris'"):
        arenalite.tournament(Suite.of("iris", kind="random", n_repeats=3), ["knn"],
                             out=tmp_path, **FAST)


def test_a_torn_last_line_is_dropped_and_its_task_runs_again(tmp_path):
    first = arenalite.tournament("iris", ["knn"], out=tmp_path, **FAST)
    path = tmp_path / "results.csv"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-1]) + lines[-1][:25])  # a kill in the middle of a write
    notes = []
    again = arenalite.tournament("iris", ["knn"], out=tmp_path, n_bootstrap=50, report=False,
                                 log=notes.append)
    assert any("torn last line" in n for n in notes)
    assert any("1 to run" in n for n in notes)
    key = ["split_id"]
    assert np.array_equal(again.results.sort_values(key)["error"].to_numpy(),
                          first.results.sort_values(key)["error"].to_numpy())


def test_cli_tournament_prints_the_scorecard_and_exits_0(tmp_path, capsys):
    assert main(["tournament", "iris", "--model", "knn", "--model", "attention", "-o",
                 str(tmp_path), "--n-bootstrap", "20", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "vs attention" in out and "W –" in out
    assert (tmp_path / "report.html").exists()
    assert main(["tournament", "iris", "--model", "knn", "--impute", "nobody", "-o",
                 str(tmp_path / "x")]) == 2
    assert "impute model 'nobody'" in capsys.readouterr().err


def test_registry_limits_make_pairs_not_applicable(monkeypatch):
    from arenalite.models import registry
    from arenalite.tournament.entrants import RegistryModel

    data = Path(__file__).parent / "data"
    weights = str(data / "tabpfn" / "classifier_small.ckpt")
    # every registry model runs on WebGPU since issue 44; a Python-only entry is refused
    assert RegistryModel({"name": "tabpfn", "weights": weights}).not_applicable(
        "binary", 5, 2, "webgpu") is None
    monkeypatch.setitem(registry.REGISTRY, "tabpfn",
                        {**registry.REGISTRY["tabpfn"], "runners": ["python"]})
    assert "no webgpu implementation" in RegistryModel(
        {"name": "tabpfn", "weights": weights}).not_applicable("binary", 5, 2, "webgpu")
    monkeypatch.undo()
    assert RegistryModel({"name": "icl_transformer"}).not_applicable(
        "multiclass", 4, 11, "python") == ("icl_transformer takes at most 10 classes (the "
                                           "weights' max_classes), got 11")
    assert "at most 32 features" in RegistryModel({"name": "icl_transformer"}).not_applicable(
        "multiclass", 400, 3, "python")
    assert RegistryModel({"name": "knn"}).not_applicable("multiclass", 400, 30, "webgpu") is None
    for name in ("tabicl", "tabpfn"):
        clf = RegistryModel({"name": name, "weights": str(data / name / "classifier_small.ckpt")})
        reg = RegistryModel({"name": name, "weights": str(data / name / "regressor_small.ckpt")})
        many = clf.not_applicable("multiclass", 4, 30, "python")
        if name == "tabicl":  # its class tree takes any number of classes
            assert many is None
        else:
            assert many == ("TabPFN takes at most 10 classes (the checkpoint's max_num_classes "
                            "and MAX_NUMBER_OF_CLASSES); the target has 30")
        assert "regressor checkpoint" in clf.not_applicable("regression", 4, None, "python")
        assert "classifier checkpoint" in reg.not_applicable("binary", 4, 2, "python")
        assert clf.not_applicable("binary", 4, 2, "python") is None
        assert len(clf.checkpoints()["weights"]) == 64  # the key pins the checkpoint's hash
    tabfm = data / "tabfm" / "wrappers" / "checkpoint"  # config only: no tensor is read
    assert RegistryModel({"name": "tabfm", "weights": str(tabfm)}).not_applicable(
        "multiclass", 600, 11, "python") == ("The number of classes (11) exceeds the maximum "
                                             "number of classes (10) supported by the model.")
    assert RegistryModel({"name": "tabfm", "weights": str(tabfm)}).not_applicable(
        "multiclass", 600, 10, "python") is None  # past 500 features the members subsample
    assert "classification checkpoint" in RegistryModel(
        {"name": "tabfm", "weights": str(tabfm / "classification")}).not_applicable(
        "regression", 4, None, "python")
    many = pd.DataFrame({"x": np.arange(60.0) % 7, "y": np.arange(60) % 12})
    result = arenalite.tournament(many, ["knn", "icl_transformer"], target="y",
                                  task="multiclass", **FAST)
    assert list(result.not_applicable["model"]) == ["icl_transformer"]
    assert set(result.results["model"]) == {"knn"}
    assert result.scorecard.set_index("model").loc["icl_transformer", "missed"] == len(
        result.results)


def test_progress_shows_eta_and_what_runs():
    import io

    from arenalite.progress import Progress, eta_text

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert eta_text(10.0, 1, 4) == "0:30" and eta_text(0.0, 0, 4) == "?"
    assert eta_text(3600.0, 1, 3) == "2:00:00"
    stream = Terminal()
    with Progress(4, "tournament", stream=stream, eta=True) as bar:
        bar.update(0, status="wine · knn")
        bar.update(4)
    text = stream.getvalue()
    assert "tournament [" in text and "0/4" in text and "ETA ?" in text and "wine · knn" in text
    assert text.endswith("\n")


def test_quiet_silences_every_bar_under_it(monkeypatch):
    """--quiet (progress=False) also hides the bars drawn beneath the tournament (the Elo
    bootstrap's), as a terminal would show them."""
    import io

    from arenalite import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    monkeypatch.setattr(progress.sys, "stderr", stream)
    arenalite.tournament("iris", ["knn", "knn:k=9"], n_repeats=1, n_bootstrap=20,
                         progress=False)
    assert stream.getvalue() == ""
    with progress.silenced():
        assert not progress.Progress(3, "work", stream=stream).enabled
    assert progress.Progress(3, "work", stream=stream).enabled


def test_cli_exit_status_1_when_a_task_failed(tmp_path, capsys, monkeypatch):
    from arenalite.tournament.entrants import RegistryModel

    original = RegistryModel.predict_timed

    def flaky(self, x_train, y_train, x_test, task, n_classes):
        if self.label == "attention":
            raise MemoryError("out of memory")
        return original(self, x_train, y_train, x_test, task, n_classes)

    monkeypatch.setattr(RegistryModel, "predict_timed", flaky)
    assert main(["tournament", "iris", "--model", "knn", "--model", "attention", "-o",
                 str(tmp_path), "--n-bootstrap", "20"]) == 1
    err = capsys.readouterr().err
    assert "failed: attention on iris, split r0-f0: raised: MemoryError: out of memory" in err
    assert "task(s) failed" in err
    assert arenalite.Suite is Suite and callable(arenalite.tournament)
