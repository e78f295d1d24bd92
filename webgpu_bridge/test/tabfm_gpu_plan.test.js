// Google TabFM's buffer plan (src/tabfm/model.js planChunks / bufferPlan, pure: no GPU) at
// the v1.0.0 checkpoint's size (tests/data/tabfm/shapes.json: 1.64 B weights) with 10,000
// context rows: every buffer within WebGPU's default limits (maxStorageBufferBindingSize
// 128 MiB, maxBufferSize 256 MiB) by chunking, weights per tensor; a table past what can be
// chunked gets one Error naming the limit, and fits under an adapter's higher limit.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { bufferPlan, planChunks } from "../src/tabfm/model.js";

const SHAPES = JSON.parse(readFileSync(new URL("../../tests/data/tabfm/shapes.json", import.meta.url), "utf8"));
const MiB = 1 << 20;
const DEFAULT = { bytes: 128 * MiB, name: "maxStorageBufferBindingSize" };  // min(128 MiB binding, 256 MiB buffer)

function v1(kind) {
  const { config, shapes } = SHAPES[`v1_0_0_${kind}`];
  return { config, shapes: new Map(shapes) };
}

for (const kind of ["classification", "regression", "decoder_hidden"]) {
  test(`v1.0.0 ${kind}, 10,000 context rows × 100 features: every buffer within the default 128 MiB`, () => {
    const { config, shapes } = v1(kind);
    const weights = [...shapes.values()].reduce((s, shape) => s + shape.reduce((a, b) => a * b, 1), 0);
    assert.ok(weights > 1.63e9, `${weights} weights`);
    const got = bufferPlan(config, shapes, { N: 10000, H: 100, batch: 1024, limit: DEFAULT });
    const { plan } = got;
    for (const [role, floats] of got.roles) assert.ok(floats * 4 <= DEFAULT.bytes, `${role}: ${floats * 4} bytes`);
    assert.ok(got.largestWeight[1] * 4 <= DEFAULT.bytes, `largest weight ${got.largestWeight}`);
    assert.deepEqual(got.split, []);
    assert.equal(plan.T, 108);
    assert.ok(plan.columns(10000, 100) >= 1 && plan.columns(10000, 100) < 100);
    assert.ok(plan.tokenRows < 10000);
    if (kind === "classification") {
      const gib = (f) => (f * 4 / 2 ** 30).toFixed(2);
      console.log(`v1.0.0, N 10000, H 100, limit ${DEFAULT.name} ${DEFAULT.bytes}: column chunks of ` +
        `${plan.columns(10000, 100)} / ${plan.columns(10000, plan.T)} columns, token blocks of ${plan.tokenRows} rows, ` +
        `ICL rows ${plan.iclRows}, query batches of at most ${plan.queryRows} rows; largest weight ` +
        `${got.largestWeight[0]} ${got.largestWeight[1] * 4} bytes; weights ${gib(weights)} GiB, context caches ` +
        `${gib(got.totalContextFloats)} GiB`);
      for (const [role, floats] of got.roles) console.log(`  ${role}: ${(floats * 4 / MiB).toFixed(1)} MiB`);
    }
  });
}

test("a table past what chunks: one Error naming the limit; it fits under an adapter's higher limit", () => {
  const { config } = v1("classification");
  assert.throws(() => planChunks(config, { N: 20000, H: 100, limit: DEFAULT }), {
    message: "Google TabFM on WebGPU: one ICL block's keys of 20000 context rows needs 163840000 bytes in one " +
      "buffer, past this adapter's maxStorageBufferBindingSize of 134217728 bytes" });
  assert.throws(() => planChunks(config, { N: 10, H: 140000, limit: { bytes: 128 * MiB, name: "maxBufferSize" } }), {
    message: "Google TabFM on WebGPU: one row of 140008 tokens (row stage, 256 floats a token) needs 143368192 bytes " +
      "in one buffer, past this adapter's maxBufferSize of 134217728 bytes" });
  const high = { bytes: 2 ** 31 - 4, name: "maxStorageBufferBindingSize" };
  const plan = planChunks(config, { N: 20000, H: 100, limit: high });
  assert.ok(plan.queryRows >= 1);
});
