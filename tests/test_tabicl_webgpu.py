"""TabICL on the WebGPU bridge end to end (issue 28, items 5–7): ``arenalite run --runner
webgpu --model tabicl:weights=PATH`` (the Node runner: the bridge under dawn.node on
SwiftShader) against the Python runner on the same persisted split files, within 1e-4, and
the telemetry columns (per-layer times, GPU ≤ wall, stages summing to the fold's time,
throughput). Tiny random-weight fixture checkpoints (tests/data/tabicl/), n_estimators 2:
SwiftShader is slow. The page's own TabICL run is in tests/test_webgpu_page.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite import cli, node_runner, runner, splits
from browser_harness import float32_dataset
from node_harness import SWIFTSHADER_ICD, require_swiftshader

DATA = Path(__file__).parent / "data" / "tabicl"
CLASSIFIER = DATA / "classifier_small.ckpt"
REGRESSOR = DATA / "regressor_small.safetensors"
ICD = SWIFTSHADER_ICD
TOL = 1e-4
N_LAYERS = 4  # the fixtures' 2 row blocks + 2 ICL layers
pytestmark = [pytest.mark.needs_processes, pytest.mark.slow]


@pytest.fixture(scope="module")
def swiftshader() -> Path:
    return require_swiftshader()


def layer_list(field: object) -> list[float]:
    return [float(v) for v in str(field).split(";")]


def check_telemetry(web: pd.DataFrame) -> None:
    """The telemetry columns: present, per layer, consistent."""
    assert list(web.columns) == runner.COLUMNS
    assert list(web.columns[-2:]) == runner.LAYER_COLUMNS  # new columns at the end only
    tab = web[web["model"].str.startswith("tabicl")]
    for _, row in tab.iterrows():
        wall, gpu = layer_list(row["layer_times_ms"]), layer_list(row["gpu_layer_times_ms"])
        assert len(wall) == len(gpu) == N_LAYERS
        # 6 significant digits per field
        assert abs(sum(wall) - row["layers_ms"]) <= 1e-5 * row["layers_ms"] + 1e-6
        assert abs(sum(gpu) - row["gpu_layers_ms"]) <= 1e-5 * row["gpu_layers_ms"] + 1e-6
        assert all(0 < g <= w * (1 + 1e-5) for g, w in zip(gpu, wall, strict=True)), (gpu, wall)
        # T_fold = T_embed + Σ T_layer + T_head (the bridge sums them; nothing else is in it)
        parts = row["embed_ms"] + row["layers_ms"] + row["head_ms"]
        assert abs(parts - row["total_ms"]) <= 1e-9 * row["total_ms"]
        assert np.isclose(row["rows_per_s"], row["n_test"] / (row["total_ms"] / 1e3))
    for stage in ("embed", "layers", "head", "total"):
        gpu, wall = tab[f"gpu_{stage}_ms"], tab[f"{stage}_ms"]
        assert (gpu.notna() & (gpu >= 0) & (gpu <= wall)).all(), stage


def compare(web: pd.DataFrame, py: pd.DataFrame, scale: float = 1.0) -> float:
    keys = ["model", "dataset", "split_id"]
    both = web.merge(py, on=keys, suffixes=("_web", "_py"), validate="one_to_one")
    assert len(both) == len(web) == len(py)
    for col in ("task", "metric", "seed", "n_train", "n_test"):
        assert (both[f"{col}_web"] == both[f"{col}_py"]).all(), col
    diff = float(((both["score_web"] - both["score_py"]).abs() / scale).max())
    assert diff < TOL, both[keys + ["score_web", "score_py"]]
    return diff


def run_webgpu(names: list[str], models: list[str], folder: Path, out: Path,
               capsys: pytest.CaptureFixture) -> pd.DataFrame:
    argv = ["run", *names, "--runner", "webgpu", "--vulkan-icd", str(ICD), "--splits-dir",
            str(folder), "--output", str(out)]
    for spec in models:
        argv += ["--model", spec]
    assert cli.main(argv) == 0, capsys.readouterr().err
    return pd.read_csv(out / "results.csv")


def test_node_runner_tabicl_classifier_matches_the_python_runner(
        swiftshader: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """iris on its 3-fold split file, the .ckpt read in JavaScript, next to knn; ranked."""
    ds = float32_dataset("iris")
    chosen = {"iris": splits.load(splits.save(
        splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset="iris", n_repeats=1),
        tmp_path / "iris.splits.json"))}
    specs = [f"tabicl:weights={CLASSIFIER},n_estimators=2", "knn"]
    web = run_webgpu(["iris"], specs, tmp_path, tmp_path / "out", capsys)
    assert (web["runner"] == "webgpu").all() and len(web) == 2 * 3
    check_telemetry(web)
    py = runner.run({"iris": ds}, chosen, [cli.parse_model(s) for s in specs], progress=False)
    print("classifier max |score diff|:", compare(web, py))
    ranked = arenalite.load_csv(tmp_path / "out" / "results.csv", seed="seed")
    assert len(ranked.elo_ranking(n_bootstrap=20, random_state=0).table) == 2


def test_node_runner_tabicl_regressor_matches_the_python_runner(swiftshader: Path,
                                                               tmp_path: Path) -> None:
    """diabetes on one persisted 70/30 split, the converted .safetensors (node_runner.run_to_csv,
    what ``arenalite run --runner webgpu`` calls)."""
    ds = float32_dataset("diabetes")
    chosen = {"diabetes": splits.load(splits.save(
        splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset="diabetes", kind="random",
                           n_repeats=1), tmp_path / "diabetes.splits.json"))}
    specs = [f"tabicl:weights={REGRESSOR},n_estimators=2"]
    # one holdout split: the CLI's summary needs two, so the Node runner's own entry point
    csv = node_runner.run_to_csv({"diabetes": ds}, chosen, [cli.parse_model(s) for s in specs],
                                 tmp_path / "node.csv", vulkan_icd=ICD)
    web = pd.read_csv(csv)
    assert len(web) == 1
    check_telemetry(web)
    py = runner.run({"diabetes": ds}, chosen, [cli.parse_model(s) for s in specs],
                    progress=False)
    print("regressor max |rmse diff| / std(y):", compare(web, py, float(np.std(ds.y))))
