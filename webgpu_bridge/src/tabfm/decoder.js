// The decoder (pkg/arenalite/models/tabfm/decoder.py): the ICL output → RMSNorm
// (icl_predictor.ln) → Linear → tanh GELU → Linear: max_classes logits, or one value for
// regression. Rows go `chunk` at a time through the caller's scratch.
export class Decoder {
  constructor(ops, config) {
    this.ops = ops;
    this.D = config.embed_dim * config.row_num_cls;
    this.hidden = ops.shape("icl_predictor.decoder.layers.0.weight")[0];
    this.outDim = ops.shape("icl_predictor.decoder.layers.1.weight")[0];
    this.isClassifier = Boolean(config.is_classifier);
  }

  /** h (rows × D) → out (rows × outDim); a: chunk × D, mid: chunk × hidden scratch. */
  run(pass, { h, rows, out, a, mid, chunk }) {
    const { ops, D } = this;
    const p = "icl_predictor.decoder.layers";
    for (let r0 = 0; r0 < rows; r0 += chunk) {
      const M = Math.min(chunk, rows - r0);
      ops.rmsNorm(pass, { x: h, xOff: r0 * D, rows: M, D, g: "icl_predictor.ln.weight", out: a });
      ops.linear(pass, { a, M, w: `${p}.0.weight`, b: `${p}.0.bias`, out: mid, act: "gelu_tanh" });
      ops.linear(pass, { a: mid, M, w: `${p}.1.weight`, b: `${p}.1.bias`, out, outOff: r0 * this.outDim });
    }
  }
}
