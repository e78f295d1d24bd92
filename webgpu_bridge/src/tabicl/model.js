// The raw TabICLv2 forward of ONE ensemble member on WebGPU (pkg/arenalite/models/tabicl/
// model.py): column embedding → row interaction → in-context learning → head, with both
// KV caches. `fitContext` runs a member's context rows once per split and keeps, in GPU
// buffers, what query rows need: per target pass, column block and column chunk the
// hidden points' keys/values (column stage), and per ICL layer the context rows'
// keys/values (one set per node of the class tree above max_classes classes);
// `queryBatches` then runs query rows in batches of any size against them. float32
// throughout; buffers are kept per role and reused across query batches (engine.js).
// Without feature groups (TabICLv1's layout) a model call's members share the first one's
// column stage (fitContext's `columns`: model.py's SharedColumns, gathered on the GPU).
//
// Limits: every buffer stays within min(maxStorageBufferBindingSize, maxBufferSize) of the
// adapter (or of `limits` given to `create`, so a test can force small ones): columns go
// through the column stage in chunks, rows through the row and ICL stages in chunks, query
// batches are split below what one buffer holds. What cannot be chunked (one column of the
// context rows, one row's tokens, one ICL layer's context keys/values) past the limit
// throws an Error naming the limit and the size.
//
// Timings (StageTimer): `embed` = the column stage (with the uploads), one `layers` entry
// per row block then per ICL layer, `head`; GPU timestamps where the device offers them.
import { now } from "../engine.js";
import { readBytes } from "../io.js";
import { StageTimer } from "../timing.js";
import { readCheckpoint } from "./checkpoint.js";
import { ColumnStage, embedContext, embedQueries, targetPasses } from "./column.js";
import { ICLStage, fitContext, fitTree, logits, query, treeProbabilities } from "./icl.js";
import { MAX_DISPATCH_ROWS, Ops } from "./layers.js";
import { RowStage, interact } from "./row.js";

export const SOFTMAX_TEMPERATURE = 0.9;
export const TREE_EPS = 1e-6;
const DEFAULT_BATCH_ROWS = 1024;

/**
 * Weights from a path/URL, bytes (the package's `.ckpt` or the converted `.safetensors`,
 * read and checked by ./checkpoint.js), {bytes, name} (a file picked in a page: `name` is
 * what messages call it), or an object {config, tensors: Map, shapes: Map}. The result
 * carries `name` (the path, URL or file name) for the messages of the predictor.
 */
export async function loadTabiclWeights(source) {
  if (source && source.tensors instanceof Map && source.config) {
    if (source.shapes instanceof Map) return source;
    throw new TypeError("TabICL weights objects need `shapes` (a Map of tensor shapes)");
  }
  const named = async (bytes, name) => ({ ...(await readCheckpoint(bytes, { name })), name });
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return named(source, "<bytes>");
  if (source && (source.bytes instanceof ArrayBuffer || ArrayBuffer.isView(source?.bytes))) {
    return named(source.bytes, String(source.name ?? "<bytes>"));
  }
  if (typeof source !== "string" && !(source instanceof URL)) {
    throw new TypeError("TabICL weights must be a .ckpt / .safetensors path or URL, bytes, or a read checkpoint");
  }
  return named(await readBytes(source), String(source));
}

/** The binding limit in force: {bytes, name} (the smaller of the two adapter limits). */
export function bufferLimit(device, limits = {}) {
  const get = (key) => Math.min(limits[key] ?? Infinity, device.limits?.[key] ?? Infinity);
  const binding = get("maxStorageBufferBindingSize");
  const buffer = get("maxBufferSize");
  if (!Number.isFinite(Math.min(binding, buffer))) throw new Error("TabICL on WebGPU: the device reports no buffer limits");
  return binding <= buffer ? { bytes: binding, name: "maxStorageBufferBindingSize" } : { bytes: buffer, name: "maxBufferSize" };
}

function tooBig(what, floats, limit) {
  return new Error(`TabICL on WebGPU: ${what} needs ${floats * 4} bytes in one buffer, past this adapter's ` +
    `${limit.name} of ${limit.bytes} bytes`);
}

