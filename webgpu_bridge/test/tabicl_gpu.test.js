// TabICL's raw member forward on WebGPU (src/tabicl/) under dawn.node on Vulkan SwiftShader
// (as gpu_node.test.js: the ICD and libvulkan of Debian's chromium, in a child process).
// Against the numpy reference (pkg/arenalite/models/tabicl/, itself within 2e-6 of the
// package's torch forward): the committed stage fixtures per stage, random shapes made at
// test time by numpy's forward on the fixture checkpoints (needs the repository's Python:
// $ARENALITE_PYTHON or .venv-pins/bin/python; skipped without it, or with
// ARENALITE_SKIP_PYTHON=1), query batch sizes, forced small buffer limits, the exact GELU
// against a float64 erf, and the telemetry's consistency.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, python, reportTest } from "./swiftshader.js";

const TOL = 1e-4;

// Random shapes (features, classes, context rows, query rows, batch): 1–100 features,
// 2–10 and 13 classes (the tree), 8–1024 context rows, odd batches, and the other config
// switches (SSMax kinds, feature grouping, bias-free LayerNorm). Few and small:
// SwiftShader is slow; 1024 context rows once.
const SMALL = { embed_dim: 16, col_num_blocks: 1, col_nhead: 2, col_num_inds: 6, row_num_blocks: 2, row_nhead: 2,
  row_num_cls: 2, icl_num_blocks: 2, icl_nhead: 2, ff_factor: 2 };
const CASES = [
  { name: "one_feature", checkpoint: "classifier_small.ckpt", H: 1, C: 2, N: 8, M: 5, batch: 3, seed: 1 },
  { name: "ten_classes", checkpoint: "classifier_small.ckpt", H: 23, C: 10, N: 96, M: 9, batch: 7, seed: 2 },
  { name: "hundred_features", checkpoint: "classifier_wide.ckpt", H: 100, C: 6, N: 128, M: 5, batch: 3, seed: 3 },
  { name: "context_1024", checkpoint: "classifier_wide.ckpt", H: 12, C: 5, N: 1024, M: 9, batch: 9, seed: 12 },
  { name: "thirteen_classes", checkpoint: "classifier_small.ckpt", H: 9, C: 13, N: 150, M: 11, batch: 5, seed: 4 },
  { name: "regression", checkpoint: "regressor_small.ckpt", H: 3, C: 0, N: 40, M: 13, batch: 13, seed: 5 },
  { name: "v1_interleaved", checkpoint: "classifier_v1.ckpt", H: 4, C: 3, N: 33, M: 7, batch: 1, seed: 6 },
  // config switches no fixture checkpoint has: random weights of that config
  // (checkpoint.py's random_checkpoint), written as safetensors next to the cases
  { name: "ssmax_valid_groups", config: { ...SMALL, col_ssmax: "ssmax", icl_ssmax: "qassmax-mlp",
    col_feature_group: "valid", bias_free_ln: true, row_rope_interleaved: true }, H: 7, C: 4, N: 30, M: 5, batch: 3, seed: 7 },
  { name: "ssmax_mlp_no_groups", config: { ...SMALL, col_ssmax: "ssmax-mlp", icl_ssmax: "ssmax-mlp-elementwise",
    col_target_aware: false, col_feature_group: false }, H: 5, C: 3, N: 25, M: 6, batch: 5, seed: 8 },
  { name: "tree_max4_four_heads", config: { ...SMALL, col_nhead: 4, row_nhead: 4, icl_nhead: 4, col_ssmax: false,
    icl_ssmax: true, max_classes: 4 }, H: 6, C: 9, N: 60, M: 7, batch: 7, seed: 9 },
  { name: "regression_seven_quantiles", config: { ...SMALL, max_classes: 0, num_quantiles: 7, bias_free_ln: true,
    col_ssmax: "qassmax-mlp" }, H: 4, C: 0, N: 20, M: 3, batch: 2, seed: 10 },
  // TabICLv2's full size (E 128, 128 inducing points, head dim 16 / 64, 12 ICL layers): about
  // 30 s on SwiftShader, so only with ARENALITE_TABICL_FULL_SIZE=1
  ...(process.env.ARENALITE_TABICL_FULL_SIZE === "1" ? [{ name: "full_size_v2", config: JSON.parse(
    readFileSync(join(ROOT, "tests/data/tabicl/v2_classifier_config.json"), "utf8")), H: 3, C: 3, N: 40, M: 5, batch: 3,
  seed: 11 }] : []),
];

