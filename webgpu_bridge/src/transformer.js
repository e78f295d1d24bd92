// icl_transformer (docs/models.md) on the GPU. The context pass runs once per call and
// leaves each layer's context keys/values in GPU buffers (the KV cache); query rows then
// run in batches that attend to those cached keys/values only.
import { columnStats, gpuLabels, standardize, storeBatch, targetStats } from "./data.js";
import { batchRows, now, workgroups } from "./engine.js";
import { checkLimits } from "./models.js";
import { Operators } from "./operators.js";
import { StageTimer } from "./timing.js";

const weightBuffers = new WeakMap();

/** GPU buffers of a weights object, uploaded once per engine and weights. */
function uploadWeights(engine, weights) {
  let perEngine = weightBuffers.get(weights);
  if (!perEngine) weightBuffers.set(weights, (perEngine = new WeakMap()));
  let buffers = perEngine.get(engine);
  if (!buffers) {
    buffers = new Map();
    for (const [name, data] of weights.tensors) {
      buffers.set(name, engine.upload(`w:${weights.sha256}:${name}`, data));
    }
    perEngine.set(engine, buffers);
  }
  return buffers;
}

const PIPELINES = ["head", "embed"];

/**
 * The encoder's dispatches for one call: weights buffers, pipelines and the per-layer
 * K/V cache of `n` context rows. Each method records into a compute pass; buffers are
 * named by role (prefix "ctx" or "q") so the engine reuses them across calls.
 */
class Encoder {
  static async create(engine, weights, n) {
    const [ops, ...pipelines] = await Promise.all([
      Operators.create(engine, [weights.config.d_model / weights.config.n_heads]), ...PIPELINES.map((k) => engine.pipeline(k))]);
    return new Encoder(engine, weights, n, ops, Object.fromEntries(PIPELINES.map((k, i) => [k, pipelines[i]])));
  }

  constructor(engine, weights, n, ops, pipelines) {
    this.engine = engine;
    this.ops = ops;
    this.cfg = weights.config;
    this.buffers = uploadWeights(engine, weights);
    this.p = pipelines;
    this.n = n;
    const D = this.cfg.d_model;
    this.kv = Array.from({ length: this.cfg.n_layers }, (_, l) => ({
      k: engine.buffer(`kv.${l}.k`, n * D * 4), v: engine.buffer(`kv.${l}.v`, n * D * 4),
    }));
  }

  w(name) {
    return this.buffers.get(name);
  }

  /** The residual-stream buffers of `rows` rows for a prefix ("ctx" or "q"). */
  streams(pre, rows) {
    const { d_in: dIn, d_model: D, d_mlp: dMlp } = this.cfg;
    const buf = (name, width) => this.engine.buffer(`${pre}.${name}`, rows * width * 4);
    return { x: buf("x", dIn), h: buf("h", D), a: buf("a", D), q: buf("q", D), o: buf("o", D),
      mid: buf("mid", dMlp) };
  }

  /** out = act(a @ W + b) (or out += ... when accumulate), a: M × K, W: K × N. */
  matmul(pass, a, M, K, N, weight, bias, out, { accumulate = false, act = null } = {}) {
    this.ops.linear(pass, { a, M, K, N, w: this.w(weight), layout: "input-major", b: this.w(bias), out, accumulate, act });
  }

  layerNorm(pass, x, rows, prefix, out) {
    this.ops.layerNorm(pass, { x, rows, D: this.cfg.d_model, eps: this.cfg.ln_eps, g: this.w(`${prefix}.g`),
      b: this.w(`${prefix}.b`), out });
  }

  /** Row embedding of `rows` rows of s.x into s.h, plus the label embedding for context rows. */
  embed(pass, pre, rows, s, labels = null, regression = false) {
    const { d_in: dIn, d_model: D } = this.cfg;
    this.matmul(pass, s.x, rows, dIn, D, "embed.w", "embed.b", s.h);
    if (!labels) return;
    const u = this.engine.uniform([["u32", rows], ["u32", D], ["u32", regression ? 1 : 0]]);
    this.engine.dispatch(pass, this.p.embed,
      { 0: u, 1: labels, 2: this.w("label.w"), 3: this.w("label.reg"), 4: s.h }, [workgroups(rows * D, 64), 1, 1]);
  }

  /**
   * Layer l on `rows` rows of the stream s. The context pass (`context`) writes layer l's
   * K/V cache and stops there on the last layer (that output is never read); query
   * batches read the cache.
   */
  layer(pass, pre, l, rows, s, context) {
    const D = this.cfg.d_model;
    const p = `layers.${l}.`;
    this.layerNorm(pass, s.h, rows, `${p}ln1`, s.a);
    if (context) {
      this.matmul(pass, s.a, rows, D, D, `${p}attn.wk`, `${p}attn.bk`, this.kv[l].k);
      this.matmul(pass, s.a, rows, D, D, `${p}attn.wv`, `${p}attn.bv`, this.kv[l].v);
      if (l === this.cfg.n_layers - 1) return;
    }
    this.matmul(pass, s.a, rows, D, D, `${p}attn.wq`, `${p}attn.bq`, s.q);
    this.attention(pass, l, rows, s);
    this.matmul(pass, s.o, rows, D, D, `${p}attn.wo`, `${p}attn.bo`, s.h, { accumulate: true });
    this.layerNorm(pass, s.h, rows, `${p}ln2`, s.a);
    this.mlp(pass, p, rows, s);
  }

