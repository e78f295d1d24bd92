// Google TabFM end to end on WebGPU (src/tabfm/predictor.js's runTabfm) under dawn.node on
// Vulkan SwiftShader, in a child process (tabfm_predictor_run.mjs): the ensemble with the
// wrappers' random-weight checkpoint (tests/data/tabfm/wrappers/checkpoint) on arrays and on
// DataFrames with text, dates and missing cells, against Python's arenalite.models.predict
// (tests/data/tabfm/js/predict.json, scripts/make_tabfm_js_fixtures.py) within 1e-4;
// progress per member, the timings' split and names, Python's messages.
import assert from "node:assert/strict";
import { reportTest } from "./swiftshader.js";

const TOL = 1e-4;

const gpuTest = reportTest("tabfm_predictor_run.mjs", { timeout: 600000 });

gpuTest("the ensemble equals Python's arenalite.models.predict within 1e-4 (arrays, text, dates, missing cells)", (r) => {
  assert.equal(r.runs.length, 8);
  for (const c of r.runs) {
    assert.equal(c.outLen, c.refLen, c.name);
    const scale = c.task === "regression" ? c.std : 1;
    assert.ok(c.maxDiff <= TOL * scale, `${c.name}: ${c.maxDiff}${c.task === "regression" ? ` (std y ${c.std})` : ""}`);
  }
  console.log(JSON.stringify(r.runs.map((c) => [c.name, c.maxDiff, c.task === "regression" ? c.maxDiff / c.std : null])));
});

gpuTest("progress per member and timings split as predictor.py's T_fold", (r) => {
  for (const c of r.runs) {
    assert.deepEqual(c.progress, Array.from({ length: c.members }, (_, i) => [i + 1, c.members]), c.name);
    const { embed, layers, head, total, layerNames } = c.timings;
    assert.deepEqual(layerNames, ["row", "row_2", "icl.0", "icl.1"]);
    assert.equal(layers.length, c.pythonLayers, "as many layers as Python's timings");
    assert.ok(embed > 0 && head > 0 && layers.every((v) => v >= 0), JSON.stringify(c.timings));
    assert.ok(Math.abs(total - (embed + layers.reduce((a, b) => a + b, 0) + head)) < 1e-6);
    assert.ok(total <= c.wall + 1, `T_fold ${total} ms within the wall time ${c.wall} ms`);
    if (c.timings.gpu) assert.equal(c.timings.gpu.layers.length, layers.length);
  }
});

gpuTest("Python's messages: no weights, a checkpoint of the other task, an option off its range", (r) => {
  assert.equal(r.errors.noWeights, r.errors.NO_WEIGHTS);
  assert.equal(r.errors.wrongTask, `checkpoint '${r.errors.regressorName}' is a Google TabFM regression checkpoint; ` +
    "task 'binary' needs its classification checkpoint");
  assert.equal(r.errors.unported, "tabfm option 'max_num_features' must be an integer ≥ 1, got 0");
});
