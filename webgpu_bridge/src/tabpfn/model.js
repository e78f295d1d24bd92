// The raw TabPFN v3 forward of ONE ensemble member on WebGPU (pkg/arenalite/models/tabpfn/
// model.py): cells → column stage → row stage → ICL → decoder, with every cache.
// `fitContext` runs a member's context rows once and keeps in GPU buffers what query rows
// need (model.py's Context): the cells' statistics, the column stage's keys/values of the
// hidden points per block and column chunk, the ICL keys/values per layer (read with the
// test rows' KV heads) and the decoder's keys and one-hot targets; `queryBatches` then runs
// query rows in batches of any size against them (a row's output never depends on the
// other rows). float32 throughout; buffers are kept per role and reused.
//
// Limits (planChunks): every buffer stays within min(maxStorageBufferBindingSize,
// maxBufferSize) of the adapter, or of `limits` given to `create` (a test forces small
// ones): columns go through the column stage in chunks, rows through the row stage in row
// blocks and through the ICL stage in row chunks, query batches are split below what one
// buffer holds. What cannot be chunked (one column of the context rows, one row's tokens,
// the context rows' representations or one ICL layer's keys/values, the decoder's cache,
// one weight tensor) past the limit throws one Error naming the limit and the size.
//
// Timings (StageTimer): `embed` = cells and the column stage (with the uploads), one
// `layers` entry per row-stage block then per ICL layer, `head` = output_norm and the
// decoder (with the read-back).
import { now } from "../engine.js";
import { StageTimer } from "../timing.js";
import { ColumnStage, embedContext, embedQueries } from "./column.js";
import { fitScaler } from "./cells.js";
import { Decoder, fitContext as fitDecoder, logits } from "./decoder.js";
import { ICLStage, fitContext as fitICL, query } from "./icl.js";
import { MAX_DISPATCH_ROWS, Ops, tensorSlices, tooBig } from "./layers.js";
import { RowStage, aggregate } from "./row.js";

const DEFAULT_BATCH_ROWS = 1024;

/** The binding limit in force: {bytes, name} (the smaller of the two adapter limits). */
export function bufferLimit(device, limits = {}) {
  const get = (key) => Math.min(limits[key] ?? Infinity, device.limits?.[key] ?? Infinity);
  const binding = get("maxStorageBufferBindingSize");
  const buffer = get("maxBufferSize");
  if (!Number.isFinite(Math.min(binding, buffer))) throw new Error("TabPFN on WebGPU: the device reports no buffer limits");
  return binding <= buffer ? { bytes: binding, name: "maxStorageBufferBindingSize" } : { bytes: buffer, name: "maxBufferSize" };
}

/**
 * The stages' widths a plan needs, from a config alone (no weights): {column: {E, I,
 * width}, row: {C, E, width}, icl: {D, kvWidth, width}, decoder: {width(classes), oneHot
 * (classes), keys}}. Weights are sliced to the limit per tensor (layers.js).
 */
export function planShapes(config) {
  const E = config.embed_dim;
  const ff = E * config.ff_factor;
  const D = E * config.feat_agg_num_cls_tokens;
  const heads = config.icl_num_heads;
  const dh = D / heads;
  const classification = config.max_num_classes >= 2;
  const dd = config.decoder_head_dim;
  const H = config.decoder_num_heads;
  const nOut = classification ? config.max_num_classes : config.num_buckets;
  const slices = (c) => Math.ceil(c / dd);
  return {
    column: { E, I: config.dist_embed_num_inducing_points, width: Math.max(2 * E, ff) },
    row: { C: config.feat_agg_num_cls_tokens, E, width: Math.max(2 * E, ff) },
    icl: { D, kvWidth: (config.icl_num_kv_heads ?? heads) * dh, width: Math.max(D, D * config.ff_factor) },
    decoder: classification
      ? { width: (c) => H * dd * (1 + slices(c)) + nOut, keys: H * dd, oneHot: (c) => slices(c) * dd }
      : { width: () => D * config.ff_factor + nOut, keys: 0, oneHot: () => 0 },
  };
}

