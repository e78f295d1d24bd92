// The dispatches every TabICL stage is built of (pkg/arenalite/models/tabicl/layers.py on
// the GPU): the bridge's operators (src/operators.js: torch-layout linear layers, optionally
// with exact GELU or accumulated onto the residual stream, LayerNorm with or without bias,
// attention with SSMax / QASSMax fused in) named by the checkpoint's tensors, RoPE, strided
// copies, and the pre-norm attention block (`MultiheadAttentionBlock`) made of them:
// `kvProject` fills a K/V cache, `forward` runs queries over one.
//
// Kernels: src/kernels/ (the operators' and tabicl_*.wgsl), compiled once per engine in its
// pipeline cache; buffers live in its per-role buffers (prefix "tabicl."), weights are
// uploaded once per engine and weights object, and each dispatch gets its own uniform block
// from the engine.
import { MAX_SSMAX_HIDDEN, Operators, ropeTable } from "../operators.js";

export const TABICL_KERNELS = ["tabicl_cells", "tabicl_target"];
export const LN_EPS = 1e-5;
/** Rows one linear dispatch may cover (65535 workgroups of 32 rows). */
export const MAX_DISPATCH_ROWS = 65535 * 32;

/** A config's `*_ssmax` as a kind name (true is QASSMax elementwise), as layers.py. */
export function ssmaxKind(value) {
  if (typeof value === "boolean") return value ? "qassmax-mlp-elementwise" : "none";
  return value;
}


const uploaded = new WeakMap();
let weightsSerial = 0;

/**
 * GPU buffers of every tensor of `weights`, uploaded once per engine: {id, buffers, ready}
 * (`ready`: the derived buffers of these weights already computed, roles under `tabicl.${id}.`).
 */
function weightBuffers(engine, weights) {
  let perEngine = uploaded.get(weights);
  if (!perEngine) uploaded.set(weights, (perEngine = new WeakMap()));
  let entry = perEngine.get(engine);
  if (entry) return entry;
  const id = weightsSerial++;
  const buffers = new Map();
  for (const [name, data] of weights.tensors) buffers.set(name, engine.upload(`tabicl.w.${id}.${name}`, data));
  entry = { id, buffers, ready: new Set() };
  perEngine.set(engine, entry);
  return entry;
}

/** The dispatch helpers of one engine and weights. */
export class Ops {
  static async create(engine, weights) {
    const c = weights.config;
    const headDims = [c.embed_dim / c.col_nhead, c.embed_dim / c.row_nhead, (c.embed_dim * c.row_num_cls) / c.icl_nhead];
    const [operators, ...made] = await Promise.all([Operators.create(engine, headDims.filter(Number.isInteger)),
      ...TABICL_KERNELS.map((k) => engine.pipeline(k))]);
    return new Ops(engine, weights, operators, Object.fromEntries(TABICL_KERNELS.map((k, i) => [k, made[i]])));
  }

  constructor(engine, weights, operators, pipelines) {
    this.engine = engine;
    this.weights = weights;
    this.operators = operators;
    this.p = pipelines;
    const { id, buffers, ready } = weightBuffers(engine, weights);
    this.buffers = buffers;
    this.ready = ready;  // roles of the RoPE tables and SSMax base vectors computed
    this.id = id;  // the weights' role prefix for what is derived from them
    this.zeros = operators.zeros;
  }

  w(name) {
    const b = this.buffers.get(name);
    if (!b) throw new Error(`TabICL weights: tensor '${name}' is missing`);
    return b;
  }

  has(name) {
    return this.buffers.has(name);
  }

  shape(name) {
    const s = this.weights.shapes.get(name);
    if (!s) throw new Error(`TabICL weights: tensor '${name}' is missing`);
    return s;
  }

  run(pass, kernel, fields, bindings, groups) {
    this.engine.dispatch(pass, this.p[kernel], { 0: this.engine.uniform(fields), ...bindings }, groups);
  }

  /** out[r, c] (= or +=) act(a[r] . w[c] + b[c]), torch layout, tensors by name; see operators.js. */
  linear(pass, { w, b = null, gelu = false, ...rest }) {
    this.operators.linear(pass, { ...rest, w: this.w(w), b: b ? this.w(b) : null, act: gelu ? "gelu" : null });
  }

  /** LayerNorm of `rows` rows of D (tensors `${prefix}.weight` and, if stored, `.bias`). */
  layerNorm(pass, { x, xOff = 0, rows, D, prefix, out, outOff = 0 }) {
    const b = this.has(`${prefix}.bias`) ? this.w(`${prefix}.bias`) : null;
    this.operators.layerNorm(pass, { x, xOff, rows, D, eps: LN_EPS, g: this.w(`${prefix}.weight`), b, out, outOff });
  }

  /** Strided copy (the operators' `copy`); `inS1`/`inS2` 0 broadcast. */
  copy(pass, args) {
    this.operators.copy(pass, args);
  }

