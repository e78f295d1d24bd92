// Google TabFM end to end on dawn.node (spawned by tabfm_predictor.test.js with the Vulkan
// SwiftShader environment): src/tabfm/predictor.js's runTabfm on the tables of
// tests/data/tabfm/wrappers/cases.json (arrays, and DataFrames with text, dates and missing
// cells through TransformToNumerical) with the wrappers' random-weight checkpoint, beside
// Python's arenalite.models.predict (tests/data/tabfm/js/predict.json); plus progress, the
// timings and the refusals. Writes the JSON report to argv[2].
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { validateData } from "../src/data.js";
import { loadTabfmWeights } from "../src/tabfm/checkpoint.js";
import { NO_WEIGHTS, runTabfm } from "../src/tabfm/predictor.js";
import { caseTable } from "./tabfm_cases.js";

Object.assign(globalThis, globals);
const DATA = new URL("../../tests/data/tabfm/", import.meta.url);
const CASES = JSON.parse(readFileSync(new URL("wrappers/cases.json", DATA), "utf8")).cases;
const PREDICT = JSON.parse(readFileSync(new URL("js/predict.json", DATA), "utf8"));
const CHECKPOINT = new URL("wrappers/checkpoint", DATA).pathname;
/** The registry's defaults of tabfm's wrapper options. */
const DEFAULTS = { n_estimators: 32, softmax_temperature: 0.9, average_logits: true, random_state: 42,
  outlier_threshold: 4.0, max_num_features: 500, class_shift: true };

const bridge = await Bridge.create({ gpu: create([]) });
const engine = bridge.engine;
const weights = await loadTabfmWeights(CHECKPOINT);  // the parent folder: read per task
const report = { adapter: bridge.adapterInfo ?? null, runs: [], errors: {} };

function data(spec) {
  const t = caseTable(spec);
  const d = validateData({ xTrain: t.train.data, yTrain: Float64Array.from(spec.y_train), xTest: t.test.data,
    nFeatures: t.train.cols, task: spec.task });
  return { ...d, nCategorical: t.nCategorical };
}

for (const [name, ref] of Object.entries(PREDICT)) {
  const spec = CASES[name];
  const d = data(spec);
  const progress = [];
  const t0 = performance.now();
  const res = await runTabfm(engine, { name: "tabfm", ...DEFAULTS, ...ref.options, weights }, d,
    { onMember: (done, total) => progress.push([done, total]) });
  const wall = performance.now() - t0;
  const want = ref.output.flat();
  let maxDiff = 0;
  for (let i = 0; i < want.length; i++) maxDiff = Math.max(maxDiff, Math.abs(res.output[i] - want[i]));
  const y = spec.y_train;
  const mean = y.reduce((a, b) => a + b, 0) / y.length;
  const std = Math.sqrt(y.reduce((a, b) => a + (b - mean) ** 2, 0) / y.length);
  report.runs.push({ name, task: spec.task, members: res.members, outLen: res.output.length, refLen: want.length,
    maxDiff, std, pythonLayers: ref.layers, progress, wall, timings: res.timings });
}

async function message(fn) {
  try {
    await fn();
    return null;
  } catch (error) {
    return error.message;
  }
}
const d = data(CASES.binary);
report.errors.noWeights = await message(() => runTabfm(engine, { ...DEFAULTS, weights: null }, d));
report.errors.NO_WEIGHTS = NO_WEIGHTS;
const regressor = await loadTabfmWeights(`${CHECKPOINT}/regression`, { task: "regression" });
report.errors.wrongTask = await message(() => runTabfm(engine, { ...DEFAULTS, weights: regressor }, d));
report.errors.regressorName = regressor.name;
report.errors.unported = await message(() => runTabfm(engine, { ...DEFAULTS, max_num_features: 0, weights }, d));
writeFileSync(process.argv[2], JSON.stringify(report));
bridge.destroy?.();
