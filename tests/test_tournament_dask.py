"""The tournament on Dask: a LocalCluster of 2 worker processes gives the in-process
results, a worker killed mid-run loses nothing, and a task that kills every worker it
meets is recorded as failed (KilledWorker)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

import arenalite
from arenalite.models import predict_timed
from arenalite.tournament import Model, Suite

distributed = pytest.importorskip("distributed")
pytestmark = [pytest.mark.needs_dask, pytest.mark.needs_processes, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


class Knn(Model):
    """knn; with ``marker``, the first call that finds no marker file creates it and kills
    its own worker process (a worker dying mid-run, once); with ``always`` every call on
    ``table_task`` kills its worker."""

    def __init__(self, label, marker=None, always=False):
        self.label, self.params = label, {"k": 5}
        self.marker, self.always = marker, always

    def predict_timed(self, x_train, y_train, x_test, task, n_classes):
        if self.always and task == "regression":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.marker is not None and not Path(self.marker).exists():
            Path(self.marker).write_text("killed once")
            os.kill(os.getpid(), signal.SIGKILL)
        return predict_timed({"name": "knn", "k": 5}, x_train, y_train, x_test, task,
                             n_classes)


@pytest.fixture(scope="module")
def client():
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the stubs reach workers
    import dask
    from distributed import Client, LocalCluster

    # a task may kill one worker and be retried once; a second death is KilledWorker
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster) as c:
        yield c


SUITE = Suite("s", Suite.of("iris", kind="random", n_repeats=4).entries
              + Suite.of("diabetes", kind="random", n_repeats=4).entries)


def _errors(result):
    frame = result.results.sort_values(["dataset", "model", "split_id"])
    return frame[["dataset", "model", "split_id", "error"]].reset_index(drop=True)


def test_dask_equals_in_process_with_a_worker_killed(client, tmp_path):
    marker = tmp_path / "killed"
    local = arenalite.tournament(SUITE, [Knn("a"), Knn("b")], n_bootstrap=20, report=False,
                                 log=lambda text: None)
    on_dask = arenalite.tournament(SUITE, [Knn("a", marker=str(marker)), Knn("b")],
                                   out=tmp_path / "out", executor=client, n_bootstrap=20,
                                   report=False, log=lambda text: None)
    assert marker.exists()  # a worker did die mid-run
    assert on_dask.exit_status == 0
    assert _errors(on_dask).equals(_errors(local))
    assert np.allclose(on_dask.scorecard["elo"], local.scorecard["elo"])


def test_a_task_that_kills_every_worker_is_a_killed_worker_failure(client, tmp_path):
    suite = Suite.of("diabetes", kind="random", n_repeats=2)
    result = arenalite.tournament(suite, [Knn("a"), Knn("doom", always=True)],
                                  out=tmp_path, executor=client.get_executor(),
                                  n_bootstrap=20, report=False, log=lambda text: None)
    failures = result.failures
    assert set(failures["kind"]) == {"worker died"}
    assert set(failures["exception"]) == {"KilledWorker"}
    assert (failures["model"] == "doom").sum() == 2
    # Dask blames every task queued on a worker that died twice: "a" may be among them,
    # but each of its tasks has a row or a recorded failure, and --retry-failed ends it
    a_failed = int((failures["model"] == "a").sum())
    assert (result.results["model"] == "a").sum() + a_failed == 2
    again = arenalite.tournament(suite, [Knn("a")], out=tmp_path, executor=client,
                                 retry_failed=True, n_bootstrap=20, report=False,
                                 log=lambda text: None)
    assert again.exit_status == 0 and len(again.results) == 2


def test_cli_dask_address(client, tmp_path, capsys):
    from arenalite.cli import main

    address = client.scheduler.address
    assert main(["tournament", "iris", "--model", "knn", "--model", "attention", "--dask",
                 address, "--n-bootstrap", "20", "--quiet", "-o", str(tmp_path)]) == 0
    assert "vs attention" in capsys.readouterr().out
    assert main(["tournament", "iris", "--model", "knn", "--dask", address, "--workers", "2",
                 "-o", str(tmp_path / "x")]) == 2
    assert "not both" in capsys.readouterr().err


def test_api_executor_as_scheduler_address(client, tmp_path):
    result = arenalite.tournament("iris", ["knn"], out=tmp_path,
                                  executor=client.scheduler.address, n_bootstrap=0,
                                  report=False, log=lambda text: None)
    assert len(result.results) > 0 and result.exit_status == 0
