// The operators every transformer of the bridge is built of, one kernel each:
// linear (kernels/linear.wgsl: either weight layout, optional bias, fused exact or tanh
// GELU, accumulate onto the residual stream), LayerNorm (kernels/layer_norm.wgsl, bias
// optional), RMSNorm (kernels/rms_norm.wgsl, weight optional, also per head for q/k
// norms), SwiGLU (kernels/swiglu.wgsl), RoPE (kernels/rope.wgsl: in place, split-half or
// interleaved pairs), strided copies (kernels/copy.wgsl) and attention (kernels/attention.wgsl: tiled, strided, grouped KV heads,
// with TabICL's SSMax / QASSMax and TabPFN v3's SoftmaxScalingMLP fused in). icl_transformer,
// tabular_fm, TabICL, TabPFN and TabFM record their dispatches here; buffers come in,
// nothing is named by model.
import { LINEAR_TILE } from "./kernels.js";

const LINEAR_FLAGS = { bias: 1, gelu: 2, accumulate: 4, gelu_tanh: 8, inputMajor: 16 };
const SSMAX_MODES = { none: 0, base: 1, query: 2 };
/** The attention kernel's largest head dim and QASSMax hidden width (its workgroup tiles). */
export const MAX_HEAD_DIM = 64;
export const MAX_SSMAX_HIDDEN = 64;
/** Invocations of an attention workgroup (one per query row) and floats of its K or V tile. */
const ATTENTION_WORKGROUP = 64;
const ATTENTION_TILE_FLOATS = 1024;

/** Workgroups for `count` groups' worth of work, folded into y past 65535. */
export function fold(count) {
  const g = Math.max(1, count);
  return g <= 65535 ? [g, 1, 1] : [65535, Math.ceil(g / 65535), 1];
}

/** Workgroups for `count` invocations of 64, folded into y past 65535. */
export function groups64(count) {
  return fold(Math.ceil(count / 64));
}

/**
 * How an attention workgroup is filled: `rows` query rows of each of `group` batches (64
 * rows of one batch, or a short batch's rows times as many batches as fit), and `tile`
 * keys of each of those batches in workgroup memory at a time.
 */
export function attentionShape(batches, Tq, keys, dh) {
  const rows = Math.min(Tq, ATTENTION_WORKGROUP);
  const group = Math.max(1, Math.min(batches, Math.floor(ATTENTION_WORKGROUP / rows)));
  const tile = Math.max(1, Math.min(keys, ATTENTION_WORKGROUP, Math.floor(ATTENTION_TILE_FLOATS / (group * dh))));
  return { group, rows, tile };
}

export class Operators {
  /** The operators of one engine, with an attention pipeline for each head dim in `headDims`. */
  static async create(engine, headDims = []) {
    const dims = [...new Set(headDims)];
    for (const dh of dims) {
      if (!Number.isInteger(dh) || dh < 1 || dh > MAX_HEAD_DIM) {
        throw new Error(`WebGPU attention: head dim ${dh} is not an integer in 1…${MAX_HEAD_DIM} (the kernel's tile)`);
      }
    }
    const [linear, layerNorm, rmsNorm, rmsNormInPlace, swiglu, rope, copy, ...attention] = await Promise.all([
      engine.pipeline("linear"), engine.pipeline("layer_norm"), engine.pipeline("rms_norm"),
      engine.pipeline("rms_norm", "in_place"), engine.pipeline("swiglu"), engine.pipeline("rope"),
      engine.pipeline("copy"),
      ...dims.map((dh) => engine.pipeline("attention", "main", { DH: dh }))]);
    return new Operators(engine, { linear, layer_norm: layerNorm, rms_norm: rmsNorm, rms_norm_in_place: rmsNormInPlace,
      swiglu, rope, copy }, new Map(dims.map((dh, i) => [dh, attention[i]])));
  }

  constructor(engine, pipelines, attention) {
    this.engine = engine;
    this.p = pipelines;
    this.attentionPipelines = attention;  // head dim → pipeline (the kernel's DH constant)
    this.zeros = engine.buffer("operators.zeros", 16);  // never written: WebGPU zero-fills
  }

