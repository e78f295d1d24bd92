// In-context learning (pkg/arenalite/models/tabicl/icl.py, ICLearning) on the GPU: row
// representations, the context rows' with y_encoder(y) added, through `icl_num_blocks`
// pre-norm blocks (QASSMax on every layer) in which every row attends to the context rows
// only. `fitContext` runs the context rows once and keeps each layer's context keys/values
// (the ICL stage's KV cache, one set per node of the class tree); `query` runs any batch
// of query rows against them. Rows go in chunks of `plan.iclRows`; the keys/values of one
// layer are one buffer (N × 2D), checked against the adapter's limits by model.js. Above
// max_classes classes the class tree is driven from here (`fitTree`, `treeProbabilities`):
// a node with more classes splits them into contiguous groups of near-equal size and
// predicts the group, a leaf its classes; a class's probability is the product along its path.
import { AttentionBlock, scratch } from "./layers.js";
import { groups64 } from "../operators.js";
import { Head, decode } from "./head.js";

export class ICLStage {
  constructor(ops, config) {
    this.ops = ops;
    this.D = config.row_num_cls * config.embed_dim;
    this.maxClasses = config.max_classes;
    this.blocks = Array.from({ length: config.icl_num_blocks }, (_, i) =>
      new AttentionBlock(ops, `icl_predictor.tf_icl.blocks.${i}.`, config.icl_nhead, config.icl_ssmax, config.norm_first));
    this.ff = Math.max(this.D, ...this.blocks.map((b) => b.ff));
    this.head = new Head(ops, config);
  }

  /** Floats per row of the widest activation (kv, feed-forward, head). */
  get width() {
    return Math.max(2 * this.D, this.ff, this.head.width);
  }

  /** h[t] += y_encoder(y[t]) on `rows` context rows. */
  target(pass, { h, y, rows }) {
    const ops = this.ops;
    ops.run(pass, "tabicl_target", [["u32", rows], ["u32", this.D], ["u32", this.maxClasses > 0 ? 1 : 2],
      ["u32", Math.max(1, this.maxClasses)]],
    { 1: y, 2: ops.w("icl_predictor.y_encoder.weight"), 3: ops.w("icl_predictor.y_encoder.bias"), 4: h },
    groups64(rows * this.D));
  }
}

/** Block l on rows 0 … rows − 1 of h over the cache kv of n keys, `chunk` rows at a time. */
function through(stage, pass, block, { h, rows, kv, n, chunk, s }) {
  for (let r0 = 0; r0 < rows; r0 += chunk) {
    const M = Math.min(chunk, rows - r0);
    block.forward(stage.ops, pass, { x: h, xRow: r0, batches: 1, Tq: M, kv, kBatch: 0, keys: n, s });
  }
}

/**
 * Context rows' representations h (N × D on the GPU, changed in place) with targets y (a
 * GPU buffer) → {kv: per layer N × 2D buffers, n, nClasses}; `key` names the cache
 * (one per tree node); layer l is timed as layers[layerBase + l].
 */
export async function fitContext(stage, { h, y, N, nClasses, plan, key = "m0.root" }, timer, layerBase) {
  const { ops, D } = stage;
  const chunk = plan.iclRows;
  const s = scratch(ops.engine, "icl", Math.min(N, chunk), D, stage.ff);
  const kvs = [];
  for (const [l, block] of stage.blocks.entries()) {
    const kv = ops.engine.buffer(`tabicl.icl.kv.${key}.${l}`, N * 2 * D * 4);
    kvs.push(kv);
    await timer.stage(layerBase + l, (pass) => {
      if (l === 0) stage.target(pass, { h, y, rows: N });
      for (let r0 = 0; r0 < N; r0 += chunk) {
        block.kvProject(ops, pass, { x: h, xRow: r0, rows: Math.min(chunk, N - r0), s, kv, kvRow: r0 });
      }
      if (l < stage.blocks.length - 1) through(stage, pass, block, { h, rows: N, kv, n: N, chunk, s });
    });
  }
  return { kv: kvs, n: N, nClasses };
}

/** Query rows' representations h (rows × D, in place) through every layer against `context`. */
export async function query(stage, context, { h, rows, plan }, timer, layerBase) {
  const s = scratch(stage.ops.engine, "icl", Math.min(rows, plan.iclRows), stage.D, stage.ff);
  for (const [l, block] of stage.blocks.entries()) {
    await timer.stage(layerBase + l, (pass) => {
      through(stage, pass, block, { h, rows, kv: context.kv[l], n: context.n, chunk: plan.iclRows, s });
    });
  }
}

/** The head on rows of h into out (rows × outDim), timed as "head". */
export async function logits(stage, { h, rows, out, plan }, timer) {
  await timer.stage("head", (pass) => decode(stage.head, pass, { h, rows, out, chunk: plan.iclRows }));
}

