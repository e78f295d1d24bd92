// tabular_fm (docs/models.md) on the GPU: per-cell tokens, per layer feature attention
// within a row, row attention over the context rows of each token column, GELU MLP; a
// Gaussian or softmax head. The context pass runs once per call and leaves every layer's
// row-attention keys/values in GPU buffers (the KV cache); query rows then run in batches
// that read those buffers only. Buffers are kept per role and reused across calls.
import { columnStats, targetStats } from "./data.js";
import { batchRows, now, workgroups } from "./engine.js";
import { readBytes } from "./io.js";
import { checkLimits } from "./models.js";
import { Operators, groups64 } from "./operators.js";
import { parseSafetensors } from "./safetensors.js";
import { StageTimer } from "./timing.js";
import { sha256Hex } from "./weights.js";

const CONFIG_KEYS = ["d_model", "n_heads", "n_layers", "d_mlp", "max_features", "max_classes",
  "max_context", "ln_eps"];
const CLIP = 10;

/** Tensor names and shapes of a config (docs/models.md, "Tensor names"). */
export function fmShapes(cfg) {
  const { d_model: d, d_mlp: m, max_features: f, max_classes: c } = cfg;
  const shapes = new Map([["cell.w", [d]], ["cell.b", [d]], ["feature.emb", [f, d]],
    ["target.cls", [c, d]], ["target.reg.w", [d]], ["target.reg.b", [d]], ["target.unknown", [d]]]);
  for (let l = 0; l < cfg.n_layers; l++) {
    for (const part of ["fa", "ra"]) {
      const p = `layers.${l}.${part}.`;
      shapes.set(`${p}ln.g`, [d]).set(`${p}ln.b`, [d]);
      for (const n of "qkvo") shapes.set(`${p}${n}.w`, [d, d]).set(`${p}${n}.b`, [d]);
    }
    const p = `layers.${l}.mlp.`;
    shapes.set(`${p}ln.g`, [d]).set(`${p}ln.b`, [d]).set(`${p}w1.w`, [d, m]).set(`${p}w1.b`, [m])
      .set(`${p}w2.w`, [m, d]).set(`${p}w2.b`, [d]);
  }
  shapes.set("head.ln.g", [d]).set("head.ln.b", [d]).set("head.cls.w", [d, c])
    .set("head.cls.b", [c]).set("head.reg.w", [d, 2]).set("head.reg.b", [2]);
  return shapes;
}

function checkConfig(cfg, name) {
  for (const key of CONFIG_KEYS) {
    const v = cfg?.[key];
    const ok = key === "ln_eps" ? Number.isFinite(v) && v > 0 && v < 1 : Number.isInteger(v) && v > 0;
    if (!ok) throw new Error(`${name}: tabular_fm config '${key}' must be a positive number, got ${v}`);
  }
  if (cfg.d_model % cfg.n_heads !== 0 || cfg.d_model / cfg.n_heads > 64 || cfg.d_model > 256) {
    throw new Error(`${name}: tabular_fm needs d_model divisible by n_heads, head dim <= 64 ` +
      `and d_model <= 256 (the kernels' limits), got d_model ${cfg.d_model}, n_heads ${cfg.n_heads}`);
  }
}

/** Validate parsed safetensors as tabular_fm weights: {config, tensors, sha256}. */
export async function fmWeightsFrom(bytes, name = "tabular_fm weights") {
  const { metadata, tensors, shapes } = parseSafetensors(bytes, name);
  for (const [key, want] of [["format", "arenalite-weights"], ["version", "2"], ["model", "tabular_fm"]]) {
    if (metadata[key] !== want) {
      throw new Error(`${name}: metadata '${key}' must be '${want}', got ${JSON.stringify(metadata[key])}`);
    }
  }
  const config = JSON.parse(metadata.config ?? "null");
  checkConfig(config, name);
  const expected = fmShapes(config);
  for (const [tensor, shape] of expected) {
    if (!tensors.has(tensor)) throw new Error(`${name}: tensor '${tensor}' is missing`);
    if (JSON.stringify(shapes.get(tensor)) !== JSON.stringify(shape)) {
      throw new Error(`${name}: tensor '${tensor}' has shape ${JSON.stringify(shapes.get(tensor))}, ` +
        `expected ${JSON.stringify(shape)}`);
    }
  }
  const extra = [...tensors.keys()].filter((t) => !expected.has(t));
  if (extra.length) throw new Error(`${name}: unexpected tensors ${extra.join(", ")}`);
  return { config, tensors, sha256: await sha256Hex(bytes), format: "safetensors" };
}

