// Google TabFM's raw member forward on dawn.node (spawned by tabfm_gpu.test.js with the
// Vulkan SwiftShader environment): every committed stage fixture (each stage and the
// output), query batch sizes from one context pass, members with their own cache keys,
// forced small buffer limits, dispatch counts, and, when argv[3] names a folder of cases
// written by the test's Python step, random configs against numpy. Writes the JSON report
// to argv[2]; exits non-zero on a failure to run (the test judges the figures).
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { TabFMMember, forward } from "../src/tabfm/model.js";
import { readNpz } from "./npz.js";
import { DATA, fixtureWeights, readFolder, stageFixture } from "./tabfm_helpers.js";

Object.assign(globalThis, globals);
const INDEX = JSON.parse(readFileSync(new URL("stages.json", DATA), "utf8"));
const STAGES = ["cells", "column", "row", "column_2", "row_2"];

const maxDiff = (a, b) => {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};
const weightsCache = new Map();
function weights(entry) {
  const key = `${entry.checkpoint}/${entry.task}`;
  if (!weightsCache.has(key)) weightsCache.set(key, fixtureWeights(entry));
  return weightsCache.get(key);
}
const options = (f) => ({ d: f.d, catMask: f.catMask });
const queryRows = (f) => f.xTest.length / f.H;
/** The rows of a stage array (context then query rows) from row `from` on. */
const tail = (a, rows, from) => a.subarray((a.length / rows) * from);

/** A fresh device's engine: no buffer an earlier run left behind can hide an out-of-range read. */
const freshEngine = async () => (await Bridge.create({ gpu: create([]) })).engine;

/** Every committed stage fixture: each stage (the ICL's query rows) and the output against numpy. */
async function fixtures(engine) {
  const runs = [];
  for (const name of Object.keys(INDEX)) {
    const f = stageFixture(name, INDEX);
    const res = await forward(engine, weights(f.entry), f, { ...options(f), capture: true, batchRows: 5 });
    const M = queryRows(f);
    const run = { name, N: f.N, M, timings: res.timings, dispatches: res.dispatches, batches: res.timings.batches };
    for (const s of STAGES) run[s] = maxDiff(res.stages[s], f.z.get(s).data);
    run.icl = maxDiff(res.stages.iclQuery, tail(f.z.get("icl").data, f.N + M, f.N));
    run.output = maxDiff(res.output, tail(f.z.get("output").data, f.N + M, f.N));
    runs.push(run);
  }
  return runs;
}

/** One context pass, then the queries in batches of 1, 7 and all rows. */
async function batches(engine) {
  const f = stageFixture("multiclass_padded", INDEX);
  const member = await TabFMMember.create(engine, weights(f.entry));
  const passes = engine.stats.contextPasses ?? 0;
  const context = await member.fitContext(f.xTrain, f.yTrain, options(f));
  const M = queryRows(f);
  const outs = {};
  const created = {};
  for (const B of [1, 7, M, 7]) {
    const before = engine.stats.buffersCreated;
    outs[B] = (await member.queryBatches(context, f.xTest, { batchRows: B })).output;
    created[B] = engine.stats.buffersCreated - before;
  }
  const ref = tail(f.z.get("output").data, f.N + M, f.N);
  return { M, contextPasses: (engine.stats.contextPasses ?? 0) - passes, vs1: maxDiff(outs[7], outs[1]),
    vsAll: maxDiff(outs[7], outs[M]), output: maxDiff(outs[M], ref), buffersCreatedLast: created[7],
    width: member.width(), layerNames: member.layerNames() };
}

/** Members with their own cache keys: contexts fitted first, queried after (an ensemble). */
async function interleaved(engine) {
  const names = ["binary", "regression", "wide"];
  const members = [];
  for (const [i, name] of names.entries()) {
    const f = stageFixture(name, INDEX);
    const member = await TabFMMember.create(engine, weights(f.entry), { cacheKey: `k${i}` });
    members.push({ name, f, member, context: await member.fitContext(f.xTrain, f.yTrain, options(f)) });
  }
  const out = {};
  for (const { name, f, member, context } of members) {
    const got = (await member.queryBatches(context, f.xTest)).output;
    out[name] = maxDiff(got, tail(f.z.get("output").data, f.N + queryRows(f), f.N));
  }
  return out;
}

