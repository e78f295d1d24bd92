// One GPU run in Node through the `webgpu` package (dawn.node): each model on each task,
// compared with the float64 reference. Spawned by gpu_node.test.js with the Vulkan
// SwiftShader environment; prints one JSON line and exits non-zero on failure.
import { create, globals } from "webgpu";
import { Bridge, Operators } from "../src/index.js";
import { loadWeights } from "../src/weights.js";
import { SMALL_CONFIG, makeData, makeWeights, rng } from "./fixtures.js";
import { REFERENCES } from "./reference.js";

Object.assign(globalThis, globals);

/**
 * The linear kernel alone on shapes that are not multiples of its 32 x 32 tile, in both
 * weight layouts, with and without bias and accumulation.
 */
async function linearChecks(engine) {
  const ops = await Operators.create(engine);
  const checks = [];
  for (const [M, K, N, acc] of [[1, 1, 1, 0], [5, 33, 7, 1], [70, 17, 129, 0], [33, 80, 1, 1], [64, 64, 64, 0]]) {
    for (const layout of ["input-major", "torch"]) {
      const r = rng(M * 1000 + K * 10 + N);
      const [a, w, b, o] = [M * K, K * N, N, M * N].map((n) => Float32Array.from({ length: n }, () => r() - 0.5));
      const bias = acc ? null : b;
      const bufs = { a: engine.upload("t.a", a), w: engine.upload("t.w", w), b: engine.upload("t.b", b),
        out: engine.upload("t.o", o) };
      await engine.stage((pass) => ops.linear(pass, { a: bufs.a, M, K, N, w: bufs.w, layout, b: bias && bufs.b,
        out: bufs.out, accumulate: Boolean(acc) }));
      const got = await engine.read(bufs.out, M * N);
      const weight = (k, j) => (layout === "torch" ? w[j * K + k] : w[k * N + j]);
      const ref = (i, j) => {
        let x = (bias ? b[j] : 0) + (acc ? o[i * N + j] : 0);
        for (let k = 0; k < K; k++) x += a[i * K + k] * weight(k, j);
        return x;
      };
      const maxDiff = got.reduce((m, x, at) => Math.max(m, Math.abs(x - ref(Math.floor(at / N), at % N))), 0);
      checks.push({ shape: [M, K, N, acc], layout, maxDiff });
    }
  }
  return checks;
}
/** out(b, t, h) by float64 softmax attention over the strided operands (operators.js's layout). */
function attentionReference(c, outLen) {
  const { q, k, v, batches, Tq, keys, H, dh, qB, qR, kB, kR, vOff, oB, oR, scaleQ } = c;
  const out = new Float64Array(outLen);
  const one = (b, t, h) => {
    const qa = b * qB + t * qR + h * dh;
    const qs = Array.from({ length: dh }, (_, d) => scaleQ(q[qa + d], h, d, qa));
    const s = Array.from({ length: keys }, (_, i) => {
      let dot = 0;
      for (let d = 0; d < dh; d++) dot += qs[d] * k[b * kB + i * kR + h * dh + d];
      return dot / Math.sqrt(dh);
    });
    const m = Math.max(...s);
    const w = s.map((x) => Math.exp(x - m));
    const z = w.reduce((a, x) => a + x, 0);
    for (let d = 0; d < dh; d++) {
      const acc = w.reduce((a, wi, i) => a + wi * v[vOff + b * kB + i * kR + h * dh + d], 0);
      out[b * oB + t * oR + h * dh + d] = acc / z;
    }
  };
  for (let b = 0; b < batches; b++) {
    for (let t = 0; t < Tq; t++) {
      for (let h = 0; h < H; h++) one(b, t, h);
    }
  }
  return out;
}

/**
 * The tiled attention alone against float64: query blocks and key tiles that do not fill
 * (Tq, keys not multiples of 16), head dims 2 to 64, batch and row strides of every model's
 * layout, keys and values in one buffer, and the fused SSMax base and QASSMax query MLP.
 */
