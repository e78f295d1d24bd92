// The decoder (pkg/arenalite/models/tabpfn/decoder.py) on the GPU, on the ICL output.
// Classification (ManyClassDecoder): the query rows attend to the context rows (heads of
// decoder_head_dim, queries scaled when decoder_use_softmax_scaling) whose values are the
// context rows' one-hot targets (width: the highest context class + 1), through the shared
// attention kernel with the values broadcast over heads, in slices of decoder_head_dim
// classes; then the heads' mean, zero-padded to max_num_classes, as log(max(p, 1e-5) +
// 3e-5) (kernels/tabpfn_decoder.wgsl). The context rows' projected keys and one-hot
// targets are the decoder's cache. Regression: Linear → GELU → Linear to num_buckets.

export class Decoder {
  constructor(ops, config) {
    this.ops = ops;
    this.classification = config.max_num_classes >= 2;
    this.nOut = this.classification ? config.max_num_classes : config.num_buckets;
    this.D = config.embed_dim * config.feat_agg_num_cls_tokens;
    if (this.classification) {
      this.heads = config.decoder_num_heads;
      this.dd = config.decoder_head_dim;
      this.scaled = Boolean(config.decoder_use_softmax_scaling);
    } else {
      this.ff = ops.shape("output_projection.0.weight")[0];
    }
  }

  /** Class slices of dd for `classes` context classes. */
  slices(classes) {
    return Math.ceil(classes / this.dd);
  }

  /** Floats per query row of the decoder's activations. */
  width(classes = this.nOut) {
    return this.classification ? this.heads * this.dd * (1 + this.slices(classes)) + this.nOut : this.ff + this.nOut;
  }
}

/**
 * The context rows' ICL output `out` (N × D) and labels y (CPU) → the cache {keys, oneHot,
 * classes, N} (null for regression), computed in the `head` stage.
 */
export async function fitContext(dec, { out, y, N, key }, timer) {
  if (!dec.classification) return null;
  const { ops, heads, dd, D } = dec;
  let classes = 0;
  for (const v of y) classes = Math.max(classes, v + 1);
  const width = dec.slices(classes) * dd;
  const oneHot = new Float32Array(N * width);
  y.forEach((v, r) => { oneHot[r * width + v] = 1; });
  const values = ops.engine.upload(`tabpfn.${key}.dec.onehot`, oneHot);
  const keys = ops.engine.buffer(`tabpfn.${key}.dec.keys`, N * heads * dd * 4);
  await timer.stage("head", (pass) => ops.linear(pass, { a: out, M: N, K: D, N: heads * dd,
    w: "many_class_decoder.k_projection.weight", b: "many_class_decoder.k_projection.bias", out: keys }));
  return { keys, values, width, classes, N };
}

/** Query rows' ICL output `out` (rows × D) → logits into `logits` (rows × nOut). */
export function logits(dec, cache, pass, { out, rows, logits: dest }) {
  const { ops, D, nOut } = dec;
  const engine = ops.engine;
  if (!dec.classification) {
    const mid = engine.buffer("tabpfn.dec.mid", rows * dec.ff * 4);
    ops.linear(pass, { a: out, M: rows, K: D, N: dec.ff, w: "output_projection.0.weight", b: "output_projection.0.bias",
      out: mid, gelu: true });
    ops.linear(pass, { a: mid, M: rows, K: dec.ff, N: nOut, w: "output_projection.2.weight",
      b: "output_projection.2.bias", out: dest });
    return;
  }
  const { heads: H, dd } = dec;
  const q = engine.buffer("tabpfn.dec.q", rows * H * dd * 4);
  const slices = dec.slices(cache.classes);
  const probs = engine.buffer("tabpfn.dec.probs", slices * rows * H * dd * 4);
  ops.linear(pass, { a: out, M: rows, K: D, N: H * dd, w: "many_class_decoder.q_projection.weight",
    b: "many_class_decoder.q_projection.bias", out: q });
  const scaling = dec.scaled ? ops.scaling(pass, "many_class_decoder.softmax_scaling_layer.", cache.N, H, dd) : null;
  for (let j = 0; j < slices; j++) {
    ops.operators.attention(pass, { q, k: cache.keys, v: cache.values, out: probs, batches: 1, Tq: rows,
      keys: cache.N, H, dh: dd, qBatch: 0, qRow: H * dd, kBatch: 0, kRow: H * dd, vOff: j * dd, vBatch: 0,
      vRow: cache.width, vHead: 0, oOff: j * rows * H * dd, oBatch: 0, oRow: H * dd, ssmax: scaling });
  }
  ops.run(pass, "tabpfn_decoder", [["u32", rows], ["u32", H], ["u32", dd], ["u32", cache.classes], ["u32", nOut]],
    { 1: probs, 2: dest }, rows * nOut);
}
