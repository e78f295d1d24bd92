// Google TabFM's raw member forward on WebGPU (src/tabfm/) under dawn.node on Vulkan
// SwiftShader (a child process, as gpu_node.test.js). Against the numpy reference
// (pkg/arenalite/models/tabfm/, itself within 1e-4 of the package's torch forward): the
// committed stage fixtures stage by stage, random configs and tables made at test time by
// numpy's forward on random checkpoints (checkpoint.py's random_checkpoint; needs the
// repository's Python: $ARENALITE_PYTHON or .venv-pins/bin/python; skipped without it, or
// with ARENALITE_SKIP_PYTHON=1), query batch sizes, members with their own cache keys,
// forced small buffer limits, and the dispatch counts.
import assert from "node:assert/strict";
import { python, reportTest } from "./swiftshader.js";

const TOL = 1e-4;

// Random configs (every switch of the architecture: head counts and widths, group sizes,
// block counts, CLS counts, decoder width, class counts, ICL heads past 64 floats) and tables (1–20 features, d below
// H, categorical columns, missing cells, odd batches). Few and small: SwiftShader is slow.
const BASE = { embed_dim: 16, max_classes: 4, col_num_blocks: 1, col_nhead: 2, col_num_inds: 5, row_num_blocks: 1,
  row_nhead: 2, row_num_cls: 2, icl_num_blocks: 2, icl_nhead: 2, ff_factor: 2, feature_group_size: 3, num_freq: 6,
  decoder_hidden: null, is_classifier: true };
export const CASES = [
  { name: "one_feature", config: BASE, H: 1, d: 1, C: 2, N: 12, M: 5, batch: 3, seed: 1, cat: [], missing: 0 },
  { name: "twenty_features_padded", config: { ...BASE, feature_group_size: 4, num_freq: 3, max_classes: 6 },
    H: 20, d: 17, C: 6, N: 40, M: 9, batch: 4, seed: 2, cat: [0, 5, 16], missing: 0.1 },
  { name: "heads_and_blocks", config: { ...BASE, embed_dim: 24, col_nhead: 3, row_nhead: 4, icl_nhead: 6,
    col_num_blocks: 2, row_num_blocks: 3, row_num_cls: 3, icl_num_blocks: 3, ff_factor: 3, decoder_hidden: 20 },
  H: 6, d: 6, C: 3, N: 30, M: 7, batch: 7, seed: 3, cat: [2], missing: 0.05 },
  { name: "regression", config: { ...BASE, is_classifier: false, max_classes: 10, feature_group_size: 2 },
    H: 5, d: 4, C: 0, N: 35, M: 6, batch: 2, seed: 4, cat: [1], missing: 0.1 },
  { name: "group_of_one", config: { ...BASE, feature_group_size: 1, num_freq: 4, col_num_inds: 3, row_num_cls: 1 },
    H: 3, d: 3, C: 4, N: 20, M: 4, batch: 4, seed: 5, cat: [0, 1, 2], missing: 0 },
  // v1.0.0's ICL head width (2048 / 8 = 256, past the shared attention kernel's 64:
  // kernels/tabfm_attention_wide.wgsl), at 256 and 80
  { name: "icl_head_256", config: { ...BASE, embed_dim: 32, row_num_cls: 8, icl_nhead: 1, icl_num_blocks: 1 },
    H: 4, d: 4, C: 3, N: 24, M: 5, batch: 5, seed: 6, cat: [], missing: 0 },
  { name: "icl_head_80_regression", config: { ...BASE, is_classifier: false, row_num_cls: 5, icl_nhead: 1 },
    H: 3, d: 3, C: 0, N: 22, M: 4, batch: 3, seed: 7, cat: [1], missing: 0.1 },
];

const MAKE_CASES = `
import json, sys
import numpy as np
from arenalite.models.tabfm import TabFMModel, forward, random_checkpoint, save_pretrained
out, cases = sys.argv[1], json.loads(sys.argv[2])
for c in cases:
    ckpt = random_checkpoint(c["config"], seed=c["seed"])
    save_pretrained(ckpt, f"{out}/{c['name']}")
    model = TabFMModel(ckpt.config, ckpt.tensors)
    rng = np.random.default_rng(c["seed"])
    x_train = rng.normal(size=(c["N"], c["H"])).astype(np.float32)
    x_test = rng.normal(size=(c["M"], c["H"])).astype(np.float32)
    for x in (x_train, x_test):
        x[rng.random(x.shape) < c["missing"]] = np.nan
    cat = np.zeros(c["H"], bool)
    cat[c["cat"]] = True
    for j in c["cat"]:
        x_train[:, j] = rng.integers(0, 4, c["N"])
        x_test[:, j] = rng.integers(0, 4, c["M"])
    if c["C"]:
        y = np.concatenate([np.arange(c["C"]), rng.integers(0, c["C"], c["N"] - c["C"])])
        rng.shuffle(y)
    else:
        y = rng.normal(size=c["N"])
    output, _ = forward(model, x_train, y.astype(np.float64), x_test, d=c["d"], cat_mask=cat)
    np.savez(f"{out}/{c['name']}.npz", x_train=x_train, y_train=y.astype(np.float64), x_test=x_test,
             cat_mask=cat, output=output)
json.dump(cases, open(f"{out}/cases.json", "w"))
`;