/**
 * Chunk sizes for N context rows of F features and `classes` context classes within
 * `limit` ({bytes, name}), from planShapes: {columns (column chunk), rows (row-stage row
 * block), iclRows (ICL row chunk), queryRows (most query rows per internal batch), tokens,
 * limit, largest (bytes of the largest buffer planned, and what it is)}. Throws one Error
 * naming the limit where a piece that is not chunked does not fit.
 */
export function planChunks(shapes, { N, F, classes = 0, limit }) {
  const L = Math.floor(limit.bytes / 4);
  const { column, row, icl, decoder } = shapes;
  const T = row.C + F;
  const sizes = [];
  const need = (what, floats) => {
    if (floats > L) throw tooBig(what, floats, limit);
    sizes.push([floats, what]);
  };
  const fit = (n, what, floats) => {
    if (n < 1) throw tooBig(what, floats, limit);
    return n;
  };
  need(`the ${N} × ${F} context table`, N * F);
  const cw = column.width;
  const columns = fit(Math.min(F, Math.floor(L / (N * cw)), Math.floor(L / (column.I * cw)),
    Math.floor(MAX_DISPATCH_ROWS / N)), `one column of ${N} context rows (column stage, ${cw} floats a row)`, N * cw);
  const rows = fit(Math.min(Math.floor(L / (T * row.width)), Math.floor(MAX_DISPATCH_ROWS / T)),
    `one row of ${T} tokens (row stage, ${row.width} floats a token)`, T * row.width);
  need(`the representations of ${N} context rows`, N * icl.D);
  need(`one ICL layer's keys/values of ${N} context rows`, N * 2 * icl.kvWidth);
  need(`the decoder's keys of ${N} context rows`, N * decoder.keys);
  need(`the one-hot targets of ${N} context rows`, N * decoder.oneHot(classes));
  const iclRows = fit(Math.min(Math.floor(L / icl.width), MAX_DISPATCH_ROWS), "one ICL row", icl.width);
  const queryRows = fit(Math.min(rows, iclRows, Math.floor(L / (columns * cw)), Math.floor(MAX_DISPATCH_ROWS / columns),
    Math.floor(L / decoder.width(classes)), Math.floor(L / F)), "one query row", columns * cw);
  sizes.push([columns * N * cw, "a column chunk's keys/values or feed-forward"],
    [Math.min(rows, N) * T * row.width, "a row block's keys/values or feed-forward"],
    [Math.min(iclRows, N) * icl.width, "an ICL row chunk's feed-forward"]);
  const [floats, what] = sizes.reduce((a, b) => (b[0] > a[0] ? b : a));
  return { columns, rows, iclRows, queryRows, tokens: T, limit, largest: { bytes: floats * 4, what } };
}

/** model.py's _targets: the same refusals, worded the same. */
function checkTargets(y, classification, nOut) {
  if (y.length === 0) throw new Error("TabPFN needs at least one context row");
  if (!y.every(Number.isFinite)) throw new Error("TabPFN context targets must be finite");
  if (!classification) return;
  if (y.some((v) => v < 0 || v !== Math.round(v))) throw new Error("TabPFN class labels must be integers 0 … C−1");
  const top = y.reduce((a, v) => Math.max(a, v), 0);
  if (top > nOut - 1) throw new Error(`Target is out of range: this checkpoint takes classes 0 … ${nOut - 1}, got ${top}`);
}

/** Column embeddings (rows × F × E) out of token buffers read back (tests). */
async function readTokens(engine, tokens, E) {
  const { T, C, F } = tokens;
  const total = tokens.blocks.reduce((a, b) => a + b.rows, 0);
  const out = new Float32Array(total * F * E);
  for (const { row0, rows, buffer } of tokens.blocks) {
    const t = await engine.read(buffer, rows * T * E);
    for (let r = 0; r < rows; r++) out.set(t.subarray((r * T + C) * E, (r * T + T) * E), (row0 + r) * F * E);
  }
  return out;
}