  /**
   * Cross-attention into `out` (batches * Tq rows of H * dh): query t of batch b at row
   * b * qBatch + t of q (stride qStride, from float qOff), its keys/values at rows
   * b * kBatch + i of kv (stride kvStride, from floats kOff / vOff); `ssmax` as operators.js.
   */
  attention(pass, { q, qBatch, qStride, qOff = 0, kv, kBatch, kvStride, kOff, vOff, out, batches, Tq,
    keys, H, dh, ssmax = null }) {
    this.operators.attention(pass, { q, k: kv, v: kv, out, batches, Tq, keys, H, dh,
      qOff, qBatch: qBatch * qStride, qRow: qStride, kOff, vOff, kBatch: kBatch * kvStride, kRow: kvStride,
      oBatch: Tq * H * dh, oRow: H * dh, ssmax });
  }

  /** RoPE in place on `rows` rows of H heads (positions r % period; operators.js's rope). */
  rope(pass, { x, rows, period, H, dh, stride, off = 0, interleaved, freqs }) {
    this.operators.rope(pass, { x, rows, period, H, dh, stride, off, interleaved,
      table: this.ropeTable(freqs, period, dh) });
  }

  /** cos / sin of pos * freqs[i] (float32 angles as numpy's, float64 trig), per period. */
  ropeTable(freqs, period, dh) {
    const role = `tabicl.${this.id}.rope.${period}`;
    if (!this.ready.has(role)) {
      const f = this.weights.tensors.get(freqs);
      const half = dh / 2;
      if (f.length !== half) throw new Error(`TabICL weights: '${freqs}' holds ${f.length} values, expected ${half}`);
      this.engine.upload(role, ropeTable(f, period));
      this.ready.add(role);
    }
    return this.engine.buffer(role, 0);
  }
}

/**
 * One pre-norm `MultiheadAttentionBlock` under `prefix` (…"attn.in_proj_weight", "norm1",
 * "norm2", "linear1", "linear2"): `h = q + Attn(LN1(q), LN1(kv))`, `h += W2 GELU(W1 LN2(h))`.
 * Scratch `s` = {a, q, o, mid}: rows × E (mid: rows × ff) buffers of the caller's role.
 */
export class AttentionBlock {
  constructor(ops, prefix, heads, ssmax, normFirst = true) {
    if (!normFirst) throw new Error("TabICL on WebGPU: post-norm blocks (norm_first false) are not implemented");
    this.prefix = prefix;
    this.E = ops.shape(`${prefix}attn.out_proj.weight`)[0];
    this.H = heads;
    this.dh = this.E / heads;
    if (!Number.isInteger(this.dh) || this.dh % 2) {
      throw new Error(`TabICL config: width ${this.E} over ${heads} heads is not an even head dim`);
    }
    this.ff = ops.shape(`${prefix}linear1.weight`)[0];
    this.ssmax = ssmaxKind(ssmax);
  }

  /** LN1 of `rows` rows of x (from row xRow) → keys/values into kv rows kvRow… (2E each). */
  kvProject(ops, pass, { x, xRow = 0, rows, s, kv, kvRow = 0, rope = null }) {
    const { E, prefix: p } = this;
    ops.layerNorm(pass, { x, xOff: xRow * E, rows, D: E, prefix: `${p}norm1`, out: s.a });
    ops.linear(pass, { a: s.a, M: rows, K: E, N: 2 * E, w: `${p}attn.in_proj_weight`, wOff: E * E,
      b: `${p}attn.in_proj_bias`, bOff: E, out: kv, outOff: kvRow * 2 * E, outStride: 2 * E });
    if (rope) {
      ops.rope(pass, { x: kv, rows, period: rope.period, H: this.H, dh: this.dh, stride: 2 * E,
        off: kvRow * 2 * E, interleaved: rope.interleaved, freqs: rope.freqs });
    }
  }

