// The dispatches every Google TabFM stage is built of (pkg/arenalite/models/tabfm/layers.py
// on the GPU): the shared operators (src/operators.js: torch-layout linear layers, RMSNorm,
// SwiGLU, RoPE, attention) named by the checkpoint's tensors, strided copies, and the
// `MultiheadAttentionBlock` made of them: `x + RMSNorm(attn(RMSNorm(x), RMSNorm(kv)))`, then
// `x + RMSNorm(SwiGLU(RMSNorm(x)))`, the attention with q/k projections, interleaved RoPE
// where the stage has one, q/k RMSNorm per head, queries scaled by log2(e) / √d_head ·
// softplus(per_dim_scale) (folded into the query norm's weight, with √d_head undoing the
// kernel's 1 / √d_head) and a softmax at scale 1.
//
// Weights are uploaded once per engine, weights object and buffer limit; a tensor past the
// limit is split along its output rows (each part its own buffer, its own linear dispatch).
// Derived tensors (the feed-forward's gate|up weights packed for one product, the scaled
// query-norm weights, the cell embedder's packed map, the class tables) are made on the
// CPU once and uploaded the same way. Buffers of activations are the engine's, under
// "tabfm." roles.
import { MAX_HEAD_DIM, Operators, fold, ropeTable } from "../operators.js";

export const EPS = 1e-6;
/** The constant MultiheadAttention scales its queries by (with 1/√d_head and softplus). */
export const LOG2E = 1.442695041;
const SOFTPLUS_THRESHOLD = 20;
export const TABFM_KERNELS = ["tabfm_cells", "tabfm_target"];
/** The widest head tabfm_attention_wide.wgsl takes, and the floats of its K or V tile. */
export const MAX_WIDE_HEAD_DIM = 256;
const WIDE_TILE_FLOATS = 2048;
/** Rows one linear dispatch may cover (65535 workgroups of 32 rows). */
export const MAX_DISPATCH_ROWS = 65535 * 32;

/** torch's softplus on a float32 value, as layers.py (x itself above the threshold). */
export function softplus32(x) {
  return x > SOFTPLUS_THRESHOLD ? x : Math.fround(Math.log1p(Math.exp(Math.fround(x))));
}

const uploaded = new WeakMap();
let weightsSerial = 0;

/** Split `data` (rows × width) into parts of at most `limitFloats`, whole rows each. */
function splitRows(data, rows, limitFloats) {
  const width = data.length / rows;
  if (data.length <= limitFloats) return [{ row0: 0, rows, data }];
  const per = Math.floor(limitFloats / width);
  if (per < 1) throw new Error(`Google TabFM on WebGPU: one row of ${width} floats is past the buffer limit`);
  const parts = [];
  for (let r0 = 0; r0 < rows; r0 += per) {
    const n = Math.min(per, rows - r0);
    parts.push({ row0: r0, rows: n, data: data.subarray(r0 * width, (r0 + n) * width) });
  }
  return parts;
}

/** The GPU copies of one weights object on one engine within one buffer limit. */
class GpuWeights {
  constructor(engine, weights, limitBytes) {
    this.engine = engine;
    this.weights = weights;
    this.limitFloats = Math.floor(limitBytes / 4);
    this.id = weightsSerial++;
    this.tensors = new Map();  // name → {rows, width, parts: [{row0, rows, buffer}]}
  }

  /** Upload `data` (rows × width) as `name`, split by rows past the limit. */
  put(name, data, rows) {
    const parts = splitRows(data, rows, this.limitFloats).map(({ row0, rows: n, data: part }, i) => ({
      row0, rows: n, buffer: this.engine.upload(`tabfm.w.${this.id}.${name}.${i}`, part) }));
    const entry = { rows, width: data.length / rows, parts };
    this.tensors.set(name, entry);
    return entry;
  }

  /** {rows, width, parts} of tensor (or derived tensor) `name`; `make` gives a derived one's {data, rows}. */
  get(name, make = null) {
    const have = this.tensors.get(name);
    if (have) return have;
    if (make) {
      const { data, rows } = make();
      return this.put(name, data, rows);
    }
    const data = this.weights.tensors.get(name);
    if (!data) throw new Error(`Google TabFM weights: tensor '${name}' is missing`);
    const shape = this.weights.shapes.get(name) ?? [data.length];
    return this.put(name, data, shape.length > 1 ? shape[0] : 1);
  }
}

function gpuWeights(engine, weights, limitBytes) {
  let perEngine = uploaded.get(weights);
  if (!perEngine) uploaded.set(weights, (perEngine = new WeakMap()));
  let perLimit = perEngine.get(engine);
  if (!perLimit) perEngine.set(engine, (perLimit = new Map()));
  if (!perLimit.has(limitBytes)) perLimit.set(limitBytes, new GpuWeights(engine, weights, limitBytes));
  return perLimit.get(limitBytes);
}

