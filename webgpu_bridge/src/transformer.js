// icl_transformer (docs/models.md) on the GPU. The context pass runs once per call and
// leaves each layer's context keys/values in GPU buffers (the KV cache); query rows then
// run in batches that attend to those cached keys/values only.
import { columnStats, gpuLabels, standardize, storeBatch, targetStats } from "./data.js";
import { batchRows, now, workgroups } from "./engine.js";
import { MATMUL_TILE } from "./kernels.js";
import { checkLimits } from "./models.js";
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

const PIPELINES = ["matmul", "gelu_mlp", "layer_norm", "attention", "head", "embed"];

/**
 * The encoder's dispatches for one call: weights buffers, pipelines and the per-layer
 * K/V cache of `n` context rows. Each method records into a compute pass; buffers are
 * named by role (prefix "ctx" or "q") so the engine reuses them across calls.
 */
class Encoder {
  static async create(engine, weights, n) {
    const pipelines = await Promise.all(PIPELINES.map((k) => engine.pipeline(k)));
    return new Encoder(engine, weights, n, Object.fromEntries(PIPELINES.map((k, i) => [k, pipelines[i]])));
  }

  constructor(engine, weights, n, pipelines) {
    this.engine = engine;
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

  /** out = a @ W + b (or out += ... when accumulate), a: M × K, W: K × N. */
  matmul(pass, role, a, M, K, N, weight, bias, out, accumulate = 0) {
    const u = this.engine.uniform(role, [["u32", M], ["u32", K], ["u32", N], ["u32", accumulate]]);
    this.engine.dispatch(pass, this.p.matmul, { 0: u, 1: a, 2: this.w(weight), 3: this.w(bias), 4: out },
      [workgroups(N, MATMUL_TILE.cols), workgroups(M, MATMUL_TILE.rows), 1]);
  }

  layerNorm(pass, role, x, rows, prefix, out) {
    const u = this.engine.uniform(role, [["u32", rows], ["u32", this.cfg.d_model], ["f32", this.cfg.ln_eps]]);
    this.engine.dispatch(pass, this.p.layer_norm,
      { 0: u, 1: x, 2: this.w(`${prefix}.g`), 3: this.w(`${prefix}.b`), 4: out }, [workgroups(rows, 64), 1, 1]);
  }

  /** Row embedding of `rows` rows of s.x into s.h, plus the label embedding for context rows. */
  embed(pass, pre, rows, s, labels = null, regression = false) {
    const { d_in: dIn, d_model: D } = this.cfg;
    this.matmul(pass, `${pre}.embed`, s.x, rows, dIn, D, "embed.w", "embed.b", s.h);
    if (!labels) return;
    const u = this.engine.uniform(`${pre}.label`, [["u32", rows], ["u32", D], ["u32", regression ? 1 : 0]]);
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
    const role = `${pre}.${l}`;
    this.layerNorm(pass, `${role}.ln1`, s.h, rows, `${p}ln1`, s.a);
    if (context) {
      this.matmul(pass, `${role}.k`, s.a, rows, D, D, `${p}attn.wk`, `${p}attn.bk`, this.kv[l].k);
      this.matmul(pass, `${role}.v`, s.a, rows, D, D, `${p}attn.wv`, `${p}attn.bv`, this.kv[l].v);
      if (l === this.cfg.n_layers - 1) return;
    }
    this.matmul(pass, `${role}.q`, s.a, rows, D, D, `${p}attn.wq`, `${p}attn.bq`, s.q);
    this.attention(pass, role, l, rows, s);
    this.matmul(pass, `${role}.o`, s.o, rows, D, D, `${p}attn.wo`, `${p}attn.bo`, s.h, 1);
    this.layerNorm(pass, `${role}.ln2`, s.h, rows, `${p}ln2`, s.a);
    this.mlp(pass, role, p, rows, s);
  }

  /** Every row's queries against the cached context keys/values of layer l. */
  attention(pass, role, l, rows, s) {
    const { d_model: D, n_heads: H } = this.cfg;
    const dh = D / H;
    const u = this.engine.uniform(`${role}.attn`, [["u32", rows], ["u32", this.n], ["u32", H],
      ["u32", dh], ["f32", 1 / Math.sqrt(dh)], ["u32", 0], ["u32", 1], ["u32", 1]]);
    this.engine.dispatch(pass, this.p.attention, { 0: u, 1: s.q, 2: this.kv[l].k, 3: this.kv[l].v, 4: s.o },
      [workgroups(rows * H, 64), 1, 1]);
  }

  /** h += GELU(a @ w1 + b1) @ w2 + b2. */
  mlp(pass, role, p, rows, s) {
    const { d_model: D, d_mlp: dMlp } = this.cfg;
    const u = this.engine.uniform(`${role}.mlp1`, [["u32", rows], ["u32", D], ["u32", dMlp]]);
    this.engine.dispatch(pass, this.p.gelu_mlp,
      { 0: u, 1: s.a, 2: this.w(`${p}mlp.w1`), 3: this.w(`${p}mlp.b1`), 4: s.mid },
      [workgroups(dMlp, 16), workgroups(rows, 16), 1]);
    this.matmul(pass, `${role}.mlp2`, s.mid, rows, dMlp, D, `${p}mlp.w2`, `${p}mlp.b2`, s.h, 1);
  }

  /** Head on `rows` query rows: softmax over the first C logits, or the regression output. */
  head(pass, rows, s, C, regression, logits, out) {
    const { d_model: D, max_classes: maxC } = this.cfg;
    this.layerNorm(pass, "q.head.ln", s.h, rows, "head.ln", s.a);
    if (regression) {
      this.matmul(pass, "q.head.reg", s.a, rows, D, 1, "head.reg.w", "head.reg.b", out);
      return;
    }
    this.matmul(pass, "q.head.cls", s.a, rows, D, maxC, "head.cls.w", "head.cls.b", logits);
    const u = this.engine.uniform("q.head.softmax", [["u32", rows], ["u32", maxC], ["u32", C]]);
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
  engine.device.queue.writeBuffer(ctx.x, 0, standardize(d.xTrain, d.n, d.F, stats, cfg.d_in));
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
    await timer.stage("embed", (pass) => {
      engine.device.queue.writeBuffer(qs.x, 0, queries.subarray(start * cfg.d_in, (start + rows) * cfg.d_in));
      enc.embed(pass, "q", rows, qs);
    });
    for (let l = 0; l < cfg.n_layers; l++) {
      await timer.stage(l, (pass) => enc.layer(pass, "q", l, rows, qs, false));
    }
    await timer.stage("head", (pass) => enc.head(pass, rows, qs, d.C, Boolean(tstats), logits, out));
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
