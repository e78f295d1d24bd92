// The raw Google TabFM forward of ONE ensemble member on WebGPU (pkg/arenalite/models/
// tabfm/model.py): Fourier cell embedding → column stage → CLS tokens + row stage →
// column stage 2 → row stage 2 (the CLS tokens as each row's representation) → in-context
// learning → decoder, with every KV cache: `fitContext` runs a member's context rows once
// and keeps, in GPU buffers, what query rows need (per column stage, block and column
// chunk the hidden points' keys/values; per ICL block the context rows' keys/values);
// `queryBatches` then runs query rows in batches of any size against them (a query row's
// output does not depend on its batch: rows never see each other). float32 throughout.
//
// Limits (planChunks): every buffer stays within min(maxStorageBufferBindingSize,
// maxBufferSize) of the device (src/gpu.js asks the adapter for its highest; `limits` to
// `create` may force smaller ones): tokens live in blocks of rows, columns go through the
// column stages in chunks gathered column-major, rows through the row and ICL stages in
// chunks, the feed-forwards in row chunks, query batches split below what one buffer
// holds, a weight past the limit split by output rows (layers.js). What cannot be chunked
// (the context table, one column of the context rows, one ICL block's keys of the context
// rows, one row of tokens) past the limit throws one Error naming the limit and the size.
//
// Timings (StageTimer): `embed` = uploads and the cell embedding, the layers (layerNames)
// the two column and two row stages then each ICL block, `head` = the decoder and read-back.
import { now } from "../engine.js";
import { StageTimer } from "../timing.js";
import { CellStage, cleanCells } from "./cells.js";
import { ColumnStage } from "./column.js";
import { Decoder } from "./decoder.js";
import { ICLStage } from "./icl.js";
import { MAX_DISPATCH_ROWS, Ops } from "./layers.js";
import { RowStage } from "./row.js";

const DEFAULT_BATCH_ROWS = 1024;

/** The binding limit in force: {bytes, name} (the smaller of the device's two buffer limits). */
export function bufferLimit(device, limits = {}) {
  const get = (key) => Math.min(limits[key] ?? Infinity, device.limits?.[key] ?? Infinity);
  const binding = get("maxStorageBufferBindingSize");
  const buffer = get("maxBufferSize");
  if (!Number.isFinite(Math.min(binding, buffer))) throw new Error("Google TabFM on WebGPU: the device reports no buffer limits");
  return binding <= buffer ? { bytes: binding, name: "maxStorageBufferBindingSize" } : { bytes: buffer, name: "maxBufferSize" };
}

function tooBig(what, floats, limit) {
  return new Error(`Google TabFM on WebGPU: ${what} needs ${floats * 4} bytes in one buffer, past this adapter's ` +
    `${limit.name} of ${limit.bytes} bytes`);
}

/** The widths a plan needs, from a config (and the decoder's hidden width, when known). */
export function dimensions(config) {
  const E = config.embed_dim;
  const C = config.row_num_cls;
  const D = E * C;
  const classes = config.is_classifier ? config.max_classes : 1;
  return { E, C, D, I: config.col_num_inds, Fw: 4 * config.num_freq + 2, ff: E * config.ff_factor,
    iclFf: D * config.ff_factor, hidden: config.decoder_hidden || 2 * D, outDim: classes };
}

/**
 * Chunk sizes for N context rows of H features (d active) within `limit` {bytes, name}:
 * {tokens (T), tokenRows (rows per token block and row-stage chunk), columns(R) (columns per
 * column-stage chunk of R rows), iclRows, ffRows(ff) (feed-forward rows), queryRows (most
 * query rows per internal batch), decoderRows, targetRows, scratch(R) (floats of each scratch
 * buffer)}.
 * Pure: the same for any device with that limit. Throws one Error naming the limit where
 * something that cannot be chunked is past it.
 */
