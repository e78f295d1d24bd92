#!/usr/bin/env node
// The Node runner: the bridge under dawn.node (npm `webgpu`) on persisted splits, writing
// the results table as the timing page's "Download results CSV" writes it.
//
//   node bin/run_splits.mjs JOB.json OUT.csv
//
// JOB.json: {weights: default weights folder or manifest, datasets: [{dataset, splits}],
// models: [model objects]} (`arenalite run --runner webgpu` writes it: each dataset as
// runSplits takes it, its persisted split file, models with their Python labels). A table
// with categorical or missing cells comes as `features` (numeric columns: values, null for
// missing; categorical: codes, -1 for missing, and sorted categories), which runSplits
// encodes per split and model; any other dataset as the row-major `x`.
// A failure prints one line "arenalite-webgpu: error: ..." on stderr and exits with 2.
import { readFile, writeFile } from "node:fs/promises";
import { csvText } from "../page/summary.js";
import { Bridge, RESULT_COLUMNS, runSplits } from "../src/index.js";
import { featuresFromJson } from "../src/encoding.js";

const VULKAN = "a Vulkan loader (libvulkan.so.1) and a Vulkan driver are needed: a GPU " +
  "vendor's driver, or the SwiftShader software driver that Debian's chromium ships " +
  "(arenalite run --runner webgpu --vulkan-icd /usr/lib/chromium/vk_swiftshader_icd.json)";

class RunnerError extends Error {}

async function dawn() {
  try {
    return await import("webgpu");
  } catch (err) {
    throw new RunnerError("the npm package 'webgpu' (dawn.node) cannot be loaded " +
      `(${err.code ?? err.message}): run \`npm ci\` in webgpu_bridge/`);
  }
}

async function createBridge(weights) {
  const { create, globals } = await dawn();
  Object.assign(globalThis, globals);
  try {
    return await Bridge.create({ gpu: create([]), defaultWeights: weights });
  } catch (err) {
    const why = /no adapter/.test(err.message) ? "requestAdapter() returned no adapter" : err.message;
    throw new RunnerError(`dawn.node found no WebGPU adapter (${why}): ${VULKAN}`);
  }
}

async function main([jobPath, outPath]) {
  if (!jobPath || !outPath) throw new RunnerError("usage: node bin/run_splits.mjs JOB.json OUT.csv");
  const job = JSON.parse(await readFile(jobPath, "utf8"));
  const bridge = await createBridge(job.weights ?? null);
  const rows = [];
  try {
    for (const { dataset, splits } of job.datasets) {
      const y = Float64Array.from(dataset.y);
      const data = dataset.features ? { ...dataset, features: featuresFromJson(dataset.features), y }
        : { ...dataset, x: Float32Array.from(dataset.x), y };
      rows.push(...await runSplits(bridge, data, splits, job.models));
    }
  } finally {
    bridge.destroy();
  }
  await writeFile(outPath, csvText(rows, RESULT_COLUMNS));
  return rows.length;
}

const keepAlive = setInterval(() => {}, 1000);  // dawn.node's callbacks keep no handle open
try {
  const n = await main(process.argv.slice(2));
  process.stdout.write(`wrote ${n} rows to ${process.argv[3]}\n`);
  process.exitCode = 0;
} catch (err) {
  process.stderr.write(`arenalite-webgpu: error: ${err.message ?? err}\n`);
  process.exitCode = 2;
} finally {
  clearInterval(keepAlive);
}
process.exit();