const gpuTest = reportTest("tabfm_gpu_run.mjs", { timeout: 900000, makeCases: { code: MAKE_CASES, cases: CASES } });

const STAGES = ["cells", "column", "row", "column_2", "row_2", "icl", "output"];

gpuTest("the committed stage fixtures: every stage and the output within 1e-4 of numpy", (r) => {
  assert.equal(r.adapter.architecture, "swiftshader");
  assert.deepEqual(r.fixtures.map((f) => f.name).sort(),
    ["binary", "few_features", "multiclass_padded", "one_feature_regression", "regression", "wide"]);
  for (const f of r.fixtures) {
    console.log(`${f.name}: max |GPU - numpy| ${STAGES.map((s) => `${s} ${f[s].toExponential(1)}`).join(", ")}`);
    for (const s of STAGES) assert.ok(f[s] < TOL, `${f.name} ${s}: ${f[s]}`);
    assert.equal(f.batches, Math.ceil(f.M / 5), `${f.name}: query batches of 5`);
  }
});

gpuTest("random configs and tables (1–20 features, padded columns, categorical, missing cells) against numpy", (r, t) => {
  if (!r.random) return t.skip(`no Python at ${python} (or ARENALITE_SKIP_PYTHON=1): numpy references not made`);
  assert.deepEqual(r.random.map((c) => c.name), CASES.map((c) => c.name));
  for (const c of r.random) {
    console.log(`${c.name} (${c.H} features, d ${c.d}, ${c.C || "no"} classes, ${c.N} + ${c.M} rows, batch ` +
      `${c.batch}): max |GPU - numpy| ${c.output.toExponential(1)}`);
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
  assert.equal(b.width, 5);
  assert.deepEqual(b.layerNames, ["column", "row", "column_2", "row_2", "icl.0", "icl.1"]);
});

gpuTest("members with their own cache keys hold their contexts at once (an ensemble)", (r) => {
  assert.deepEqual(Object.keys(r.interleaved).sort(), ["binary", "regression", "wide"]);
  for (const [name, diff] of Object.entries(r.interleaved)) assert.ok(diff < TOL, `${name}: ${diff}`);
});

gpuTest("forced small buffer limits: chunked stages and split weights give the unchunked output; past them one error", (r) => {
  const { plan, vsUnchunked, output, split, error } = r.chunking;
  console.log(`small limits: ${JSON.stringify(plan)}; split weights ${split.length}; vs unchunked ` +
    `${vsUnchunked.toExponential(1)}`);
  assert.ok(plan.columns1 < plan.d && plan.columns2 < plan.T, `column chunks: ${JSON.stringify(plan)}`);
  assert.ok(plan.tokenRows < plan.N && plan.queryRows < 15, `row blocks: ${JSON.stringify(plan)}`);
  assert.ok(plan.ffRows < plan.N, `feed-forward chunks: ${JSON.stringify(plan)}`);
  assert.ok(split.some((n) => n.includes("icl_predictor") && n.endsWith("gate_up.weight")), `split: ${split}`);
  assert.ok(vsUnchunked < 1e-6, `chunked vs unchunked: ${vsUnchunked}`);
  assert.ok(output < TOL);
  assert.equal(error, "Google TabFM on WebGPU: one ICL block's keys of 44 context rows needs 12672 bytes in one " +
    "buffer, past this adapter's maxBufferSize of 8192 bytes");
});

gpuTest("telemetry: embed, the four column/row stages and each ICL block, head; GPU time <= wall time", (r) => {
  for (const f of r.fixtures) {
    const t = f.timings;
    assert.equal(t.layers.length, 4 + (f.name === "wide" ? 3 : 2), f.name);
    assert.ok(Math.abs(t.total - (t.embed + t.layers.reduce((a, b) => a + b, 0) + t.head)) < 1e-6);
    assert.ok(t.gpu, `${f.name}: no GPU timestamps`);
    for (const [gpu, wall, stage] of [[t.gpu.embed, t.embed, "embed"], [t.gpu.head, t.head, "head"],
      ...t.gpu.layers.map((v, l) => [v, t.layers[l], `layer ${l}`])]) {
      assert.ok(gpu >= 0 && gpu <= wall, `${f.name} ${stage}: GPU ${gpu} ms > wall ${wall} ms`);
    }
    console.log(`${f.name}: dispatches ${f.dispatches.context} for the context, ${f.dispatches.total} with ` +
      `${f.batches} query batches`);
  }
});

gpuTest("bad inputs: one Error each, in model.py's words", (r) => {
  assert.deepEqual(r.refusals, {
    d: "Google TabFM: d (active features) must be an integer 1 … 6, got 7",
    catMask: "Google TabFM: cat_mask must be 6 booleans, got 2",
    nonFinite: "Google TabFM: y_context holds a missing or infinite target",
    classRange: "Google TabFM: class target 5 is not an index 0 … 4 (row 2)",
    classInteger: "Google TabFM: class target 0.5 is not an index 0 … 4 (row 1)",
    rows: "Google TabFM: y_context must hold one target per context row, got 40 targets for 239 context values",
  });
});