const MAKE_CASES = `
import json, sys
import numpy as np
from arenalite.models.tabicl import forward, load
from arenalite.models.tabicl.checkpoint import random_checkpoint, write_safetensors
out, cases = sys.argv[1], json.loads(sys.argv[2])
for c in cases:
    if "config" in c:
        c["weights"] = f"{out}/{c['name']}.safetensors"
        write_safetensors(random_checkpoint(c["config"], seed=c["seed"]), c["weights"])
        model = load(c["weights"])
    else:
        model = load("tests/data/tabicl/" + c["checkpoint"])
    rng = np.random.default_rng(c["seed"])
    x_train = rng.normal(size=(c["N"], c["H"])).astype(np.float32)
    x_test = rng.normal(size=(c["M"], c["H"])).astype(np.float32)
    if c["C"]:
        y = np.concatenate([np.arange(c["C"]), rng.integers(0, c["C"], c["N"] - c["C"])])
        rng.shuffle(y)
    else:
        y = rng.normal(size=c["N"])
    output, _ = forward(model, x_train, y.astype(np.float64), x_test)
    np.savez(f"{out}/{c['name']}.npz", x_train=x_train, y_train=y.astype(np.float64), x_test=x_test,
             output=output)
json.dump(cases, open(f"{out}/cases.json", "w"))
`;

/** erfc(z), z >= 0, in float64: the Taylor series of erf below 2.5, a continued fraction above. */
export function erfc64(z) {
  if (z < 2.5) {
    let term = z;
    let sum = z;
    for (let n = 1; n < 200; n++) {
      term *= (-z * z) / n;
      sum += term / (2 * n + 1);
      if (Math.abs(term) < 1e-18) break;
    }
    return 1 - (2 / Math.sqrt(Math.PI)) * sum;
  }
  let t = z;
  for (let k = 80; k >= 1; k--) t = z + k / 2 / t;
  return Math.exp(-z * z) / Math.sqrt(Math.PI) / t;
}

/** Exact GELU in float64. */
export function gelu64(x) {
  const c = erfc64(Math.abs(x) / Math.SQRT2);
  return x * (x >= 0 ? 1 - c / 2 : c / 2);
}

const gpuTest = reportTest("tabicl_gpu_run.mjs", { timeout: 900000, makeCases: { code: MAKE_CASES, cases: CASES } });

gpuTest("the committed stage fixtures: column, row and output within 1e-4 of numpy", (r) => {
  assert.equal(r.adapter.architecture, "swiftshader");
  assert.deepEqual(r.fixtures.map((f) => f.name).sort(),
    ["binary", "many_classes", "multiclass_two_features", "regression", "v1_layout", "wide"]);
  for (const f of r.fixtures) {
    console.log(`${f.name}: max |GPU - numpy| column ${f.column.toExponential(1)}, row ${f.row.toExponential(1)}, ` +
      `output ${f.output.toExponential(1)}`);
    for (const stage of ["column", "row", "output"]) assert.ok(f[stage] < TOL, `${f.name} ${stage}: ${f[stage]}`);
  }
});

gpuTest("random shapes (1–100 features, 2–13 classes, 8–1024 context rows) and configs against numpy", (r, t) => {
  if (!r.random) return t.skip(`no Python at ${python} (or ARENALITE_SKIP_PYTHON=1): numpy references not made`);
  assert.deepEqual(r.random.map((c) => c.name), CASES.map((c) => c.name));
  for (const c of r.random) {
    console.log(`${c.name} (${c.H} features, ${c.C || "no"} classes, ${c.N} + ${c.M} rows, batch ${c.batch}): ` +
      `max |GPU - numpy| ${c.output.toExponential(1)}`);
    assert.ok(c.output < TOL, `${c.name}: max |GPU - numpy| = ${c.output}`);
    assert.equal(c.batches, Math.ceil(c.M / c.batch), `${c.name}: query batches`);
  }
});

