// Column embedding (pkg/arenalite/models/tabicl/column.py, ColEmbedding) on the GPU: the
// feature-group gather (offsets 2^i, circular) through in_linear, the target embedding
// added to the context rows, then per column `col_num_blocks` induced blocks: the inducing
// points attend to the column's context rows (QASSMax), giving the hidden points; every row
// attends to the hidden points. The hidden points' keys/values (per target pass, block
// and column chunk) are the column stage's KV cache: `embedContext` fills it once per
// split, `embedQueries` reads it for any batch of query rows. Above max_classes classes
// the target enters as mixed-radix digits, one pass each, averaged. Columns go through in
// chunks (`plan.columns`) that keep every buffer within the adapter's limits; the output
// lands in the row stage's token buffers (row, CLS + column token, E).
import { AttentionBlock, scratch } from "./layers.js";
import { groups64 } from "../operators.js";

const GROUP_MODES = { none: 0, same: 1, valid: 2 };

/** The digit bases that write every class below n (column.py's mixed_radix_bases). */
export function mixedRadixBases(nClasses, maxClasses) {
  if (nClasses <= maxClasses) return [nClasses];
  const digits = Math.ceil(Math.log(nClasses) / Math.log(maxClasses));
  const k = Math.min(Math.ceil(nClasses ** (1 / digits)), maxClasses);
  const bases = new Array(digits).fill(k);
  let product = k ** digits;
  for (let i = 0; product < nClasses && i < digits; i++) {
    if (bases[i] < maxClasses) {
      product = (product / bases[i]) * (bases[i] + 1);
      bases[i] += 1;
    }
  }
  return bases;
}

/** The target codes each pass adds: y itself, or its mixed-radix digits (column.py). */
export function targetPasses(y, maxClasses) {
  if (maxClasses === 0) return [y];
  let top = 0;
  for (const v of y) top = Math.max(top, v);
  const bases = mixedRadixBases(top + 1, maxClasses);
  if (bases.length === 1) return [y];
  return bases.map((base, i) => {
    const divisor = bases.slice(i + 1).reduce((a, b) => a * b, 1);
    return Float32Array.from(y, (v) => Math.floor(v / divisor) % base);
  });
}

/** The column embedder's settings and blocks, read from a checkpoint's config. */
export class ColumnStage {
  constructor(ops, config) {
    this.ops = ops;
    this.config = config;
    if (config.col_affine) throw new Error("TabICL on WebGPU: col_affine is not implemented");
    const mode = config.col_feature_group;
    this.mode = mode === true ? 1 : mode === false ? 0 : GROUP_MODES[mode];
    if (this.mode === undefined) throw new Error(`TabICL config: col_feature_group ${JSON.stringify(mode)}`);
    this.size = this.mode === 0 ? 1 : config.col_feature_group_size;
    this.E = config.embed_dim;
    this.I = config.col_num_inds;
    this.maxClasses = config.max_classes;
    this.targetAware = Boolean(config.col_target_aware);
    const root = "col_embedder.tf_col.blocks.";
    this.blocks = Array.from({ length: config.col_num_blocks }, (_, i) => ({
      inducing: `${root}${i}.ind_vectors`,
      first: new AttentionBlock(ops, `${root}${i}.multihead_attn1.`, config.col_nhead, config.col_ssmax, config.norm_first),
      second: new AttentionBlock(ops, `${root}${i}.multihead_attn2.`, config.col_nhead, "none", config.norm_first),
    }));
    this.ff = Math.max(this.E, ...this.blocks.flatMap((b) => [b.first.ff, b.second.ff]));
  }

  /** Column groups of H features. */
  groups(H) {
    return this.mode === 2 ? Math.ceil(H / this.size) : H;
  }

  /** Floats per row and column of the widest activation (kv: 2E, the feed-forward: ff). */
  get width() {
    return Math.max(2 * this.E, this.ff);
  }

  /** in_linear of the chunk's cell groups (+ the target of pass codes `y`) into src. */
  cells(pass, { x, rows, H, g0, Gc, y = null, src }) {
    const ops = this.ops;
    const target = y === null ? 0 : this.maxClasses > 0 ? 1 : 2;
    const yw = target ? ops.w("col_embedder.y_encoder.weight") : ops.zeros;  // absent unless col_target_aware
    const yb = target ? ops.w("col_embedder.y_encoder.bias") : ops.zeros;
    ops.run(pass, "tabicl_cells", [["u32", rows], ["u32", H], ["u32", g0], ["u32", Gc], ["u32", this.E],
      ["u32", this.size], ["u32", this.mode], ["u32", target], ["u32", Math.max(1, this.maxClasses)]],
    { 1: x, 2: ops.w("col_embedder.in_linear.weight"), 3: ops.w("col_embedder.in_linear.bias"), 4: yw, 5: yb,
      6: y ?? ops.zeros, 7: src }, groups64(Gc * rows * this.E));
  }

