"""The Node runner (``arenalite run --runner webgpu``): the bridge under dawn.node.

On the same persisted split files its CSV must be the Python runner's table within 1e-4
(scores; docs/models.md), with the GPU timestamp columns filled (SwiftShader offers
``timestamp-query``) and each stage's GPU time within its wall time; what it needs
(node, the npm package ``webgpu``, a Vulkan driver) is one clear error when missing.
tests/test_webgpu_page.py compares it with the page's CSV.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import cli, node_runner, runner, splits
from browser_harness import float32_dataset
from node_harness import BRIDGE, SWIFTSHADER_ICD, require_swiftshader

ICD = SWIFTSHADER_ICD
TOL = 1e-4
MODELS = ["knn", "attention:temperature=0.5", "icl_transformer"]
pytestmark = [pytest.mark.needs_processes, pytest.mark.slow]


@pytest.fixture(scope="module")
def swiftshader() -> Path:
    return require_swiftshader()


def persisted(folder: Path, names: list[str]) -> dict[str, dict]:
    out = {}
    for name in names:
        ds = float32_dataset(name)
        split = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name, n_repeats=1)
        out[name] = splits.load(splits.save(split, folder / f"{name}.splits.json"))
    return out


def test_cli_node_runner_matches_the_python_runner(swiftshader: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture) -> None:
    names = ["breast_cancer", "iris", "diabetes"]
    chosen = persisted(tmp_path, names)
    argv = ["run", *names, "--runner", "webgpu", "--vulkan-icd", str(swiftshader),
            "--splits-dir", str(tmp_path), "--output", str(tmp_path / "out")]
    for spec in MODELS:
        argv += ["--model", spec]
    assert cli.main(argv) == 0, capsys.readouterr().err
    web = pd.read_csv(tmp_path / "out" / "results.csv")
    assert list(web.columns) == runner.COLUMNS
    assert (web["runner"] == "webgpu").all()
    assert (pd.read_csv(tmp_path / "out" / "summary.csv")["n_folds"] == 3).all()
    models = [cli.parse_model(m) for m in MODELS]
    # the runner reads float32-rounded data, as the bridge sees it (Float32Array)
    py = runner.run({n: float32_dataset(n) for n in names}, chosen, models, progress=False)
    keys = ["model", "dataset", "split_id"]
    both = web.merge(py, on=keys, suffixes=("_web", "_py"), validate="one_to_one")
    assert len(both) == len(web) == len(names) * len(MODELS) * 3
    for col in ("task", "metric", "seed", "n_train", "n_test"):
        assert (both[f"{col}_web"] == both[f"{col}_py"]).all(), col
    reg = both["task_web"] == "regression"
    scale = {n: float(np.std(float32_dataset(n).y)) for n in names}
    diff = (both["score_web"] - both["score_py"]).abs()
    diff[reg] /= both.loc[reg, "dataset"].map(scale)
    assert diff.max() < TOL, both.loc[diff.idxmax(), keys + ["score_web", "score_py"]]
    for stage in ("embed", "layers", "head", "total"):
        gpu, wall = web[f"gpu_{stage}_ms"], web[f"{stage}_ms"]
        assert (gpu.notna() & (gpu >= 0) & (gpu <= wall)).all(), stage
    assert (web["gpu_layers_ms"] > 0).all()


def test_missing_requirements_are_one_clear_line(swiftshader: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture) -> None:
    chosen = persisted(tmp_path, ["iris"])
    data = {"iris": float32_dataset("iris")}
    models = [{"name": "knn"}]

    def error(**options) -> str:
        with pytest.raises(node_runner.NodeRunnerError) as caught:
            node_runner.run_to_csv(data, chosen, models, tmp_path / "r.csv", **options)
        return str(caught.value)

    # no Vulkan driver: the loader and the ICD are Debian chromium's, not on the system
    monkeypatch.delenv("VK_ICD_FILENAMES", raising=False)
    monkeypatch.setenv("LD_LIBRARY_PATH", "")
    assert "dawn.node found no WebGPU adapter" in error()
    assert "--vulkan-icd /usr/lib/chromium/vk_swiftshader_icd.json" in error()
    assert "not found" in error(vulkan_icd=tmp_path / "none.json")
    # no npm package: a copy of the bridge without node_modules
    bare = tmp_path / "bridge"
    shutil.copytree(BRIDGE, bare, ignore=shutil.ignore_patterns("node_modules"))
    assert "npm package 'webgpu' (dawn.node) cannot be loaded" in error(bridge_dir=bare,
                                                                        vulkan_icd=swiftshader)
    assert "the WebGPU bridge was not found" in error(bridge_dir=tmp_path)
    assert "node not found on PATH" in error(node="no-such-node")
    # through the CLI: one "arenalite: error:" line
    code = cli.main(["run", "iris", "--model", "knn", "--runner", "webgpu", "--output",
                     str(tmp_path / "o"), "--bridge-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("arenalite: error: the WebGPU bridge")


def test_model_payload_keeps_python_labels_and_weights_paths(tmp_path: Path) -> None:
    assert node_runner.model_payload({"name": "knn", "k": 3}) == {"name": "knn", "k": 3,
                                                                  "label": "knn(k=3)"}
    tr = node_runner.model_payload({"name": "icl_transformer", "weights": "w.json"})
    assert tr["weights"] == str(Path("w.json").resolve())
    with pytest.raises(ValueError, match=r"unknown parameters \['kk'\]"):
        node_runner.model_payload({"name": "knn", "kk": 3})