/** The group of each of a node's classes: contiguous, near-equal sizes (icl.py). */
export function classGroups(nClasses, maxClasses) {
  const nGroups = Math.min(Math.ceil(nClasses / maxClasses), maxClasses);
  const groups = new Array(nClasses).fill(0);
  let pos = 0;
  let remaining = nClasses;
  for (let g = 0, left = nGroups; g < nGroups; g++, left--) {
    const size = Math.ceil(remaining / left);
    groups.fill(g, pos, pos + size);
    pos += size;
    remaining -= size;
  }
  return groups;
}

/**
 * The class tree of a context (icl.py's fit_tree): `rTrain` (N × D, on the CPU) and labels
 * y; each node's rows are uploaded and their ICL cache computed once (buffers under `key`).
 */
export async function fitTree(stage, { rTrain, y, plan, key = "m0" }, timer, layerBase, counter = { next: 0 }) {
  const { ops, D, maxClasses } = stage;
  const classes = [...new Set(y)].sort((a, b) => a - b);
  const index = new Map(classes.map((c, i) => [c, i]));
  const id = counter.next++;
  const N = y.length;
  const leaf = classes.length <= maxClasses;
  const groups = leaf ? null : classGroups(classes.length, maxClasses);
  const labels = Float32Array.from(y, (v) => (leaf ? index.get(v) : groups[index.get(v)]));
  const h = ops.engine.upload(`tabicl.${key}.tree.h.${id}`, rTrain);
  const yBuf = ops.engine.upload(`tabicl.${key}.tree.y.${id}`, labels);
  const nClasses = new Set(labels).size;
  const context = await fitContext(stage, { h, y: yBuf, N, nClasses, plan, key: `${key}.tree${id}` }, timer, layerBase);
  const node = { classes, context, children: [] };
  if (leaf) return node;
  for (let g = 0; g <= groups[groups.length - 1]; g++) {
    const rows = [];
    labels.forEach((v, i) => { if (v === g) rows.push(i); });
    const sub = new Float32Array(rows.length * D);
    rows.forEach((r, i) => sub.set(rTrain.subarray(r * D, (r + 1) * D), i * D));
    node.children.push(await fitTree(stage, { rTrain: sub, y: rows.map((r) => y[r]), plan, key }, timer, layerBase,
      counter));
  }
  return node;
}

/** softmax(z[:, :C] / temperature) of rows × width logits, float64. */
function softmaxRows(z, rows, width, C, temperature) {
  const out = new Float64Array(rows * C);
  for (let r = 0; r < rows; r++) {
    let top = -Infinity;
    for (let c = 0; c < C; c++) top = Math.max(top, z[r * width + c] / temperature);
    let total = 0;
    for (let c = 0; c < C; c++) total += (out[r * C + c] = Math.exp(z[r * width + c] / temperature - top));
    for (let c = 0; c < C; c++) out[r * C + c] /= total;
  }
  return out;
}

/**
 * Query rows' representations r (rows × D on the GPU, kept) → class probabilities (rows ×
 * nClasses, float64) down the tree: each node's distribution is softmax(logits / temperature).
 */
export async function treeProbabilities(stage, tree, { r, rows, nClasses, temperature, plan }, timer, layerBase) {
  const { ops, D } = stage;
  const h = ops.engine.buffer("tabicl.tree.q", rows * D * 4);
  const width = stage.head.outDim;
  const out = ops.engine.buffer("tabicl.tree.logits", rows * width * 4);
  const walk = async (node) => {
    await timer.stage(layerBase, (pass) => ops.copy(pass, { src: r, out: h, outer: 1, inner: rows, width: D,
      inS1: 0, inS2: D, outS1: 0, outS2: D }));
    await query(stage, node.context, { h, rows, plan }, timer, layerBase);
    await logits(stage, { h, rows, out, plan }, timer);
    const probs = softmaxRows(await ops.engine.read(out, rows * width), rows, width, node.context.nClasses, temperature);
    const result = new Float64Array(rows * nClasses);
    if (!node.children.length) {
      const C = node.context.nClasses;
      for (let i = 0; i < rows; i++) node.classes.forEach((cls, j) => { result[i * nClasses + cls] = probs[i * C + j]; });
      return result;
    }
    for (const [g, child] of node.children.entries()) {
      const sub = await walk(child);
      const C = node.context.nClasses;
      for (let i = 0; i < rows; i++) {
        for (let c = 0; c < nClasses; c++) result[i * nClasses + c] += sub[i * nClasses + c] * probs[i * C + g];
      }
    }
    return result;
  };
  return walk(tree);
}