/** The dispatch helpers of one engine, weights object and buffer limit. */
export class Ops {
  static async create(engine, weights, limitBytes) {
    const c = weights.config;
    const E = c.embed_dim;
    const D = E * c.row_num_cls;
    const headDims = [E / c.col_nhead, E / c.row_nhead, D / c.icl_nhead];
    for (const [what, dh] of [["col", headDims[0]], ["row", headDims[1]], ["icl", headDims[2]]]) {
      if (!Number.isInteger(dh) || dh % 2) {
        throw new Error(`Google TabFM config: ${what} head dim ${dh} is not an even integer`);
      }
    }
    const wide = [...new Set(headDims.filter((dh) => dh > MAX_HEAD_DIM))];
    for (const dh of wide) {
      if (dh > MAX_WIDE_HEAD_DIM) throw new Error(`Google TabFM on WebGPU: head dim ${dh} > ${MAX_WIDE_HEAD_DIM}`);
    }
    const [operators, ...made] = await Promise.all([Operators.create(engine, headDims.filter((dh) => dh <= MAX_HEAD_DIM)),
      ...TABFM_KERNELS.map((k) => engine.pipeline(k)),
      ...wide.map((dh) => engine.pipeline("tabfm_attention_wide", "main", { DH: dh }))]);
    const pipelines = Object.fromEntries(TABFM_KERNELS.map((k, i) => [k, made[i]]));
    const widePipelines = new Map(wide.map((dh, i) => [dh, made[TABFM_KERNELS.length + i]]));
    return new Ops(engine, weights, operators, pipelines, widePipelines, limitBytes);
  }

  constructor(engine, weights, operators, pipelines, widePipelines, limitBytes) {
    this.engine = engine;
    this.weights = weights;
    this.operators = operators;
    this.p = pipelines;
    this.wide = widePipelines;  // head dim → tabfm_attention_wide pipeline (head dims past MAX_HEAD_DIM)
    this.gpu = gpuWeights(engine, weights, limitBytes);
    this.id = this.gpu.id;
    this.ropeTables = new Map();
  }

  shape(name) {
    const s = this.weights.shapes.get(name);
    if (!s) throw new Error(`Google TabFM weights: tensor '${name}' is missing`);
    return s;
  }

  tensor(name) {
    const t = this.weights.tensors.get(name);
    if (!t) throw new Error(`Google TabFM weights: tensor '${name}' is missing`);
    return t;
  }

  /** The one buffer of a vector or small tensor (never split: a vector is one row). */
  w(name, make = null) {
    const { parts } = this.gpu.get(name, make);
    if (parts.length !== 1) throw new Error(`Google TabFM on WebGPU: '${name}' is split but read whole`);
    return parts[0].buffer;
  }

  run(pass, kernel, fields, bindings, groups) {
    this.engine.dispatch(pass, this.p[kernel], { 0: this.engine.uniform(fields), ...bindings }, groups);
  }

  /**
   * out[r, c] (= or +=) act(a[r] · w[c] + b[c]) for the torch-layout weight `w` (N × K, a
   * name; `make` for a derived one), bias `b` (a name, a derived name with `makeBias`, or
   * null); a weight split by rows takes one dispatch per part into its columns of out.
   */
  linear(pass, { a, aOff = 0, aStride, M, w, make = null, b = null, makeBias = null, out, outOff = 0, outStride,
    act = null, accumulate = false }) {
    const { rows: N, width: K, parts } = this.gpu.get(w, make);
    const bias = b ? this.w(b, makeBias) : null;
    for (const part of parts) {
      this.operators.linear(pass, { a, aOff, aStride: aStride ?? K, M, K, N: part.rows, w: part.buffer, b: bias,
        bOff: part.row0, out, outOff: outOff + part.row0, outStride: outStride ?? N, act, accumulate });
    }
    return N;
  }

  rmsNorm(pass, { x, xOff = 0, rows, D, g, out, outOff = 0, accumulate = false }) {
    this.operators.rmsNorm(pass, { x, xOff, rows, D, eps: EPS, g: g === null ? null : this.w(g), out, outOff,
      accumulate });
  }

