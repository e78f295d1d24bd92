// TabICL's raw member forward on dawn.node (spawned by tabicl_gpu.test.js with the Vulkan
// SwiftShader environment): the committed stage fixtures (column, row, output), query
// batch sizes, forced small buffer limits, the exact GELU, and, when argv[3] names a
// folder of cases written by the test's Python step, random shapes against numpy. Writes
// the JSON report to argv[2] (a pipe could lose the end of a long line at exit); exits
// non-zero on a failure to run (the test judges the figures).
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { Ops } from "../src/tabicl/layers.js";
import { TabICLMember, forward, loadTabiclWeights } from "../src/tabicl/model.js";
import { readNpz } from "./npz.js";

Object.assign(globalThis, globals);
const DATA = new URL("../../tests/data/tabicl/", import.meta.url);
const INDEX = JSON.parse(readFileSync(new URL("stages.json", DATA), "utf8"));

const maxDiff = (a, b) => {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};
const weightsCache = new Map();
function weights(checkpoint) {
  const file = new URL(checkpoint.replace(/\.ckpt$/, ".safetensors"), DATA).pathname;
  if (!weightsCache.has(file)) weightsCache.set(file, loadTabiclWeights(file));
  return weightsCache.get(file);
}

function fixture(name) {
  const z = readNpz(new URL(`stages_${name}.npz`, DATA).pathname);
  const { context_rows: N, checkpoint } = INDEX[name];
  const x = z.get("x");
  const H = x.shape[1];
  return { z, N, H, checkpoint, xTrain: x.data.subarray(0, N * H), xTest: x.data.subarray(N * H),
    yTrain: z.get("y_train").data };
}

/** Every committed stage fixture: column, row and output against numpy's. */
async function fixtures(engine) {
  const runs = [];
  for (const name of Object.keys(INDEX)) {
    const f = fixture(name);
    const res = await forward(engine, await weights(f.checkpoint), f, { capture: true, batchRows: 5 });
    runs.push({ name, column: maxDiff(res.stages.column, f.z.get("column").data),
      row: maxDiff(res.stages.row, f.z.get("row").data), output: maxDiff(res.output, f.z.get("output").data),
      timings: res.timings, nLayers: res.timings.layers.length });
  }
  return runs;
}

/** One context pass, then the queries in batches of 1, 7 and all rows. */
async function batches(engine) {
  const f = fixture("binary");
  const member = await TabICLMember.create(engine, await weights(f.checkpoint));
  const passes = engine.stats.contextPasses ?? 0;
  const context = await member.fitContext(f.xTrain, f.yTrain);
  const M = f.xTest.length / f.H;
  const outs = {};
  const created = {};
  for (const B of [1, 7, M, 7]) {
    const before = engine.stats.buffersCreated;
    outs[B] = (await member.queryBatches(context, f.xTest, { batchRows: B })).output;
    created[B] = engine.stats.buffersCreated - before;
  }
  return { M, contextPasses: (engine.stats.contextPasses ?? 0) - passes, buffersCreatedLast: created[7],
    vs1: maxDiff(outs[7], outs[1]), vsAll: maxDiff(outs[7], outs[M]), output: maxDiff(outs[7], f.z.get("output").data) };
}

/** Three members (two weights, one with the class tree) fit one after the other, then queried in reverse. */
async function interleaved(engine) {
  const members = [];
  for (const [i, name] of ["binary", "wide", "many_classes"].entries()) {
    const f = fixture(name);
    const member = await TabICLMember.create(engine, await weights(f.checkpoint), { cacheKey: `k${i}` });
    members.push({ name, f, member, context: await member.fitContext(f.xTrain, f.yTrain) });
  }
  const out = {};
  for (const { name, f, member, context } of members.reverse()) {
    out[name] = maxDiff((await member.queryBatches(context, f.xTest, { batchRows: 4 })).output, f.z.get("output").data);
  }
  return out;
}

/** Forced small limits: chunked columns, row blocks, ICL chunks, split query batches. */
async function chunking(engine) {
  const f = fixture("regression");
  const w = await weights(f.checkpoint);
  const full = await forward(engine, w, f);
  const limits = { maxStorageBufferBindingSize: 16384, maxBufferSize: 1 << 20 };
  const small = await forward(engine, w, f, { limits });
  const { columns, rows, iclRows, queryRows, groups } = small.plan;
  let error = null;
  try {
    await forward(engine, w, f, { limits: { maxStorageBufferBindingSize: 1 << 20, maxBufferSize: 8192 } });
  } catch (e) {
    error = e.message;
  }
  // 13 classes: two mixed-radix passes of cached column chunks, and the class tree
  const g = fixture("many_classes");
  const wg = await weights(g.checkpoint);
  const tree = await forward(engine, wg, g, { limits: { maxStorageBufferBindingSize: 40000 }, batchRows: 5 });
  const treeFull = await forward(engine, wg, g);
  return { plan: { columns, rows, iclRows, queryRows, groups, N: f.N, M: f.xTest.length / f.H },
    vsUnchunked: maxDiff(small.output, full.output), output: maxDiff(small.output, f.z.get("output").data), error,
    tree: { columns: tree.plan.columns, groups: tree.plan.groups, rows: tree.plan.rows, N: g.N,
      vsUnchunked: maxDiff(tree.output, treeFull.output), output: maxDiff(tree.output, g.z.get("output").data) } };
}

/** Exact GELU of the linear kernel (identity weight) on a grid, against a float64 erf. */
async function gelu(engine) {
  const xs = Float32Array.from({ length: 24 * 1024 + 1 }, (_, i) => -12 + i / 1024);
  const one = { config: {}, tensors: new Map([["one", Float32Array.of(1)]]), shapes: new Map([["one", [1, 1]]]) };
  const ops = await Ops.create(engine, one);
  const a = engine.upload("tabicl.test.gelu.x", xs);
  const out = engine.buffer("tabicl.test.gelu.out", xs.length * 4);
  await engine.stage((pass) => {
    ops.seq = 0;
    ops.linear(pass, { a, M: xs.length, K: 1, N: 1, w: "one", out, gelu: true });
  });
  return { xs: Array.from(xs), got: Array.from(await engine.read(out, xs.length)) };
}

/** Random shapes written by the test's Python step (numpy's forward on the fixtures' checkpoints). */
async function randomShapes(engine, dir) {
  const cases = JSON.parse(readFileSync(`${dir}/cases.json`, "utf8"));
  const runs = [];
  for (const c of cases) {
    const z = readNpz(`${dir}/${c.name}.npz`);
    const w = c.weights ? await loadTabiclWeights(c.weights) : await weights(c.checkpoint);
    const res = await forward(engine, w, { xTrain: z.get("x_train").data,
      yTrain: z.get("y_train").data, xTest: z.get("x_test").data }, { batchRows: c.batch });
    runs.push({ ...c, output: maxDiff(res.output, z.get("output").data), batches: res.timings.batches });
  }
  return runs;
}

const keepAlive = setInterval(() => {}, 1000);
const bridge = await Bridge.create({ gpu: create([]) });
const engine = bridge.engine;
const report = { adapter: bridge.adapterInfo };
report.fixtures = await fixtures(engine);
report.batches = await batches(engine);
report.interleaved = await interleaved(engine);
report.chunking = await chunking(engine);
report.gelu = await gelu(engine);
if (process.argv[3]) report.random = await randomShapes(engine, process.argv[3]);
report.stats = bridge.stats;
bridge.destroy();
writeFileSync(process.argv[2], JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