  /**
   * out[r, c] (= or +=) act(a[r] · w(c) + b[c]) for r < M, c < N. `layout` "torch": w is
   * N rows of K (from float wOff); "input-major": K rows of N. `act` null, "gelu" (exact)
   * or "gelu_tanh".
   */
  linear(pass, { a, aOff = 0, aStride, M, K, N, w, wOff = 0, layout = "torch", b = null, bOff = 0, out,
    outOff = 0, outStride = N, act = null, accumulate = false }) {
    if (M === 0) return;
    const F = LINEAR_FLAGS;
    const flags = (b ? F.bias : 0) | (act === "gelu" ? F.gelu : 0) | (act === "gelu_tanh" ? F.gelu_tanh : 0) |
      (accumulate ? F.accumulate : 0) | (layout === "input-major" ? F.inputMajor : 0);
    const u = this.engine.uniform([["u32", M], ["u32", K], ["u32", N], ["u32", flags], ["u32", aStride ?? K],
      ["u32", aOff], ["u32", wOff], ["u32", bOff], ["u32", outStride], ["u32", outOff]]);
    this.engine.dispatch(pass, this.p.linear, { 0: u, 1: a, 2: w, 3: b ?? this.zeros, 4: out },
      [Math.ceil(N / LINEAR_TILE.cols), Math.ceil(M / LINEAR_TILE.rows), 1]);
  }

  /** LayerNorm of `rows` rows of D floats (gain g, bias b or none) from xOff into out at outOff. */
  layerNorm(pass, { x, xOff = 0, rows, D, eps, g, b = null, out, outOff = 0 }) {
    if (rows === 0) return;
    const u = this.engine.uniform([["u32", rows], ["u32", D], ["f32", eps], ["u32", b ? 1 : 0],
      ["u32", xOff], ["u32", outOff]]);
    this.engine.dispatch(pass, this.p.layer_norm, { 0: u, 1: x, 2: g, 3: b ?? this.zeros, 4: out },
      groups64(rows));
  }

  /**
   * RMSNorm of `rows` rows of D floats, x / sqrt(mean(x²) + eps) · g (g null: no weight),
   * from xOff into out at outOff (kernels/rms_norm.wgsl); `out` === `x` normalises in place
   * (xOff === outOff); `accumulate` adds onto out (a residual stream: x + RMSNorm(y)). D may
   * be a head dim: the q/k norms over rows × heads rows of head_dim with a length-head_dim
   * weight.
   */
  rmsNorm(pass, { x, xOff = 0, rows, D, eps, g = null, out, outOff = 0, accumulate = false }) {
    if (rows === 0) return;
    const inPlace = out === x;
    if (inPlace && xOff !== outOff) throw new Error(`WebGPU rmsNorm: in place needs xOff ${xOff} === outOff ${outOff}`);
    if (inPlace && accumulate) throw new Error("WebGPU rmsNorm: accumulate needs out to be another buffer");
    const u = this.engine.uniform([["u32", rows], ["u32", D], ["f32", eps], ["u32", (g ? 1 : 0) | (accumulate ? 2 : 0)],
      ["u32", xOff], ["u32", outOff]]);
    const weight = g ?? this.zeros;
    this.engine.dispatch(pass, inPlace ? this.p.rms_norm_in_place : this.p.rms_norm,
      inPlace ? { 0: u, 2: weight, 4: out } : { 0: u, 1: x, 2: weight, 4: out }, groups64(rows));
  }

  /**
   * SwiGLU: out[r, c] = silu(gate[r, c]) · up[r, c] for r < rows, c < N (kernels/swiglu.wgsl);
   * each operand at (offset, row stride) in floats, so gate and up may be the two halves of
   * one [rows × 2N] product (the same buffer). `out` must be another buffer.
   */
  swiglu(pass, { rows, N, gate, gateOff = 0, gateStride = N, up, upOff = 0, upStride = N, out, outOff = 0,
    outStride = N }) {
    if (rows * N === 0) return;
    if (out === gate || out === up) throw new Error("WebGPU swiglu: out must not be the gate or up buffer");
    const u = this.engine.uniform([["u32", rows], ["u32", N], ["u32", gateOff], ["u32", gateStride], ["u32", upOff],
      ["u32", upStride], ["u32", outOff], ["u32", outStride]]);
    this.engine.dispatch(pass, this.p.swiglu, { 0: u, 1: gate, 2: up, 3: out }, groups64(rows * N));
  }

  /**
   * Strided copy of `outer` × `inner` runs of `width` floats (kernels/copy.wgsl):
   * out[outOff + i·outS1 + j·outS2 + e] (= or, with `accumulate`, +=) alpha ·
   * src[inOff + i·inS1 + j·inS2 + e]; a stride 0 broadcasts.
   */
  copy(pass, { src, out, outer, inner = 1, width, inS1, inS2 = 0, inOff = 0, outS1, outS2 = 0, outOff = 0,
    accumulate = false, alpha = 1 }) {
    if (outer * inner * width === 0) return;
    const u = this.engine.uniform([["u32", outer], ["u32", inner], ["u32", width], ["u32", inS1], ["u32", inS2],
      ["u32", inOff], ["u32", outS1], ["u32", outS2], ["u32", outOff], ["u32", accumulate ? 1 : 0], ["f32", alpha]]);
    this.engine.dispatch(pass, this.p.copy, { 0: u, 1: src, 2: out }, groups64(outer * inner * width));
  }

