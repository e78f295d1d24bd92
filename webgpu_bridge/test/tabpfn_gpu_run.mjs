// TabPFN v3's raw member forward on dawn.node (spawned by tabpfn_gpu.test.js with the Vulkan
// SwiftShader environment): the committed forward fixtures (column, row, ICL and logits
// per stage), query batch sizes, members held at once, forced small buffer limits, the
// grouped-KV attention and RoPE operators against float64, dispatches per member, and,
// when argv[3] names a folder of cases written by the test's Python step, random configs
// against numpy. Writes the JSON report to argv[2]; exits non-zero on a failure to run
// (the test judges the figures).
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Engine } from "../src/engine.js";
import { requestDevice } from "../src/gpu.js";
import { Operators, ropeTable } from "../src/operators.js";
import { loadTabpfnWeights } from "../src/tabpfn/checkpoint.js";
import { TabPFNMember, forward } from "../src/tabpfn/model.js";
import { readNpz } from "./npz.js";

Object.assign(globalThis, globals);
const DATA = new URL("../../tests/data/tabpfn/", import.meta.url);
const INDEX = JSON.parse(readFileSync(new URL("forward.json", DATA), "utf8"));

const maxDiff = (a, b) => {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};
const weightsCache = new Map();
function weights(path) {
  if (!weightsCache.has(path)) weightsCache.set(path, loadTabpfnWeights(path));
  return weightsCache.get(path);
}

function fixture(name) {
  const z = readNpz(new URL(`forward_${name}.npz`, DATA).pathname);
  const { context_rows: N, checkpoint } = INDEX[name];
  const x = z.get("x");
  const F = x.shape[1];
  return { z, N, F, checkpoint: new URL(checkpoint, DATA).pathname, xTrain: x.data.subarray(0, N * F),
    xTest: x.data.subarray(N * F), yTrain: z.get("y_train").data };
}

/** Every committed forward fixture: each stage's output against the package's (and numpy's). */
async function fixtures(engine) {
  const runs = [];
  for (const name of Object.keys(INDEX)) {
    const f = fixture(name);
    const res = await forward(engine, await weights(f.checkpoint), f, { capture: true, batchRows: 5 });
    runs.push({ name, column: maxDiff(res.stages.column, f.z.get("column").data),
      row: maxDiff(res.stages.row, f.z.get("row").data), icl: maxDiff(res.stages.icl, f.z.get("icl").data),
      logits: maxDiff(res.output, f.z.get("logits").data), timings: res.timings,
      layerNames: res.member.layerNames() });
  }
  return runs;
}

/** One context pass, then the queries in batches of 1, 7 and all rows; dispatches per member. */
async function batches(engine) {
  const f = fixture("wide_many_classes");
  const member = await TabPFNMember.create(engine, await weights(f.checkpoint));
  const passes = engine.stats.contextPasses ?? 0;
  const d0 = engine.stats.dispatches;
  const context = await member.fitContext(f.xTrain, f.yTrain);
  const fitDispatches = engine.stats.dispatches - d0;
  const M = f.xTest.length / f.F;
  const outs = {};
  const created = {};
  const dispatches = {};
  for (const B of [1, 7, M, 7]) {
    const before = engine.stats.buffersCreated;
    const d = engine.stats.dispatches;
    outs[B] = (await member.queryBatches(context, f.xTest, { batchRows: B })).output;
    created[B] = engine.stats.buffersCreated - before;
    dispatches[B] = engine.stats.dispatches - d;
  }
  return { M, contextPasses: (engine.stats.contextPasses ?? 0) - passes, buffersCreatedLast: created[7],
    vs1: maxDiff(outs[7], outs[1]), vsAll: maxDiff(outs[7], outs[M]), output: maxDiff(outs[7], f.z.get("logits").data),
    dispatches: { fitContext: fitDispatches, perBatch: dispatches[M], batches1: dispatches[1], batchesOf7: dispatches[7] },
    config: member.config, plan: context.plan };
}

