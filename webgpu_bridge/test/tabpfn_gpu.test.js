// TabPFN v3's raw member forward on WebGPU (src/tabpfn/) under dawn.node on Vulkan
// SwiftShader (as tabicl_gpu.test.js: the ICD and libvulkan of Debian's chromium, in a
// child process). Against the numpy reference (pkg/arenalite/models/tabpfn/, itself checked
// against the package's torch forward): the committed forward fixtures per stage, random
// configs made at test time by numpy's forward on random_checkpoint weights (needs the
// repository's Python: $ARENALITE_PYTHON or .venv-pins/bin/python; skipped without it, or
// with ARENALITE_SKIP_PYTHON=1), query batch sizes, members held at once, forced small
// buffer limits, and the grouped-KV attention and RoPE operators against float64.
import assert from "node:assert/strict";
import { python, reportTest } from "./swiftshader.js";

const TOL = 1e-4;

// Random configs (checkpoint.py's random_checkpoint) and shapes: few and small, SwiftShader
// is slow. `nan`: NaN/±inf cells in both tables.
const SMALL = { embed_dim: 16, dist_embed_num_blocks: 1, dist_embed_num_heads: 2, dist_embed_num_inducing_points: 6,
  feat_agg_num_blocks: 2, feat_agg_num_heads: 2, feat_agg_num_cls_tokens: 2, nlayers: 2, icl_num_heads: 4,
  decoder_head_dim: 8, decoder_num_heads: 2, softmax_scaling_mlp_hidden_dim: 8 };
const CASES = [
  { name: "binary", config: { ...SMALL, max_num_classes: 2 }, F: 3, C: 2, N: 20, M: 5, batch: 2, seed: 1 },
  { name: "ten_classes_three_slices", config: { ...SMALL, max_num_classes: 10, decoder_head_dim: 4,
    decoder_use_softmax_scaling: true }, F: 9, C: 10, N: 50, M: 7, batch: 7, seed: 2 },
  { name: "grouped_kv_heads", config: { ...SMALL, max_num_classes: 5, icl_num_kv_heads: 2, icl_num_kv_heads_test: 1 },
    F: 5, C: 4, N: 30, M: 6, batch: 4, seed: 3, nan: true },
  { name: "no_rope_affine_indicators", config: { ...SMALL, max_num_classes: 3, use_rope: false,
    layernorm_elementwise_affine: false, use_nan_indicators: false }, F: 4, C: 3, N: 25, M: 4, batch: 4, seed: 4,
  nan: true },
  { name: "group_of_one", config: { ...SMALL, max_num_classes: 4, feature_group_size: 1 }, F: 2, C: 4, N: 16, M: 3,
    batch: 1, seed: 5 },
  { name: "regression_groups_of_four", config: { ...SMALL, num_buckets: 20, feature_group_size: 4, ff_factor: 3,
    dist_embed_num_blocks: 2 }, F: 30, C: 0, N: 24, M: 5, batch: 3, seed: 6, nan: true },
  { name: "context_300", config: { ...SMALL, max_num_classes: 3, feat_agg_num_blocks: 1 }, F: 6, C: 3, N: 300, M: 9,
    batch: 9, seed: 7 },
  { name: "one_context_row", config: { ...SMALL, max_num_classes: 2 }, F: 3, C: 1, N: 1, M: 3, batch: 3, seed: 8 },
  // the default v3 widths (E 128, 8 heads of 16, 128 inducing points, 4 CLS tokens, ICL
  // 512 wide in 8 heads of 64, decoder 6 heads of 64), two ICL layers instead of 24
  { name: "default_widths", config: { max_num_classes: 10, nlayers: 2 }, F: 4, C: 6, N: 40, M: 5, batch: 5, seed: 9,
    nan: true },
];

const MAKE_CASES = `
import json, sys
import numpy as np
from arenalite.models.tabpfn import forward, load
from arenalite.models.tabpfn.checkpoint import random_checkpoint, write_safetensors
out, cases = sys.argv[1], json.loads(sys.argv[2])
for c in cases:
    c["weights"] = f"{out}/{c['name']}.safetensors"
    write_safetensors(random_checkpoint(c["config"], seed=c["seed"]), c["weights"])
    model = load(c["weights"])
    rng = np.random.default_rng(c["seed"])
    x_train = rng.normal(size=(c["N"], c["F"])).astype(np.float32)
    x_test = rng.normal(size=(c["M"], c["F"])).astype(np.float32)
    if c.get("nan"):
        for x in (x_train, x_test):
            cells = rng.random(x.shape)
            x[cells < 0.1] = np.nan
            x[(cells >= 0.1) & (cells < 0.13)] = np.inf
            x[(cells >= 0.13) & (cells < 0.16)] = -np.inf
    if c["C"]:
        y = np.concatenate([np.arange(min(c["C"], c["N"])), rng.integers(0, c["C"], max(c["N"] - c["C"], 0))])
        rng.shuffle(y)
    else:
        y = rng.normal(size=c["N"])
    output = forward(model, x_train, y.astype(np.float32), x_test)
    np.savez(f"{out}/{c['name']}.npz", x_train=x_train, y_train=y.astype(np.float32), x_test=x_test,
             output=output)
json.dump(cases, open(f"{out}/cases.json", "w"))
`;