/** One member's stages on an engine: `fitContext` once per split, then `queryBatches`. */
export class TabPFNMember {
  /**
   * `weights`: {config, tensors: Map, shapes: Map} (src/tabpfn/checkpoint.js's
   * loadTabpfnWeights). `cacheKey` names this member's cache buffers: a fitContext replaces
   * the context of its key.
   */
  static async create(engine, weights, { limits = {}, cacheKey = "m0" } = {}) {
    if (!(weights?.tensors instanceof Map && weights.shapes instanceof Map && weights.config)) {
      throw new TypeError("TabPFN weights must be {config, tensors: Map, shapes: Map} (loadTabpfnWeights)");
    }
    const limit = bufferLimit(engine.device, limits);
    for (const [name, shape] of weights.shapes) if (!name.startsWith("criterion.")) tensorSlices(name, shape, limit);
    return new TabPFNMember(engine, weights, await Ops.create(engine, weights, limit), limit, cacheKey);
  }

  constructor(engine, weights, ops, limit, cacheKey) {
    if (!/^[\w-]+$/.test(cacheKey)) throw new Error(`TabPFN cacheKey must be a word, got ${JSON.stringify(cacheKey)}`);
    this.cacheKey = cacheKey;
    this.engine = engine;
    this.config = weights.config;
    this.ops = ops;
    this.column = new ColumnStage(ops, this.config);
    this.row = new RowStage(ops, this.config);
    this.icl = new ICLStage(ops, this.config);
    this.decoder = new Decoder(ops, this.config);
    this.limit = limit;
    this.shapes = planShapes(this.config);
  }

  get nLayers() {
    return this.row.blocks.length + this.icl.layers.length;
  }

  /** One name per `layers` entry of the timer: the row stage's blocks, then the ICL layers. */
  layerNames() {
    return [...this.row.blocks.map((_, i) => `row ${i}`), ...this.icl.layers.map((_, i) => `icl ${i}`)];
  }

  /** A StageTimer with this member's stages (embed, row blocks + ICL layers, head). */
  timer() {
    return new StageTimer(this.engine, this.nLayers);
  }

  /**
   * Context rows xTrain (N × F, row-major, NaN/±inf allowed) with targets yTrain (N) →
   * the member's context, every cache on the GPU (valid until the next fitContext of this
   * cacheKey). `capture` reads the context rows' stage outputs back (tests).
   */
  async fitContext(xTrain, yTrain, { timer = this.timer(), capture = false } = {}) {
    const { engine, column, row, icl, decoder } = this;
    const t0 = now();
    const N = yTrain.length;
    const y = Float32Array.from(yTrain);
    checkTargets(y, decoder.classification, decoder.nOut);
    const F = xTrain.length / N;
    if (!Number.isInteger(F) || F < 1) throw new Error(`TabPFN: ${xTrain.length} context values are not ${N} rows`);
    const classes = decoder.classification ? y.reduce((a, v) => Math.max(a, v + 1), 0) : 0;
    const plan = planChunks(this.shapes, { N, F, classes, limit: this.limit });
    const xs = new Float32Array(xTrain);
    const key = this.cacheKey;
    const stats = engine.upload(`tabpfn.${key}.stats`, fitScaler(xs, N, F));
    const x = engine.upload("tabpfn.x.ctx", xs);
    const yBuf = engine.upload("tabpfn.y.ctx", y);
    timer.add("embed", now() - t0);
    const tokens = row.tokens("ctx", N, F, plan.rows);
    const colCache = await embedContext(column, { x, N, F, stats, y: yBuf, plan, tokens, key }, timer);
    const captured = capture ? { column: await readTokens(engine, tokens, column.E) } : null;
    const r = engine.buffer("tabpfn.r.ctx", N * icl.D * 4);
    await aggregate(row, tokens, r, timer);
    if (capture) captured.row = await engine.read(r, N * icl.D);
    const out = engine.buffer(`tabpfn.${key}.icl.out`, N * icl.D * 4);
    const labels = Array.from(y);
    const iclCache = await fitICL(icl, { h: r, y: labels, N, plan, key, out }, timer, row.blocks.length);
    if (capture) captured.icl = await engine.read(out, N * icl.D);
    const decCache = await fitDecoder(decoder, { out, y: labels, N, key }, timer);
    engine.stats.contextPasses = (engine.stats.contextPasses ?? 0) + 1;
    return { N, F, plan: { ...plan, queryRows: plan.queryRows }, stats, colCache, iclCache, decCache, classes,
      captured };
  }