/** Load tabular_fm weights from a URL/path, bytes, or an already parsed object. */
export async function loadFmWeights(source) {
  if (source && source.tensors instanceof Map) return source;
  if (source instanceof ArrayBuffer) return fmWeightsFrom(source);
  if (typeof source !== "string" && !(source instanceof URL)) {
    throw new TypeError("tabular_fm weights must be a .safetensors URL/path or an ArrayBuffer");
  }
  return fmWeightsFrom(await readBytes(source), String(source));
}

/** Wellons' lowbias32 of row + seed * 0x9E3779B9 (mod 2^32), as the numpy reference. */
export function rowHash(row, seed = 0) {
  let x = (row + Math.imul(seed, 0x9e3779b9)) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x ^= x >>> 15;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** Context rows kept above max_context: the smallest hashes (ties: lower index), in row order. */
export function contextRows(n, maxContext) {
  if (n <= maxContext) return null;
  const hashes = Array.from({ length: n }, (_, i) => rowHash(i));
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => hashes[a] - hashes[b] || a - b);
  return order.slice(0, maxContext).sort((a, b) => a - b);
}

/** Standardize with context statistics, clip to +-10, float32; rows x F. */
function standardizeClipped(x, rows, F, stats) {
  const out = new Float32Array(rows * F);
  for (let i = 0; i < rows; i++) {
    for (let f = 0; f < F; f++) {
      const z = (x[i * F + f] - stats.mean[f]) / stats.std[f];
      out[i * F + f] = Math.min(CLIP, Math.max(-CLIP, z));
    }
  }
  return out;
}

/** The context the model sees: subsampled above max_context, standardized, targets ready. */
export function fmInputs(d, cfg) {
  let { xTrain, yTrain, n } = d;
  const keep = contextRows(n, cfg.max_context);
  if (keep) {
    const F = d.F;
    const x = new Float64Array(keep.length * F);
    keep.forEach((r, i) => x.set(xTrain.subarray(r * F, (r + 1) * F), i * F));
    xTrain = x;
    yTrain = Float64Array.from(keep, (r) => yTrain[r]);
    n = keep.length;
  }
  const stats = columnStats(xTrain, n, d.F);
  const tstats = d.task === "regression" ? targetStats(yTrain) : null;
  const y = tstats ? Float32Array.from(yTrain, (v) => (v - tstats.mean) / tstats.std) : Float32Array.from(yTrain);
  return { n, x: standardizeClipped(xTrain, n, d.F, stats), y, tstats,
    queries: standardizeClipped(d.xTest, d.m, d.F, stats) };
}

const PIPELINES = ["fm_embed", "fm_head"];
const uploaded = new WeakMap();

/** Weight buffers per engine: every tensor, plus the packed embedding and head blocks. */
function weightBuffers(engine, w) {
  let perEngine = uploaded.get(w);
  if (!perEngine) uploaded.set(w, (perEngine = new WeakMap()));
  let buffers = perEngine.get(engine);
  if (buffers) return buffers;
  buffers = new Map();
  const key = `fm:${w.sha256}`;
  for (const [name, data] of w.tensors) buffers.set(name, engine.upload(`${key}:${name}`, data));
  const concat = (names) => {
    const parts = names.map((n) => w.tensors.get(n));
    const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  };
  buffers.set("pack.embed", engine.upload(`${key}:pack.embed`, concat(["cell.w", "cell.b",
    "target.reg.w", "target.reg.b", "target.unknown", "target.cls", "feature.emb"])));
  buffers.set("pack.head", engine.upload(`${key}:pack.head`, concat(["head.ln.g", "head.ln.b",
    "head.cls.w", "head.cls.b", "head.reg.w", "head.reg.b"])));
  perEngine.set(engine, buffers);
  return buffers;
}