/** Three members (two checkpoints) fit one after the other, then queried in reverse. */
async function interleaved(engine) {
  const members = [];
  for (const [i, name] of ["classifier", "regressor", "wide_many_classes"].entries()) {
    const f = fixture(name);
    const member = await TabPFNMember.create(engine, await weights(f.checkpoint), { cacheKey: `k${i}` });
    members.push({ name, f, member, context: await member.fitContext(f.xTrain, f.yTrain) });
  }
  const out = {};
  for (const { name, f, member, context } of members.reverse()) {
    out[name] = maxDiff((await member.queryBatches(context, f.xTest, { batchRows: 4 })).output, f.z.get("logits").data);
  }
  return out;
}

/**
 * Forced small limits: chunked columns, row blocks, ICL chunks, split query batches, sliced
 * weights. Each chunked run on a fresh engine (zero-filled buffers: nothing the unchunked
 * run left behind can stand in for a slot the chunked one failed to write).
 */
async function chunking(device) {
  const fresh = () => new Engine(device);
  const engine = fresh();
  const f = fixture("regressor");
  const w = await weights(f.checkpoint);
  const full = await forward(engine, w, f);
  const limits = { maxStorageBufferBindingSize: 24576, maxBufferSize: 1 << 20 };
  const small = await forward(fresh(), w, f, { limits });
  const { columns, rows, iclRows, queryRows } = small.plan;
  let error = null;
  try {
    await forward(engine, w, f, { limits: { maxStorageBufferBindingSize: 1 << 20, maxBufferSize: 8192 } });
  } catch (e) {
    error = e.message;
  }
  const g = fixture("wide_many_classes");
  const wg = await weights(g.checkpoint);
  const wide = await forward(fresh(), wg, g, { limits: { maxStorageBufferBindingSize: 40000 } });
  const wideFull = await forward(engine, wg, g);
  const sliced = [...wide.member.ops.parts.values()].filter((p) => p.length > 1).length;
  return { plan: { columns, rows, iclRows, queryRows, F: f.F, N: f.N, M: f.xTest.length / f.F },
    vsUnchunked: maxDiff(small.output, full.output), output: maxDiff(small.output, f.z.get("logits").data), error,
    wide: { columns: wide.plan.columns, F: g.F, rows: wide.plan.rows, iclRows: wide.plan.iclRows, N: g.N,
      queryRows: wide.plan.queryRows, M: g.xTest.length / g.F, sliced,
      vsUnchunked: maxDiff(wide.output, wideFull.output), output: maxDiff(wide.output, g.z.get("logits").data) } };
}

let seed = 7;
const rand = (n) => Float32Array.from({ length: n }, () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 1073741824 - 1;
});

/** float64 attention of query t, head h over keys/values rows of kv (keys at 0, values at kw; KV head g). */
function attend64({ q, kv, t, h, H, g, dh, keys, kw }) {
  const s = Array.from({ length: keys }, (_, i) => {
    let dot = 0;
    for (let d = 0; d < dh; d++) dot += q[(t * H + h) * dh + d] * kv[i * 2 * kw + g * dh + d];
    return dot / Math.sqrt(dh);
  });
  const mx = Math.max(...s);
  const e = s.map((v) => Math.exp(v - mx));
  const tot = e.reduce((a, b) => a + b, 0);
  return Array.from({ length: dh }, (_, d) => e.reduce((o, w, i) => o + w * kv[i * 2 * kw + kw + g * dh + d], 0) / tot);
}

