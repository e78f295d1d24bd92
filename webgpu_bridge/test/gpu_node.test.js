// One GPU run in Node: dawn.node from the `webgpu` package on Vulkan SwiftShader (the
// ICD and libvulkan that Debian's chromium ships). The run happens in a child process
// because the Vulkan loader reads LD_LIBRARY_PATH / VK_ICD_FILENAMES at start-up.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { requireGpu, swiftshaderEnv } from "./swiftshader.js";

test("the models, the tiled linear and the tiled attention on dawn.node match the float64 reference", (t) => {
  if (!requireGpu(t)) return;
  const script = fileURLToPath(new URL("./gpu_node_run.mjs", import.meta.url));
  const run = spawnSync(process.execPath, [script], { env: swiftshaderEnv(), encoding: "utf8", timeout: 120000 });
  assert.equal(run.status, 0, `GPU run failed (status ${run.status}, signal ${run.signal}):\n${run.stderr}`);
  const report = JSON.parse(run.stdout.trim().split("\n").at(-1));
  assert.equal(report.adapter.architecture, "swiftshader");
  assert.equal(report.runs.length, 9);
  for (const r of report.runs) {
    assert.equal(r.outLen, r.n, `${r.model}/${r.task}: output length`);
    // Regression outputs are in target units (~30..270 here): 1e-4 of the target scale.
    const tol = r.task === "regression" ? 1e-4 * 100 : 1e-4;
    assert.ok(r.maxDiff < tol, `${r.model}/${r.task}: max |GPU - reference| = ${r.maxDiff}`);
    const t = r.timings;
    assert.ok(Math.abs(t.total - (t.embed + t.layers.reduce((a, b) => a + b, 0) + t.head)) < 1e-6);
    // GPU timestamps (SwiftShader offers timestamp-query): each stage's GPU time <= its wall time
    const g = t.gpu;
    assert.ok(g, `${r.model}/${r.task}: no GPU timestamps`);
    assert.equal(g.layers.length, t.layers.length);
    for (const [gpu, wall, stage] of [[g.embed, t.embed, "embed"], [g.head, t.head, "head"],
      ...g.layers.map((v, l) => [v, t.layers[l], `layer ${l}`])]) {
      assert.ok(gpu >= 0 && gpu <= wall, `${r.model}/${r.task} ${stage}: GPU ${gpu} ms > wall ${wall} ms`);
    }
    assert.ok(g.layers.every((v) => v > 0) && g.total > 0, `${r.model}/${r.task}: no GPU time in ${JSON.stringify(g)}`);
    assert.ok(Math.abs(g.total - (g.embed + g.layers.reduce((a, b) => a + b, 0) + g.head)) < 1e-9);
  }
  for (const { shape, layout, maxDiff } of report.linear) assert.ok(maxDiff < 1e-5, `linear ${shape} ${layout}: ${maxDiff}`);
  assert.equal(report.attention.length, 7);
  for (const { shape, ssmax, maxDiff } of report.attention) assert.ok(maxDiff < 2e-6, `attention ${shape} ${ssmax}: ${maxDiff}`);
  const tr = report.runs.filter((r) => r.model === "icl_transformer");
  assert.ok(tr.every((r) => r.timings.layers.length === 2 && r.timings.batches === 3));
  // One context pass per predict (the KV cache) although the queries ran in 3 batches.
  assert.equal(report.stats.contextPasses, 3);
});