export function planChunks(config, { N, H, d = H, limit }) {
  const L = Math.floor(limit.bytes / 4);
  const { E, C, D, I, Fw, ff, iclFf, hidden, outDim } = dimensions(config);
  const T = C + d;
  const fit = (n, what, floats) => {
    if (n < 1) throw tooBig(what, floats, limit);
    return n;
  };
  if (N * H > L) throw tooBig(`the ${N} × ${H} context table`, N * H, limit);
  const W = Math.max(E, Fw);
  const columns = (R, total) => fit(Math.min(total, Math.floor(L / (Math.max(R, I) * W)),
    Math.floor(MAX_DISPATCH_ROWS / Math.max(R, I))), `one column of ${R} rows (column stage, ${W} floats a row)`,
  Math.max(R, I) * W);
  columns(N, T);
  const tokenRows = fit(Math.min(Math.floor(L / (T * E)), Math.floor(MAX_DISPATCH_ROWS / T)),
    `one row of ${T} tokens (row stage, ${E} floats a token)`, T * E);
  if (N * D > L) throw tooBig(`one ICL block's keys of ${N} context rows`, N * D, limit);
  const iclRows = fit(Math.min(Math.floor(L / D), MAX_DISPATCH_ROWS), "one ICL row", D);
  const ffRows = (width) => fit(Math.floor(L / (2 * width)), "one feed-forward row", 2 * width);
  ffRows(ff);
  ffRows(iclFf);
  const targetRows = fit(Math.floor(L / Math.max(hidden, D, 6)), "one target's encoding", Math.max(hidden, D));
  const decoderRows = fit(Math.min(iclRows, Math.floor(L / hidden)), "one decoder row", hidden);
  const queryRows = fit(Math.min(tokenRows, iclRows, Math.floor(L / Math.max(H, outDim, hidden))), "one query row",
    Math.max(T * E, D));
  const scratch = (R) => {
    const c1 = columns(R, d);
    const c2 = columns(R, T);
    return Math.max(Math.max(c1, c2) * Math.max(R, I) * E, Math.min(R, tokenRows) * T * E, Math.min(R, iclRows) * D);
  };
  return { N, H, d, T, tokenRows, columns, iclRows, decoderRows, ffRows, targetRows, queryRows, scratch, limit };
}

/**
 * Every buffer a member allocates at N context rows of H features (d active) and query
 * batches of `batch` rows, by role, in floats (largest first), for the limit test at full
 * size; `weights` the largest tensor's floats and the tensors split past the limit.
 */
export function bufferPlan(config, shapes, { N, H, d = H, batch, limit }) {
  const plan = planChunks(config, { N, H, d, limit });
  const L = Math.floor(limit.bytes / 4);
  const { E, C, D, I, Fw, ff, iclFf, hidden } = dimensions(config);
  const { T } = plan;
  const B = Math.min(batch, plan.queryRows);
  const c1 = plan.columns(N, d);
  const c2 = plan.columns(N, T);
  const scratch = Math.max(plan.scratch(N), plan.scratch(B));
  const roles = [
    ["context table", N * H], ["context token block", Math.min(N, plan.tokenRows) * T * E],
    ["query token block", B * T * E], ["scratch (a, o, t, q, k, v each)", scratch],
    ["cell features", Math.max(c1 * N, plan.columns(B, d) * B) * Fw],
    ["feed-forward gate|up", Math.min(L, Math.max(Math.max(c1, c2) * Math.max(N, I) * 2 * ff,
      Math.min(N, plan.iclRows) * 2 * iclFf))],
    ["hidden points", Math.max(c1, c2) * I * E], ["column cache per block and chunk (k, v each)", Math.max(c1, c2) * I * E],
    ["context representations", N * D], ["ICL keys per block (and values)", N * D],
    ["target MLP hidden", Math.min(N, plan.targetRows) * Math.max(hidden, 6)],
    ["row-stage CLS", Math.min(N, plan.tokenRows) * C * E],
  ].sort((a, b) => b[1] - a[1]);
  const sizes = [...shapes].map(([name, shape]) => [name, shape.reduce((a, b) => a * b, 1)]);
  const packed = [...shapes].filter(([n]) => n.endsWith("linear1.weight"))
    .map(([n, s]) => [n.replace("linear1.weight", "ff.gate_up.weight"), 2 * s[0] * s[1]]);
  const all = [...sizes, ...packed].sort((a, b) => b[1] - a[1]);
  return { plan, roles, largestWeight: all[0], split: all.filter(([, n]) => n > L).map(([name]) => name),
    totalContextFloats: N * T * E + N * D * (1 + 2 * config.icl_num_blocks) +
      2 * 2 * config.col_num_blocks * Math.ceil(d / c1) * c1 * I * E };
}

