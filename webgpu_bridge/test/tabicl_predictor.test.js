// TabICL end to end on the bridge (IMPLEMENTATIONS.tabicl: src/tabicl/predictor.js) under
// dawn.node on Vulkan SwiftShader, in a child process (tabicl_predictor_run.mjs): the
// ensemble on the tiny fixture checkpoints (.ckpt and .safetensors) against Python's
// arenalite.models.predict run at test time (skipped without the repository's Python), the
// TabICLv1-layout fixture (shared column stages) against the package's predict_proba too,
// progress per member, Python's messages, and the telemetry's consistency.
import assert from "node:assert/strict";
import { reportTest } from "./swiftshader.js";
import { TABICL_NO_WEIGHTS } from "../src/index.js";

const TOL = 1e-4;
// T_fold (embed + Σ layers + head) against the wall time around Bridge.predict: the rest is
// validation, the weights lookup (cached), the member's creation and timer.finish's one
// timestamp read-back: 5–43 ms measured on SwiftShader here; asserted below this (README)
const OVERHEAD_MS = 250;

const gpuTest = reportTest("tabicl_predictor_run.mjs", { timeout: 600000 });

gpuTest("the ensemble equals Python's arenalite.models.predict within 1e-4 (.ckpt and .safetensors)", (r, t) => {
  if (!r.python) return t.skip("no repository Python for the reference");
  for (const c of r.runs) {
    assert.equal(c.outLen, c.refLen, c.weights);
    assert.ok(c.maxDiff <= TOL, `${c.task} ${c.weights}: ${c.maxDiff}`);
  }
});

gpuTest("progress per member, probabilities and a spread", (r) => {
  for (const c of r.runs) {
    assert.deepEqual(c.members, [[1, 2], [2, 2]]);
    if (c.task === "regression") {
      assert.equal(c.spread.length, c.outLen);
      assert.ok(c.spread.every((v) => v > 0 && Number.isFinite(v)));
    } else {
      const C = c.data.C;
      for (let i = 0; i < c.outLen; i += C) {
        assert.ok(Math.abs(c.output.slice(i, i + C).reduce((a, b) => a + b, 0) - 1) < 1e-5);
      }
    }
  }
});

gpuTest("telemetry: per-layer stages, GPU ≤ wall per stage, T_fold = embed + Σ layers + head within the overhead", (r) => {
  for (const c of r.runs) {
    const { timings: tm } = c;
    assert.equal(tm.layers.length, 4, "2 row blocks + 2 ICL layers of the fixture");
    assert.ok(Math.abs(tm.total - (tm.embed + tm.layers.reduce((a, b) => a + b, 0) + tm.head)) < 1e-6);
    assert.ok(tm.total <= c.outerMs && c.outerMs - tm.total <= OVERHEAD_MS, `${tm.total} vs ${c.outerMs}`);
    assert.ok(tm.batches >= 4, "two members × at least two query batches of 4");
    if (tm.gpu) {
      for (const stage of ["embed", "head", "total"]) assert.ok(tm.gpu[stage] >= 0 && tm.gpu[stage] <= tm[stage], stage);
      tm.gpu.layers.forEach((g, l) => assert.ok(g > 0 && g <= tm.layers[l], `layer ${l}`));
    }
  }
});

gpuTest("Python's messages: no weights, a checkpoint of the other task, a file that is not a checkpoint", (r) => {
  const m = r.messages;
  assert.equal(m.noWeights, TABICL_NO_WEIGHTS);
  assert.match(m.regressorOnClasses, /^checkpoint '.*regressor_small\.ckpt' is a TabICL regressor \(max_classes 0\); task 'multiclass' needs a TabICL classifier checkpoint$/);
  assert.match(m.classifierOnRegression, /^checkpoint '.*classifier_small\.ckpt' is a TabICL classifier \(max_classes 10\); task 'regression' needs a TabICL regressor checkpoint$/);
  assert.match(m.notACheckpoint, /is neither a torch checkpoint \(a zip archive holding data\.pkl\) nor a safetensors file/);
});

gpuTest("a classifier without feature groups (TabICLv1's layout) shares each call's first column stage: " +
  "the package's predict_proba at 8 members within 1e-5, and Python's", (r, t) => {
  const v = r.v1;
  assert.equal(v.outLen, v.wrapperLen);
  assert.deepEqual(v.members.map(([, total]) => total), Array(8).fill(8));
  assert.ok(v.wrapperDiff <= 1e-5, `TabICLClassifier.predict_proba: ${v.wrapperDiff}`);
  if (!r.python) return t.skip("no repository Python for the second reference");
  assert.equal(v.outLen, v.refLen);
  assert.ok(v.refDiff <= 1e-5, `arenalite.models.predict: ${v.refDiff}`);
});
