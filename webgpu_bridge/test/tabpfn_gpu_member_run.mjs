// One TabPFN v3 member's raw forward per case on dawn.node, for tests/test_tabpfn_webgpu.py
// (run with the Vulkan SwiftShader environment): argv[2] a JSON list of cases {name,
// weights (a .ckpt / .safetensors path), npz (x_train, y_train, x_test), batchRows,
// limits?}; writes {name: {output, rows, width, plan, timings, layerNames, dispatches:
// {fitContext, query}}} as JSON to argv[3]. Each case on a fresh engine (its own buffers,
// zero-filled: nothing a bigger or unchunked case left can hide a read out of place).
// Exits non-zero on a failure to run.
import { readFileSync, writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Engine } from "../src/engine.js";
import { requestDevice } from "../src/gpu.js";
import { loadTabpfnWeights } from "../src/tabpfn/checkpoint.js";
import { TabPFNMember } from "../src/tabpfn/model.js";
import { readNpz } from "./npz.js";

Object.assign(globalThis, globals);
const keepAlive = setInterval(() => {}, 1000);
const gpu = create([]);
const { device, adapterInfo } = await requestDevice(gpu);
const report = {};
for (const c of JSON.parse(readFileSync(process.argv[2], "utf8"))) {
  const engine = new Engine(device);
  const z = readNpz(c.npz);
  const member = await TabPFNMember.create(engine, await loadTabpfnWeights(c.weights), { limits: c.limits ?? {} });
  const timer = member.timer();
  const d0 = engine.stats.dispatches;
  const context = await member.fitContext(z.get("x_train").data, z.get("y_train").data, { timer });
  const d1 = engine.stats.dispatches;
  const { output } = await member.queryBatches(context, z.get("x_test").data, { batchRows: c.batchRows, timer });
  report[c.name] = { output: Array.from(output), width: member.width(context), plan: context.plan,
    timings: await timer.finish(), layerNames: member.layerNames(), adapter: adapterInfo,
    dispatches: { fitContext: d1 - d0, query: engine.stats.dispatches - d1 } };
  engine.destroy();
}
writeFileSync(process.argv[3], JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