  /** Every row's queries against the cached context keys/values of layer l (one batch). */
  attention(pass, l, rows, s) {
    const { d_model: D, n_heads: H } = this.cfg;
    this.ops.attention(pass, { q: s.q, k: this.kv[l].k, v: this.kv[l].v, out: s.o, batches: 1, Tq: rows,
      keys: this.n, H, dh: D / H, qBatch: 0, qRow: D, kBatch: 0, kRow: D, oBatch: 0, oRow: D });
  }

  /** h += GELU(a @ w1 + b1) @ w2 + b2 (tanh GELU). */
  mlp(pass, p, rows, s) {
    const { d_model: D, d_mlp: dMlp } = this.cfg;
    this.matmul(pass, s.a, rows, D, dMlp, `${p}mlp.w1`, `${p}mlp.b1`, s.mid, { act: "gelu_tanh" });
    this.matmul(pass, s.mid, rows, dMlp, D, `${p}mlp.w2`, `${p}mlp.b2`, s.h, { accumulate: true });
  }

  /** Head on `rows` query rows: softmax over the first C logits, or the regression output. */
  head(pass, rows, s, C, regression, logits, out) {
    const { d_model: D, max_classes: maxC } = this.cfg;
    this.layerNorm(pass, s.h, rows, "head.ln", s.a);
    if (regression) {
      this.matmul(pass, s.a, rows, D, 1, "head.reg.w", "head.reg.b", out);
      return;
    }
    this.matmul(pass, s.a, rows, D, maxC, "head.cls.w", "head.cls.b", logits);
    const u = this.engine.uniform([["u32", rows], ["u32", maxC], ["u32", C]]);
    this.engine.dispatch(pass, this.p.head, { 0: u, 1: logits, 2: out }, [workgroups(rows, 64), 1, 1]);
  }
}

/**
 * Context pass: standardize (context statistics), upload, embed rows and labels, then
 * every layer, filling the K/V cache. Adds to `timer`; returns the standardized,
 * d_in-padded query rows and the target statistics (regression; else null).
 */
async function contextPass(enc, d, timer) {
  const { engine, cfg } = enc;
  const t0 = now();
  const stats = columnStats(d.xTrain, d.n, d.F);
  const tstats = d.task === "regression" ? targetStats(d.yTrain) : null;
  const ctx = enc.streams("ctx", d.n);
  engine.write(ctx.x, standardize(d.xTrain, d.n, d.F, stats, cfg.d_in));
  const labels = engine.upload("ctx.y", gpuLabels(d.yTrain, d.task, tstats));
  const queries = standardize(d.xTest, d.m, d.F, stats, cfg.d_in);
  timer.add("embed", now() - t0);
  await timer.stage("embed", (pass) => enc.embed(pass, "ctx", d.n, ctx, labels, Boolean(tstats)));
  for (let l = 0; l < cfg.n_layers; l++) {
    await timer.stage(l, (pass) => enc.layer(pass, "ctx", l, d.n, ctx, true));
  }
  engine.stats.contextPasses = (engine.stats.contextPasses ?? 0) + 1;
  return { queries, tstats };
}

/** Query rows in batches of B against the cached context; returns the output array. */
async function queryBatches(enc, d, queries, B, tstats, timer) {
  const { engine, cfg } = enc;
  const width = d.C || 1;
  const qs = enc.streams("q", B);
  const logits = engine.buffer("q.logits", B * cfg.max_classes * 4);
  const out = engine.buffer("q.out", B * width * 4);
  const output = new Float32Array(d.m * width);
  for (let start = 0; start < d.m; start += B) {
    const rows = Math.min(B, d.m - start);
    engine.write(qs.x, queries.subarray(start * cfg.d_in, (start + rows) * cfg.d_in));
    await timer.stage("embed", (pass) => enc.embed(pass, "q", rows, qs));
    for (let l = 0; l < cfg.n_layers; l++) {
      await timer.stage(l, (pass) => enc.layer(pass, "q", l, rows, qs, false));
    }
    await timer.stage("head", (pass) => enc.head(pass, rows, qs, d.C, Boolean(tstats), logits, out));
    await timer.settle();
    const t0 = now();
    storeBatch(output, await engine.read(out, rows * width), start, rows, width, tstats);
    timer.add("head", now() - t0);
    timer.batch();
  }
  return output;
}

/** icl_transformer (model.weights loaded) on validated data `d`; resolves to {output, timings}. */
export async function runTransformer(engine, model, d) {
  const { weights } = model;
  checkLimits("icl_transformer", { features: d.F, classes: d.C || null }, weights.config);
  const B = batchRows(model, 1024, d.m);
  const enc = await Encoder.create(engine, weights, d.n);
  const timer = new StageTimer(engine, weights.config.n_layers);
  const { queries, tstats } = await contextPass(enc, d, timer);
  const output = await queryBatches(enc, d, queries, B, tstats, timer);
  return { output, timings: await timer.finish() };
}
