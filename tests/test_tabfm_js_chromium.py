"""Google TabFM's JavaScript CPU side in Chromium: the checkpoint read the ways a page gets
it (the folder's two files picked, a parent folder's four, the convert's single file, a
folder served over http with the task picking), then webgpu_bridge/src/tabfm/predictor.js's
``runTabfm`` on WebGPU (SwiftShader) on tables of tests/data/tabfm/wrappers/cases.json,
within 1e-4 of Python's ``arenalite.models.predict`` (tests/data/tabfm/js/predict.json,
scripts/make_tabfm_js_fixtures.py). The tables go in as TransformToNumerical's numbers
(Python's ``numeric_table``; the JavaScript one is checked against it in test_tabfm_js.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabfm.preprocessing import numeric_table
from browser_harness import bridge_page
from test_tabfm_chromium import serve
from test_tabfm_preprocessing import frames

DATA = Path(__file__).resolve().parent / "data" / "tabfm"
CASES = json.loads((DATA / "wrappers" / "cases.json").read_text())["cases"]
PREDICT = json.loads((DATA / "js" / "predict.json").read_text())
RUN = ("binary", "regression", "frame_multiclass", "frame_binary_dates")
TOL = 1e-4
pytestmark = pytest.mark.browser

WEIGHTS_JS = """async () => {
  const ck = await import("/bridge/tabfm/checkpoint.js");
  const bytes = async (url) => new Uint8Array(await (await fetch(url)).arrayBuffer());
  const file = async (path) => ({ bytes: await bytes(`/tabfm-data/${path}`),
    name: path.split("/").pop(), webkitRelativePath: path });
  const sizes = (w) => [w.config.is_classifier, w.tensors.size, w.name];
  const two = await ck.loadTabfmWeights({ files: [await file("small/classification/config.json"),
    await file("small/classification/model.safetensors")] });
  const four = await ck.loadTabfmWeights({ files: await Promise.all(["classification", "regression"]
    .flatMap((t) => ["config.json", "model.safetensors"].map((f) => file(`small/${t}/${f}`)))) });
  const converted = await ck.loadTabfmWeights(await file("js/converted.safetensors"));
  const served = await ck.loadTabfmWeights("/tabfm-data/small");
  let refused = null;
  try {
    await ck.loadTabfmWeights({ files: [await file("small/classification/config.json"),
      await file("small/classification/model.safetensors")] }, { task: "regression" });
  } catch (error) {
    refused = error.message;
  }
  return { two: sizes(two), four: sizes(await ck.tabfmWeightsFor(four, "regression")),
    converted: sizes(converted), refused,
    served: sizes(await ck.tabfmWeightsFor(served, "multiclass")) };
}"""

RUN_JS = """async ({ cases }) => {
  const { loadTabfmWeights } = await import("/bridge/tabfm/checkpoint.js");
  const { runTabfm } = await import("/bridge/tabfm/predictor.js");
  const weights = await loadTabfmWeights("/tabfm-data/wrappers/checkpoint");
  const defaults = { n_estimators: 32, softmax_temperature: 0.9, average_logits: true,
    random_state: 42, outlier_threshold: 4.0, max_num_features: 500, class_shift: true };
  const out = {};
  for (const c of cases) {
    const C = c.task === "regression" ? 0 : Math.max(...c.y) + 1;
    const d = { xTrain: Float64Array.from(c.xTrain), yTrain: Float64Array.from(c.y),
      xTest: Float64Array.from(c.xTest), F: c.F, n: c.y.length, m: c.xTest.length / c.F, C,
      task: c.task, nCategorical: c.nCategorical };
    let members = 0;
    const res = await runTabfm(window.bridge.engine, { ...defaults, ...c.options, weights }, d,
      { onMember: (done) => { members = done; } });
    out[c.name] = { output: Array.from(res.output), members, layerNames: res.timings.layerNames,
      layers: res.timings.layers.length };
  }
  return out;
}"""


@pytest.fixture(scope="module")
def page():
    with bridge_page(lambda p, url: serve(p, url, "tabfm-data", DATA)) as p:
        yield p


def test_a_page_reads_the_checkpoint_every_way(page) -> None:
    got = page.evaluate(WEIGHTS_JS)
    assert got["two"] == [True, 323, "small/classification/model.safetensors"]
    assert got["four"] == [False, 328, "small/regression/model.safetensors"]
    assert got["converted"] == [False, 328, "js/converted.safetensors"]
    assert got["served"] == [True, 323, "/tabfm-data/small/classification/model.safetensors"]
    assert got["refused"] == ("Google TabFM weights 'small/classification/model.safetensors': "
                              "a classification checkpoint, asked for regression")


def test_the_predictor_equals_pythons_in_chromium(page) -> None:
    cases = []
    for name in RUN:
        case = CASES[name]
        if case["kind"] == "frame":
            table = numeric_table(*frames(case))
            x_train, x_test, n_cat = table.train, table.test, table.n_categorical
        else:
            x_train, x_test, n_cat = np.array(case["x_train"]), np.array(case["x_test"]), 0
        cases.append({"name": name, "task": case["task"], "options": PREDICT[name]["options"],
                      "xTrain": x_train.ravel().tolist(), "xTest": x_test.ravel().tolist(),
                      "F": int(x_train.shape[1]), "y": case["y_train"], "nCategorical": n_cat})
    got = page.evaluate(RUN_JS, {"cases": cases})
    for name in RUN:
        want = np.array(PREDICT[name]["output"], dtype=float).ravel()
        out = np.array(got[name]["output"])
        assert out.shape == want.shape, name
        y = np.array(CASES[name]["y_train"], dtype=float)
        scale = float(np.std(y)) if CASES[name]["task"] == "regression" else 1.0
        print(f"{name}: max |JS - Python| {np.abs(out - want).max():.3g} (scale {scale:.3g})")
        assert np.abs(out - want).max() <= TOL * scale, (name, np.abs(out - want).max())
        assert got[name]["members"] == PREDICT[name]["options"]["n_estimators"]
        assert got[name]["layerNames"] == ["row", "row_2", "icl.0", "icl.1"]
        assert got[name]["layers"] == PREDICT[name]["layers"]