/**
 * Chunk sizes for N context rows of H features within `limit`: {columns (column chunk),
 * rows (row-stage row block), iclRows (ICL and head row chunk), queryRows (most query
 * rows per internal batch)}.
 */
export function planChunks({ column, row, icl }, { N, H, limit }) {
  const L = Math.floor(limit.bytes / 4);
  const G = column.groups(H);
  const T = row.C + G;
  const fit = (n, what, floats) => {
    if (n < 1) throw tooBig(what, floats, limit);
    return n;
  };
  if (N * H > L) throw tooBig(`the ${N} × ${H} context table`, N * H, limit);
  const cw = column.width;
  const columns = fit(Math.min(G, Math.floor(L / (N * cw)), Math.floor(L / (column.I * cw)),
    Math.floor(MAX_DISPATCH_ROWS / N)), `one column of ${N} context rows (column stage, ${cw} floats a row)`, N * cw);
  const rows = fit(Math.min(Math.floor(L / (T * row.width)), Math.floor(MAX_DISPATCH_ROWS / T)),
    `one row of ${T} tokens (row stage, ${row.width} floats a token)`, T * row.width);
  if (N * 2 * icl.D > L) throw tooBig(`one ICL layer's keys/values of ${N} context rows`, N * 2 * icl.D, limit);
  const iclRows = fit(Math.min(Math.floor(L / icl.width), MAX_DISPATCH_ROWS), `one ICL row`, icl.width);
  const queryRows = fit(Math.min(rows, Math.floor(L / (columns * cw)), Math.floor(MAX_DISPATCH_ROWS / columns),
    Math.floor(L / icl.head.outDim), Math.floor(L / (H + 1))), "one query row", columns * cw);
  return { columns, rows, iclRows, queryRows, groups: G, tokens: T, limit };
}

function checkLabels(y, maxClasses) {
  for (const v of y) {
    if (!Number.isFinite(v)) throw new Error("TabICL context targets must be finite");
    if (maxClasses > 0 && (v < 0 || v !== Math.round(v))) throw new Error("TabICL class labels must be integers 0 … C−1");
  }
}

/** Column embeddings (rows × G × E) out of token buffers read back (tests). */
async function readTokens(engine, tokens, E) {
  const { T, C, G } = tokens;
  const total = tokens.blocks.reduce((a, b) => a + b.rows, 0);
  const out = new Float32Array(total * G * E);
  for (const { row0, rows, buffer } of tokens.blocks) {
    const t = await engine.read(buffer, rows * T * E);
    for (let r = 0; r < rows; r++) out.set(t.subarray((r * T + C) * E, (r * T + T) * E), (row0 + r) * G * E);
  }
  return out;
}

/** Row-major rows × H values with column j taken from column cols[j]. */
function gatherColumns(xs, rows, cols) {
  const H = cols.length;
  const out = new Float32Array(rows * H);
  for (let r = 0; r < rows; r++) for (let j = 0; j < H; j++) out[r * H + j] = xs[r * H + cols[j]];
  return out;
}

/** One member's stages on an engine: `fitContext` once per split, then `queryBatches`. */
export class TabICLMember {
  /**
   * `cacheKey` names this member's cache buffers: members with different keys hold their
   * contexts at once (an ensemble); a fitContext replaces the context of its key.
   */
  static async create(engine, weights, { limits = {}, cacheKey = "m0" } = {}) {
    const w = await loadTabiclWeights(weights);
    return new TabICLMember(engine, w, await Ops.create(engine, w), limits, cacheKey);
  }

  constructor(engine, weights, ops, limits, cacheKey) {
    if (!/^[\w-]+$/.test(cacheKey)) throw new Error(`TabICL cacheKey must be a word, got ${JSON.stringify(cacheKey)}`);
    this.cacheKey = cacheKey;
    this.engine = engine;
    this.config = weights.config;
    this.ops = ops;
    this.column = new ColumnStage(ops, this.config);
    this.row = new RowStage(ops, this.config);
    this.icl = new ICLStage(ops, this.config);
    this.maxClasses = this.config.max_classes;
    this.limit = bufferLimit(engine.device, limits);
  }