  /** The chunk's columns (Gc × rows × E in src) into the token buffers' column slots. */
  scatter(pass, { src, rows, g0, Gc, tokens, first, alpha }) {
    const { E } = this;
    const T = tokens.T;
    for (const block of tokens.blocks) {
      this.ops.copy(pass, { src, out: block.buffer, outer: Gc, inner: block.rows, width: E, inS1: rows * E, inS2: E,
        inOff: block.row0 * E, outS1: E, outS2: T * E, outOff: (tokens.C + g0) * E, accumulate: !first, alpha });
    }
  }
}

/** The cache buffer of one pass, block and column chunk (Gc × I rows of 2E) of cache `key`. */
function cacheBuffer(stage, key, p, b, c, Gc) {
  return stage.ops.engine.buffer(`tabicl.${key}.col.kv.${p}.${b}.${c}`, Gc * stage.I * 2 * stage.E * 4);
}

/** The induced blocks of one chunk and target pass over its N context rows; fills the cache. */
function contextBlocks(stage, pass, { src, N, Gc, key, p, c, s, h }) {
  const { ops, E, I } = stage;
  stage.blocks.forEach(({ inducing, first, second }, b) => {
    first.kvProject(ops, pass, { x: src, rows: Gc * N, s, kv: s.kv });
    ops.copy(pass, { src: ops.w(inducing), out: h.x, outer: Gc, inner: I, width: E, inS1: 0, inS2: E,
      outS1: I * E, outS2: E });
    first.forward(ops, pass, { x: h.x, batches: Gc, Tq: I, kv: s.kv, kBatch: N, keys: N, s: h });
    const kv = cacheBuffer(stage, key, p, b, c, Gc);
    second.kvProject(ops, pass, { x: h.x, rows: Gc * I, s: h, kv });
    second.forward(ops, pass, { x: src, batches: Gc, Tq: N, kv, kBatch: I, keys: I, s });
  });
}

/**
 * Context rows (x: N × H on the GPU, target passes `ys`: GPU buffers of N codes) → their
 * column embeddings in `tokens` and the cache {key, chunks: [[g0, Gc]], passes}; `key`
 * names the cache's buffers (one per member held at once).
 */
export async function embedContext(stage, { x, N, H, ys, plan, tokens, key = "m0" }, timer) {
  const { ops, E, I } = stage;
  const G = stage.groups(H);
  const Gmax = Math.min(plan.columns, G);
  const s = { ...scratch(ops.engine, "col.ctx", Gmax * N, E, stage.ff),
    kv: ops.engine.buffer("tabicl.col.ctx.kv", Gmax * N * 2 * E * 4) };
  const h = { ...scratch(ops.engine, "col.hid", Gmax * I, E, stage.ff) };
  h.x = ops.engine.buffer("tabicl.col.hid.x", Gmax * I * E * 4);
  const src = ops.engine.buffer("tabicl.col.ctx.src", Gmax * N * E * 4);
  const chunks = [];
  for (let g0 = 0; g0 < G; g0 += Gmax) chunks.push([g0, Math.min(Gmax, G - g0)]);
  const passes = stage.targetAware ? ys : [null];
  for (const [c, [g0, Gc]] of chunks.entries()) {
    for (const [p, y] of passes.entries()) {
      await timer.stage("embed", (pass) => {
        stage.cells(pass, { x, rows: N, H, g0, Gc, y, src });
        contextBlocks(stage, pass, { src, N, Gc, key, p, c, s, h });
        stage.scatter(pass, { src, rows: N, g0, Gc, tokens, first: p === 0, alpha: 1 / passes.length });
      });
    }
  }
  return { key, chunks, passes: passes.length };
}

/** Query rows (x: rows × H on the GPU) → column embeddings in `tokens`, from the cache. */
export async function embedQueries(stage, cache, { x, rows, H }, tokens, timer) {
  const { ops, E, I } = stage;
  const Gmax = Math.max(...cache.chunks.map(([, Gc]) => Gc));
  const s = scratch(ops.engine, "col.q", Gmax * rows, E, stage.ff);
  const src = ops.engine.buffer("tabicl.col.q.src", Gmax * rows * E * 4);
  for (const [c, [g0, Gc]] of cache.chunks.entries()) {
    for (let p = 0; p < cache.passes; p++) {
      await timer.stage("embed", (pass) => {
        stage.cells(pass, { x, rows, H, g0, Gc, src });
        stage.blocks.forEach(({ second }, b) => {
          second.forward(ops, pass, { x: src, batches: Gc, Tq: rows, kv: cacheBuffer(stage, cache.key, p, b, c, Gc),
            kBatch: I, keys: I, s });
        });
        stage.scatter(pass, { src, rows, g0, Gc, tokens, first: p === 0, alpha: 1 / cache.passes });
      });
    }
  }
}