function checkInputs(config, xTrain, yTrain, d, catMask) {
  const N = yTrain.length;
  const H = N ? xTrain.length / N : 0;
  if (!N || !Number.isInteger(H) || H < 1) {
    throw new Error(`Google TabFM: y_context must hold one target per context row, got ${N} targets for ` +
      `${xTrain.length} context values`);
  }
  const active = d ?? H;
  if (!Number.isInteger(active) || active < 1 || active > H) {
    throw new Error(`Google TabFM: d (active features) must be an integer 1 … ${H}, got ${d}`);
  }
  if (catMask != null && catMask.length !== H) {
    throw new Error(`Google TabFM: cat_mask must be ${H} booleans, got ${catMask.length}`);
  }
  const y = Float32Array.from(yTrain);
  for (let i = 0; i < N; i++) {
    const v = Number(yTrain[i]);
    if (!Number.isFinite(v)) throw new Error("Google TabFM: y_context holds a missing or infinite target");
    if (config.is_classifier && (v < 0 || v >= config.max_classes || v !== Math.round(v))) {
      throw new Error(`Google TabFM: class target ${v} is not an index 0 … ${config.max_classes - 1} (row ${i})`);
    }
  }
  return { N, H, d: active, y };
}

/** One member's stages on an engine: `fitContext` once per context, then `queryBatches`. */
export class TabFMMember {
  /**
   * `weights`: {config, tensors: Map, shapes: Map} (src/tabfm/checkpoint.js's
   * loadTabfmWeights); `cacheKey` names this member's cache buffers (a fitContext replaces
   * the context of its key).
   */
  static async create(engine, weights, { limits = {}, cacheKey = "m0" } = {}) {
    if (!(weights?.tensors instanceof Map) || !(weights.shapes instanceof Map) || !weights.config) {
      throw new TypeError("Google TabFM weights must be {config, tensors: Map, shapes: Map} (loadTabfmWeights)");
    }
    const limit = bufferLimit(engine.device, limits);
    return new TabFMMember(engine, weights, await Ops.create(engine, weights, limit.bytes), limit, cacheKey);
  }

  constructor(engine, weights, ops, limit, cacheKey) {
    if (!/^[\w-]+$/.test(cacheKey)) throw new Error(`Google TabFM cacheKey must be a word, got ${JSON.stringify(cacheKey)}`);
    const config = weights.config;
    Object.assign(this, { engine, ops, limit, cacheKey, config, dims: dimensions(config) });
    this.cells = new CellStage(ops, config);
    this.column = new ColumnStage(ops, config, "col_embedder.");
    this.row = new RowStage(ops, config, "row_interactor.", true);
    this.column2 = new ColumnStage(ops, config, "col_embedder_2.");
    this.row2 = new RowStage(ops, config, "row_interactor_2.", false);
    this.icl = new ICLStage(ops, config);
    this.decoder = new Decoder(ops, config);
  }

  /** One name per `layers` entry of the timer: the column and row stages, then each ICL block. */
  layerNames() {
    return ["column", "row", "column_2", "row_2", ...this.icl.blocks.map((_, l) => `icl.${l}`)];
  }

  timer() {
    return new StageTimer(this.engine, this.layerNames().length);
  }

  /** Floats per query row of `output`: max_classes logits, or one regression value. */
  width() {
    return this.decoder.outDim;
  }