  get nLayers() {
    return this.row.blocks.length + this.icl.blocks.length;
  }

  /** A StageTimer with this member's stages (embed, row blocks + ICL layers, head). */
  timer() {
    return new StageTimer(this.engine, this.nLayers);
  }

  /**
   * Context rows xTrain (N × H, row-major) with targets yTrain (N) → the member's context:
   * both caches on the GPU (valid until the next fitContext of this cacheKey). `capture`
   * reads the context rows' column and row outputs back (tests). `columns` (a classifier
   * without feature groups, predictor.js): {id, permutation} for the first member of a
   * model call, whose column stage the context keeps as `sharedColumns` (valid until the
   * next fitContext of this cacheKey and id), or {source: that sharedColumns, permutation}
   * for another member of the call, which takes the source's column stage reordered to its
   * feature permutation instead of running its own (model.py's SharedColumns).
   */
  async fitContext(xTrain, yTrain, { timer = this.timer(), capture = false, columns = null } = {}) {
    const { engine, column, row, icl } = this;
    const t0 = now();
    const N = yTrain.length;
    const H = xTrain.length / N;
    if (!Number.isInteger(H) || H < 1) throw new Error(`TabICL: ${xTrain.length} context values are not ${N} rows`);
    const y = Float32Array.from(yTrain);
    checkLabels(y, this.maxClasses);
    const plan = planChunks(this, { N, H, limit: this.limit });
    const x = engine.upload("tabicl.x.ctx", Float32Array.from(xTrain));
    const ys = targetPasses(y, this.maxClasses).map((codes, p) => engine.upload(`tabicl.y.col.${p}`, codes));
    timer.add("embed", now() - t0);
    const tokens = row.tokens("ctx", N, plan.groups, plan.rows);
    let colCache;
    let queryColumns = null;
    let sharedColumns = null;
    if (columns?.source) {
      ({ colCache, queryColumns } = await this.reorderColumns(columns.source, columns.permutation, tokens, timer));
    } else if (columns) {
      const key = `${this.cacheKey}.s${columns.id ?? 0}`;
      colCache = await embedContext(column, { x, N, H, ys, plan, tokens, key }, timer);
      sharedColumns = await this.keepColumns(colCache, tokens, columns.permutation, key, timer);
    } else {
      colCache = await embedContext(column, { x, N, H, ys, plan, tokens, key: this.cacheKey }, timer);
    }
    const captured = capture ? { column: await readTokens(engine, tokens, column.E) } : null;
    const r = engine.buffer("tabicl.r.ctx", N * icl.D * 4);
    await interact(row, tokens, r, timer);
    if (capture) captured.row = await engine.read(r, N * icl.D);
    const nClasses = this.maxClasses > 0 ? new Set(y).size : 0;
    const base = row.blocks.length;
    const context = { N, H, plan, colCache, nClasses, captured, tree: null, icl: null, queryColumns, sharedColumns };
    if (this.maxClasses > 0 && nClasses > this.maxClasses) {
      const rTrain = await engine.read(r, N * icl.D);
      context.tree = await fitTree(icl, { rTrain, y: Array.from(y), plan, key: this.cacheKey }, timer, base);
    } else {
      if (this.maxClasses > 0 && y.some((v) => v >= this.maxClasses)) {
        throw new Error(`TabICL class labels must be below max_classes ${this.maxClasses}`);
      }
      const yBuf = engine.upload("tabicl.y.icl", y);
      context.icl = await fitContext(icl, { h: r, y: yBuf, N, nClasses, plan, key: `${this.cacheKey}.root` },
        timer, base);
    }
    engine.stats.contextPasses = (engine.stats.contextPasses ?? 0) + 1;
    return context;
  }

