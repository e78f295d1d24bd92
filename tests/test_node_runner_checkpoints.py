"""TabPFN v3 and Google TabFM through the Node runner (issue 44, item 3): ``arenalite run
TABLE --runner webgpu --model tabpfn:weights=PATH`` (and ``tabfm:weights=FOLDER``) against
``--runner python`` on the same persisted split file of a table with text and missing
cells, within 1e-4 on the scores; the results rows' telemetry (T_embed, one time per layer
with its GPU timestamp, T_head, their sum the fold's time). The committed random-weight
fixtures (tests/data/tabpfn/classifier_small.ckpt and regressor_small.ckpt,
tests/data/tabfm/small: its classification/ and regression/ folders, the task picks), 2
members: SwiftShader is slow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import cli, runner
from node_harness import require_swiftshader
from test_node_runner_tables import read, write_table

DATA = Path(__file__).parent / "data"
WEIGHTS = {("tabpfn", "binary"): DATA / "tabpfn" / "classifier_small.ckpt",
           ("tabpfn", "multiclass"): DATA / "tabpfn" / "classifier_small.ckpt",
           ("tabpfn", "regression"): DATA / "tabpfn" / "regressor_small.ckpt",
           **{("tabfm", task): DATA / "tabfm" / "small"
              for task in ("binary", "multiclass", "regression")}}
TOL = 1e-4
CASES = list(WEIGHTS)
pytestmark = [pytest.mark.needs_processes, pytest.mark.slow]


def layer_list(field: object) -> list[float]:
    return [float(v) for v in str(field).split(";")]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture) -> None:
    assert cli.main(argv) == 0, capsys.readouterr().err


@pytest.mark.parametrize(("name", "task"), CASES)
def test_node_runner_equals_the_python_runner_on_a_table(name: str, task: str, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    icd = require_swiftshader()
    path = write_table(tmp_path / f"shop_{task}.csv", task, rows=90, seed=len(task))
    splits_dir = tmp_path / "splits"
    flags = ["--target", "y", "--leakage-columns", "id"]
    run_cli(["splits", str(path), *flags, "--n-repeats", "1", "-o", str(splits_dir)], capsys)
    spec = f"{name}:weights={WEIGHTS[name, task]},n_estimators=2"
    argv = ["run", str(path), *flags, "--splits-dir", str(splits_dir), "--model", spec]
    run_cli([*argv, "--runner", "webgpu", "--vulkan-icd", str(icd), "-o", str(tmp_path / "web")],
            capsys)
    run_cli([*argv, "--runner", "python", "-o", str(tmp_path / "py")], capsys)
    web = pd.read_csv(tmp_path / "web" / "results.csv")
    py = pd.read_csv(tmp_path / "py" / "results.csv")
    assert list(web.columns) == runner.COLUMNS and (web["runner"] == "webgpu").all()
    keys = ["model", "dataset", "split_id"]
    both = web.merge(py, on=keys, suffixes=("_web", "_py"), validate="one_to_one")
    assert len(both) == len(web) == len(py) == 3
    for col in ("task", "metric", "seed", "n_train", "n_test"):
        assert (both[f"{col}_web"] == both[f"{col}_py"]).all(), col
    scale = float(np.std(read(path).y)) if task == "regression" else 1.0
    diff = float(((both["score_web"] - both["score_py"]).abs() / scale).max())
    print(f"{name} {task}: max |web - python| score / {scale:.4g} = {diff:.3g}")
    assert diff < TOL, both[keys + ["score_web", "score_py"]]
    for _, row in web.iterrows():
        wall, gpu = layer_list(row["layer_times_ms"]), layer_list(row["gpu_layer_times_ms"])
        assert len(wall) == len(gpu) > 1, (wall, gpu)
        assert abs(sum(wall) - row["layers_ms"]) <= 1e-5 * row["layers_ms"] + 1e-6
        assert all(0 < g <= w * (1 + 1e-5) for g, w in zip(gpu, wall, strict=True)), (gpu, wall)
        parts = row["embed_ms"] + row["layers_ms"] + row["head_ms"]
        assert abs(parts - row["total_ms"]) <= 1e-9 * row["total_ms"]
        for stage in ("embed", "layers", "head", "total"):
            assert 0 <= row[f"gpu_{stage}_ms"] <= row[f"{stage}_ms"], stage