  /**
   * Attention at scale 1/√dh (operators.attention's arguments, one buffer each for q, k,
   * v, values at the keys' strides): the shared kernel up to MAX_HEAD_DIM, past it
   * kernels/tabfm_attention_wide.wgsl (up to MAX_WIDE_HEAD_DIM).
   */
  attention(pass, a) {
    if (a.dh <= MAX_HEAD_DIM) {
      this.operators.attention(pass, a);
      return;
    }
    if (a.batches * a.Tq === 0) return;
    const tile = Math.max(1, Math.min(a.keys, Math.floor(WIDE_TILE_FLOATS / a.dh)));
    this.engine.dispatch(pass, this.wide.get(a.dh), { 0: this.engine.uniform([["u32", a.batches], ["u32", a.Tq],
      ["u32", a.keys], ["u32", a.H], ["u32", a.dh], ["f32", 1 / Math.sqrt(a.dh)], ["u32", a.qOff], ["u32", a.qBatch],
      ["u32", a.qRow], ["u32", a.kOff], ["u32", a.kBatch], ["u32", a.kRow], ["u32", a.oOff ?? 0], ["u32", a.oBatch],
      ["u32", a.oRow], ["u32", tile]]), 1: a.q, 2: a.k, 3: a.v, 4: a.out },
    fold(a.H * a.batches * Math.ceil(a.Tq / 64)));
  }

  /** Strided copy (the operators' `copy`); `inS1`/`inS2` 0 broadcast. */
  copy(pass, args) {
    this.operators.copy(pass, args);
  }

  /** The cos/sin table of a stage's RoPE frequencies for `period` positions, uploaded once. */
  ropeTable(freqs, period) {
    const role = `tabfm.${this.id}.rope.${freqs}.${period}`;
    if (!this.ropeTables.has(role)) this.ropeTables.set(role, this.engine.upload(role, ropeTable(this.tensor(freqs), period)));
    return this.ropeTables.get(role);
  }
}

/**
 * One MultiheadAttentionBlock under `prefix` ("…blocks.i." or "…mab1."): `kv` fills keys and
 * values from source rows, `queries` the scaled queries, `attend` adds the attention of
 * queries over keys/values to the residual rows, `feedForward` the SwiGLU feed-forward.
 * Scratch `s` = {a, o, t (rows × E), mid2 (ffRows × 2ff), mid (ffRows × ff), ffRows}.
 */
export class AttentionBlock {
  constructor(ops, prefix, heads, freqs = null) {
    this.ops = ops;
    this.prefix = prefix;
    this.E = ops.shape(`${prefix}attn.out_proj.weight`)[0];
    this.H = heads;
    this.dh = this.E / heads;
    this.ff = ops.shape(`${prefix}linear1.weight`)[0];
    this.freqs = freqs;
    const gate = `${prefix}linear1_gate`;
    const up = `${prefix}linear1`;
    this.packed = {
      w: `${prefix}ff.gate_up.weight`, b: `${prefix}ff.gate_up.bias`,
      make: () => ({ data: concat(ops.tensor(`${gate}.weight`), ops.tensor(`${up}.weight`)), rows: 2 * this.ff }),
      makeBias: () => ({ data: concat(ops.tensor(`${gate}.bias`), ops.tensor(`${up}.bias`)), rows: 1 }),
    };
  }

  /** query_ln.weight · log2(e)/√dh · softplus(per_dim_scale) · √dh, float32 as layers.py's scale. */
  queryNorm() {
    const p = `${this.prefix}attn.`;
    return this.ops.w(`${p}query_ln.scaled`, () => {
      const w = this.ops.tensor(`${p}query_ln.weight`);
      const pds = this.ops.tensor(`${p}per_dim_scale`);
      const c = Math.fround(LOG2E / Math.sqrt(this.dh));
      return { data: Float32Array.from(w, (v, d) => v * Math.fround(c * softplus32(pds[d])) * Math.sqrt(this.dh)),
        rows: 1 };
    });
  }

  /** RoPE on `rows` token rows of a (…, period, E) buffer at float `off`, when the block has one. */
  rope(pass, { x, rows, period, off = 0 }) {
    if (!this.freqs) return;
    this.ops.operators.rope(pass, { x, rows, period, H: this.H, dh: this.dh, stride: this.E, off, interleaved: true,
      table: this.ops.ropeTable(this.freqs, period) });
  }

  /** Keys and values (rows × E each, at row kvRow) of source rows x (from row xRow). */
  kv(pass, s, { x, xRow = 0, rows, k, v, kvRow = 0, period = 0 }) {
    const { ops, E, prefix: p } = this;
    ops.rmsNorm(pass, { x, xOff: xRow * E, rows, D: E, g: `${p}pre_attn_ln.weight`, out: s.a });
    ops.linear(pass, { a: s.a, M: rows, w: `${p}attn.k_proj.weight`, b: `${p}attn.k_proj.bias`, out: k,
      outOff: kvRow * E });
    ops.linear(pass, { a: s.a, M: rows, w: `${p}attn.v_proj.weight`, b: `${p}attn.v_proj.bias`, out: v,
      outOff: kvRow * E });
    this.rope(pass, { x: k, rows, period, off: kvRow * E });
    ops.rmsNorm(pass, { x: k, xOff: kvRow * E, rows: rows * this.H, D: this.dh, g: `${p}attn.key_ln.weight`, out: k,
      outOff: kvRow * E });
  }

