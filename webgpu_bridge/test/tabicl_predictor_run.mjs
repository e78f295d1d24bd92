// TabICL end to end on the bridge under dawn.node (spawned by tabicl_predictor.test.js with
// the Vulkan SwiftShader environment): Bridge.predict({name: "tabicl", ...}) on small data
// with the tiny fixture checkpoints (.ckpt and .safetensors), against Python's
// arenalite.models.predict run at test time (REFERENCES.tabicl), the TabICLv1-layout
// fixture at 8 members (shared column stages) against the package's predict_proba
// (stages_v1_layout.npz's `wrapper`) and Python's, plus the messages (no
// weights, a checkpoint of the other task, a file that is not a checkpoint) and the
// telemetry (the fold's wall time around predict beside T_fold). Writes the JSON report to argv[2].
import { writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { readNpz } from "./npz.js";
import { PYTHON, REFERENCES } from "./reference.js";

Object.assign(globalThis, globals);
const DATA = new URL("../../tests/data/tabicl/", import.meta.url);
const path = (name) => new URL(name, DATA).pathname;

function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** n + m rows of F features (one with a few repeated values), labels of C classes (0: a target). */
function makeData(task, { n, m, F, C, seed }) {
  const r = rng(seed);
  const x = Float32Array.from({ length: (n + m) * F }, (_, i) => (i % F === 1 ? Math.round(r() * 4) : 3 * r() - 1));
  const y = Array.from({ length: n }, (_, i) => (C ? (i < C ? i : Math.floor(r() * C)) : x[i * F] * 2 + r()));
  return { xTrain: x.subarray(0, n * F), yTrain: Float32Array.from(y), xTest: x.subarray(n * F), nFeatures: F, task,
    nClasses: C || undefined };
}

const CASES = [
  { task: "multiclass", weights: "classifier_small.ckpt", data: { n: 30, m: 7, F: 4, C: 3, seed: 1 } },
  { task: "binary", weights: "classifier_small.safetensors", data: { n: 24, m: 5, F: 3, C: 2, seed: 2 } },
  { task: "regression", weights: "regressor_small.ckpt", data: { n: 20, m: 6, F: 3, C: 0, seed: 3 } },
];

async function message(promise) {
  try {
    await promise;
    return null;
  } catch (err) {
    return err.message;
  }
}

const keepAlive = setInterval(() => {}, 1000);
const bridge = await Bridge.create({ gpu: create([]) });
const report = { adapter: bridge.adapterInfo, python: Boolean(PYTHON), runs: [], messages: {} };
for (const c of CASES) {
  const d = makeData(c.task, c.data);
  const model = { name: "tabicl", weights: path(c.weights), n_estimators: 2, batchRows: 4 };
  const members = [];
  await bridge.predict(model, d);  // the weights read and the pipelines compiled: the fold's time below is T_fold's
  const t0 = performance.now();
  const { output, spread, timings } = await bridge.predict(model, d, { onMember: (k, n) => members.push([k, n]) });
  const outerMs = performance.now() - t0;
  const run = { ...c, outLen: output.length, output: Array.from(output), spread: spread && Array.from(spread), timings,
    members, outerMs };
  if (PYTHON) {
    const ref = REFERENCES.tabicl(model, d);
    run.refLen = ref.length;
    run.maxDiff = Math.max(...Array.from(ref, (v, i) => Math.abs(v - output[i])));
  }
  report.runs.push(run);
}
// TabICLv1's layout (no feature groups): each model call's members share its first column
// stage; 8 members (the default) against the package's TabICLClassifier.predict_proba
// (the stage fixture's `wrapper`) and Python's arenalite.models.predict
{
  const z = readNpz(path("stages_v1_layout.npz"));
  const [rows, F] = z.get("x").shape;
  const n = z.get("y_train").data.length;
  const x = z.get("x").data;
  const d = { xTrain: x.subarray(0, n * F), yTrain: Float32Array.from(z.get("y_train").data), xTest: x.subarray(n * F),
    nFeatures: F, task: "multiclass", nClasses: z.get("wrapper").shape[1] };
  const model = { name: "tabicl", weights: path("classifier_v1.ckpt"), batchRows: 8 };
  const members = [];
  const { output } = await bridge.predict(model, d, { onMember: (k, total) => members.push([k, total]) });
  const wrapper = z.get("wrapper").data;
  const v1 = { m: rows - n, outLen: output.length, wrapperLen: wrapper.length, members,
    wrapperDiff: Math.max(...Array.from(wrapper, (v, i) => Math.abs(v - output[i]))) };
  if (PYTHON) {
    const ref = REFERENCES.tabicl(model, d);
    v1.refLen = ref.length;
    v1.refDiff = Math.max(...Array.from(ref, (v, i) => Math.abs(v - output[i])));
  }
  report.v1 = v1;
}
const d = makeData("multiclass", { n: 12, m: 3, F: 2, C: 3, seed: 4 });
report.messages.noWeights = await message(bridge.predict({ name: "tabicl" }, d));
report.messages.regressorOnClasses = await message(bridge.predict({ name: "tabicl", weights: path("regressor_small.ckpt") }, d));
report.messages.classifierOnRegression = await message(bridge.predict(
  { name: "tabicl", weights: path("classifier_small.ckpt") }, makeData("regression", { n: 12, m: 3, F: 2, C: 0, seed: 5 })));
report.messages.notACheckpoint = await message(bridge.predict({ name: "tabicl", weights: path("stages.json") }, d));
report.stats = bridge.stats;
bridge.destroy();
writeFileSync(process.argv[2], JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
