// Google TabFM's member forward on dawn.node for tests/test_tabfm_webgpu.py (spawned with
// the Vulkan SwiftShader environment): argv[2] a JSON list of cases {name, folder (a
// checkpoint folder: config.json + model.safetensors), npz (x_train, y_train, x_test,
// cat_mask), d, batch, limits}; each through TabFMMember (src/tabfm/model.js forward), the
// output, timings and dispatch counts written as JSON to argv[3] by case name. Each case on
// a fresh device, so no buffer an earlier case left behind can hide an out-of-range read.
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { forward } from "../src/tabfm/model.js";
import { readNpz } from "./npz.js";
import { readFolder } from "./tabfm_helpers.js";

Object.assign(globalThis, globals);
const cases = JSON.parse(readFileSync(process.argv[2], "utf8"));
const report = { adapter: null, cases: {} };
for (const c of cases) {
  const z = readNpz(c.npz);
  const bridge = await Bridge.create({ gpu: create([]) });  // a fresh device per case: no stale buffer helps
  report.adapter = bridge.adapterInfo;
  const res = await forward(bridge.engine, readFolder(c.folder), { xTrain: z.get("x_train").data,
    yTrain: z.get("y_train").data, xTest: z.get("x_test").data },
  { d: c.d, catMask: Array.from(z.get("cat_mask").data, Boolean), batchRows: c.batch, limits: c.limits ?? {} });
  report.cases[c.name] = { output: Array.from(res.output), timings: res.timings, dispatches: res.dispatches,
    plan: { tokenRows: res.plan.tokenRows, queryRows: res.plan.queryRows, columns: res.plan.columns(res.plan.N, res.plan.d) } };
}
writeFileSync(process.argv[3], JSON.stringify(report));
