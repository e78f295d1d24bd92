// The dispatches TabPFN v3's stages are built of (pkg/arenalite/models/tabpfn/layers.py on
// the GPU): the bridge's operators (src/operators.js: bias-free torch-layout linear layers,
// exact GELU, RMSNorm with torch's default epsilon, attention with grouped KV heads and the
// query-aware softmax scaling fused into its query load, RoPE) named by the checkpoint's
// tensors, TabPFN's own kernels (kernels/tabpfn_*.wgsl: the cells, strided copies, the
// decoder's log), and the pre-norm block every stage repeats: `project` writes keys and
// values (or queries) of normed rows, `attend` runs queries over cached keys and values and
// adds the output projection and the feed-forward onto the residual stream.
//
// Weights are uploaded once per engine, weights object and buffer limit: one buffer per
// tensor, or, for a matrix larger than the limit, one per slice of its rows (a linear layer
// then runs once per slice, each writing its own output columns); a vector or a single row
// past the limit throws one Error naming it. Buffers are the engine's per-role buffers
// (prefix "tabpfn."), each dispatch with its own uniform block.
import { MAX_SSMAX_HIDDEN, Operators, groups64, ropeTable } from "../operators.js";

export const TABPFN_KERNELS = ["tabpfn_cells", "tabpfn_decoder"];
/** nn.RMSNorm(eps=None): float32's machine epsilon. */
export const RMS_EPS = 2 ** -23;
/** Rows one linear dispatch may cover (65535 workgroups of 32 rows). */
export const MAX_DISPATCH_ROWS = 65535 * 32;

const uploaded = new WeakMap();
let weightsSerial = 0;

/** The Error of `what` needing `floats` floats in one buffer past `limit` ({bytes, name}). */
export function tooBig(what, floats, limit) {
  return new Error(`TabPFN on WebGPU: ${what} needs ${floats * 4} bytes in one buffer, past this adapter's ` +
    `${limit.name} of ${limit.bytes} bytes`);
}

/**
 * Row slices [row0, rows] of a tensor of `shape` (rows × the rest) so that each holds at
 * most `limit.bytes`: one slice when it fits; throws where a vector or one row does not.
 */
export function tensorSlices(name, shape, limit) {
  const count = shape.reduce((a, b) => a * b, 1);
  if (count * 4 <= limit.bytes) return [[0, shape[0] ?? 1]];
  const row = shape.length > 1 ? count / shape[0] : count;
  const per = Math.floor(limit.bytes / 4 / row);
  if (shape.length < 2 || per < 1) throw tooBig(`weight tensor '${name}'`, shape.length < 2 ? count : row, limit);
  const out = [];
  for (let r0 = 0; r0 < shape[0]; r0 += per) out.push([r0, Math.min(per, shape[0] - r0)]);
  return out;
}

/**
 * The GPU buffers of `weights` on one engine and limit: {id, parts (name → [{buffer, row0,
 * rows}], each tensor uploaded on first use: tensors only the CPU reads, or read only
 * stacked, are never uploaded alone), ready}.
 */
function weightBuffers(engine, weights, limit) {
  let perEngine = uploaded.get(weights);
  if (!perEngine) uploaded.set(weights, (perEngine = new WeakMap()));
  let perLimit = perEngine.get(engine);
  if (!perLimit) perEngine.set(engine, (perLimit = new Map()));
  let entry = perLimit.get(limit.bytes);
  if (entry) return entry;
  entry = { id: weightsSerial++, parts: new Map(), ready: new Set() };
  perLimit.set(limit.bytes, entry);
  return entry;
}

/** Head dims of a config's attentions (column, row, ICL, decoder). */
export function headDims(c) {
  const D = c.embed_dim * c.feat_agg_num_cls_tokens;
  return [c.embed_dim / c.dist_embed_num_heads, c.embed_dim / c.feat_agg_num_heads, D / c.icl_num_heads,
    ...(c.max_num_classes >= 2 ? [c.decoder_head_dim] : [])];
}

