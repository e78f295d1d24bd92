"""A tournament killed (SIGKILL) at random points and rerun loses nothing: the final
results equal an uninterrupted run's (scores identical, timings aside), no row missing or
repeated."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

pytestmark = [pytest.mark.needs_processes, pytest.mark.slow,
              pytest.mark.filterwarnings("ignore::UserWarning")]

DRIVER = """
import sys, time
import arenalite
from arenalite.models import predict_timed
from arenalite.tournament import Model, Suite


class Slow(Model):
    '''knn that takes a few ms a split, so that kills land among the tasks.'''

    def __init__(self, k):
        self.label, self.params, self.k = f"slow-knn-{k}", {"k": k}, k

    def predict_timed(self, x_train, y_train, x_test, task, n_classes):
        time.sleep(0.01)
        return predict_timed({"name": "knn", "k": self.k}, x_train, y_train, x_test, task,
                             n_classes)


suite = Suite("s", Suite.of("iris", kind="random", n_repeats=25).entries
              + Suite.of("diabetes", kind="random", n_repeats=25).entries)
arenalite.tournament(suite, [Slow(3), Slow(9)], out=sys.argv[1], n_bootstrap=10,
                     report=False, progress=False, log=lambda text: None)
"""

SCORES = ["model", "dataset", "split_id", "score", "error", "n_train", "n_test"]


def _table(path):
    frame = pd.read_csv(path, dtype={"split_id": str})
    return frame[SCORES].sort_values(["dataset", "model", "split_id"]).reset_index(drop=True)


def test_sigkill_at_random_points_then_resume(tmp_path):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    whole = tmp_path / "whole"
    subprocess.run([sys.executable, str(driver), str(whole)], check=True, timeout=300)
    expected = _table(whole / "results.csv")
    assert len(expected) == 2 * 2 * 25

    out = tmp_path / "killed"
    results = out / "results.csv"
    rng = np.random.default_rng(43)

    def rows() -> int:
        return len(results.read_bytes().split(b"\n")) - 2 if results.exists() else 0

    kills, rows_at_kill = 0, []
    for attempt in range(20):
        process = subprocess.Popen([sys.executable, str(driver), str(out)])
        if attempt == 0:  # once early: during the set-up or the first tasks
            time.sleep(float(rng.uniform(0.2, 1.0)))
        else:  # then after a random number of new rows, at a random moment of a task
            target = rows() + int(rng.integers(1, 20))
            while process.poll() is None and rows() < target:
                time.sleep(0.002)
            time.sleep(float(rng.uniform(0.0, 0.02)))
        if process.poll() is not None:
            assert process.returncode == 0
            break
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        kills += 1
        rows_at_kill.append(rows())
    print(f"\nresume: {kills} SIGKILLs, rows in results.csv after each: {rows_at_kill}")
    assert kills >= 3, kills
    assert any(0 < n < len(expected) for n in rows_at_kill), rows_at_kill
    got = _table(out / "results.csv")
    assert not got.duplicated(["dataset", "model", "split_id"]).any()
    pd.testing.assert_frame_equal(got, expected)
    assert len(pd.read_csv(out / "failures.csv")) == 0