gpuTest("query batches of 1, 7 and all rows give the same output from one context pass", (r) => {
  const b = r.batches;
  assert.equal(b.contextPasses, 1);
  assert.equal(b.vs1, 0);
  assert.equal(b.vsAll, 0);
  assert.ok(b.output < TOL);
  assert.equal(b.buffersCreatedLast, 0, "a repeated batch size creates no buffer (roles reused)");
});

gpuTest("members with their own cache keys hold their contexts at once (an ensemble)", (r) => {
  assert.deepEqual(Object.keys(r.interleaved).sort(), ["binary", "many_classes", "wide"]);
  for (const [name, diff] of Object.entries(r.interleaved)) assert.ok(diff < TOL, `${name}: ${diff}`);
});

gpuTest("forced small buffer limits: chunked stages give the unchunked output; past them a clear error", (r) => {
  const { plan, vsUnchunked, output, error } = r.chunking;
  assert.ok(plan.columns < plan.groups, `column chunks: ${JSON.stringify(plan)}`);
  assert.ok(plan.rows < plan.N && plan.iclRows < plan.N && plan.queryRows < plan.M, JSON.stringify(plan));
  assert.ok(vsUnchunked < 1e-6, `chunked vs unchunked: ${vsUnchunked}`);
  assert.ok(output < TOL);
  assert.match(error, /^TabICL on WebGPU: .+ needs \d+ bytes in one buffer, past this adapter's maxBufferSize of 8192 bytes$/);
  const tree = r.chunking.tree;
  assert.ok(tree.columns < tree.groups && tree.rows < tree.N, `13 classes: ${JSON.stringify(tree)}`);
  assert.ok(tree.vsUnchunked < 1e-6 && tree.output < TOL, `13 classes: ${JSON.stringify(tree)}`);
});

gpuTest("exact GELU: the WGSL erfc approximation against a float64 erf", (r) => {
  const { xs, got } = r.gelu;
  let maxAbs = 0;
  let maxRel = 0;
  for (let i = 0; i < xs.length; i++) {
    const ref = gelu64(xs[i]);
    const err = Math.abs(got[i] - ref);
    maxAbs = Math.max(maxAbs, err);
    if (Math.abs(ref) > 1e-30) maxRel = Math.max(maxRel, err / Math.abs(ref));
  }
  console.log(`exact GELU on [-12, 12], ${xs.length} points: max abs error ${maxAbs.toExponential(2)}, ` +
    `max relative error ${maxRel.toExponential(2)}`);
  // measured on SwiftShader: 3.7e-7 and 4.1e-7 (kernels/math.wgsl)
  assert.ok(maxAbs < 5e-7, `max abs error ${maxAbs}`);
  assert.ok(maxRel < 1e-6, `max relative error ${maxRel}`);
});

gpuTest("telemetry: embed, one entry per row block and ICL layer, head; GPU time <= wall time", (r) => {
  for (const f of r.fixtures) {
    const t = f.timings;
    assert.equal(t.layers.length, f.name === "wide" ? 5 : 4, f.name);
    assert.ok(Math.abs(t.total - (t.embed + t.layers.reduce((a, b) => a + b, 0) + t.head)) < 1e-6);
    assert.ok(t.gpu, `${f.name}: no GPU timestamps`);
    for (const [gpu, wall, stage] of [[t.gpu.embed, t.embed, "embed"], [t.gpu.head, t.head, "head"],
      ...t.gpu.layers.map((v, l) => [v, t.layers[l], `layer ${l}`])]) {
      assert.ok(gpu >= 0 && gpu <= wall, `${f.name} ${stage}: GPU ${gpu} ms > wall ${wall} ms`);
    }
    assert.ok(t.embed > 0 && t.head > 0 && t.layers.every((v) => v > 0), `${f.name}: ${JSON.stringify(t)}`);
  }
});
