// Row interaction (pkg/arenalite/models/tabicl/row.py, RowInteraction) on the GPU: per row
// the CLS tokens then the column embeddings (the token buffers column.js fills: rows ×
// (C + G) × E), rotary positions 0 … C + G − 1 on queries and keys (split halves for
// TabICLv2, interleaved pairs for v1 configs), full self-attention in every block but the
// last, which updates the CLS tokens only; out_ln of the CLS tokens, concatenated, is the
// row's representation (D = C · E), written to `out` from row `row0` of the block on. Rows
// go through in the token buffers' row blocks (`plan.rows` rows each); one timed pass per
// row block and block, each counted in that block's `layers` entry.
import { AttentionBlock, scratch } from "./layers.js";

export class RowStage {
  constructor(ops, config) {
    this.ops = ops;
    this.C = config.row_num_cls;
    this.E = config.embed_dim;
    this.D = this.C * this.E;
    this.blocks = Array.from({ length: config.row_num_blocks }, (_, i) =>
      new AttentionBlock(ops, `row_interactor.tf_row.blocks.${i}.`, config.row_nhead, "none", config.norm_first));
    this.interleaved = Boolean(config.row_rope_interleaved);
    this.ff = Math.max(this.E, ...this.blocks.map((b) => b.ff));
  }

  /** Floats per token of the widest activation (kv: 2E, the feed-forward: ff). */
  get width() {
    return Math.max(2 * this.E, this.ff);
  }

  /** Token buffers for `n` rows of C + G tokens, in blocks of at most `perBlock` rows. */
  tokens(pre, n, G, perBlock) {
    const T = this.C + G;
    const blocks = [];
    for (let row0 = 0, i = 0; row0 < n; row0 += perBlock, i++) {
      const rows = Math.min(perBlock, n - row0);
      blocks.push({ row0, rows, buffer: this.ops.engine.buffer(`tabicl.tok.${pre}.${i}`, rows * T * this.E * 4) });
    }
    return { T, C: this.C, G, blocks };
  }
}

/** Block i of the row stage on one row block (tokens in place; the last: CLS only into cls). */
function rowBlock(stage, pass, i, { tok, rows, T, s, kv, cls, rope }) {
  const { ops, C, E } = stage;
  const block = stage.blocks[i];
  const last = i === stage.blocks.length - 1;
  if (i === 0) {
    ops.copy(pass, { src: ops.w("row_interactor.cls_tokens"), out: tok, outer: rows, inner: C, width: E,
      inS1: 0, inS2: E, outS1: T * E, outS2: E });
  }
  block.kvProject(ops, pass, { x: tok, rows: rows * T, s, kv, rope: { ...rope, period: T } });
  if (!last) {
    block.forward(ops, pass, { x: tok, batches: rows, Tq: T, kv, kBatch: T, keys: T, s, rope: { ...rope, period: T } });
    return;
  }
  ops.copy(pass, { src: tok, out: cls, outer: rows, inner: C, width: E, inS1: T * E, inS2: E, outS1: C * E, outS2: E });
  block.forward(ops, pass, { x: cls, batches: rows, Tq: C, kv, kBatch: T, keys: T, s, rope: { ...rope, period: C } });
}

/**
 * Cell embeddings in `tokens` (RowStage.tokens) → row representations in `out` (rows ×
 * D, from row `outRow0`); block i's passes are timed as `layers[layerBase + i]`.
 */
export async function interact(stage, tokens, out, timer, { layerBase = 0, outRow0 = 0 } = {}) {
  const { ops, E, C, D } = stage;
  const { T } = tokens;
  const perBlock = Math.max(...tokens.blocks.map((b) => b.rows));
  const s = scratch(ops.engine, "row", perBlock * T, E, stage.ff);
  const kv = ops.engine.buffer("tabicl.row.kv", perBlock * T * 2 * E * 4);
  const cls = ops.engine.buffer("tabicl.row.cls", perBlock * C * E * 4);
  const rope = { interleaved: stage.interleaved, freqs: "row_interactor.tf_row.rope.freqs" };
  for (const { row0, rows, buffer: tok } of tokens.blocks) {
    for (let i = 0; i < stage.blocks.length; i++) {
      await timer.stage(layerBase + i, (pass) => {
        rowBlock(stage, pass, i, { tok, rows, T, s, kv, cls, rope });
        if (i === stage.blocks.length - 1) {
          ops.layerNorm(pass, { x: cls, rows: rows * C, D: E, prefix: "row_interactor.out_ln", out,
            outOff: (outRow0 + row0) * D });
        }
      });
    }
  }
}