/** The dispatch helpers of one engine and weights. */
export class Ops {
  /** `limit` ({bytes, name}): the buffer limit weights are sliced to. */
  static async create(engine, weights, limit = { bytes: Infinity, name: "none" }) {
    const [operators, ...made] = await Promise.all([Operators.create(engine, headDims(weights.config)),
      ...TABPFN_KERNELS.map((k) => engine.pipeline(k))]);
    return new Ops(engine, weights, operators, Object.fromEntries(TABPFN_KERNELS.map((k, i) => [k, made[i]])), limit);
  }

  constructor(engine, weights, operators, pipelines, limit) {
    this.engine = engine;
    this.weights = weights;
    this.operators = operators;
    this.p = pipelines;
    this.limit = limit;
    const { id, parts, ready } = weightBuffers(engine, weights, limit);
    this.parts = parts;
    this.ready = ready;  // roles of derived buffers computed (RoPE tables, scaling vectors)
    this.id = id;
    this.zeros = operators.zeros;
  }

  /**
   * The torch-layout weights `names` stacked by rows (keys over values: one product for
   * both, as column.py's kv_weight), uploaded once (sliced for the limit like any tensor);
   * returns its name for `linear`.
   */
  stacked(names) {
    const name = names.join("+");
    if (!this.parts.has(name)) {
      const tensors = names.map((n) => this.weights.tensors.get(n));
      const shapes = names.map((n) => this.shape(n));
      if (tensors.some((t) => !t) || shapes.some((sh) => sh.length !== 2 || sh[1] !== shapes[0][1])) {
        throw new Error(`TabPFN weights: ${names.join(", ")} are not matrices of one width`);
      }
      const shape = [shapes.reduce((a, sh) => a + sh[0], 0), shapes[0][1]];
      const data = new Float32Array(shape[0] * shape[1]);
      tensors.reduce((at, t) => (data.set(t, at), at + t.length), 0);
      this.upload(name, data, shape);
    }
    return name;
  }

