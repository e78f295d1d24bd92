// TabPFN v3 on WebGPU within WebGPU's default buffer limits (issue 44 item 5), without a
// GPU: the member's chunk plan (src/tabpfn/model.js planChunks) and its weight slices
// (src/tabpfn/layers.js tensorSlices) at the tabpfn package's default v3 size (9.2.0's
// TabPFNV3Config: E 128, 3 column blocks of 128 inducing points, 3 row blocks, 4 CLS tokens,
// 24 ICL layers 512 wide) with 10,000 context rows: every buffer within
// maxStorageBufferBindingSize 128 MiB and maxBufferSize 256 MiB; a table past them: one
// Error naming the limit. And the context targets refused before any GPU work, as model.py's
// _targets words it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkConfig, expectedShapes } from "../src/tabpfn/checkpoint.js";
import { tensorSlices } from "../src/tabpfn/layers.js";
import { TabPFNMember, bufferLimit, planChunks, planShapes } from "../src/tabpfn/model.js";

const MiB = 1024 * 1024;
const DEFAULT_LIMITS = { maxStorageBufferBindingSize: 128 * MiB, maxBufferSize: 256 * MiB };
const device = { limits: DEFAULT_LIMITS };
const CLASSIFIER = checkConfig({ max_num_classes: 10 });
const REGRESSOR = checkConfig({ num_buckets: 5000 });

test("the default limits: the binding limit (128 MiB) is the one in force", () => {
  assert.deepEqual(bufferLimit(device), { bytes: 128 * MiB, name: "maxStorageBufferBindingSize" });
  assert.deepEqual(bufferLimit(device, { maxBufferSize: 1000 }), { bytes: 1000, name: "maxBufferSize" });
  assert.throws(() => bufferLimit({}), /the device reports no buffer limits/);
});

test("default v3 size, 10,000 context rows: every buffer within 128 MiB by chunking", () => {
  const limit = bufferLimit(device);
  for (const [config, classes, what] of [[CLASSIFIER, 10, "classifier"], [REGRESSOR, 0, "regressor"]]) {
    for (const F of [1, 100, 500]) {
      const plan = planChunks(planShapes(config), { N: 10000, F, classes, limit });
      console.log(`${what}, 10,000 rows × ${F} features: ${plan.columns} columns a chunk, row blocks of ` +
        `${plan.rows}, ICL chunks of ${plan.iclRows}, query batches up to ${plan.queryRows}; largest buffer ` +
        `${(plan.largest.bytes / MiB).toFixed(1)} MiB (${plan.largest.what})`);
      assert.ok(plan.largest.bytes <= 128 * MiB, JSON.stringify(plan.largest));
      assert.ok(plan.columns >= 1 && plan.columns <= F && plan.rows >= 1 && plan.iclRows >= 1 && plan.queryRows >= 1);
      if (F === 500) assert.ok(plan.columns < F && plan.rows < 10000, `chunked: ${JSON.stringify(plan)}`);
    }
  }
  // every weight tensor of the default size fits one buffer (the largest: the regressor's
  // 5000 × 1024 output projection, 19.5 MiB)
  for (const config of [CLASSIFIER, REGRESSOR]) {
    for (const [name, shape] of expectedShapes(config)) assert.equal(tensorSlices(name, shape, limit).length, 1, name);
  }
});

test("past the limits: one Error naming the limit and what did not fit", () => {
  const limit = bufferLimit(device);
  const shapes = planShapes(CLASSIFIER);
  // one column of 200,000 context rows (256 floats a row) is past 128 MiB
  assert.throws(() => planChunks(shapes, { N: 200000, F: 3, classes: 10, limit }),
    { message: "TabPFN on WebGPU: one column of 200000 context rows (column stage, 256 floats a row) needs " +
      "204800000 bytes in one buffer, past this adapter's maxStorageBufferBindingSize of 134217728 bytes" });
  // 40,000 context rows: one ICL layer's keys and values (1024 floats a row) are past it
  assert.throws(() => planChunks(shapes, { N: 40000, F: 10, classes: 10, limit }),
    { message: "TabPFN on WebGPU: one ICL layer's keys/values of 40000 context rows needs 163840000 bytes in one " +
      "buffer, past this adapter's maxStorageBufferBindingSize of 134217728 bytes" });
  // the adapter's higher limits (the bridge asks for them: src/gpu.js requestDevice) take it
  const big = bufferLimit({ limits: { maxStorageBufferBindingSize: 2 ** 31, maxBufferSize: 2 ** 32 } });
  assert.ok(planChunks(shapes, { N: 40000, F: 10, classes: 10, limit: big }).columns >= 1);
});

test("a weight past the limit is sliced by rows; a vector or one row past it is refused", () => {
  const limit = { bytes: 4000, name: "maxStorageBufferBindingSize" };
  assert.deepEqual(tensorSlices("w", [10, 100], limit), [[0, 10]]);
  assert.deepEqual(tensorSlices("w", [25, 100], limit), [[0, 10], [10, 10], [20, 5]]);
  assert.throws(() => tensorSlices("w", [2, 1001], limit),
    { message: "TabPFN on WebGPU: weight tensor 'w' needs 4004 bytes in one buffer, past this adapter's " +
      "maxStorageBufferBindingSize of 4000 bytes" });
  assert.throws(() => tensorSlices("b", [1001], limit), /weight tensor 'b' needs 4004 bytes/);
});

test("context targets are refused as model.py's _targets refuses them, before any GPU work", async () => {
  const member = (config) => {
    const shapes = expectedShapes(config);
    const ops = { shape: (name) => shapes.get(name), weights: { config, shapes, tensors: new Map() } };
    return new TabPFNMember({}, { config, shapes, tensors: new Map() }, ops, bufferLimit(device), "m0");
  };
  const small = { embed_dim: 8, nlayers: 1, feat_agg_num_heads: 2, dist_embed_num_heads: 2, icl_num_heads: 2 };
  const classifier = member(checkConfig({ ...small, max_num_classes: 4 }));
  const regressor = member(checkConfig({ ...small, num_buckets: 8 }));
  const x = new Float32Array(6);
  await assert.rejects(classifier.fitContext(new Float32Array(0), new Float32Array(0)),
    { message: "TabPFN needs at least one context row" });
  await assert.rejects(regressor.fitContext(x, Float32Array.of(1, NaN, 2)), { message: "TabPFN context targets must be finite" });
  await assert.rejects(classifier.fitContext(x, Float32Array.of(0, 1.5, 2)),
    { message: "TabPFN class labels must be integers 0 … C−1" });
  await assert.rejects(classifier.fitContext(x, Float32Array.of(0, 5, 7)),
    { message: "Target is out of range: this checkpoint takes classes 0 … 3, got 7" });
  await assert.rejects(classifier.fitContext(new Float32Array(7), Float32Array.of(0, 1, 2)),
    { message: "TabPFN: 7 context values are not 3 rows" });
});