class FmEncoder {
  static async create(engine, weights, n, F) {
    const [ops, ...made] = await Promise.all([
      Operators.create(engine, [weights.config.d_model / weights.config.n_heads]), ...PIPELINES.map((k) => engine.pipeline(k))]);
    return new FmEncoder(engine, weights, n, F, ops, Object.fromEntries(PIPELINES.map((k, i) => [k, made[i]])));
  }

  constructor(engine, weights, n, F, ops, pipelines) {
    this.engine = engine;
    this.ops = ops;
    this.cfg = weights.config;
    this.w = weightBuffers(engine, weights);
    this.p = pipelines;
    this.n = n;
    this.F = F;
    this.T = F + 1;
    const bytes = n * this.T * this.cfg.d_model * 4;
    this.kv = Array.from({ length: this.cfg.n_layers }, (_, l) => ({
      k: engine.buffer(`fm.kv.${l}.k`, bytes), v: engine.buffer(`fm.kv.${l}.v`, bytes) }));
  }

  /** Residual-stream buffers for `rows` rows of T tokens (prefix "ctx" or "q"). */
  streams(pre, rows) {
    const tokens = rows * this.T;
    const { d_model: D, d_mlp: dMlp } = this.cfg;
    const buf = (name, width) => this.engine.buffer(`fm.${pre}.${name}`, tokens * width * 4);
    return { x: this.engine.buffer(`fm.${pre}.x`, rows * this.F * 4),
      y: this.engine.buffer(`fm.${pre}.y`, rows * 4), h: buf("h", D), a: buf("a", D), q: buf("q", D),
      k: buf("k", D), v: buf("v", D), o: buf("o", D), mid: buf("mid", dMlp) };
  }

  /** out = act(a @ W + b) (or out += ...), a: M × K, W: K × N (tensors `${prefix}.w`, `.b`). */
  matmul(pass, a, M, K, N, prefix, out, { accumulate = false, act = null } = {}) {
    this.ops.linear(pass, { a, M, K, N, w: this.w.get(`${prefix}.w`), layout: "input-major", b: this.w.get(`${prefix}.b`),
      out, accumulate, act });
  }

  layerNorm(pass, x, tokens, prefix, out) {
    this.ops.layerNorm(pass, { x, rows: tokens, D: this.cfg.d_model, eps: this.cfg.ln_eps, g: this.w.get(`${prefix}.g`),
      b: this.w.get(`${prefix}.b`), out });
  }

  embed(pass, pre, rows, s, mode) {
    const { d_model: D, max_classes: C } = this.cfg;
    const u = this.engine.uniform([["u32", rows], ["u32", this.F], ["u32", D],
      ["u32", mode], ["u32", 5 * D], ["u32", 5 * D + C * D]]);
    this.engine.dispatch(pass, this.p.fm_embed, { 0: u, 1: s.x, 2: s.y, 3: this.w.get("pack.embed"), 4: s.h },
      groups64(rows * this.T * D));
  }

  /**
   * Attention of the tokens of `rows` rows (T each, rows of D floats): `feature` within each
   * row (batch = row, keys its T tokens); else each token column over the n context rows'
   * same column (batch = column, row stride T tokens).
   */
  attention(pass, q, k, v, out, rows, feature) {
    const { d_model: D, n_heads: H } = this.cfg;
    const T = this.T;
    const common = { q, k, v, out, H, dh: D / H };
    if (feature) {
      this.ops.attention(pass, { ...common, batches: rows, Tq: T, keys: T, qBatch: T * D, qRow: D,
        kBatch: T * D, kRow: D, oBatch: T * D, oRow: D });
    } else {
      this.ops.attention(pass, { ...common, batches: T, Tq: rows, keys: this.n, qBatch: D, qRow: T * D,
        kBatch: D, kRow: T * D, oBatch: D, oRow: T * D });
    }
  }