  /**
   * Scaled queries (rows × E into q at row qRow) of rows x (from row xRow); `normed`: s.a
   * already holds their pre-attention norm (kv just ran on the same rows).
   */
  queries(pass, s, { x, xRow = 0, rows, q, qRow = 0, period = 0, normed = false }) {
    const { ops, E, prefix: p } = this;
    if (!normed) ops.rmsNorm(pass, { x, xOff: xRow * E, rows, D: E, g: `${p}pre_attn_ln.weight`, out: s.a });
    ops.linear(pass, { a: s.a, M: rows, w: `${p}attn.q_proj.weight`, b: `${p}attn.q_proj.bias`, out: q,
      outOff: qRow * E });
    this.rope(pass, { x: q, rows, period, off: qRow * E });
    ops.operators.rmsNorm(pass, { x: q, xOff: qRow * E, rows: rows * this.H, D: this.dh, eps: EPS,
      g: this.queryNorm(), out: q, outOff: qRow * E });
  }

  /**
   * Attention of batches × Tq queries (q at strides qBatch/qRow rows … in floats) over
   * keys/values (k, v: kOff, kBatch, kRow floats), out-projected, RMSNorm'd and added to the
   * residual rows x from row xRow (batch-major, Tq rows a batch, contiguous).
   */
  attend(pass, s, { x, xRow = 0, q, qOff = 0, qBatch, qRow, k, v, kOff = 0, kBatch, kRow, batches, Tq, keys }) {
    const { ops, E, H, dh, prefix: p } = this;
    const rows = batches * Tq;
    ops.attention(pass, { q, k, v, out: s.o, batches, Tq, keys, H, dh, qOff, qBatch, qRow, kOff, vOff: kOff,
      kBatch, kRow, oBatch: Tq * E, oRow: E });
    ops.linear(pass, { a: s.o, M: rows, w: `${p}attn.out_proj.weight`, b: `${p}attn.out_proj.bias`, out: s.t });
    ops.rmsNorm(pass, { x: s.t, rows, D: E, g: `${p}post_attn_ln.weight`, out: x, outOff: xRow * E, accumulate: true });
  }

  /** x += RMSNorm(W2 SwiGLU(W1 RMSNorm(x))) on `rows` rows from row xRow, s.ffRows at a time. */
  feedForward(pass, s, { x, xRow = 0, rows }) {
    const { ops, E, ff, prefix: p, packed } = this;
    for (let r0 = 0; r0 < rows; r0 += s.ffRows) {
      const M = Math.min(s.ffRows, rows - r0);
      const at = (xRow + r0) * E;
      ops.rmsNorm(pass, { x, xOff: at, rows: M, D: E, g: `${p}pre_ff_ln.weight`, out: s.a });
      ops.linear(pass, { a: s.a, M, w: packed.w, make: packed.make, b: packed.b, makeBias: packed.makeBias,
        out: s.mid2 });
      ops.operators.swiglu(pass, { rows: M, N: ff, gate: s.mid2, gateStride: 2 * ff, up: s.mid2, upOff: ff,
        upStride: 2 * ff, out: s.mid });
      ops.linear(pass, { a: s.mid, M, w: `${p}linear2.weight`, b: `${p}linear2.bias`, out: s.t });
      ops.rmsNorm(pass, { x: s.t, rows: M, D: E, g: `${p}post_ff_ln.weight`, out: x, outOff: at, accumulate: true });
    }
  }
}

function concat(a, b) {
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/**
 * Scratch of a stage's blocks for `rows` rows of width E and feed-forward width ff, the
 * feed-forward `ffRows` rows at a time: {a, o, t, q, k, v, mid2, mid, ffRows}.
 */
export function scratch(engine, role, { rows, E, ff, ffRows }) {
  const buf = (name, floats) => engine.buffer(`tabfm.${role}.${name}`, Math.max(1, floats) * 4);
  const f = Math.min(rows, ffRows);
  return { a: buf("a", rows * E), o: buf("o", rows * E), t: buf("t", rows * E), q: buf("q", rows * E),
    k: buf("k", rows * E), v: buf("v", rows * E), mid2: buf("mid2", f * 2 * ff), mid: buf("mid", f * ff), ffRows: f };
}