  /**
   * The column stage of the first member of a model call kept for the call's other members
   * (model.py's SharedColumns): its cache (key `key`, valid until a fitContext of the same
   * `columns.id`) and a copy of its context rows' column embeddings per token block.
   */
  async keepColumns(colCache, tokens, permutation, key, timer) {
    const { engine, ops, column: { E } } = this;
    const { T, C, G } = tokens;
    const emb = tokens.blocks.map(({ rows }, b) => engine.buffer(`tabicl.${key}.emb.${b}`, rows * G * E * 4));
    await timer.stage("embed", (pass) => {
      tokens.blocks.forEach(({ rows, buffer }, b) => {
        ops.copy(pass, { src: buffer, out: emb[b], outer: rows, inner: 1, width: G * E, inS1: T * E, inS2: 0,
          inOff: C * E, outS1: G * E, outS2: 0 });
      });
    });
    return { cache: colCache, emb, G, permutation: Int32Array.from(permutation) };
  }

  /**
   * A call's first column stage as the package hands it to a member whose column j is
   * feature permutation[j] (SharedColumns.reordered, taken literally): position k gets the
   * first member's column where[k] = pos(first[k]), pos = argsort(permutation): the context
   * embeddings into `tokens`, the cache gathered over its column axis into this member's
   * key; and the columns of this member whose cells its query rows bring.
   */
  async reorderColumns(source, permutation, tokens, timer) {
    const { ops, column: { E, I } } = this;
    const { T, C, G } = tokens;
    if (source.G !== G || permutation.length !== G) {
      throw new Error(`TabICL: a shared column stage of ${source.G} columns for a member of ${G} (${permutation.length} features)`);
    }
    const position = new Int32Array(G);
    permutation.forEach((f, j) => { position[f] = j; });
    const where = Int32Array.from(source.permutation, (f) => position[f]);
    const queryColumns = Int32Array.from(where, (w) => position[source.permutation[w]]);
    const { chunks, passes } = source.cache;
    const Gmax = Math.max(...chunks.map(([, Gc]) => Gc));
    // runs of consecutive source columns, cut at the chunk boundaries of both sides
    const runs = [];
    for (let k = 0; k < G; k++) {
      const last = runs[runs.length - 1];
      if (last && where[k] === last.w + last.n && k % Gmax !== 0 && where[k] % Gmax !== 0) last.n++;
      else runs.push({ k, w: where[k], n: 1 });
    }
    const kv = I * 2 * E;
    const key = this.cacheKey;
    const cacheOf = (k, p, b, c, Gc) => this.engine.buffer(`tabicl.${k}.col.kv.${p}.${b}.${c}`, Gc * kv * 4);
    await timer.stage("embed", (pass) => {
      tokens.blocks.forEach(({ rows, buffer }, b) => {
        for (const { k, w, n } of runs) {
          ops.copy(pass, { src: source.emb[b], out: buffer, outer: rows, inner: 1, width: n * E, inS1: G * E, inS2: 0,
            inOff: w * E, outS1: T * E, outS2: 0, outOff: (C + k) * E });
        }
      });
      for (let p = 0; p < passes; p++) {
        this.column.blocks.forEach((_, b) => {
          for (const { k, w, n } of runs) {
            const [c, cs] = [Math.floor(k / Gmax), Math.floor(w / Gmax)];
            ops.copy(pass, { src: cacheOf(source.cache.key, p, b, cs, chunks[cs][1]), out: cacheOf(key, p, b, c, chunks[c][1]),
              outer: 1, inner: 1, width: n * kv, inS1: 0, inS2: 0, inOff: (w - chunks[cs][0]) * kv, outS1: 0, outS2: 0,
              outOff: (k - chunks[c][0]) * kv });
          }
        });
      }
    });
    return { colCache: { key, chunks, passes }, queryColumns };
  }

  /** Output width: the context's classes, or num_quantiles. */
  width(context) {
    return this.maxClasses > 0 ? context.nClasses : this.icl.head.outDim;
  }