  /** Tensor `name` (data of `shape`) into GPU buffers, one per row slice within the limit. */
  upload(name, data, shape) {
    const row = data.length / shape[0];
    const slices = tensorSlices(name, shape, this.limit);
    const parts = slices.map(([row0, rows], i) => ({ row0, rows, buffer: this.engine.upload(
      `tabpfn.w.${this.id}.${name}${slices.length > 1 ? `#${i}` : ""}`, data.subarray(row0 * row, (row0 + rows) * row)) }));
    this.parts.set(name, parts);
    return parts;
  }

  /** The row slices of tensor `name`, uploaded on first use. */
  part(name) {
    const have = this.parts.get(name);
    if (have) return have;
    const data = this.weights.tensors.get(name);
    if (!data?.length) throw new Error(`TabPFN weights: tensor '${name}' is missing`);
    return this.upload(name, data, this.weights.shapes.get(name) ?? [data.length]);
  }

  /** The one buffer of tensor `name` (a tensor sliced for the limit: only `linear` reads it). */
  w(name) {
    const p = this.part(name);
    if (p.length > 1) throw tooBig(`weight tensor '${name}'`, this.weights.tensors.get(name).length, this.limit);
    return p[0].buffer;
  }

  has(name) {
    return Boolean(this.weights.tensors.get(name)?.length);
  }

  shape(name) {
    const s = this.weights.shapes.get(name);
    if (!s) throw new Error(`TabPFN weights: tensor '${name}' is missing`);
    return s;
  }

  run(pass, kernel, fields, bindings, count) {
    this.engine.dispatch(pass, this.p[kernel], { 0: this.engine.uniform(fields), ...bindings }, groups64(count));
  }

  /**
   * out (= or +=) act(a · wᵀ + b), tensors by name (b optional), torch layout; see
   * operators.js. A weight sliced for the limit runs as one product per slice of its rows,
   * each into its own output columns.
   */
  linear(pass, { w, b = null, gelu = false, N, outOff = 0, outStride = N, ...rest }) {
    const bias = b ? this.w(b) : null;
    for (const { buffer, row0, rows } of this.part(w)) {
      this.operators.linear(pass, { ...rest, N: rows, w: buffer, b: bias, bOff: row0, outOff: outOff + row0, outStride,
        act: gelu ? "gelu" : null });
    }
  }

  /** RMSNorm `name` (its weight, when the checkpoint has one) of `rows` rows of D. */
  rmsNorm(pass, { x, xOff = 0, rows, D, name, out, outOff = 0 }) {
    const g = this.has(`${name}.weight`) ? this.w(`${name}.weight`) : null;
    this.operators.rmsNorm(pass, { x, xOff, rows, D, eps: RMS_EPS, g, out, outOff });
  }

  /** Strided copy (the operators' `copy`); strides 0 broadcast. */
  copy(pass, args) {
    this.operators.copy(pass, args);
  }

  /** RoPE table of tensor `freqs` for positions 0 … period − 1 (uploaded once). */
  ropeTable(freqs, period) {
    const role = `tabpfn.${this.id}.rope.${period}`;
    if (!this.ready.has(role)) {
      this.engine.upload(role, ropeTable(this.weights.tensors.get(freqs), period));
      this.ready.add(role);
    }
    return this.engine.buffer(role, 0);
  }

  /**
   * The attention's operand for `SoftmaxScalingMLP` under `prefix` (layers.py's
   * softmax_scaling: q · base_mlp(log n) · (1 + tanh(query_mlp(q))), per head and
   * dimension) for n keys of H heads of dh: {base, mlp (query_mlp as W0 | b0 | W2 | b2),
   * elementwise, hidden, qOut}. The base vector is computed on the GPU once per n.
   */
  scaling(pass, prefix, n, H, dh) {
    const q = `${prefix}query_mlp.`;
    const [hidden, dIn] = this.shape(`${q}0.weight`);
    const qOut = this.shape(`${q}2.weight`)[0];
    if (hidden > MAX_SSMAX_HIDDEN || dIn !== dh || qOut !== dh) {
      throw new Error(`TabPFN on WebGPU: ${q} of shape ${hidden} x ${dIn} -> ${qOut} (head dim ${dh}, hidden at most ` +
        `${MAX_SSMAX_HIDDEN})`);
    }
    const packedRole = `tabpfn.${this.id}.qmlp.${prefix}`;
    if (!this.ready.has(packedRole)) {
      const parts = ["0.weight", "0.bias", "2.weight", "2.bias"].map((t) => this.weights.tensors.get(`${q}${t}`));
      const packed = new Float32Array(parts.reduce((sum, t) => sum + t.length, 0));
      parts.reduce((at, t) => (packed.set(t, at), at + t.length), 0);
      this.engine.upload(packedRole, packed);
      this.ready.add(packedRole);
    }
    const role = `tabpfn.${this.id}.base.${prefix}${n}`;
    if (!this.ready.has(role)) {
      const m = `${prefix}base_mlp.`;
      const [bh] = this.shape(`${m}0.weight`);
      const input = this.engine.upload(`${role}.logn`, Float32Array.of(Math.fround(Math.log(Math.max(n, 1)))));
      const mid = this.engine.buffer(`${role}.hidden`, bh * 4);
      const base = this.engine.buffer(role, H * dh * 4);
      this.linear(pass, { a: input, M: 1, K: 1, N: bh, w: `${m}0.weight`, b: `${m}0.bias`, out: mid, gelu: true });
      this.linear(pass, { a: mid, M: 1, K: bh, N: H * dh, w: `${m}2.weight`, b: `${m}2.bias`, out: base });
      this.ready.add(role);
    }
    return { base: this.engine.buffer(role, 0), mlp: this.engine.buffer(packedRole, 0), elementwise: true, hidden,
      qOut };
  }
}

/**
 * One pre-norm block's attention half and feed-forward (layers.py's pieces as column.py,
 * row.py and icl.py put them together), names under `prefix`:
 *   q = Wq · norm_q(x) (RoPE'd), x += Wout · Attn(q, K, V), x += W2 · GELU(W0 · norm_mlp(x))
 * `names` = {normQ, q, out, normMlp, mlp} relative to prefix (`normQ` null: x is normed
 * already into s.a by the caller).
 */
export class Block {
  constructor(ops, prefix, { heads, kvHeads = heads, width, names }) {
    this.prefix = prefix;
    this.H = heads;
    this.kvHeads = kvHeads;
    this.E = width;
    this.dh = width / heads;
    this.names = names;
    this.ff = ops.shape(`${prefix}${names.mlp}0.weight`)[0];
  }

  name(key) {
    return `${this.prefix}${this.names[key]}`;
  }

  /**
   * Normed rows `norm(x)` → `out` columns [0, total width) of the weights `weights`
   * stacked (one product; outStride floats a row); the normed rows are left in s.a.
   */
  project(ops, pass, { x, xOff = 0, rows, norm, weights, out, outStride, outRow = 0, s }) {
    ops.rmsNorm(pass, { x, xOff, rows, D: this.E, name: `${this.prefix}${norm}`, out: s.a });
    const names = weights.map((w) => `${this.prefix}${w}`);
    const n = names.reduce((a, w) => a + ops.shape(w)[0], 0);
    ops.linear(pass, { a: s.a, M: rows, K: this.E, N: n, w: ops.stacked(names), out, outOff: outRow * outStride,
      outStride });
  }

  /**
   * The block on `batches` × `Tq` rows of the residual stream x (from row xRow, in place):
   * batch b's queries over keys/values rows b · kBatch … + keys − 1 of `kv` (rows of
   * kvStride floats, keys at kOff, values at vOff). `rope`: {table, period} on the queries;
   * `scaling`: the softmax scaling's operand or null; `normed`: s.a holds norm_q(x) already.
   */
  attend(ops, pass, { x, xRow = 0, batches, Tq, kv, kvStride, kOff, vOff, kBatch, keys, kvHeads = this.kvHeads, s,
    rope = null, scaling = null, normed = false }) {
    const { E, H, dh } = this;
    const rows = batches * Tq;
    if (!normed) ops.rmsNorm(pass, { x, xOff: xRow * E, rows, D: E, name: this.name("normQ"), out: s.a });
    ops.linear(pass, { a: s.a, M: rows, K: E, N: E, w: this.name("q"), out: s.q });
    if (rope) ops.operators.rope(pass, { x: s.q, rows, period: rope.period, H, dh, stride: E, table: rope.table });
    ops.operators.attention(pass, { q: s.q, k: kv, v: kv, out: s.o, batches, Tq, keys, H, dh, qBatch: Tq * E, qRow: E,
      kOff, vOff, kBatch: kBatch * kvStride, kRow: kvStride, oBatch: Tq * E, oRow: E, ssmax: scaling, kvHeads });
    ops.linear(pass, { a: s.o, M: rows, K: E, N: E, w: this.name("out"), out: x, outOff: xRow * E, accumulate: true });
    this.feedForward(ops, pass, { x, xRow, rows, s });
  }

  /** x += W2 · GELU(W0 · norm_mlp(x)) on `rows` rows from xRow. */
  feedForward(ops, pass, { x, xRow = 0, rows, s }) {
    const { E, ff } = this;
    ops.rmsNorm(pass, { x, xOff: xRow * E, rows, D: E, name: this.name("normMlp"), out: s.a });
    ops.linear(pass, { a: s.a, M: rows, K: E, N: ff, w: `${this.name("mlp")}0.weight`, out: s.mid, gelu: true });
    ops.linear(pass, { a: s.mid, M: rows, K: ff, N: E, w: `${this.name("mlp")}2.weight`, out: x, outOff: xRow * E,
      accumulate: true });
  }
}

/** Scratch buffers {a, q, o, mid} of `rows` rows of width E (mid: ff) under `role`. */
export function scratch(engine, role, rows, E, ff) {
  const buf = (name, width) => engine.buffer(`tabpfn.${role}.${name}`, Math.max(1, rows * width) * 4);
  return { a: buf("a", E), q: buf("q", E), o: buf("o", E), mid: buf("mid", ff) };
}