/**
 * Forced small limits: chunked columns, token blocks, feed-forwards, split weights; past them
 * one error. The chunked run gets a fresh device (`fresh`), so no buffer a bigger run left
 * behind can hide an out-of-range read.
 */
async function chunking(engine, fresh) {
  const f = stageFixture("wide", INDEX);
  const w = weights(f.entry);
  const full = await forward(engine, w, f, options(f));
  const limits = { maxStorageBufferBindingSize: 14000, maxBufferSize: 1 << 20 };
  const small = await forward(fresh, w, f, { ...options(f), limits });
  const member = await TabFMMember.create(fresh, w, { limits });
  const split = [...member.ops.gpu.tensors].filter(([, t]) => t.parts.length > 1).map(([n]) => n);
  let error = null;
  try {
    await forward(engine, w, f, { ...options(f), limits: { maxStorageBufferBindingSize: 1 << 20, maxBufferSize: 8192 } });
  } catch (e) {
    error = e.message;
  }
  const p = small.plan;
  return { plan: { N: p.N, T: p.T, d: p.d, tokenRows: p.tokenRows, columns1: p.columns(p.N, p.d),
    columns2: p.columns(p.N, p.T), iclRows: p.iclRows, queryRows: p.queryRows, ffRows: p.ffRows(72) },
  vsUnchunked: maxDiff(small.output, full.output),
  output: maxDiff(small.output, tail(f.z.get("output").data, f.N + queryRows(f), f.N)), split, error };
}

/** The member's refusals of bad inputs (model.py's messages), each caught. */
async function refusals(engine) {
  const f = stageFixture("binary", INDEX);
  const member = await TabFMMember.create(engine, weights(f.entry));
  const y = Float64Array.from(f.yTrain);
  const bad = {
    d: [f.xTrain, y, { d: 7 }],
    catMask: [f.xTrain, y, { catMask: [true, false] }],
    nonFinite: [f.xTrain, Float64Array.from(y, (v, i) => (i === 3 ? NaN : v))],
    classRange: [f.xTrain, Float64Array.from(y, (v, i) => (i === 2 ? 5 : v))],
    classInteger: [f.xTrain, Float64Array.from(y, (v, i) => (i === 1 ? 0.5 : v))],
    rows: [f.xTrain.subarray(1), y],
  };
  const out = {};
  for (const [name, [x, yy, opts]] of Object.entries(bad)) {
    try {
      await member.fitContext(x, yy, opts ?? {});
      out[name] = null;
    } catch (e) {
      out[name] = e.message;
    }
  }
  return out;
}

/**
 * Random configs and tables made by numpy (the test's Python step). (tests/test_tabfm_webgpu.py
 * runs each fixture and random config on a fresh device.)
 */
async function randomConfigs(engine, dir) {
  const cases = JSON.parse(readFileSync(`${dir}/cases.json`, "utf8"));
  const runs = [];
  for (const c of cases) {
    const z = readNpz(`${dir}/${c.name}.npz`);
    const w = readFolder(`${dir}/${c.name}`);
    const x = { xTrain: z.get("x_train").data, yTrain: z.get("y_train").data, xTest: z.get("x_test").data };
    const catMask = Array.from(z.get("cat_mask").data, Boolean);
    const res = await forward(engine, w, x, { d: c.d, catMask, batchRows: c.batch });
    runs.push({ name: c.name, H: c.H, d: c.d, N: c.N, M: c.M, C: c.C, batch: c.batch, batches: res.timings.batches,
      output: maxDiff(res.output, z.get("output").data), dispatches: res.dispatches });
  }
  return runs;
}

const bridge = await Bridge.create({ gpu: create([]) });
const engine = bridge.engine;
const report = { adapter: bridge.adapterInfo };
report.fixtures = await fixtures(engine);
report.batches = await batches(engine);
report.interleaved = await interleaved(engine);
report.chunking = await chunking(engine, await freshEngine());
report.refusals = await refusals(engine);
if (process.argv[3]) report.random = await randomConfigs(engine, process.argv[3]);
writeFileSync(process.argv[2], JSON.stringify(report));
