// TabICL on WebGPU without a GPU: the JS halves that mirror the numpy reference (mixed-radix
// digits, class-tree groups; values from pkg/arenalite/models/tabicl/column.py and icl.py),
// the chunk plan within buffer limits and its error, the WGSL sources (every tabicl kernel
// with the shared math in front).
import assert from "node:assert/strict";
import { test } from "node:test";
import { mixedRadixBases, targetPasses } from "../src/tabicl/column.js";
import { classGroups } from "../src/tabicl/icl.js";
import { KERNELS, loadKernel } from "../src/kernels.js";
import { planChunks } from "../src/tabicl/model.js";
import { quantileSummary } from "../src/tabicl/head.js";

test("mixed-radix bases and digits as column.py", () => {
  const python = { "13,10": [4, 4], "11,10": [4, 4], "100,10": [10, 10], "101,10": [5, 5, 5], "150,10": [6, 6, 6],
    "1000,10": [10, 10, 10], "1001,10": [6, 6, 6, 6], "7,3": [3, 3], "10,10": [10], "2,10": [2] };
  for (const [key, bases] of Object.entries(python)) {
    const [n, m] = key.split(",").map(Number);
    assert.deepEqual(mixedRadixBases(n, m), bases, key);
  }
  const y = Float32Array.of(0, 5, 12, 7, 3, 9, 11);
  assert.deepEqual(targetPasses(y, 10).map((p) => Array.from(p)), [[0, 1, 3, 1, 0, 2, 2], [0, 1, 0, 3, 3, 1, 3]]);
  const few = Float32Array.of(0, 3, 9);
  assert.equal(targetPasses(few, 10)[0], few, "10 classes or fewer: y itself, one pass");
  const reg = Float32Array.of(0.5, -1.25);
  assert.equal(targetPasses(reg, 0)[0], reg);
});

test("class-tree groups as icl.py", () => {
  assert.deepEqual(classGroups(13, 10), [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
  assert.deepEqual(classGroups(11, 3), [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]);
  const g = classGroups(101, 10);
  assert.deepEqual([g.filter((v) => v === 0).length, g.filter((v) => v === 9).length, Math.max(...g)], [11, 10, 9]);
});

// The full-size TabICLv2 classifier's widths (E 128, ff 256, 128 inducing points, 4 CLS, D 512).
const V2 = { column: { groups: (H) => H, width: 256, I: 128 }, row: { C: 4, width: 256 },
  icl: { D: 512, width: 1024, head: { outDim: 10 } } };

test("the chunk plan keeps every buffer within the limit, and names the limit past it", () => {
  const limit = { bytes: 128 * 2 ** 20, name: "maxStorageBufferBindingSize" };
  const plan = planChunks(V2, { N: 10000, H: 100, limit });
  const L = limit.bytes / 4;
  assert.ok(plan.columns * 10000 * 256 <= L && plan.columns >= 1, JSON.stringify(plan));
  assert.ok(plan.rows * 104 * 256 <= L && plan.rows < 10000);
  assert.ok(plan.iclRows * 1024 <= L && plan.queryRows >= 1);
  assert.throws(() => planChunks(V2, { N: 40000, H: 100, limit: { bytes: 64 * 2 ** 20, name: "maxBufferSize" } }), {
    message: "TabICL on WebGPU: one ICL layer's keys/values of 40000 context rows needs 163840000 bytes in one " +
      "buffer, past this adapter's maxBufferSize of 67108864 bytes" });
  assert.throws(() => planChunks(V2, { N: 1000, H: 2, limit: { bytes: 100000, name: "maxStorageBufferBindingSize" } }),
    /^Error: TabICL on WebGPU: one column of 1000 context rows \(column stage, 256 floats a row\) needs 1024000 bytes/);
});

test("every kernel source carries the shared exact GELU; the old per-model kernels are gone", async () => {
  for (const name of KERNELS) {
    const src = await loadKernel(name);
    assert.match(src, /fn gelu_exact/, name);
    assert.match(src, /@compute @workgroup_size/, name);
  }
  for (const gone of ["matmul", "gelu_mlp", "tabicl_linear", "tabicl_attention", "tabicl_qassmax", "tabicl_layer_norm"]) {
    assert.throws(() => loadKernel(gone), new RegExp(`unknown kernel '${gone}'`));
  }
});

test("quantile summary: mean and n - 1 variance per row", () => {
  const { mean, variance } = quantileSummary(Float32Array.of(1, 2, 3, 10, 10, 10), 2, 3);
  assert.deepEqual(Array.from(mean), [2, 10]);
  assert.deepEqual(Array.from(variance), [1, 0]);
});
