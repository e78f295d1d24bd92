// One GPU run in Node through the `webgpu` package (dawn.node): each model on each task,
// compared with the float64 reference. Spawned by gpu_node.test.js with the Vulkan
// SwiftShader environment; prints one JSON line and exits non-zero on failure.
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { loadWeights } from "../src/weights.js";
import { SMALL_CONFIG, makeData, makeWeights } from "./fixtures.js";
import { REFERENCES } from "./reference.js";

Object.assign(globalThis, globals);
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
report.stats = bridge.stats;
bridge.destroy();
console.log(JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