  /** Scratch buffers for R rows (grown between passes only: recorded work is submitted first). */
  scratch(plan, R) {
    const { engine, dims: { E, C, D, I, Fw, ff, iclFf, hidden } } = this;
    engine.submitRecorded();
    const L = Math.floor(this.limit.bytes / 4);
    const rowsE = plan.scratch(R);
    const c = Math.max(plan.columns(R, plan.d), plan.columns(R, plan.T));
    const mid2 = Math.min(L, Math.max(Math.max(c * Math.max(R, I), Math.min(R, plan.tokenRows) * plan.T) * 2 * ff,
      Math.min(R, plan.iclRows) * 2 * iclFf));
    const buf = (name, floats) => engine.buffer(`tabfm.s.${name}`, Math.max(1, floats) * 4);
    const base = { a: buf("a", rowsE), o: buf("o", rowsE), t: buf("t", rowsE), q: buf("q", rowsE), k: buf("k", rowsE),
      v: buf("v", rowsE), mid2: buf("mid2", mid2), mid: buf("mid", mid2 / 2) };
    const forWidth = (width, ffWidth) => ({ ...base,
      ffRows: Math.max(1, Math.min(Math.floor(mid2 / (2 * ffWidth)), Math.floor(rowsE / width))) });
    return { col: forWidth(E, ff), icl: forWidth(D, iclFf), colbuf: buf("colbuf", c * Math.max(R, I) * E),
      feat: buf("feat", plan.columns(R, plan.d) * R * Fw), hidden: buf("hidden", c * I * E),
      cls: buf("cls", Math.min(R, plan.tokenRows) * C * E),
      ymid: buf("ymid", Math.max(R * 6, Math.min(R, plan.targetRows) * hidden)), yemb: buf("yemb", R * E),
      dec: buf("dec", Math.min(R, plan.decoderRows) * hidden),
      reps: buf("reps.q", R * D) };
  }

  /** Token blocks (rows × T × E each) of R rows under `role`. */
  tokenBlocks(role, R, plan) {
    const blocks = [];
    for (let row0 = 0, b = 0; row0 < R; row0 += plan.tokenRows, b++) {
      const rows = Math.min(plan.tokenRows, R - row0);
      blocks.push({ row0, rows, buffer: this.engine.buffer(`tabfm.${role}.tok.${b}`, rows * plan.T * this.dims.E * 4) });
    }
    return blocks;
  }

  /** Columns j0 … j0 + cols − 1 (token tokOff + j) of the blocks into colbuf (column-major), or back. */
  moveColumns(pass, { blocks, colbuf, R, T, tokOff, j0, cols, back = false }) {
    const { E } = this.dims;
    for (const { row0, rows, buffer } of blocks) {
      const tok = { inS1: T * E, inS2: E, inOff: (tokOff + j0) * E };
      const col = { outS1: E, outS2: R * E, outOff: row0 * E };
      if (back) {
        this.ops.copy(pass, { src: colbuf, out: buffer, outer: rows, inner: cols, width: E, inS1: E, inS2: R * E,
          inOff: row0 * E, outS1: T * E, outS2: E, outOff: (tokOff + j0) * E });
      } else {
        this.ops.copy(pass, { src: buffer, out: colbuf, outer: rows, inner: cols, width: E, ...tok, ...col });
      }
    }
  }

  /**
   * Context rows xTrain (N × H, row-major) with targets yTrain (N) → the member's context,
   * every cache on the GPU (valid until the next fitContext of this cacheKey). `d`: the
   * active feature count (model.py's d, default H), `catMask`: H booleans (which columns
   * take the categorical frequencies) or null; `capture` reads every stage's context rows
   * back (tests).
   */
  async fitContext(xTrain, yTrain, { timer = this.timer(), d = null, catMask = null, capture = false } = {}) {
    const { engine, config, cacheKey: key } = this;
    const t0 = now();
    const { N, H, d: active, y } = checkInputs(config, xTrain, yTrain, d, catMask);
    const plan = planChunks(config, { N, H, d: active, limit: this.limit });
    const s = this.scratch(plan, N);
    const x = engine.upload(`tabfm.${key}.x.ctx`, cleanCells(xTrain));
    const yBuf = engine.upload(`tabfm.${key}.y`, y);
    const cat = engine.upload(`tabfm.${key}.cat`, Float32Array.from({ length: active }, (_, j) => (catMask?.[j] ? 1 : 0)));
    timer.add("embed", now() - t0);
    const context = { N, H, d: active, plan, cat, captured: capture ? {} : null };
    const tokens = this.tokenBlocks(`${key}.ctx`, N, plan);
    context.qInd = await this.inducingQueries(s, timer);
    if (!this.cells.isClassifier) {
      await timer.stage("embed", (pass) => this.cells.targetRows(pass, { y: yBuf, N, mid: s.ymid, out: s.yemb }));
    }
    context.cache1 = await this.columnStage(1, { s, x, R: N, H, plan, tokens, context, y: yBuf, timer });
    await this.rowStage1(s, tokens, plan, timer, context.captured);
    context.cache2 = await this.columnStage(2, { s, R: N, plan, tokens, context, timer });
    const reps = engine.buffer(`tabfm.${key}.reps`, N * this.dims.D * 4);
    await this.rowStage2(s, tokens, reps, plan, timer);
    if (capture) context.captured.row_2 = await engine.read(reps, N * this.dims.D);
    context.icl = await this.iclContext(s, { reps, N, y: yBuf, plan, timer });
    engine.stats.contextPasses = (engine.stats.contextPasses ?? 0) + 1;
    return context;
  }

