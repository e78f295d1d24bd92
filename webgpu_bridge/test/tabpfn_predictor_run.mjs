// TabPFN v3 end to end on dawn.node (spawned by tabpfn_predictor.test.js with the Vulkan
// SwiftShader environment): runTabpfn (src/tabpfn/predictor.js) on every case of
// tests/data/tabpfn/js/predictor.json (scripts/make_tabpfn_js_predictor_fixtures.py: Python's
// arenalite.models.predict of tabpfn), progress per member and the timings' shape. Writes
// the JSON report to argv[2]; exits non-zero on a failure to run (the test judges it).
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Engine } from "../src/engine.js";
import { requestDevice } from "../src/gpu.js";
import { loadTabpfnWeights } from "../src/tabpfn/checkpoint.js";
import { runTabpfn } from "../src/tabpfn/predictor.js";

Object.assign(globalThis, globals);
const DATA = new URL("../../tests/data/tabpfn/", import.meta.url);
const CASES = JSON.parse(readFileSync(new URL("js/predictor.json", DATA), "utf8"));
const num = (v) => (v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : v);
const maxDiff = (a, b) => {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[i] - num(b[i])));
  return m;
};

const MODEL_DEFAULTS = { n_estimators: null, softmax_temperature: null, random_state: 0,
  average_before_softmax: false, balance_probabilities: false };

async function runCase(engine, name, c) {
  const weights = await loadTabpfnWeights(new URL(c.ckpt, DATA).pathname);
  const [n, m, F] = c.shape;
  const d = { xTrain: Float64Array.from(c.x_train, num), yTrain: Float64Array.from(c.y_train, num),
    xTest: Float64Array.from(c.x_test, num), F, n, m, C: c.n_classes ?? 0, task: c.task,
    ...(c.categorical_indices ? { categoricalIndices: c.categorical_indices } : {}) };
  const progress = [];
  const model = { name: "tabpfn", ...MODEL_DEFAULTS, ...c.settings, weights, batchRows: 5 };
  const res = await runTabpfn(engine, model, d, { onMember: (done, total) => progress.push([done, total]) });
  const out = { name, task: c.task, members: res.members, progress, layerNames: res.timings.layerNames,
    layers: res.timings.layers.length, embed: res.timings.embed, head: res.timings.head, total: res.timings.total };
  if (c.task === "regression") {
    out.mean = maxDiff(res.output, c.mean);
    out.spread = maxDiff(res.spread, c.spread);
    const ys = Float64Array.from(c.y_train, num);
    const mu = ys.reduce((a, b) => a + b, 0) / ys.length;
    out.yStd = Math.sqrt(ys.reduce((a, b) => a + (b - mu) ** 2, 0) / ys.length);
  } else {
    out.proba = maxDiff(res.output, c.proba);
  }
  return out;
}

const gpu = create([]);
const { device, adapterInfo } = await requestDevice(gpu);
const engine = new Engine(device);
const report = { adapter: adapterInfo, runs: [] };
for (const [name, c] of Object.entries(CASES)) report.runs.push(await runCase(engine, name, c));
engine.destroy();
writeFileSync(process.argv[2], JSON.stringify(report));
process.exit(0);
