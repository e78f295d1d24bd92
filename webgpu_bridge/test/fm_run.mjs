// tabular_fm through the bridge under dawn.node on cases given as JSON (argv[2]); writes
// {adapter, runs: [{output, spread, timings}]} as JSON to argv[3]. Driven by
// tests/test_tabular_fm_webgpu.py, which compares the outputs with the numpy reference.
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";

Object.assign(globalThis, globals);
const keepAlive = setInterval(() => {}, 1000);
const [casesPath, outPath] = process.argv.slice(2);
const { weights, cases } = JSON.parse(readFileSync(casesPath, "utf8"));
const bridge = await Bridge.create({ gpu: create([]), defaultWeights: weights });
const runs = [];
for (const c of cases) {
  const data = { ...c.data, xTrain: Float32Array.from(c.data.xTrain),
    yTrain: Float32Array.from(c.data.yTrain), xTest: Float32Array.from(c.data.xTest) };
  const { output, spread, timings } = await bridge.predict(c.model, data);
  runs.push({ output: Array.from(output), spread: spread ? Array.from(spread) : null, timings });
}
writeFileSync(outPath, JSON.stringify({ adapter: bridge.adapterInfo, stats: bridge.stats, runs }));
bridge.destroy();
clearInterval(keepAlive);
process.exit(0);