  /**
   * Query rows xTest (M × H) → logits (M × classes) or raw quantiles (M × Q), float32, in
   * batches of `batchRows` (split further where one buffer would not hold a batch).
   */
  async queryBatches(context, xTest, { batchRows = DEFAULT_BATCH_ROWS, timer = this.timer(), capture = false } = {}) {
    const { H, plan } = context;
    const M = xTest.length / H;
    if (!Number.isInteger(M)) throw new Error(`TabICL: ${xTest.length} query values are not rows of ${H} features`);
    if (!Number.isInteger(batchRows) || batchRows < 1) throw new RangeError(`batchRows must be a positive integer, got ${batchRows}`);
    const B = Math.max(1, Math.min(batchRows, plan.queryRows, M));
    const width = this.width(context);
    const output = new Float32Array(M * width);
    const captured = capture ? { column: [], row: [] } : null;
    for (let start = 0; start < M; start += B) {
      const rows = Math.min(B, M - start);
      const got = await this.queryBatch(context, xTest.subarray(start * H, (start + rows) * H), rows, timer, captured);
      output.set(got, start * width);
      timer.batch();
    }
    return { output, captured };
  }

  async queryBatch(context, xs, rows, timer, captured) {
    const { engine, column, row, icl } = this;
    const t0 = now();
    const x = engine.upload("tabicl.x.q", context.queryColumns ? gatherColumns(xs, rows, context.queryColumns)
      : Float32Array.from(xs));
    timer.add("embed", now() - t0);
    const tokens = row.tokens("q", rows, context.plan.groups, rows);
    await embedQueries(column, context.colCache, { x, rows, H: context.H }, tokens, timer);
    if (captured) captured.column.push(await readTokens(engine, tokens, column.E));
    const r = engine.buffer("tabicl.r.q", rows * icl.D * 4);
    await interact(row, tokens, r, timer);
    if (captured) captured.row.push(await engine.read(r, rows * icl.D));
    const base = row.blocks.length;
    if (context.tree) return this.treeBatch(context, r, rows, timer);
    await query(icl, context.icl, { h: r, rows, plan: context.plan }, timer, base);
    const outDim = icl.head.outDim;
    const out = engine.buffer("tabicl.out", rows * outDim * 4);
    await logits(icl, { h: r, rows, out, plan: context.plan }, timer);
    await timer.settle();
    const th = now();
    const raw = await engine.read(out, rows * outDim);
    timer.add("head", now() - th);
    const width = this.width(context);
    if (width === outDim) return raw;
    const got = new Float32Array(rows * width);
    for (let i = 0; i < rows; i++) got.set(raw.subarray(i * outDim, i * outDim + width), i * width);
    return got;
  }

  /** Above max_classes: T · log(p + 1e-6) of the tree's probabilities (model.py). */
  async treeBatch(context, r, rows, timer) {
    const C = context.nClasses;
    const probs = await treeProbabilities(this.icl, context.tree, { r, rows, nClasses: C,
      temperature: SOFTMAX_TEMPERATURE, plan: context.plan }, timer, this.row.blocks.length);
    return Float32Array.from(probs, (p) => Math.fround(SOFTMAX_TEMPERATURE) * Math.log(p + TREE_EPS));
  }
}

/**
 * One member's raw forward: context rows, then every query row; resolves to {output,
 * timings, plan[, stages]} (stages with `capture`: column and row outputs of the context
 * rows then the query rows, as model.py's `stages`).
 */
export async function forward(engine, weights, { xTrain, yTrain, xTest },
  { batchRows, limits, capture = false, cacheKey } = {}) {
  const member = await TabICLMember.create(engine, weights, { limits, cacheKey });
  const timer = member.timer();
  const context = await member.fitContext(xTrain, yTrain, { timer, capture });
  const { output, captured } = await member.queryBatches(context, xTest, { batchRows, timer, capture });
  const result = { output, timings: await timer.finish(), plan: context.plan, context };
  if (capture) {
    const cat = (first, rest) => {
      const all = new Float32Array(first.length + rest.reduce((a, b) => a + b.length, 0));
      let at = 0;
      for (const part of [first, ...rest]) { all.set(part, at); at += part.length; }
      return all;
    };
    result.stages = { column: cat(context.captured.column, captured.column), row: cat(context.captured.row, captured.row) };
  }
  return result;
}
