// A row stage (pkg/arenalite/models/tabfm/row.py, RowInteraction) on the GPU: each row's
// tokens (its row_num_cls CLS tokens, then its d active columns) attend to each other
// through `row_num_blocks` blocks with interleaved RoPE over the token positions
// (frequencies from the checkpoint's tf_row.rope.freqs), then an RMSNorm. arenalite runs
// the d active columns alone, the package's padded-column mask's arithmetic (a masked key
// weighs exactly 0). The first stage (`full`) updates every token in place; the second
// takes only the CLS tokens through its last block (their keys: every token) and writes
// them, RMSNorm'd, as the rows' representations (rows × row_num_cls · E).
import { AttentionBlock } from "./layers.js";

export class RowStage {
  constructor(ops, config, prefix, full) {
    this.ops = ops;
    this.prefix = prefix;
    this.full = full;
    this.E = config.embed_dim;
    this.H = config.row_nhead;
    this.C = config.row_num_cls;
    this.ff = this.E * config.ff_factor;
    const freqs = `${prefix}tf_row.rope.freqs`;
    this.blocks = Array.from({ length: config.row_num_blocks },
      (_, i) => new AttentionBlock(ops, `${prefix}tf_row.blocks.${i}.`, this.H, freqs));
  }

  /**
   * `rows` rows of T tokens of x (from row `row0`, changed in place); the second stage
   * writes rows × C · E into `reps` from row repsRow, through the CLS scratch `cls`.
   */
  run(pass, s, { x, row0 = 0, rows, T, reps = null, repsRow = 0, cls = null }) {
    const { ops, E, C, prefix: p } = this;
    const xRow = row0 * T;
    const last = this.blocks.length - 1;
    this.blocks.forEach((block, i) => {
      block.kv(pass, s, { x, xRow, rows: rows * T, k: s.k, v: s.v, period: T });
      block.queries(pass, s, { x, xRow, rows: rows * T, q: s.q, period: T, normed: true });
      const attention = { q: s.q, qBatch: T * E, qRow: E, k: s.k, v: s.v, kBatch: T * E, kRow: E, batches: rows,
        keys: T };
      if (this.full || i < last) {
        block.attend(pass, s, { x, xRow, ...attention, Tq: T });
        block.feedForward(pass, s, { x, xRow, rows: rows * T });
        return;
      }
      ops.copy(pass, { src: x, out: cls, outer: rows, inner: 1, width: C * E, inS1: T * E, inS2: 0, inOff: xRow * E,
        outS1: C * E, outS2: 0 });
      block.attend(pass, s, { x: cls, ...attention, Tq: C });
      block.feedForward(pass, s, { x: cls, rows: rows * C });
    });
    if (!this.full && !this.blocks.length) {
      ops.copy(pass, { src: x, out: cls, outer: rows, inner: 1, width: C * E, inS1: T * E, inS2: 0, inOff: xRow * E,
        outS1: C * E, outS2: 0 });
    }
    if (this.full) {
      ops.rmsNorm(pass, { x, xOff: xRow * E, rows: rows * T, D: E, g: `${p}out_ln.weight`, out: x, outOff: xRow * E });
    } else {
      ops.rmsNorm(pass, { x: cls, rows: rows * C, D: E, g: `${p}out_ln.weight`, out: reps, outOff: repsRow * C * E });
    }
  }
}