/** Grouped-KV attention against float64 (query head h reads KV head h / (H / kvHeads)). */
async function attentionChecks(engine, ops) {
  const checks = [];
  for (const [H, kvHeads, Tq, keys] of [[6, 3, 5, 9], [4, 1, 70, 33], [4, 4, 3, 80]]) {
    const dh = 8;
    const kw = kvHeads * dh;
    const q = rand(Tq * H * dh);
    const kv = rand(keys * 2 * kw);
    const out = engine.buffer("tabpfn.test.out", Tq * H * dh * 4);
    const [bq, bkv] = [engine.upload("tabpfn.test.q", q), engine.upload("tabpfn.test.kv", kv)];
    await engine.stage((pass) => ops.attention(pass, { q: bq, k: bkv, v: bkv, out, batches: 1, Tq, keys, H, dh,
      qBatch: 0, qRow: H * dh, kBatch: 0, kRow: 2 * kw, vOff: kw, oBatch: 0, oRow: H * dh, kvHeads }));
    const got = await engine.read(out, Tq * H * dh);
    let m = 0;
    for (let t = 0; t < Tq; t++) {
      for (let h = 0; h < H; h++) {
        const ref = attend64({ q, kv, t, h, H, g: Math.floor(h / (H / kvHeads)), dh, keys, kw });
        ref.forEach((v, d) => { m = Math.max(m, Math.abs(got[(t * H + h) * dh + d] - v)); });
      }
    }
    checks.push({ op: "attention", H, kvHeads, Tq, keys, maxDiff: m });
  }
  return checks;
}

/** RoPE (split halves, interleaved) against float64, the floats around the heads untouched. */
async function ropeChecks(engine, ops) {
  const checks = [];
  for (const [rows, period, H, dh, interleaved] of [[12, 4, 2, 8, false], [7, 7, 3, 4, true]]) {
    const stride = H * dh + 3;
    const x = rand(rows * stride);
    const freqs = Float32Array.from({ length: dh / 2 }, (_, i) => Math.fround(1 / 100 ** ((2 * i) / dh)));
    const bx = engine.upload("tabpfn.test.rope.x", x);
    const table = engine.upload("tabpfn.test.rope.t", ropeTable(freqs, period));
    await engine.stage((pass) => ops.rope(pass, { x: bx, rows, period, H, dh, stride, off: 3, interleaved, table }));
    const got = await engine.read(bx, rows * stride);
    let m = 0;
    const pairs = [];
    for (let r = 0; r < rows; r++) {
      for (let h = 0; h < H; h++) for (let i = 0; i < dh / 2; i++) pairs.push([r, r * stride + 3 + h * dh, i]);
      for (let j = 0; j < 3; j++) m = Math.max(m, Math.abs(got[r * stride + j] - x[r * stride + j]));
    }
    for (const [r, head, i] of pairs) {
      const [a, b] = interleaved ? [head + 2 * i, head + 2 * i + 1] : [head + i, head + i + dh / 2];
      const ang = Math.fround((r % period) * freqs[i]);
      m = Math.max(m, Math.abs(got[a] - (x[a] * Math.cos(ang) - x[b] * Math.sin(ang))),
        Math.abs(got[b] - (x[b] * Math.cos(ang) + x[a] * Math.sin(ang))));
    }
    checks.push({ op: "rope", rows, period, H, dh, interleaved, maxDiff: m });
  }
  return checks;
}

/** Random configs written by the test's Python step (numpy's forward on random_checkpoint weights). */
async function randomConfigs(engine, dir) {
  const cases = JSON.parse(readFileSync(`${dir}/cases.json`, "utf8"));
  const runs = [];
  for (const c of cases) {
    const z = readNpz(`${dir}/${c.name}.npz`);
    const w = await loadTabpfnWeights(c.weights);
    const res = await forward(engine, w, { xTrain: z.get("x_train").data, yTrain: z.get("y_train").data,
      xTest: z.get("x_test").data }, { batchRows: c.batch });
    runs.push({ ...c, output: maxDiff(res.output, z.get("output").data), batches: res.timings.batches });
  }
  return runs;
}

const keepAlive = setInterval(() => {}, 1000);
const gpu = create([]);
const { device, adapterInfo } = await requestDevice(gpu);
const engine = new Engine(device);
const report = { adapter: adapterInfo };
report.fixtures = await fixtures(engine);
report.batches = await batches(engine);
report.interleaved = await interleaved(engine);
report.chunking = await chunking(device);
const ops = await Operators.create(engine, [8]);
report.operators = [...await attentionChecks(engine, ops), ...await ropeChecks(engine, ops)];
if (process.argv[3]) report.random = await randomConfigs(engine, process.argv[3]);
report.stats = { ...engine.stats };
engine.destroy();
writeFileSync(process.argv[2], JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
