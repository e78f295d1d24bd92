// A column stage (pkg/arenalite/models/tabfm/column.py, ColEmbedding) on the GPU: each
// column's cells, a set over the rows, through `col_num_blocks` induced blocks, then out_w
// and an RMSNorm. An induced block's inducing points attend to the column's context rows
// (mab1: their queries are the same for every column, computed once per context), giving
// the hidden points; every row attends to the hidden points (mab2). The hidden points'
// keys and values, per block and column chunk, are the column KV cache: `context` fills it
// from the context rows, `queries` runs query rows through it. A chunk of `cols` columns
// is column-major (cols · rows × E) in the caller's buffer, changed in place.
import { AttentionBlock } from "./layers.js";

export class ColumnStage {
  constructor(ops, config, prefix) {
    this.ops = ops;
    this.prefix = prefix;
    this.E = config.embed_dim;
    this.H = config.col_nhead;
    this.I = config.col_num_inds;
    this.ff = this.E * config.ff_factor;
    this.blocks = Array.from({ length: config.col_num_blocks }, (_, i) => {
      const b = `${prefix}tf_col.blocks.${i}.`;
      return { ind: `${b}ind_vectors`, mab1: new AttentionBlock(ops, `${b}mab1.`, this.H),
        mab2: new AttentionBlock(ops, `${b}mab2.`, this.H) };
    });
  }

  /** The inducing points' mab1 queries per block (I × E each), into buffers under `role`. */
  inducingQueries(pass, s, role) {
    const { ops, I, E } = this;
    return this.blocks.map(({ ind, mab1 }, b) => {
      const q = ops.engine.buffer(`tabfm.${role}.${this.prefix}qind.${b}`, I * E * 4);
      mab1.queries(pass, s, { x: ops.w(ind), rows: I, q });
      return q;
    });
  }

  /**
   * Context rows: `cols` columns of N rows in `col` (changed in place) through every block,
   * filling `cache[b]` = {k, v} (cols · I × E each); `qInd` from inducingQueries.
   */
  context(pass, s, { col, cols, N, cache, qInd, hidden }) {
    const { ops, I, E } = this;
    this.blocks.forEach(({ ind, mab1, mab2 }, b) => {
      mab1.kv(pass, s, { x: col, rows: cols * N, k: s.k, v: s.v });
      ops.copy(pass, { src: ops.w(ind), out: hidden, outer: cols, inner: 1, width: I * E, inS1: 0, inS2: 0,
        outS1: I * E, outS2: 0 });
      mab1.attend(pass, s, { x: hidden, q: qInd[b], qBatch: 0, qRow: E, k: s.k, v: s.v, kBatch: N * E, kRow: E,
        batches: cols, Tq: I, keys: N });
      mab1.feedForward(pass, s, { x: hidden, rows: cols * I });
      mab2.kv(pass, s, { x: hidden, rows: cols * I, k: cache[b].k, v: cache[b].v });
      this.throughPoints(pass, s, mab2, { col, cols, rows: N, cache: cache[b] });
    });
    this.finish(pass, s, { col, rows: cols * N });
  }

  /**
   * Query rows: `cols` columns of `rows` rows in `col` through every block over `cache`
   * (a context chunk's; these columns from its column `first` on).
   */
  queries(pass, s, { col, cols, rows, cache, first = 0 }) {
    this.blocks.forEach(({ mab2 }, b) => this.throughPoints(pass, s, mab2, { col, cols, rows, cache: cache[b],
      kOff: first * this.I * this.E }));
    this.finish(pass, s, { col, rows: cols * rows });
  }

  /** mab2: every row of each column attends to its column's hidden points (from float kOff of the cache). */
  throughPoints(pass, s, mab2, { col, cols, rows, cache, kOff = 0 }) {
    const { I, E } = this;
    mab2.queries(pass, s, { x: col, rows: cols * rows, q: s.q });
    mab2.attend(pass, s, { x: col, q: s.q, qBatch: rows * E, qRow: E, k: cache.k, v: cache.v, kOff, kBatch: I * E,
      kRow: E, batches: cols, Tq: rows, keys: I });
    mab2.feedForward(pass, s, { x: col, rows: cols * rows });
  }

  /** RMSNorm(out_w(x)) in place on `rows` rows. */
  finish(pass, s, { col, rows }) {
    const { ops, E, prefix: p } = this;
    ops.linear(pass, { a: col, M: rows, w: `${p}out_w.weight`, b: `${p}out_w.bias`, out: s.t });
    ops.rmsNorm(pass, { x: s.t, rows, D: E, g: `${p}ln_w.weight`, out: col });
  }
}
