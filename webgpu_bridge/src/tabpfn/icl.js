// In-context learning (pkg/arenalite/models/tabpfn/icl.py) on the GPU: row representations
// (D = Cl · E), the context rows' with their target's embedding (icl_y_encoder) added,
// through `nlayers` pre-norm blocks whose keys and values come from the context rows only
// (icl_num_kv_heads heads, query head h reading KV head h / (heads / kv_heads); softmax
// scaling for N keys), then output_norm. The context's keys and values per layer are the
// ICL stage's cache (one buffer per layer: N rows of keys then values); query rows read
// only its first icl_num_kv_heads_test KV heads, as the package's KVCacheEntry. Rows go
// through in chunks of `plan.iclRows` (scratch); every context row's keys and values of a
// layer are written before any row of that layer attends. One timed pass per layer.
import { Block, scratch } from "./layers.js";

const NAMES = { normQ: "layernorm", q: "icl_attention.q_projection.weight", out: "icl_attention.out_projection.weight",
  normMlp: "layernorm_mlp", mlp: "mlp." };
const KV = ["icl_attention.k_projection.weight", "icl_attention.v_projection.weight"];

export class ICLStage {
  constructor(ops, config) {
    this.ops = ops;
    this.D = config.embed_dim * config.feat_agg_num_cls_tokens;
    this.heads = config.icl_num_heads;
    this.kvHeads = config.icl_num_kv_heads ?? this.heads;
    this.testHeads = config.icl_num_kv_heads_test ?? this.kvHeads;
    this.dh = this.D / this.heads;
    this.kvWidth = this.kvHeads * this.dh;
    this.classification = config.max_num_classes >= 2;
    this.layers = Array.from({ length: config.nlayers }, (_, i) =>
      new Block(ops, `icl_blocks.${i}.`, { heads: this.heads, kvHeads: this.kvHeads, width: this.D, names: NAMES }));
    this.ff = Math.max(this.D, ...this.layers.map((l) => l.ff));
  }

  /** Floats per row of the widest activation (the feed-forward, or D). */
  get width() {
    return this.ff;
  }

  /** icl_y_encoder of the targets y (N) → (N × D) on the CPU (a class's row, or y · w + b). */
  targetEmbedding(y) {
    const { D } = this;
    const t = this.ops.weights.tensors;
    const out = new Float32Array(y.length * D);
    if (this.classification) {
      const emb = t.get("icl_y_encoder.embedding.weight");
      y.forEach((v, r) => out.set(emb.subarray(v * D, (v + 1) * D), r * D));
    } else {
      const w = t.get("icl_y_encoder.weight");
      const b = t.get("icl_y_encoder.bias");
      y.forEach((v, r) => { for (let d = 0; d < D; d++) out[r * D + d] = Math.fround(Math.fround(v * w[d]) + b[d]); });
    }
    return out;
  }
}

function rowChunks(n, per) {
  const out = [];
  for (let r0 = 0; r0 < n; r0 += per) out.push([r0, Math.min(per, n - r0)]);
  return out;
}

/**
 * One layer on rows h (n of them) over keys/values kv of N context rows read with kvHeads
 * (`normed`: s.a holds the rows' layernorm already, one chunk).
 */
function layer(stage, pass, l, { h, n, kv, N, kvHeads, per, s, normed = false }) {
  const { ops, kvWidth } = stage;
  const block = stage.layers[l];
  const scaling = ops.scaling(pass, `${block.prefix}icl_attention.softmax_scaling_layer.`, N, block.H, block.dh);
  for (const [r0, rows] of rowChunks(n, per)) {
    block.attend(ops, pass, { x: h, xRow: r0, batches: 1, Tq: rows, kv, kvStride: 2 * kvWidth, kOff: 0, vOff: kvWidth,
      kBatch: 0, keys: N, kvHeads, s, scaling, normed: normed && rows === n });
  }
}

/**
 * Context rows' representations h (N × D, updated in place) with targets y (N, CPU) →
 * h after the last layer and output_norm in `out`, and the cache {kv: per layer}. Layer l's
 * pass is timed as `layers[layerBase + l]`.
 */
export async function fitContext(stage, { h, y, N, plan, key, out }, timer, layerBase) {
  const { ops, D, kvWidth } = stage;
  const per = plan.iclRows;
  const s = scratch(ops.engine, "icl", Math.min(per, N), D, stage.ff);
  const yEmb = ops.engine.upload("tabpfn.icl.y", stage.targetEmbedding(y));
  const kv = [];
  for (let l = 0; l < stage.layers.length; l++) {
    const cache = ops.engine.buffer(`tabpfn.${key}.icl.kv.${l}`, N * 2 * kvWidth * 4);
    kv.push(cache);
    await timer.stage(layerBase + l, (pass) => {
      if (l === 0) ops.copy(pass, { src: yEmb, out: h, outer: 1, width: N * D, inS1: 0, outS1: 0, accumulate: true });
      for (const [r0, rows] of rowChunks(N, per)) {
        stage.layers[l].project(ops, pass, { x: h, xOff: r0 * D, rows, norm: "layernorm", weights: KV, out: cache,
          outStride: 2 * kvWidth, outRow: r0, s });
      }
      // one chunk: the keys' layernorm is the queries' too (icl.py's x), still in s.a
      layer(stage, pass, l, { h, n: N, kv: cache, N, kvHeads: stage.kvHeads, per, s, normed: per >= N });
    });
  }
  await timer.stage("head", (pass) => ops.rmsNorm(pass, { x: h, rows: N, D, name: "output_norm", out }));
  return { kv, N };
}

/** Query rows' representations h (rows × D, in place) → after output_norm in `out`. */
export async function query(stage, cache, { h, rows, plan, out }, timer, layerBase) {
  const { ops, D } = stage;
  const per = plan.iclRows;
  const s = scratch(ops.engine, "iclq", Math.min(per, rows), D, stage.ff);
  for (let l = 0; l < stage.layers.length; l++) {
    await timer.stage(layerBase + l, (pass) => layer(stage, pass, l, { h, n: rows, kv: cache.kv[l], N: cache.N,
      kvHeads: stage.testHeads, per, s }));
  }
  await timer.stage("head", (pass) => ops.rmsNorm(pass, { x: h, rows, D, name: "output_norm", out }));
}
