// The column stage (pkg/arenalite/models/tabpfn/column.py, FeatureDistributionEmbedder) on
// the GPU: per chunk of columns, the cells' embedding (cells.js), then per induced block
// the inducing points over the column's context rows (cross_attn_block1, softmax scaling
// for N keys) → the hidden points, their keys and values (cross_attn_block2's, kept as the
// column stage's cache, one buffer per block and column chunk), and every row over them.
// Query rows go through cross_attn_block2 alone against the cache. The result lands in the
// row stage's token buffers (row.js: rows × (CLS + F) × E), column c at token CLS + c.
import { Block, scratch } from "./layers.js";
import { CellStage } from "./cells.js";

const CROSS_NAMES = { normQ: "layernorm_q", q: "attn.q_projection.weight", out: "attn.out_projection.weight",
  normMlp: "layernorm2", mlp: "mlp." };
const KV = ["attn.k_projection.weight", "attn.v_projection.weight"];

export class ColumnStage {
  constructor(ops, config) {
    this.ops = ops;
    this.cells = new CellStage(ops, config);
    this.E = config.embed_dim;
    this.heads = config.dist_embed_num_heads;
    this.I = config.dist_embed_num_inducing_points;
    const root = "feature_distribution_embedder.layers.";
    this.blocks = Array.from({ length: config.dist_embed_num_blocks }, (_, i) => ({
      inducing: `${root}${i}.inducing_vectors`,
      first: new Block(ops, `${root}${i}.cross_attn_block1.`, { heads: this.heads, width: this.E, names: CROSS_NAMES }),
      second: new Block(ops, `${root}${i}.cross_attn_block2.`, { heads: this.heads, width: this.E, names: CROSS_NAMES }),
    }));
    this.ff = Math.max(this.E, ...this.blocks.map((b) => Math.max(b.first.ff, b.second.ff)));
  }

  /** Floats per row of the widest activation (keys/values 2E, the feed-forward ff). */
  get width() {
    return Math.max(2 * this.E, this.ff);
  }
}

/** Column chunks [c0, cols] of F columns, `per` at a time. */
export function columnChunks(F, per) {
  const out = [];
  for (let c0 = 0; c0 < F; c0 += per) out.push([c0, Math.min(per, F - c0)]);
  return out;
}

/** x (cols · rows × E, a column's rows together) → the token buffers' column slots. */
function scatter(ops, pass, { xe, rows, c0, cols, tokens, rowOffset = 0 }) {
  const { T, C } = tokens;
  const E = ops.weights.config.embed_dim;
  for (const { row0, rows: n, buffer } of tokens.blocks) {
    ops.copy(pass, { src: xe, out: buffer, outer: cols, inner: n, width: E, inS1: rows * E, inS2: E,
      inOff: (row0 - rowOffset) * E, outS1: E, outS2: T * E, outOff: (C + c0) * E });
  }
}

/**
 * Context rows (x: N × F float32 bits, targets y) → column embeddings in `tokens` and the
 * cache {key, chunks, kv: [block][chunk] buffers}; passes timed as `embed`.
 */
export async function embedContext(stage, { x, N, F, stats, y, plan, tokens, key }, timer) {
  const { ops, E, I } = stage;
  const chunks = columnChunks(F, plan.columns);
  const per = plan.columns;
  const s = scratch(ops.engine, "col", per * Math.max(N, I), E, stage.ff);
  const xe = ops.engine.buffer("tabpfn.col.x", per * N * E * 4);
  const kv1 = ops.engine.buffer("tabpfn.col.kv1", per * N * 2 * E * 4);
  const h = ops.engine.buffer("tabpfn.col.h", per * I * E * 4);
  const kv = stage.blocks.map(() => []);
  for (const [ci, [c0, cols]] of chunks.entries()) {
    await timer.stage("embed", (pass) => stage.cells.embed(pass, { x, rows: N, F, c0, cols, stats, y, out: xe }));
    for (const [b, { inducing, first, second }] of stage.blocks.entries()) {
      const cache = ops.engine.buffer(`tabpfn.${key}.col.kv.${b}.${ci}`, cols * I * 2 * E * 4);
      kv[b].push(cache);
      await timer.stage("embed", (pass) => {
        first.project(ops, pass, { x: xe, rows: cols * N, norm: "layernorm_kv", weights: KV, out: kv1, outStride: 2 * E, s });
        ops.copy(pass, { src: ops.w(inducing), out: h, outer: cols, width: I * E, inS1: 0, outS1: I * E });
        first.attend(ops, pass, { x: h, batches: cols, Tq: I, kv: kv1, kvStride: 2 * E, kOff: 0, vOff: E, kBatch: N,
          keys: N, s, scaling: ops.scaling(pass, `${first.prefix}attn.softmax_scaling_layer.`, N, first.H, first.dh) });
        second.project(ops, pass, { x: h, rows: cols * I, norm: "layernorm_kv", weights: KV, out: cache, outStride: 2 * E, s });
        second.attend(ops, pass, { x: xe, batches: cols, Tq: N, kv: cache, kvStride: 2 * E, kOff: 0, vOff: E, kBatch: I,
          keys: I, s });
        if (b === stage.blocks.length - 1) scatter(ops, pass, { xe, rows: N, c0, cols, tokens });
      });
    }
  }
  return { key, chunks, kv };
}

/** Query rows (x: rows × F bits) → column embeddings in `tokens`, against the cache. */
export async function embedQueries(stage, cache, { x, rows, F, stats }, tokens, timer) {
  const { ops, E, I } = stage;
  const per = Math.max(...cache.chunks.map(([, cols]) => cols));
  const s = scratch(ops.engine, "colq", per * rows, E, stage.ff);
  const xe = ops.engine.buffer("tabpfn.colq.x", per * rows * E * 4);
  for (const [ci, [c0, cols]] of cache.chunks.entries()) {
    await timer.stage("embed", (pass) => {
      stage.cells.embed(pass, { x, rows, F, c0, cols, stats, out: xe });
      stage.blocks.forEach(({ second }, b) => {
        second.attend(ops, pass, { x: xe, batches: cols, Tq: rows, kv: cache.kv[b][ci], kvStride: 2 * E, kOff: 0, vOff: E,
          kBatch: I, keys: I, s });
      });
      scatter(ops, pass, { xe, rows, c0, cols, tokens });
    });
  }
}