  /** Floats per query row of `output`: max_num_classes or num_buckets (model.py's n_out). */
  width() {
    return this.decoder.nOut;
  }

  /**
   * Query rows xTest (M × F) → {output: logits (M × n_out), float32}, in batches of
   * `batchRows` (split further where one buffer would not hold a batch).
   */
  async queryBatches(context, xTest, { batchRows = DEFAULT_BATCH_ROWS, timer = this.timer(), capture = false } = {}) {
    const { F, plan } = context;
    const M = xTest.length / F;
    if (!Number.isInteger(M)) throw new Error(`TabPFN: ${xTest.length} query values are not rows of ${F} features`);
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`batchRows must be a positive integer, got ${batchRows}`);
    const B = Math.max(1, Math.min(batchRows, plan.queryRows, M));
    const width = this.width();
    const output = new Float32Array(M * width);
    const captured = capture ? { column: [], row: [], icl: [] } : null;
    for (let start = 0; start < M; start += B) {
      const rows = Math.min(B, M - start);
      output.set(await this.queryBatch(context, xTest.subarray(start * F, (start + rows) * F), rows, timer, captured),
        start * width);
      timer.batch();
    }
    return { output, captured };
  }

  async queryBatch(context, xs, rows, timer, captured) {
    const { engine, column, row, icl, decoder } = this;
    const t0 = now();
    const x = engine.upload("tabpfn.x.q", new Float32Array(xs));
    timer.add("embed", now() - t0);
    const tokens = row.tokens("q", rows, context.F, rows);
    await embedQueries(column, context.colCache, { x, rows, F: context.F, stats: context.stats }, tokens, timer);
    if (captured) captured.column.push(await readTokens(engine, tokens, column.E));
    const r = engine.buffer("tabpfn.r.q", rows * icl.D * 4);
    await aggregate(row, tokens, r, timer);
    if (captured) captured.row.push(await engine.read(r, rows * icl.D));
    const out = engine.buffer("tabpfn.icl.out.q", rows * icl.D * 4);
    await query(icl, context.iclCache, { h: r, rows, plan: context.plan, out }, timer, row.blocks.length);
    if (captured) captured.icl.push(await engine.read(out, rows * icl.D));
    const dest = engine.buffer("tabpfn.logits", rows * decoder.nOut * 4);
    await timer.stage("head", (pass) => logits(decoder, context.decCache, pass, { out, rows, logits: dest }));
    await timer.settle();
    const th = now();
    const got = await engine.read(dest, rows * decoder.nOut);
    timer.add("head", now() - th);
    return got;
  }
}

/**
 * One member's raw forward: context rows, then every query row; resolves to {output,
 * timings, plan, context[, stages]} (stages with `capture`: column, row and icl outputs of
 * the context rows then the query rows, as model.py's `stages`).
 */
export async function forward(engine, weights, { xTrain, yTrain, xTest }, { batchRows, limits, capture = false,
  cacheKey } = {}) {
  const member = await TabPFNMember.create(engine, weights, { limits, cacheKey });
  const timer = member.timer();
  const context = await member.fitContext(xTrain, yTrain, { timer, capture });
  const { output, captured } = await member.queryBatches(context, xTest, { batchRows, timer, capture });
  const result = { output, timings: await timer.finish(), plan: context.plan, context, member };
  if (capture) {
    const cat = (first, rest) => {
      const all = new Float32Array(first.length + rest.reduce((a, b) => a + b.length, 0));
      let at = 0;
      for (const part of [first, ...rest]) { all.set(part, at); at += part.length; }
      return all;
    };
    result.stages = Object.fromEntries(["column", "row", "icl"].map((k) => [k, cat(context.captured[k], captured[k])]));
  }
  return result;
}
