// The head (pkg/arenalite/models/tabicl/head.py): the last ICL layer's output of a query
// row → `icl_predictor.ln`, then the decoder (Linear D → 2D, exact GELU, Linear → max_classes
// logits or num_quantiles raw quantiles), in row chunks into `out` (rows × outDim).
import { scratch } from "./layers.js";

export class Head {
  constructor(ops, config) {
    this.ops = ops;
    this.D = config.row_num_cls * config.embed_dim;
    [this.hidden] = ops.shape("icl_predictor.decoder.0.weight");
    [this.outDim] = ops.shape("icl_predictor.decoder.2.weight");
  }

  /** Floats per row of the widest activation. */
  get width() {
    return Math.max(this.hidden, this.outDim, this.D);
  }
}

/** Records the head on `rows` rows of h (from row 0) into out, `chunk` rows at a time. */
export function decode(head, pass, { h, rows, out, chunk }) {
  const { ops, D, hidden, outDim } = head;
  const s = scratch(ops.engine, "head", Math.min(rows, chunk), D, hidden);
  for (let r0 = 0; r0 < rows; r0 += chunk) {
    const M = Math.min(chunk, rows - r0);
    ops.layerNorm(pass, { x: h, xOff: r0 * D, rows: M, D, prefix: "icl_predictor.ln", out: s.a });
    ops.linear(pass, { a: s.a, M, K: D, N: hidden, w: "icl_predictor.decoder.0.weight",
      b: "icl_predictor.decoder.0.bias", out: s.mid, gelu: true });
    ops.linear(pass, { a: s.mid, M, K: hidden, N: outDim, w: "icl_predictor.decoder.2.weight",
      b: "icl_predictor.decoder.2.bias", out, outOff: r0 * outDim });
  }
}

/** Mean and variance (n − 1) of each row's quantiles (head.py's quantile_summary). */
export function quantileSummary(quantiles, rows, Q) {
  const mean = new Float64Array(rows);
  const variance = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    const q = quantiles.subarray(r * Q, (r + 1) * Q);
    let m = 0;
    for (const v of q) m += v;
    m /= Q;
    let ss = 0;
    for (const v of q) ss += (v - m) * (v - m);
    mean[r] = m;
    variance[r] = ss / (Q - 1);
  }
  return { mean, variance };
}