async function attentionChecks(engine) {
  const ops = await Operators.create(engine, [2, 6, 64, 16, 8, 4]);
  const gelu = (x) => 0.5 * x * (1 + erf(x / Math.SQRT2));
  const checks = [];
  const cases = [[1, 1, 1, 1, 2, null], [3, 17, 33, 2, 6, null], [2, 40, 5, 4, 64, null], [1, 70, 300, 8, 16, null],
    [4, 19, 21, 2, 8, "base"], [2, 33, 50, 2, 8, "query"], [1, 5, 7, 3, 4, "query1"]];
  for (const [batches, Tq, keys, H, dh, ssmax] of cases) {
    const r = rng(batches * 7 + Tq * 13 + keys + dh);
    const rand = (n) => Float32Array.from({ length: n }, () => 2 * r() - 1);
    const E = H * dh;
    // queries with a row stride of E + 3 floats; keys and values interleaved per row (stride 2E), one buffer
    const qR = E + 3, qB = Tq * qR, kR = 2 * E, kB = keys * kR, oR = E, oB = Tq * E;
    const q = rand(batches * qB), kv = rand(batches * kB), hidden = 8;
    const qOut = ssmax === "query1" ? 1 : dh;
    const base = rand(ssmax === "base" ? H : H * dh).map((x) => 1 + 0.5 * x);
    const mlp = rand(hidden * dh + hidden + qOut * hidden + qOut);
    const modulation = (qa, o) => {
      const hid = Array.from({ length: hidden }, (_, j) => {
        let s = mlp[hidden * dh + j];
        for (let d = 0; d < dh; d++) s += q[qa + d] * mlp[j * dh + d];
        return gelu(s);
      });
      let s = mlp[hidden * dh + hidden + qOut * hidden + o];
      for (let j = 0; j < hidden; j++) s += hid[j] * mlp[hidden * dh + hidden + o * hidden + j];
      return 1 + Math.tanh(s);
    };
    const scaleQ = (x, h, d, qa) => {
      if (!ssmax) return x;
      const bv = ssmax === "base" ? base[h] : base[h * dh + d];
      return ssmax === "base" ? x * bv : x * bv * modulation(qa, qOut === 1 ? 0 : d);
    };
    const bufs = { q: engine.upload("t.q", q), kv: engine.upload("t.kv", kv), out: engine.buffer("t.out", batches * oB * 4),
      base: engine.upload("t.base", base), mlp: engine.upload("t.mlp", mlp) };
    const operand = ssmax && { base: bufs.base, mlp: ssmax === "base" ? null : bufs.mlp, elementwise: ssmax !== "base",
      hidden, qOut };
    await engine.stage((pass) => ops.attention(pass, { q: bufs.q, k: bufs.kv, v: bufs.kv, out: bufs.out, batches, Tq,
      keys, H, dh, qBatch: qB, qRow: qR, kBatch: kB, kRow: kR, vOff: E, oBatch: oB, oRow: oR, ssmax: operand }));
    const got = await engine.read(bufs.out, batches * oB);
    const ref = attentionReference({ q, k: kv, v: kv, batches, Tq, keys, H, dh, qB, qR, kB, kR, vOff: E, oB, oR, scaleQ },
      batches * oB);
    const maxDiff = got.reduce((m, x, i) => Math.max(m, Math.abs(x - ref[i])), 0);
    checks.push({ shape: [batches, Tq, keys, H, dh], ssmax, maxDiff });
  }
  return checks;
}

/** erf to float64 precision (Abramowitz-Stegun 7.1.26 is too coarse; a series / continued fraction). */
function erf(x) {
  const t = Math.abs(x);
  if (t < 3) {
    let sum = t, term = t;
    for (let n = 1; n < 80; n++) {
      term *= -t * t / n;
      sum += term / (2 * n + 1);
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  let f = 0;
  for (let n = 60; n >= 1; n--) f = n / 2 / (t + f);
  return Math.sign(x) * (1 - Math.exp(-t * t) / Math.sqrt(Math.PI) / (t + f));
}
const keepAlive = setInterval(() => {}, 1000);
const bridge = await Bridge.create({ gpu: create([]) });
const weights = await loadWeights(await makeWeights(SMALL_CONFIG));
const report = { adapter: bridge.adapterInfo, runs: [] };
for (const task of ["binary", "multiclass", "regression"]) {
  const d = makeData(task, { seed: task.length });
  for (const model of [{ name: "knn", k: 5 }, { name: "attention" },
    { name: "icl_transformer", weights, batchRows: 10 }]) {
    const { output, timings } = await bridge.predict(model, d);
    const ref = REFERENCES[model.name](model, d);
    let maxDiff = 0;
    for (let i = 0; i < ref.length; i++) maxDiff = Math.max(maxDiff, Math.abs(output[i] - ref[i]));
    report.runs.push({ task, model: model.name, n: ref.length, outLen: output.length, maxDiff, timings });
  }
}
report.linear = await linearChecks(bridge.engine);
report.attention = await attentionChecks(bridge.engine);
report.stats = bridge.stats;
bridge.destroy();
console.log(JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
