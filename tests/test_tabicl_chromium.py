"""TabICL on WebGPU in Chromium (SwiftShader) against the numpy reference.

The same checks as webgpu_bridge/test/tabicl_gpu.test.js and tabicl_predictor.test.js
(dawn.node), in the browser: every committed stage fixture (tests/data/tabicl/
stages_<case>.npz, index stages.json) through ONE member's raw forward (TabICLMember's
fitContext + queryBatches, as model.js's forward) against the package's own logits /
quantiles (``output``; the column and row stages too), and two random shapes through
``bridge.predict`` (the whole ensemble, n_estimators 2) against Python's
``arenalite.models.predict``. Tiny fixture checkpoints only (their .safetensors), which the
page fetches from ``/tabicl-data/`` (a route of this page onto tests/data/tabicl/; the
harness itself serves only the bridge and the packaged weights). Tolerance 1e-4: on the
raw outputs, on probabilities, and on the regression mean and spread over the target's
standard deviation.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite import browser, models
from browser_harness import bridge_page

DATA = Path(__file__).resolve().parent / "data" / "tabicl"
INDEX = json.loads((DATA / "stages.json").read_text())
TOL = 1e-4
pytestmark = pytest.mark.browser


def serve_fixtures(page, base_url: str) -> None:
    """``/tabicl-data/NAME`` → tests/data/tabicl/NAME: a page route, which Playwright
    consults before the harness's context route (that one still aborts and records every
    non-local request)."""

    def fulfil(route) -> None:
        name = route.request.url.split("/tabicl-data/", 1)[1]
        path = DATA / name
        if "/" in name or not path.is_file():
            route.fulfill(status=404, body="")
        else:
            route.fulfill(status=200, body=path.read_bytes(),
                          headers={"Content-Type": "application/octet-stream"})

    page.route(f"{base_url}/tabicl-data/**", fulfil)


@pytest.fixture(scope="module")
def page():
    with bridge_page(serve_fixtures) as page:
        yield page


MEMBER_JS = """async ({weights, xTrain, yTrain, xTest, batchRows}) => {
  const {TabICLMember, loadTabiclWeights} = window.arenaBridge;
  const engine = window.bridge.engine;
  const member = await TabICLMember.create(engine, await loadTabiclWeights(weights));
  const timer = member.timer();
  const context = await member.fitContext(Float32Array.from(xTrain), Float32Array.from(yTrain),
                                          {timer, capture: true});
  const {output, captured} = await member.queryBatches(context, Float32Array.from(xTest),
                                                       {batchRows, timer, capture: true});
  const timings = await timer.finish();
  const cat = (first, rest) => [first, ...rest].flatMap((p) => Array.from(p));
  return {output: Array.from(output), column: cat(context.captured.column, captured.column),
          row: cat(context.captured.row, captured.row), timings,
          adapter: window.bridge.adapterInfo};
}"""


def max_diff(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64).ravel()
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got - want).max())


@pytest.mark.parametrize("case", list(INDEX))
def test_member_forward_matches_the_stage_fixture_in_chromium(page, case):
    spec = INDEX[case]
    z = np.load(DATA / f"stages_{case}.npz")
    x, n = z["x"], spec["context_rows"]
    weights = "/tabicl-data/" + spec["checkpoint"].replace(".ckpt", ".safetensors")
    run = page.evaluate(MEMBER_JS, {"weights": weights, "xTrain": x[:n].ravel().tolist(),
                                    "yTrain": z["y_train"].tolist(),
                                    "xTest": x[n:].ravel().tolist(), "batchRows": 5})
    assert run["adapter"]["architecture"] == "swiftshader"
    diffs = {stage: max_diff(run[stage], z[stage]) for stage in ("column", "row", "output")}
    print(f"{case}: max |Chromium - numpy| " + ", ".join(f"{k} {v:.2g}" for k, v in diffs.items()))
    assert all(v < TOL for v in diffs.values()), f"{case}: {diffs}"
    t = run["timings"]
    assert t["batches"] == -(-spec["query_rows"] // 5)
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])


def random_case(seed: int, n: int, m: int, f: int, c: int | None, batch: int,
                checkpoint: str) -> dict:
    rng = np.random.default_rng(seed)
    x_train = (rng.normal(size=(n, f)) * rng.uniform(0.5, 4, f)).astype(np.float32)
    x_test = (rng.normal(size=(m, f)) * 2).astype(np.float32)
    x_train[:, 1] = np.round(x_train[:, 1])  # a column of few distinct values
    if c is None:
        y = (x_train[:, 0] * 3 + rng.normal(size=n) * 5 + 40).astype(np.float32).astype(float)
        task = "regression"
    else:
        y = rng.integers(0, c, n)
        y[:c] = np.arange(c)
        task = "binary" if c == 2 else "multiclass"
    return {"x_train": x_train.astype(float), "y_train": y, "x_test": x_test.astype(float),
            "task": task, "n_classes": c, "batch": batch, "checkpoint": checkpoint}


CASES = {"classifier_37x17_5classes": random_case(1, 37, 19, 17, 5, 7, "classifier_small.ckpt"),
         "regressor_29x4": random_case(2, 29, 11, 4, None, 4, "regressor_small.ckpt")}

PREDICT_JS = """async ({model, data}) => {
  const f32 = (a) => Float32Array.from(a);
  const d = {...data, xTrain: f32(data.xTrain), yTrain: f32(data.yTrain), xTest: f32(data.xTest)};
  const {output, spread, timings} = await window.bridge.predict(model, d);
  return {output: Array.from(output), spread: spread ? Array.from(spread) : null, timings};
}"""


@pytest.mark.parametrize("name", list(CASES))
def test_ensemble_matches_python_in_chromium(page, name):
    case = CASES[name]
    x_train, y_train, x_test = case["x_train"], case["y_train"], case["x_test"]
    task, c = case["task"], case["n_classes"]
    js_model = {"name": "tabicl", "weights": "/tabicl-data/" + case["checkpoint"],
                "n_estimators": 2, "batchRows": case["batch"]}
    run = page.evaluate(PREDICT_JS, {"model": js_model, "data": {
        "xTrain": x_train.ravel().tolist(), "yTrain": np.asarray(y_train, float).tolist(),
        "xTest": x_test.ravel().tolist(), "nFeatures": int(x_train.shape[1]), "task": task,
        "nClasses": c}})
    model = {"name": "tabicl", "weights": str(DATA / case["checkpoint"]), "n_estimators": 2}
    ref = models.predict(model, x_train, y_train, x_test, task, c)
    if task == "regression":
        mean, spread = models.predict_distribution(model, x_train, y_train, x_test)
        assert np.array_equal(mean, ref)
        scale = float(np.std(y_train))
        worst = max(max_diff(run["output"], ref), max_diff(run["spread"], spread)) / scale
    else:
        gpu = browser.output_array(run["output"], len(x_test), task, c)
        worst = float(np.abs(gpu - ref).max())
        assert np.allclose(gpu.sum(axis=1), 1, atol=1e-5)
    print(f"{name}: max |Chromium - Python| {worst:.2g}")
    assert worst < TOL, f"{name}: max |Chromium - Python| = {worst:.3g}"
    t = run["timings"]
    assert t["batches"] == 2 * -(-len(x_test) // case["batch"])  # two members
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])