  /** Both column stages' inducing-point queries, once per context. */
  async inducingQueries(s, timer) {
    const q = {};
    await timer.stage(0, (pass) => {
      q[1] = this.column.inducingQueries(pass, s.col, `${this.cacheKey}.c1`);
      q[2] = this.column2.inducingQueries(pass, s.col, `${this.cacheKey}.c2`);
    });
    return q;
  }

  /**
   * Column stage `which` (1: the cells embedded chunk by chunk first; 2: the tokens) on R
   * rows, context (`y` given: filling the cache) or queries (`cache` given). The cache's
   * chunks are the context's (plan.columns(N)); query rows take each in sub-chunks that
   * their own row count allows.
   */
  async columnStage(which, { s, x = null, R, H = 0, plan, tokens, context, y = null, cache = null, timer, captured = null }) {
    const stage = which === 1 ? this.column : this.column2;
    const { C, E } = this.dims;
    const total = which === 1 ? plan.d : plan.T;
    const chunk = plan.columns(plan.N, total);
    const fill = cache === null;
    const sub = fill ? chunk : Math.min(chunk, plan.columns(R, total));
    const made = [];
    const cap = context.captured && fill ? context.captured : captured;
    if (cap && which === 1) cap.cells = new Float32Array(R * plan.d * E);
    for (let j0 = 0, ch = 0; j0 < total; j0 += chunk, ch++) {
      const n = Math.min(chunk, total - j0);
      const chunkCache = fill ? stage.blocks.map((_, b) => ({
        k: this.engine.buffer(`tabfm.${this.cacheKey}.c${which}.${b}.${ch}.k`, n * stage.I * E * 4),
        v: this.engine.buffer(`tabfm.${this.cacheKey}.c${which}.${b}.${ch}.v`, n * stage.I * E * 4) })) : cache[ch];
      made.push(chunkCache);
      for (let first = 0; first < n; first += sub) {
        const part = { j0: j0 + first, cols: Math.min(sub, n - first), first, chunkCache };
        await this.columnPart(which, stage, part, { s, x, R, H, plan, tokens, context, y, fill, cap, total, timer });
      }
    }
    if (cap) cap[which === 1 ? "column" : "column_2"] = await this.readTokens(tokens, plan.T, which === 1 ? C : 0);
    return made;
  }

  /** Columns j0 … j0 + cols − 1 through a column stage (columnStage's one chunk or sub-chunk). */
  async columnPart(which, stage, { j0, cols, first, chunkCache }, { s, x, R, H, plan, tokens, context, y, fill, cap,
    total, timer }) {
    const { C, E } = this.dims;
    const move = { blocks: tokens, colbuf: s.colbuf, R, T: plan.T, tokOff: which === 1 ? C : 0, j0, cols };
    if (which === 1) {
      await timer.stage("embed", (pass) => {
        this.cells.embed(pass, { x, rows: R, H, d: plan.d, j0, cols, cat: context.cat, feat: s.feat, out: s.colbuf });
        if (fill) this.cells.addTarget(pass, { out: s.colbuf, count: cols * R, N: R, y, rowsEmb: s.yemb });
      });
      if (cap) scatterColumns(cap.cells, await this.engine.read(s.colbuf, cols * R * E), { R, cols, j0, total, E });
    }
    await timer.stage(which === 1 ? 0 : 2, (pass) => {
      if (which === 2) this.moveColumns(pass, move);
      if (fill) {
        stage.context(pass, s.col, { col: s.colbuf, cols, N: R, cache: chunkCache, qInd: context.qInd[which],
          hidden: s.hidden });
      } else {
        stage.queries(pass, s.col, { col: s.colbuf, cols, rows: R, cache: chunkCache, first });
      }
      this.moveColumns(pass, { ...move, back: true });
    });
  }

