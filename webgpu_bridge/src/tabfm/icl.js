// In-context learning (pkg/arenalite/models/tabfm/icl.py) on the GPU: each row's
// representation (its CLS tokens, D = row_num_cls · E wide), the context rows' with their
// target's encoding added (a class's column of y_encoder.projection plus its bias, as one
// table made on the CPU; or the regression target through the 1 → hidden → D MLP, tanh
// GELU), through `icl_num_blocks` blocks (no RoPE) in which every row attends to the
// context rows only. The context's keys and values per block are the ICL KV cache:
// `fitContext` fills it once per context (the context rows through every block but the
// last), `query` takes any rows through every block over it. Rows go `chunk` at a time.
import { groups64 } from "../operators.js";
import { AttentionBlock } from "./layers.js";

export class ICLStage {
  constructor(ops, config) {
    this.ops = ops;
    this.D = config.embed_dim * config.row_num_cls;
    this.H = config.icl_nhead;
    this.isClassifier = Boolean(config.is_classifier);
    this.maxClasses = config.max_classes;
    this.ff = this.D * config.ff_factor;
    this.blocks = Array.from({ length: config.icl_num_blocks },
      (_, i) => new AttentionBlock(ops, `icl_predictor.tf_icl.blocks.${i}.`, this.H));
  }

  /** Hidden width of the regression target's MLP (0 for a classifier). */
  get targetHidden() {
    return this.isClassifier ? 0 : this.ops.shape("icl_predictor.y_encoder.layers.0.weight")[0];
  }

  /** h (N × D) += the targets' encoding; y an N-float buffer, mid chunk × targetHidden scratch. */
  addTarget(pass, { h, N, y, mid, chunk }) {
    const { ops, D, maxClasses } = this;
    if (!this.isClassifier) {
      const p = "icl_predictor.y_encoder.layers";
      for (let r0 = 0; r0 < N; r0 += chunk) {
        const M = Math.min(chunk, N - r0);
        ops.linear(pass, { a: y, aOff: r0, M, w: `${p}.0.weight`, b: `${p}.0.bias`, out: mid, act: "gelu_tanh" });
        ops.linear(pass, { a: mid, M, w: `${p}.1.weight`, b: `${p}.1.bias`, out: h, outOff: r0 * D, accumulate: true });
      }
      return;
    }
    const table = ops.w("icl_predictor.y_encoder.table", () => {
      const w = ops.tensor("icl_predictor.y_encoder.projection.weight");
      const b = ops.tensor("icl_predictor.y_encoder.projection.bias");
      const data = new Float32Array(maxClasses * D);
      for (let c = 0; c < maxClasses; c++) for (let e = 0; e < D; e++) data[c * D + e] = w[e * maxClasses + c] + b[e];
      return { data, rows: maxClasses };
    });
    ops.run(pass, "tabfm_target", [["u32", N], ["u32", N], ["u32", D], ["u32", 1], ["u32", maxClasses]],
      { 1: y, 2: table, 3: h }, groups64(N * D));
  }

  /** Block `l`'s keys and values of the context rows h (N × D) into kv = {k, v}, `chunk` rows at a time. */
  keysValues(pass, s, l, { h, N, kv, chunk }) {
    for (let r0 = 0; r0 < N; r0 += chunk) {
      this.blocks[l].kv(pass, s, { x: h, xRow: r0, rows: Math.min(chunk, N - r0), k: kv.k, v: kv.v, kvRow: r0 });
    }
  }

  /** Rows 0 … rows − 1 of h through block `l` over the context's keys/values kv (n keys). */
  through(pass, s, l, { h, rows, kv, n, chunk }) {
    const block = this.blocks[l];
    const { D } = this;
    for (let r0 = 0; r0 < rows; r0 += chunk) {
      const M = Math.min(chunk, rows - r0);
      block.queries(pass, s, { x: h, xRow: r0, rows: M, q: s.q });
      block.attend(pass, s, { x: h, xRow: r0, q: s.q, qBatch: 0, qRow: D, k: kv.k, v: kv.v, kBatch: 0, kRow: D,
        batches: 1, Tq: M, keys: n });
      block.feedForward(pass, s, { x: h, xRow: r0, rows: M });
    }
  }
}