  /**
   * The block on `rows` = batches × Tq query rows of the residual stream x (from row xRow,
   * updated in place) over cached keys/values: batch b's queries attend to kv rows
   * b · kBatch … + keys − 1. `n` is the key count the SSMax scaling sees.
   */
  forward(ops, pass, { x, xRow = 0, batches, Tq, kv, kBatch, keys, s, rope = null }) {
    const { E, H, dh, prefix: p } = this;
    const rows = batches * Tq;
    ops.layerNorm(pass, { x, xOff: xRow * E, rows, D: E, prefix: `${p}norm1`, out: s.a });
    ops.linear(pass, { a: s.a, M: rows, K: E, N: E, w: `${p}attn.in_proj_weight`, b: `${p}attn.in_proj_bias`,
      out: s.q });
    if (rope) {
      ops.rope(pass, { x: s.q, rows, period: rope.period, H, dh, stride: E, interleaved: rope.interleaved,
        freqs: rope.freqs });
    }
    ops.attention(pass, { q: s.q, qBatch: Tq, qStride: E, kv, kBatch, kvStride: 2 * E, kOff: 0, vOff: E,
      out: s.o, batches, Tq, keys, H, dh, ssmax: this.ssmaxOperand(ops, pass, keys) });
    ops.linear(pass, { a: s.o, M: rows, K: E, N: E, w: `${p}attn.out_proj.weight`, b: `${p}attn.out_proj.bias`,
      out: x, outOff: xRow * E, accumulate: true });
    ops.layerNorm(pass, { x, xOff: xRow * E, rows, D: E, prefix: `${p}norm2`, out: s.a });
    ops.linear(pass, { a: s.a, M: rows, K: E, N: this.ff, w: `${p}linear1.weight`, b: `${p}linear1.bias`,
      out: s.mid, gelu: true });
    ops.linear(pass, { a: s.mid, M: rows, K: this.ff, N: E, w: `${p}linear2.weight`, b: `${p}linear2.bias`,
      out: x, outOff: xRow * E, accumulate: true });
  }

  /**
   * The attention's SSMax / QASSMax operand for n keys (layers.py's ssmax_scale): null, or
   * {base, mlp (query_mlp packed as W0 | b0 | W2 | b2; null without one), elementwise,
   * hidden, qOut}.
   */
  ssmaxOperand(ops, pass, n) {
    const kind = this.ssmax;
    if (kind === "none") return null;
    const p = `${this.prefix}attn.ssmax_layer.`;
    const base = this.baseVector(ops, pass, p, n);
    const elementwise = kind.endsWith("elementwise");
    if (!kind.startsWith("qassmax")) return { base, mlp: null, elementwise, hidden: 0, qOut: 1 };
    const [hidden, dIn] = ops.shape(`${p}query_mlp.0.weight`);
    const qOut = ops.shape(`${p}query_mlp.2.weight`)[0];
    if (hidden > MAX_SSMAX_HIDDEN || dIn !== this.dh || (qOut !== 1 && qOut !== this.dh)) {
      throw new Error(`TabICL on WebGPU: ${p}query_mlp of shape ${hidden} x ${dIn} -> ${qOut} ` +
        `(head dim ${this.dh}, hidden at most ${MAX_SSMAX_HIDDEN})`);
    }
    const role = `tabicl.${ops.id}.qmlp.${p}`;
    if (!ops.ready.has(role)) {
      const parts = ["0.weight", "0.bias", "2.weight", "2.bias"].map((t) => ops.weights.tensors.get(`${p}query_mlp.${t}`));
      const packed = new Float32Array(parts.reduce((sum, t) => sum + t.length, 0));
      parts.reduce((at, t) => (packed.set(t, at), at + t.length), 0);
      ops.engine.upload(role, packed);
      ops.ready.add(role);
    }
    return { base, mlp: ops.engine.buffer(role, 0), elementwise, hidden, qOut };
  }

  /** base_mlp(log n) (ssmax-mlp*: mlp(log n); ssmax: scales · log n), once per block and n. */
  baseVector(ops, pass, p, n) {
    const role = `tabicl.${ops.id}.ssmax.${p}${n}`;
    const logn = Math.fround(Math.log(Math.max(n, 1)));
    if (ops.ready.has(role)) return ops.engine.buffer(role, 0);
    if (this.ssmax === "ssmax") {
      const scales = ops.weights.tensors.get(`${p}scales`);
      const buffer = ops.engine.upload(role, scales.map((v) => Math.fround(v * logn)));
      ops.ready.add(role);
      return buffer;
    }
    const mlp = `${p}${this.ssmax.startsWith("ssmax-mlp") ? "mlp" : "base_mlp"}`;  // ssmax-mlp*: "mlp"
    const [hidden] = ops.shape(`${mlp}.0.weight`);
    const [width] = ops.shape(`${mlp}.2.weight`);
    const input = ops.engine.upload(`${role}.logn`, Float32Array.of(logn));
    const mid = ops.engine.buffer(`${role}.hidden`, hidden * 4);
    const base = ops.engine.buffer(role, width * 4);
    ops.linear(pass, { a: input, M: 1, K: 1, N: hidden, w: `${mlp}.0.weight`, b: `${mlp}.0.bias`, out: mid, gelu: true });
    ops.linear(pass, { a: mid, M: 1, K: hidden, N: width, w: `${mlp}.2.weight`, b: `${mlp}.2.bias`, out: base });
    ops.ready.add(role);
    return base;
  }
}

/** Scratch buffers {a, q, o, mid} of `rows` rows for a block of width E and hidden ff. */
export function scratch(engine, role, rows, E, ff) {
  const buf = (name, width) => engine.buffer(`tabicl.${role}.${name}`, Math.max(1, rows * width) * 4);
  return { a: buf("a", E), q: buf("q", E), o: buf("o", E), mid: buf("mid", ff) };
}
