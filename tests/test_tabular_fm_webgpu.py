"""tabular_fm's WGSL kernels against the numpy reference, under dawn.node and in Chromium.

Random shapes (1–100 features, 2–10 classes, 8–1024 context rows, odd query counts and
batch sizes) and the bundled datasets, with the shipped weights. Inputs are rounded to
float32 first (the bridge's data contract), so both sides see the same numbers. Tolerance
1e-4: on probabilities, and on the standardized regression mean and spread.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from arenalite import browser, models
from arenalite.models import tabular_fm
from browser_harness import bridge_page, float32_dataset

ROOT = Path(__file__).resolve().parents[1]
BRIDGE = ROOT / "webgpu_bridge"
LIB = Path("/usr/lib/chromium")
TOL = 1e-4


def random_case(seed: int, n: int, m: int, f: int, c: int | None, batch: int) -> dict:
    rng = np.random.default_rng(seed)
    x_train = (rng.normal(size=(n, f)) * rng.uniform(0.5, 4, f)).astype(np.float32)
    x_test = (rng.normal(size=(m, f)) * 2).astype(np.float32)
    if c is None:
        y = (rng.normal(size=n) * 20 + 50).astype(np.float32).astype(float)
        task = "regression"
    else:
        y = rng.integers(0, c, n)
        y[:c] = np.arange(c)
        task = "binary" if c == 2 else "multiclass"
    return {"x_train": x_train.astype(float), "y_train": y, "x_test": x_test.astype(float),
            "task": task, "n_classes": c, "batch": batch}


# One case per corner (the row attention's cost grows with features × context rows²):
# 8 rows × 1 feature, 100 features × 10 classes, 1500 rows (past max_context: the seeded
# sample of 1024, the largest context, 3 classes, three odd query batches), regression,
# 7 classes × 57 features. (A second 1024-row case, 12 features × 33 queries, was 45 % of
# the dawn.node run and checked nothing the 1500-row case does not.)
CASES = [random_case(1, 8, 5, 1, 2, 3), random_case(2, 40, 17, 100, 10, 7),
         random_case(4, 1500, 13, 4, 3, 5), random_case(5, 200, 61, 30, None, 29),
         random_case(6, 90, 11, 57, 7, 11)]


def dataset_case(name: str, n_query: int = 50) -> dict:
    ds = float32_dataset(name)
    order = np.random.default_rng(0).permutation(ds.n_rows)
    test, train = order[:n_query], order[n_query:]
    return {"x_train": ds.X[train], "y_train": ds.y[train], "x_test": ds.X[test],
            "task": ds.task, "n_classes": ds.n_classes, "batch": 1024}


ALL = CASES + [dataset_case(n) for n in ("breast_cancer", "wine", "iris", "diabetes")]
IDS = [f"random{i}" for i in range(len(CASES))] + ["breast_cancer", "wine", "iris", "diabetes"]


def js_case(case: dict) -> dict:
    return {"model": {"name": "tabular_fm", "weights": None, "batchRows": case["batch"]},
            "data": {"xTrain": case["x_train"].ravel().tolist(),
                     "yTrain": np.asarray(case["y_train"], float).tolist(),
                     "xTest": case["x_test"].ravel().tolist(),
                     "nFeatures": int(case["x_train"].shape[1]), "task": case["task"],
                     "nClasses": case["n_classes"]}}


def check(case: dict, run: dict, what: str) -> None:
    model = {"name": "tabular_fm"}
    x_train, y_train, x_test = case["x_train"], case["y_train"], case["x_test"]
    if case["task"] == "regression":
        mean, spread = models.predict_distribution(model, x_train, y_train, x_test)
        kept = tabular_fm.subsample(x_train, np.asarray(y_train, float), 1024)[1]
        scale = float(np.std(kept))
        worst = max(np.abs(np.asarray(run["output"]) - mean).max(),
                    np.abs(np.asarray(run["spread"]) - spread).max()) / scale
    else:
        ref = models.predict(model, x_train, y_train, x_test, case["task"], case["n_classes"])
        gpu = browser.output_array(run["output"], len(x_test), case["task"], case["n_classes"])
        worst = float(np.abs(gpu - ref).max())
    assert worst < TOL, f"{what}: max |WebGPU - numpy| = {worst:.3g}"
    t = run["timings"]
    assert len(t["layers"]) == tabular_fm.read_weights().config["n_layers"]
    assert t["batches"] == -(-len(x_test) // case["batch"])
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])


def node_env() -> dict:
    icd = LIB / "vk_swiftshader_icd.json"
    if not icd.exists() or not (BRIDGE / "node_modules" / "webgpu").exists():
        pytest.fail(f"needs {icd} (Debian's chromium) and webgpu_bridge/node_modules "
                    "(npm ci)", pytrace=False)
    library_path = [str(LIB), os.environ.get("LD_LIBRARY_PATH")]
    return {**os.environ, "VK_ICD_FILENAMES": str(icd),
            "LD_LIBRARY_PATH": ":".join(filter(None, library_path))}


@pytest.mark.needs_processes
def test_wgsl_matches_numpy_under_dawn_node(tmp_path):
    cases = tmp_path / "cases.json"
    out = tmp_path / "out.json"
    cases.write_text(json.dumps({"weights": str(tabular_fm.DEFAULT_PATH),
                                 "cases": [js_case(c) for c in ALL]}))
    run = subprocess.run([shutil.which("node") or "node", str(BRIDGE / "test" / "fm_run.mjs"),
                          str(cases), str(out)], env=node_env(), capture_output=True, text=True,
                         timeout=900, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["adapter"]["architecture"] == "swiftshader"
    for case, result, name in zip(ALL, report["runs"], IDS, strict=True):
        check(case, result, f"dawn.node {name}")
    assert report["stats"]["contextPasses"] == len(ALL)


PREDICT_JS = """async ({model, data}) => {
  const f32 = (a) => Float32Array.from(a);
  const d = {...data, xTrain: f32(data.xTrain), yTrain: f32(data.yTrain), xTest: f32(data.xTest)};
  const {output, spread, timings} = await window.bridge.predict(model, d);
  return {output: Array.from(output), spread: spread ? Array.from(spread) : null, timings};
}"""


@pytest.fixture(scope="module")
def page():
    with bridge_page() as page:
        yield page


# Chromium checks the browser path on every task (binary, multiclass, regression; random
# and bundled data); dawn.node above checks every case, breast_cancer (the costliest
# dataset) included.
IN_CHROMIUM = [IDS.index(n) for n in ("random0", "random1", "random3", "wine", "diabetes")]


@pytest.mark.browser
@pytest.mark.parametrize("index", IN_CHROMIUM, ids=[IDS[i] for i in IN_CHROMIUM])
def test_wgsl_matches_numpy_in_chromium(page, index):
    case = ALL[index]
    check(case, page.evaluate(PREDICT_JS, js_case(case)), f"Chromium {IDS[index]}")


@pytest.mark.browser
def test_limits_and_bad_weights_in_chromium(page):
    case = js_case(random_case(7, 10, 2, 101, 2, 4))
    with pytest.raises(Exception, match=r"at most 100 features \(the weights. max_features\), "
                                       r"got 101"):
        page.evaluate(PREDICT_JS, case)
    with pytest.raises(Exception, match=r"tensor '[\w.]+' ends at byte .* truncated"):
        page.evaluate("""async () => {
          const bytes = await (await fetch("/weights/tabular_fm.safetensors")).arrayBuffer();
          const n = new DataView(bytes).getUint32(0, true);
          await window.arenaBridge.loadFmWeights(bytes.slice(0, 8 + n + 4000));
        }""")