  /** Layer l on `rows` rows of stream s; the context pass fills the layer's K/V cache. */
  layer(pass, pre, l, rows, s, context) {
    const { d_model: D, d_mlp: dMlp } = this.cfg;
    const tokens = rows * this.T;
    const p = `layers.${l}.`;
    this.layerNorm(pass, s.h, tokens, `${p}fa.ln`, s.a);
    for (const n of ["q", "k", "v"]) this.matmul(pass, s.a, tokens, D, D, `${p}fa.${n}`, s[n]);
    this.attention(pass, s.q, s.k, s.v, s.o, rows, true);
    this.matmul(pass, s.o, tokens, D, D, `${p}fa.o`, s.h, { accumulate: true });
    this.layerNorm(pass, s.h, tokens, `${p}ra.ln`, s.a);
    const kv = this.kv[l];
    if (context) {
      this.matmul(pass, s.a, tokens, D, D, `${p}ra.k`, kv.k);
      this.matmul(pass, s.a, tokens, D, D, `${p}ra.v`, kv.v);
      if (l === this.cfg.n_layers - 1) return;
    }
    this.matmul(pass, s.a, tokens, D, D, `${p}ra.q`, s.q);
    this.attention(pass, s.q, kv.k, kv.v, s.o, rows, false);
    this.matmul(pass, s.o, tokens, D, D, `${p}ra.o`, s.h, { accumulate: true });
    this.layerNorm(pass, s.h, tokens, `${p}mlp.ln`, s.a);
    this.matmul(pass, s.a, tokens, D, dMlp, `${p}mlp.w1`, s.mid, { act: "gelu_tanh" });
    this.matmul(pass, s.mid, tokens, dMlp, D, `${p}mlp.w2`, s.h, { accumulate: true });
  }

  head(pass, rows, s, C, out) {
    const { d_model: D, max_classes: maxC, ln_eps: eps } = this.cfg;
    const u = this.engine.uniform([["u32", rows], ["u32", this.T], ["u32", D], ["u32", maxC],
      ["u32", C], ["f32", eps]]);
    this.engine.dispatch(pass, this.p.fm_head, { 0: u, 1: s.h, 2: this.w.get("pack.head"), 3: out },
      [workgroups(rows, 64), 1, 1]);
  }
}

/**
 * tabular_fm (model.weights loaded) on validated data `d`; resolves to {output, spread
 * (regression), timings}. Regression: `output` holds the Gaussian means and `spread` the
 * standard deviations, both in the target's units.
 */
export async function runTabularFM(engine, model, d) {
  const { weights } = model;
  const cfg = weights.config;
  checkLimits("tabular_fm", { features: d.F, classes: d.C || null }, cfg);
  const timer = new StageTimer(engine, cfg.n_layers);
  const t0 = now();
  const inp = fmInputs(d, cfg);
  const B = batchRows(model, 256, d.m);
  const enc = await FmEncoder.create(engine, weights, inp.n, d.F);
  const ctx = enc.streams("ctx", inp.n);
  engine.write(ctx.x, inp.x);
  engine.write(ctx.y, inp.y);
  timer.add("embed", now() - t0);
  await timer.stage("embed", (pass) => enc.embed(pass, "ctx", inp.n, ctx, inp.tstats ? 1 : 0));
  for (let l = 0; l < cfg.n_layers; l++) {
    await timer.stage(l, (pass) => enc.layer(pass, "ctx", l, inp.n, ctx, true));
  }
  engine.stats.contextPasses = (engine.stats.contextPasses ?? 0) + 1;
  const width = d.C || 2;
  const qs = enc.streams("q", B);
  const out = engine.buffer("fm.q.out", B * width * 4);
  const raw = new Float32Array(d.m * width);
  for (let start = 0; start < d.m; start += B) {
    const rows = Math.min(B, d.m - start);
    engine.write(qs.x, inp.queries.subarray(start * d.F, (start + rows) * d.F));
    await timer.stage("embed", (pass) => enc.embed(pass, "q", rows, qs, 2));
    for (let l = 0; l < cfg.n_layers; l++) {
      await timer.stage(l, (pass) => enc.layer(pass, "q", l, rows, qs, false));
    }
    await timer.stage("head", (pass) => enc.head(pass, rows, qs, d.C, out));
    await timer.settle();
    const th = now();
    raw.set(await engine.read(out, rows * width), start * width);
    timer.add("head", now() - th);
    timer.batch();
  }
  const timings = await timer.finish();
  if (!inp.tstats) return { output: raw, timings };
  const output = new Float32Array(d.m);
  const spread = new Float32Array(d.m);
  for (let i = 0; i < d.m; i++) {
    output[i] = raw[2 * i] * inp.tstats.std + inp.tstats.mean;
    spread[i] = raw[2 * i + 1] * inp.tstats.std;
  }
  return { output, spread, timings };
}