  /**
   * Attention of `batches` × `Tq` query rows over `keys` keys per batch, H heads of dh;
   * every operand at (off, batch stride, row stride) in floats (kernels/attention.wgsl).
   * `kvHeads` (dividing H): query head h reads KV head h / (H / kvHeads). Values at
   * (vOff, vBatch, vRow) with heads vHead apart (default: the keys' strides, dh).
   * `ssmax`: null, or {base, mlp (null: no query MLP), elementwise, hidden, qOut}.
   */
  attention(pass, { q, k, v, out, batches, Tq, keys, H, dh, qOff = 0, qBatch, qRow, kOff = 0, vOff = 0, kBatch,
    kRow, oOff = 0, oBatch, oRow, ssmax = null, kvHeads = H, vBatch = kBatch, vRow = kRow, vHead = dh }) {
    if (batches * Tq === 0) return;
    if (!Number.isInteger(kvHeads) || kvHeads < 1 || H % kvHeads) {
      throw new Error(`WebGPU attention: ${kvHeads} KV heads do not divide ${H} heads`);
    }
    const pipeline = this.attentionPipelines.get(dh);
    if (!pipeline) throw new Error(`WebGPU attention: no pipeline for head dim ${dh} (Operators.create(engine, [${dh}]))`);
    const mode = ssmax === null ? SSMAX_MODES.none : ssmax.mlp ? SSMAX_MODES.query : SSMAX_MODES.base;
    if (ssmax?.mlp && ssmax.hidden > MAX_SSMAX_HIDDEN) {
      throw new Error(`WebGPU attention: QASSMax hidden width ${ssmax.hidden} > ${MAX_SSMAX_HIDDEN}`);
    }
    const { group, rows, tile } = attentionShape(batches, Tq, keys, dh);
    const u = this.engine.uniform([["u32", batches], ["u32", Tq], ["u32", keys], ["u32", H], ["u32", dh],
      ["f32", 1 / Math.sqrt(dh)], ["u32", qOff], ["u32", qBatch], ["u32", qRow], ["u32", kOff], ["u32", vOff],
      ["u32", kBatch], ["u32", kRow], ["u32", oOff], ["u32", oBatch], ["u32", oRow], ["u32", mode],
      ["u32", ssmax?.elementwise ? 1 : 0], ["u32", ssmax?.hidden ?? 0], ["u32", ssmax?.qOut ?? 1],
      ["u32", group], ["u32", rows], ["u32", tile], ["u32", kvHeads], ["u32", vBatch], ["u32", vRow],
      ["u32", vHead]]);
    this.engine.dispatch(pass, pipeline, { 0: u, 1: q, 2: k, 3: v, 4: out,
      5: ssmax?.base ?? this.zeros, 6: ssmax?.mlp ?? this.zeros },
    fold(H * Math.ceil(batches / group) * Math.ceil(Tq / rows)));
  }

  /**
   * RoPE in place on `rows` rows of H heads of dh (kernels/rope.wgsl): row r at position
   * r % period, rows `stride` floats apart from float `off`; `table` a buffer of
   * ropeTable(freqs, period) (split-half pairs unless `interleaved`).
   */
  rope(pass, { x, rows, period, H, dh, stride, off = 0, interleaved = false, table }) {
    if (rows === 0) return;
    const u = this.engine.uniform([["u32", rows], ["u32", period], ["u32", H], ["u32", dh], ["u32", stride],
      ["u32", off], ["u32", interleaved ? 1 : 0]]);
    this.engine.dispatch(pass, this.p.rope, { 0: u, 1: x, 2: table }, groups64(rows * H * (dh / 2)));
  }
}

/**
 * RoPE's table for positions 0 … period − 1: (cos, sin) of pos · freqs[i] per (pos, i),
 * the angle rounded to float32 as numpy's (float32 positions times float32 frequencies),
 * cos and sin in float64 (WGSL's promise 2^-11 only within [-π, π]).
 */
export function ropeTable(freqs, period) {
  const half = freqs.length;
  const table = new Float32Array(period * half * 2);
  for (let pos = 0; pos < period; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(pos * freqs[i]);
      table[2 * (pos * half + i)] = Math.cos(angle);
      table[2 * (pos * half + i) + 1] = Math.sin(angle);
    }
  }
  return table;
}