  /** CLS tokens into every row, then row stage 1 in place on the token blocks. */
  async rowStage1(s, tokens, plan, timer, captured) {
    const { C, E } = this.dims;
    await timer.stage(1, (pass) => {
      for (const { rows, buffer } of tokens) {
        this.ops.copy(pass, { src: this.ops.w("cls_tokens"), out: buffer, outer: rows, inner: 1, width: C * E, inS1: 0,
          inS2: 0, outS1: plan.T * E, outS2: 0 });
        for (let r0 = 0; r0 < rows; r0 += plan.tokenRows) {
          this.row.run(pass, s.col, { x: buffer, row0: r0, rows: Math.min(plan.tokenRows, rows - r0), T: plan.T });
        }
      }
    });
    if (captured) captured.row = await this.readTokens(tokens, plan.T, 0);
  }

  /** Row stage 2 on the token blocks into reps (rows × D). */
  async rowStage2(s, tokens, reps, plan, timer) {
    await timer.stage(3, (pass) => {
      for (const { row0, rows, buffer } of tokens) {
        for (let r0 = 0; r0 < rows; r0 += plan.tokenRows) {
          this.row2.run(pass, s.col, { x: buffer, row0: r0, rows: Math.min(plan.tokenRows, rows - r0), T: plan.T, reps,
            repsRow: row0 + r0, cls: s.cls });
        }
      }
    });
  }

  /** The ICL stage's context: the targets added, each block's keys/values (kept), the rows through all but the last. */
  async iclContext(s, { reps, N, y, plan, timer }) {
    const { icl, engine, cacheKey: key } = this;
    const kv = [];
    for (const [l] of icl.blocks.entries()) {
      const cache = { k: engine.buffer(`tabfm.${key}.icl.${l}.k`, N * icl.D * 4),
        v: engine.buffer(`tabfm.${key}.icl.${l}.v`, N * icl.D * 4) };
      kv.push(cache);
      await timer.stage(4 + l, (pass) => {
        if (l === 0) icl.addTarget(pass, { h: reps, N, y, mid: s.ymid, chunk: plan.targetRows });
        icl.keysValues(pass, s.icl, l, { h: reps, N, kv: cache, chunk: plan.iclRows });
        if (l < icl.blocks.length - 1) icl.through(pass, s.icl, l, { h: reps, rows: N, kv: cache, n: N, chunk: plan.iclRows });
      });
    }
    return { kv, n: N };
  }

  /** Token rows of the blocks read back: R × count × E from token `from` on (tests). */
  async readTokens(tokens, T, from) {
    const { E } = this.dims;
    const count = T - from;
    const R = tokens.reduce((a, b) => a + b.rows, 0);
    const out = new Float32Array(R * count * E);
    for (const { row0, rows, buffer } of tokens) {
      const t = await this.engine.read(buffer, rows * T * E);
      for (let r = 0; r < rows; r++) out.set(t.subarray((r * T + from) * E, (r + 1) * T * E), (row0 + r) * count * E);
    }
    return out;
  }