const gpuTest = reportTest("tabpfn_gpu_run.mjs", { timeout: 900000, makeCases: { code: MAKE_CASES, cases: CASES } });

gpuTest("the committed forward fixtures: column, row, ICL and logits within 1e-4 of numpy", (r) => {
  assert.equal(r.adapter.architecture, "swiftshader");
  assert.deepEqual(r.fixtures.map((f) => f.name).sort(), ["classifier", "classifier_nan_inf", "one_feature",
    "regressor", "regressor_two_features", "wide_many_classes"]);
  for (const f of r.fixtures) {
    console.log(`${f.name}: max |GPU - numpy| column ${f.column.toExponential(1)}, row ${f.row.toExponential(1)}, ` +
      `icl ${f.icl.toExponential(1)}, logits ${f.logits.toExponential(1)}`);
    for (const stage of ["column", "row", "icl", "logits"]) assert.ok(f[stage] < TOL, `${f.name} ${stage}: ${f[stage]}`);
    assert.equal(f.timings.layers.length, f.layerNames.length);
    assert.match(f.layerNames[0], /^row 0$/);
    assert.match(f.layerNames.at(-1), /^icl \d+$/);
  }
});

gpuTest("random configs (groups, KV heads, no RoPE, bias-free norms, class slices, regression) against numpy", (r, t) => {
  if (!r.random) return t.skip(`no Python at ${python} (or ARENALITE_SKIP_PYTHON=1): numpy references not made`);
  assert.deepEqual(r.random.map((c) => c.name), CASES.map((c) => c.name));
  for (const c of r.random) {
    console.log(`${c.name} (${c.F} features, ${c.C || "no"} classes, ${c.N} + ${c.M} rows, batch ${c.batch}): ` +
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
  console.log(`dispatches (classifier_wide, ${b.M} query rows): fitContext ${b.dispatches.fitContext}, ` +
    `one batch of all rows ${b.dispatches.perBatch}, batches of 7 ${b.dispatches.batchesOf7}, ` +
    `batches of 1 ${b.dispatches.batches1}`);
  assert.ok(b.dispatches.batchesOf7 === 2 * b.dispatches.perBatch, JSON.stringify(b.dispatches));
});

gpuTest("members with their own cache keys hold their contexts at once", (r) => {
  assert.deepEqual(Object.keys(r.interleaved).sort(), ["classifier", "regressor", "wide_many_classes"]);
  for (const [name, diff] of Object.entries(r.interleaved)) assert.ok(diff < TOL, `${name}: ${diff}`);
});

gpuTest("forced small buffer limits: chunked stages give the unchunked output; past them one clear error", (r) => {
  const { plan, vsUnchunked, output, error, wide } = r.chunking;
  console.log(`small limits: ${JSON.stringify(plan)}; wide: ${JSON.stringify(wide)}`);
  assert.ok(plan.columns < plan.F, `column chunks: ${JSON.stringify(plan)}`);
  assert.ok(plan.rows < plan.N, JSON.stringify(plan));
  assert.ok(vsUnchunked < 1e-6, `chunked vs unchunked: ${vsUnchunked}`);
  assert.ok(output < TOL);
  assert.match(error, /^TabPFN on WebGPU: .+ needs \d+ bytes in one buffer, past this adapter's maxBufferSize of 8192 bytes$/);
  assert.ok(wide.columns < wide.F && wide.rows < wide.N && wide.iclRows < wide.N && wide.queryRows < wide.M,
    JSON.stringify(wide));
  assert.ok(wide.sliced > 0, `weights past the limit sliced by rows: ${wide.sliced}`);
  assert.ok(wide.vsUnchunked < 1e-6 && wide.output < TOL, JSON.stringify(wide));
});

gpuTest("grouped-KV attention and RoPE (split halves, interleaved) against float64", (r) => {
  for (const c of r.operators) {
    assert.ok(c.maxDiff < 2e-6, JSON.stringify(c));
  }
  assert.deepEqual(r.operators.map((c) => c.op), ["attention", "attention", "attention", "rope", "rope"]);
});
