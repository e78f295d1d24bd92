// The row stage (pkg/arenalite/models/tabpfn/row.py, ColumnAggregator) on the GPU: per
// row the CLS tokens then the row's F column embeddings (the token buffers column.js
// fills: rows × (Cl + F) × E), rotary positions 0 … Cl + F − 1 (split halves) on queries
// and keys, pre-norm blocks of full self-attention but the last, whose queries are the CLS
// tokens only; out_ln of the CLS tokens, concatenated, is the row's representation
// (D = Cl · E), written to `out` from row `outRow0` on. Rows go through in the token
// buffers' row blocks; one timed pass per row block and block, in that block's `layers`.
import { Block, scratch } from "./layers.js";

const NAMES = { normQ: "layernorm", q: "attention.q_projection.weight", out: "attention.out_projection.weight",
  normMlp: "layernorm_mlp", mlp: "mlp." };
const KV = ["attention.k_projection.weight", "attention.v_projection.weight"];

export class RowStage {
  constructor(ops, config) {
    this.ops = ops;
    this.C = config.feat_agg_num_cls_tokens;
    this.E = config.embed_dim;
    this.D = this.C * this.E;
    this.heads = config.feat_agg_num_heads;
    if (config.feat_agg_num_blocks < 1) {
      throw new Error("TabPFN v3's row stage needs at least one block (feat_agg_num_blocks ≥ 1), as the package's " +
        "forward does");
    }
    this.blocks = Array.from({ length: config.feat_agg_num_blocks }, (_, i) =>
      new Block(ops, `column_aggregator.blocks.${i}.`, { heads: this.heads, width: this.E, names: NAMES }));
    this.freqs = config.use_rope ? "column_aggregator.rope.freqs" : null;
    this.ff = Math.max(this.E, ...this.blocks.map((b) => b.ff));
  }

  /** Floats per token of the widest activation (keys/values 2E, the feed-forward ff). */
  get width() {
    return Math.max(2 * this.E, this.ff);
  }

  /** Token buffers for `n` rows of Cl + F tokens, in blocks of at most `perBlock` rows. */
  tokens(pre, n, F, perBlock) {
    const T = this.C + F;
    const blocks = [];
    for (let row0 = 0, i = 0; row0 < n; row0 += perBlock, i++) {
      const rows = Math.min(perBlock, n - row0);
      blocks.push({ row0, rows, buffer: this.ops.engine.buffer(`tabpfn.tok.${pre}.${i}`, rows * T * this.E * 4) });
    }
    return { T, C: this.C, F, blocks };
  }
}

/** Block i of the row stage on one row block (tokens in place; the last: the CLS tokens into cls). */
function rowBlock(stage, pass, i, { tok, rows, T, s, kv, cls }) {
  const { ops, C, E, heads: H } = stage;
  const block = stage.blocks[i];
  const last = i === stage.blocks.length - 1;
  if (i === 0) {
    ops.copy(pass, { src: ops.w("column_aggregator.cls_tokens"), out: tok, outer: rows, width: C * E, inS1: 0,
      outS1: T * E });
  }
  const table = stage.freqs ? ops.ropeTable(stage.freqs, T) : null;
  block.project(ops, pass, { x: tok, rows: rows * T, norm: "layernorm", weights: KV, out: kv, outStride: 2 * E, s });
  if (table) ops.operators.rope(pass, { x: kv, rows: rows * T, period: T, H, dh: block.dh, stride: 2 * E, table });
  const common = { kv, kvStride: 2 * E, kOff: 0, vOff: E, kBatch: T, keys: T, s };
  if (!last) {
    block.attend(ops, pass, { x: tok, batches: rows, Tq: T, normed: true, rope: table && { table, period: T }, ...common });
    return;
  }
  ops.copy(pass, { src: tok, out: cls, outer: rows, width: C * E, inS1: T * E, outS1: C * E });
  block.attend(ops, pass, { x: cls, batches: rows, Tq: C, rope: table && { table, period: C }, ...common });
}

/**
 * Column embeddings in `tokens` (RowStage.tokens) → row representations in `out` (rows ×
 * D, from row `outRow0`); block i's passes are timed as `layers[layerBase + i]`.
 */
export async function aggregate(stage, tokens, out, timer, { layerBase = 0, outRow0 = 0 } = {}) {
  const { ops, E, C, D } = stage;
  const { T } = tokens;
  const perBlock = Math.max(...tokens.blocks.map((b) => b.rows));
  const s = scratch(ops.engine, "row", perBlock * T, E, stage.ff);
  const kv = ops.engine.buffer("tabpfn.row.kv", perBlock * T * 2 * E * 4);
  const cls = ops.engine.buffer("tabpfn.row.cls", perBlock * C * E * 4);
  for (const { row0, rows, buffer: tok } of tokens.blocks) {
    for (let i = 0; i < stage.blocks.length; i++) {
      await timer.stage(layerBase + i, (pass) => {
        rowBlock(stage, pass, i, { tok, rows, T, s, kv, cls });
        if (i === stage.blocks.length - 1) {
          ops.rmsNorm(pass, { x: cls, rows: rows * C, D: E, name: "column_aggregator.out_ln", out, outOff: (outRow0 + row0) * D });
        }
      });
    }
  }
}
