// TabPFN v3 end to end on the bridge's engine (src/tabpfn/predictor.js: runTabpfn) under
// dawn.node on Vulkan SwiftShader, in a child process (tabpfn_predictor_run.mjs): classifier
// and regressor checkpoints, the model's settings, and DataFrames with a text column,
// missing cells, a constant and an all-missing column (encoded as Python's encode_table
// does) against Python's arenalite.models.predict (tests/data/tabpfn/js/predictor.json,
// scripts/make_tabpfn_js_predictor_fixtures.py) within 1e-4; progress per member and the
// timings' layers. The refusals need no GPU.
import assert from "node:assert/strict";
import { test } from "node:test";
import { reportTest } from "./swiftshader.js";
import {
  NO_WEIGHTS, checkClasses, checkTabpfnTask, nMembers, probabilities, refuseUnported, runTabpfn,
} from "../src/tabpfn/predictor.js";
import { V2_5_INFERENCE_CONFIG } from "../src/tabpfn/checkpoint.js";

const TOL = 1e-4;

const gpuTest = reportTest("tabpfn_predictor_run.mjs", { timeout: 900000 });

gpuTest("runTabpfn equals Python's arenalite.models.predict within 1e-4 (probabilities; mean and spread over std(y))", (r) => {
  for (const c of r.runs) {
    if (c.task === "regression") {
      assert.ok(c.mean / c.yStd <= TOL, `${c.name}: mean ${c.mean} (std(y) ${c.yStd})`);
      assert.ok(c.spread / c.yStd <= TOL, `${c.name}: spread ${c.spread} (std(y) ${c.yStd})`);
    } else {
      assert.ok(c.proba <= TOL, `${c.name}: ${c.proba}`);
    }
  }
  if (process.env.TABPFN_FIGURES) console.log(JSON.stringify(r.runs.map(({ name, proba, mean, spread, yStd }) => ({ name, proba, mean, spread, yStd }))));
});

gpuTest("progress per member and the T_fold stages", (r) => {
  for (const c of r.runs) {
    assert.deepEqual(c.progress, Array.from({ length: c.members }, (_, i) => [i + 1, c.members]), c.name);
    assert.equal(c.layers, c.layerNames.length);
    assert.ok(c.layerNames.some((l) => l.startsWith("row")) && c.layerNames.some((l) => l.startsWith("icl")));
    assert.ok(c.embed > 0 && c.head > 0 && c.total >= c.embed + c.head, c.name);
  }
});

test("the refusals are Python's", async () => {
  assert.match(NO_WEIGHTS, /^model 'tabpfn' needs a TabPFN v3 checkpoint: download tabpfn-v3-classifier/);
  await assert.rejects(runTabpfn(null, { weights: null }, {}), { message: NO_WEIGHTS });
  assert.throws(() => checkTabpfnTask({ max_num_classes: 10 }, "regression", "checkpoint 'c.ckpt'"),
    { message: "checkpoint 'c.ckpt' is a TabPFN v3 classifier; task 'regression' needs a TabPFN v3 regressor checkpoint" });
  assert.throws(() => checkTabpfnTask({ max_num_classes: -1, num_buckets: 64 }, "binary", "checkpoint 'r.ckpt'"),
    { message: "checkpoint 'r.ckpt' is a TabPFN v3 regressor; task 'binary' needs a TabPFN v3 classifier checkpoint" });
  assert.throws(() => checkClasses({ max_num_classes: 10 }, { MAX_NUMBER_OF_CLASSES: 10 }, 11),
    { message: "TabPFN takes at most 10 classes (the checkpoint's max_num_classes and MAX_NUMBER_OF_CLASSES); the target has 11" });
  const cfg = V2_5_INFERENCE_CONFIG.classification;
  assert.throws(() => refuseUnported({ ...cfg, POLYNOMIAL_FEATURES: "all" }, 3),
    { message: "the checkpoint's inference config sets POLYNOMIAL_FEATURES='all'; arenalite's TabPFN port runs only POLYNOMIAL_FEATURES='no'" });
  assert.throws(() => refuseUnported({ ...cfg, SUBSAMPLE_SAMPLES: 1000 }, 3), { message: /SUBSAMPLE_SAMPLES=1000; .* runs only SUBSAMPLE_SAMPLES=None$/ });
  assert.throws(() => refuseUnported(cfg, 501), { message: /^the table has 501 features, more than PREPROCESS_TRANSFORMS\[0\]'s max_features_per_estimator 500/ });
  assert.throws(() => refuseUnported({ ...cfg, PREPROCESS_TRANSFORMS: [{ ...cfg.PREPROCESS_TRANSFORMS[0], name: "kdi" }] }, 3),
    { message: /^PREPROCESS_TRANSFORMS\[0\] uses the reshape transform 'kdi', not ported yet \(ported: \['squashing_scaler_default', / });
  assert.equal(nMembers(null, { N_ESTIMATORS: "auto" }), 8);
  assert.equal(nMembers(null, { N_ESTIMATORS: 4 }), 4);
  assert.equal(nMembers(3, { N_ESTIMATORS: 4 }), 3);
});

test("the aggregation: temperature, averaging, balancing, rows summing to 1", () => {
  const logits = Float32Array.from([1, 2, 0, 0, 3, 1, 2, 2, 2, -1, 0, 1]);  // 2 members × 2 rows × 3 classes
  for (const [avg, counts] of [[false, null], [true, null], [false, [1, 2, 3]]]) {
    const p = probabilities(logits, [2, 2, 3], 0.9, avg, counts);
    for (let r = 0; r < 2; r++) assert.ok(Math.abs(p[r * 3] + p[r * 3 + 1] + p[r * 3 + 2] - 1) < 1e-12);
  }
  const p = probabilities(Float32Array.from([0, Math.log(3)]), [1, 1, 2], 1);
  assert.ok(Math.abs(p[1] - 0.75) < 1e-7);
});