  /**
   * Query rows xTest (M × H, the context's H) → {output: M × width() float32 (logits or
   * regression values, model.py's predict_queries)}, in batches of `batchRows` (split
   * further where one buffer would not hold a batch).
   */
  async queryBatches(context, xTest, { batchRows = DEFAULT_BATCH_ROWS, timer = this.timer(), capture = false } = {}) {
    const { H } = context;
    const M = xTest.length / H;
    if (!Number.isInteger(M)) throw new Error(`Google TabFM: ${xTest.length} query values are not rows of ${H} features`);
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`batchRows must be a positive integer, got ${batchRows}`);
    const B = Math.max(1, Math.min(batchRows, context.plan.queryRows, M));
    const width = this.width();
    const output = new Float32Array(M * width);
    const captured = capture ? [] : null;
    for (let start = 0; start < M; start += B) {
      const rows = Math.min(B, M - start);
      const cap = capture ? {} : null;
      output.set(await this.queryBatch(context, xTest.subarray(start * H, (start + rows) * H), rows, timer, cap),
        start * width);
      if (cap) captured.push(cap);
      timer.batch();
    }
    return { output, captured };
  }

  async queryBatch(context, xs, R, timer, captured) {
    const { engine, icl, dims: { D } } = this;
    const { plan } = context;
    const t0 = now();
    const s = this.scratch(plan, R);
    const x = engine.upload("tabfm.x.q", cleanCells(xs));
    timer.add("embed", now() - t0);
    const tokens = this.tokenBlocks("q", R, plan);
    await this.columnStage(1, { s, x, R, H: context.H, plan, tokens, context, cache: context.cache1, timer, captured });
    await this.rowStage1(s, tokens, plan, timer, captured);
    await this.columnStage(2, { s, R, plan, tokens, context, cache: context.cache2, timer, captured });
    await this.rowStage2(s, tokens, s.reps, plan, timer);
    if (captured) captured.row_2 = await engine.read(s.reps, R * D);
    for (const [l, kv] of context.icl.kv.entries()) {
      await timer.stage(4 + l, (pass) => icl.through(pass, s.icl, l, { h: s.reps, rows: R, kv, n: context.icl.n,
        chunk: plan.iclRows }));
    }
    if (captured) captured.icl = await engine.read(s.reps, R * D);
    const out = engine.buffer("tabfm.out", R * this.width() * 4);
    await timer.stage("head", (pass) => this.decoder.run(pass, { h: s.reps, rows: R, out, a: s.icl.a, mid: s.dec,
      chunk: plan.decoderRows }));
    await timer.settle();
    const th = now();
    const got = await engine.read(out, R * this.width());
    timer.add("head", now() - th);
    return got;
  }
}

/** A column-major chunk (cols × R × E, columns j0 …) into a row-major R × total × E array. */
function scatterColumns(out, chunk, { R, cols, j0, total, E }) {
  for (let c = 0; c < cols; c++) {
    for (let r = 0; r < R; r++) out.set(chunk.subarray((c * R + r) * E, (c * R + r + 1) * E), (r * total + j0 + c) * E);
  }
}

/**
 * One member's raw forward: context rows, then every query row; resolves to {output,
 * timings, plan[, stages]} (stages with `capture`: each stage's context rows then query
 * rows, as model.py's `stages`, the ICL output of the query rows only).
 */
export async function forward(engine, weights, { xTrain, yTrain, xTest },
  { batchRows, limits, capture = false, cacheKey, d = null, catMask = null } = {}) {
  const member = await TabFMMember.create(engine, weights, { limits, cacheKey });
  const timer = member.timer();
  const dispatches = engine.stats.dispatches;
  const context = await member.fitContext(xTrain, yTrain, { timer, d, catMask, capture });
  const contextDispatches = engine.stats.dispatches - dispatches;
  const { output, captured } = await member.queryBatches(context, xTest, { batchRows, timer, capture });
  const result = { output, timings: await timer.finish(), plan: context.plan, context,
    dispatches: { context: contextDispatches, total: engine.stats.dispatches - dispatches } };
  if (capture) {
    const cat = (key) => {
      const parts = [context.captured[key], ...captured.map((c) => c[key])];
      const all = new Float32Array(parts.reduce((a, b) => a + b.length, 0));
      parts.reduce((at, p) => (all.set(p, at), at + p.length), 0);
      return all;
    };
    result.stages = Object.fromEntries(["cells", "column", "row", "column_2", "row_2"].map((k) => [k, cat(k)]));
    const icl = captured.map((c) => c.icl);
    result.stages.iclQuery = new Float32Array(icl.reduce((a, b) => a + b.length, 0));
    icl.reduce((at, p) => (result.stages.iclQuery.set(p, at), at + p.length), 0);
  }
  return result;
}
