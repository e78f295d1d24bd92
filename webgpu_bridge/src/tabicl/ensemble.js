// TabICL's ensemble around the raw model, as tabicl 2.2.0's sklearn wrappers build it: the
// JavaScript twin of pkg/arenalite/models/tabicl/ensemble.py (docs/tabicl_preprocessing.md).
//
//   const plan = fitMembers(xTrain, yTrain, "multiclass");          // what fit() prepares
//   const inputs = memberInputs(plan, xTest);   // per member: x (float32), yTrain, perms
//   // … the model, once per member (or per modelBatches(plan) call) …
//   const proba = aggregateProba(logits, plan); // nTest × C float32 (predict_proba)
//   const pred = predictRegression(rawQuantiles, plan, "mean");      // regression
//
// Matrices are arrays of rows, or {rows, cols, data} / {shape: [rows, cols], data} in row
// order. Member draws use Python's random.Random(seed) (../pyrandom.js); float32 steps are
// rounded with Math.fround after every operation, as numpy computes them.

import { PyRandom } from "../pyrandom.js";
import { MAX_ELEMENTS_FOR_LATIN, SHUFFLE_METHODS, SOFTMAX_TEMPERATURE, latinSquare, shufflePatterns, softmax } from "../wrapper_ensemble.js";
import { NORM_METHODS, columnSums, fitPipeline, impute, imputeMeans, keptFeatures, pairwiseSum, selectColumns, transform } from "./preprocessing.js";

export const TASKS = Object.freeze(["binary", "multiclass", "regression"]);
export const DEFAULT_NORM_METHODS = Object.freeze(["none", "power"]);
export const MAX_CLASSES = 10;
export const DEFAULT_ALPHAS = Object.freeze([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
export const NUM_QUANTILES = 999;
export const TAIL_QUANTILES = 20;
export const OUTPUT_TYPES = Object.freeze(["mean", "variance", "median", "quantiles", "raw_quantiles"]);
const TOL = 1e-6;

export { MAX_ELEMENTS_FOR_LATIN, SHUFFLE_METHODS, SOFTMAX_TEMPERATURE, latinSquare, shufflePatterns, softmax };
const f32 = Math.fround;
const EPS = 2 ** -52;

// --- the RNG draws (EnsembleGenerator._generate_ensemble; the Shuffler is ../wrapper_ensemble.js) ---

/** [(method, feature permutation, class permutation or null)] per member, in plan order. */
export function drawMembers(nFeatures, nClasses, nEstimators, normMethods, featShuffleMethod, classShuffleMethod, randomState) {
  const feats = shufflePatterns(nFeatures, featShuffleMethod, nEstimators, randomState);
  const classes = nClasses === null ? [null] : shufflePatterns(nClasses, classShuffleMethod, nEstimators, randomState);
  const configs = feats.flatMap((f) => classes.map((c) => [f, c]));
  new PyRandom(randomState).shuffle(configs);
  const chosen = configs.flatMap((config) => normMethods.map((m) => [config, m])).slice(0, nEstimators);
  const order = [...new Set(chosen.map(([, m]) => m))];
  return order.flatMap((group) => chosen.filter(([, m]) => m === group).map(([[f, c], m]) => [m, f, c]));
}

// --- input checks -------------------------------------------------------------------------

/** A numeric matrix as {rows, cols, data: Float64Array}; ±inf refused by row and column. */
export function toMatrix(x, name) {
  let m;
  if (x && !Array.isArray(x) && x.data && (x.shape || Number.isInteger(x.rows))) {
    const [rows, cols] = x.shape ?? [x.rows, x.cols];
    if ((x.shape && x.shape.length !== 2) || x.data.length !== rows * cols) {
      throw new Error(`${name} must be 2-dimensional (rows × features), got shape [${x.shape ?? [rows, cols]}] of ${x.data.length} values`);
    }
    m = { rows, cols, data: Float64Array.from(x.data, Number) };
  } else if (Array.isArray(x) && x.every((row) => Array.isArray(row) || ArrayBuffer.isView(row))) {
    const cols = x.length ? x[0].length : 0;
    if (x.some((row) => row.length !== cols)) throw new Error(`${name} must be 2-dimensional: its rows have different lengths`);
    m = { rows: x.length, cols, data: Float64Array.from(x.flatMap((row) => Array.from(row, (v) => (typeof v === "number" || v === null ? v ?? NaN : checkNumber(v, name))))) };
  } else {
    throw new Error(`${name} must be 2-dimensional (rows × features): an array of rows or {rows, cols, data}`);
  }
  if (m.rows === 0) throw new Error(`${name} has no rows (shape [${m.rows}, ${m.cols}])`);
  if (m.cols === 0) throw new Error(`${name} has no feature columns (shape [${m.rows}, ${m.cols}])`);
  const bad = m.data.findIndex((v) => v === Infinity || v === -Infinity);
  if (bad >= 0) {
    throw new Error(`${name} has an infinite value ${m.data[bad] > 0 ? "inf" : "-inf"} in row ${Math.floor(bad / m.cols)}, ` +
      `column ${bad % m.cols} (NaN is allowed: it is mean-imputed)`);
  }
  return m;
}

function checkNumber(v, name) {
  throw new TypeError(`${name} must be a real numeric array, got a ${typeof v} (categorical or string columns are not supported)`);
}

function targets(y, rows, task) {
  const values = Array.from(y ?? []);
  if (!y || typeof y === "string" || values.some((v) => Array.isArray(v))) throw new Error("y_train must be 1-dimensional");
  if (values.length !== rows) throw new Error(`y_train has ${values.length} values but X_train has ${rows} rows`);
  const numeric = values.every((v) => typeof v === "number");
  if (task === "regression" && !numeric) throw new TypeError("y_train must be a real numeric array for task 'regression'");
  if (!numeric && !values.every((v) => typeof v === "string")) throw new TypeError("y_train must hold numeric or string class labels");
  if (numeric) {
    const row = values.findIndex((v) => !Number.isFinite(task === "regression" ? f32(v) : v));
    if (row >= 0) throw new Error(`y_train has a non-finite value ${values[row]} in row ${row}${task === "regression" ? " (as float32)" : ""}`);
    const frac = task === "regression" ? -1 : values.findIndex((v) => !Number.isInteger(v));
    if (frac >= 0) throw new Error(`y_train must hold class labels for task '${task}'; row ${frac} has the non-integer ${values[frac]}`);
  }
  return values;
}

function checkOptions(o) {
  if (!Number.isInteger(o.nEstimators)) throw new TypeError(`n_estimators must be an integer, got ${o.nEstimators}`);
  if (o.nEstimators < 1) throw new Error(`n_estimators must be at least 1, got ${o.nEstimators}`);
  for (const [name, value] of [["feat_shuffle_method", o.featShuffleMethod], ["class_shuffle_method", o.classShuffleMethod]]) {
    if (!SHUFFLE_METHODS.includes(value)) throw new Error(`${name} must be one of ${SHUFFLE_METHODS.join(", ")}, got ${value}`);
  }
  if (typeof o.outlierThreshold !== "number") throw new TypeError(`outlier_threshold must be a number, got ${o.outlierThreshold}`);
  if (!(Number.isFinite(o.outlierThreshold) && o.outlierThreshold > 0)) {
    throw new Error(`outlier_threshold must be positive and finite, got ${o.outlierThreshold}`);
  }
  if (o.randomState !== null && !Number.isInteger(o.randomState) && typeof o.randomState !== "bigint") {
    throw new TypeError(`random_state must be an integer or null, got ${o.randomState}`);
  }
  let methods = o.normMethods;
  if (!methods || !methods.length) methods = DEFAULT_NORM_METHODS;
  methods = typeof methods === "string" ? [methods] : [...methods];
  for (const m of methods) {
    if (!NORM_METHODS.includes(m)) throw new Error(`norm_methods may hold only none, power (the quantile and robust methods are not reproduced), got ${m}`);
  }
  return methods;
}

// --- fit: the plan ------------------------------------------------------------------------

/** The regressor's target scaling: {scaled: Float32Array, mean, scale} (sklearn StandardScaler on float32 y). */
export function scaleTargets(y) {
  const col = Float64Array.from(y, f32);
  const n = col.length;
  const mean = pairwiseSum(col, 0, n) / n;
  const temp = col.map((v) => v - mean);
  const correction = pairwiseSum(temp, 0, n);
  const sq = temp.map((v) => v * v);
  const variance = (pairwiseSum(sq, 0, n) - correction ** 2 / n) / n;
  const constant = variance <= n * EPS * variance + (n * mean * EPS) ** 2;
  const scale = constant ? 1.0 : Math.sqrt(variance);
  const [mean32, scale32] = [f32(mean), f32(scale)];
  return { scaled: Float32Array.from(col, (v) => f32(f32(v - mean32) / scale32)), mean, scale };
}

function encodeClasses(values, task, supportManyClasses) {
  const classes = [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (classes.length < 2) throw new Error(`y_train has a single class ${JSON.stringify(classes[0])}; classification needs at least 2`);
  if (task === "binary" && classes.length !== 2) throw new Error(`task 'binary' needs exactly 2 classes, y_train has ${classes.length}`);
  if (classes.length > MAX_CLASSES && !supportManyClasses) {
    throw new Error(`y_train has ${classes.length} classes, more than the ${MAX_CLASSES} the model supports natively, and support_many_classes is False`);
  }
  const rank = new Map(classes.map((c, i) => [c, i]));
  return { classes, encoded: Int32Array.from(values, (v) => rank.get(v)) };
}

/**
 * What TabICLClassifier.fit / TabICLRegressor.fit prepare, for float features: the plan
 * {task, nFeaturesIn, imputerMeans, features, pipelines (Map method → fit), methods,
 * featurePerms, classPerms, classes, yTrain, yMean, yScale, nMembers, nTrain, nClasses,
 * manyClasses}. Options (the wrappers' defaults): nEstimators 8, normMethods
 * ["none", "power"], featShuffleMethod "latin", classShuffleMethod "shift",
 * outlierThreshold 4, randomState 42, supportManyClasses true.
 */
export function fitMembers(xTrain, yTrain, task, options = {}) {
  if (!TASKS.includes(task)) throw new Error(`task must be one of ${TASKS.join(", ")}, got ${task}`);
  const o = {
    nEstimators: 8, normMethods: null, featShuffleMethod: "latin", classShuffleMethod: "shift",
    outlierThreshold: 4.0, randomState: 42, supportManyClasses: true, ...options,
  };
  const methods = checkOptions(o);
  let x = toMatrix(xTrain, "X_train");
  const y = targets(yTrain, x.rows, task);
  let classes = null;
  let encoded;
  let yMean = null;
  let yScale = null;
  if (task === "regression") {
    ({ scaled: encoded, mean: yMean, scale: yScale } = scaleTargets(y));
  } else {
    ({ classes, encoded } = encodeClasses(y, task, o.supportManyClasses));
  }
  const nFeaturesIn = x.cols;
  const imputerMeans = imputeMeans(x);
  x = impute(x, imputerMeans);
  const features = keptFeatures(x);
  x = selectColumns(x, features);
  const members = drawMembers(x.cols, classes && classes.length, o.nEstimators, methods, o.featShuffleMethod,
    o.classShuffleMethod, o.randomState);
  const used = members.map(([m]) => m);
  const pipelines = new Map([...new Set(used)].map((m) => [m, fitPipeline(x, m, o.outlierThreshold)]));
  return {
    task, nFeaturesIn, imputerMeans, features, pipelines, methods: used,
    featurePerms: members.map(([, f]) => f), classPerms: classes ? members.map(([, , c]) => c) : null,
    classes, yTrain: encoded, yMean, yScale, nMembers: members.length, nTrain: x.rows,
    nClasses: classes ? classes.length : null, manyClasses: Boolean(classes && classes.length > MAX_CLASSES),
  };
}

// --- predict: the members' inputs ------------------------------------------------------------

/**
 * Per member (plan order), the model's inputs: x (Float32Array, members × (nTrain + nTest) ×
 * F, train rows then test rows, member column j = kept column featurePerms[i][j]) and
 * yTrain (Float32Array, members × nTrain: the shown class classPerms[i][label], or the
 * scaled target); with nRows, nFeatures, nTrain, featurePerms, classPerms, methods.
 */
export function memberInputs(plan, xTest) {
  let x = toMatrix(xTest, "X_test");
  if (x.cols !== plan.nFeaturesIn) {
    throw new Error(`X_test has ${x.cols} feature columns but X_train had ${plan.nFeaturesIn}`);
  }
  x = selectColumns(impute(x, plan.imputerMeans), plan.features);
  const f = x.cols;
  const nRows = plan.nTrain + x.rows;
  const out = new Float32Array(plan.nMembers * nRows * f);
  for (const [method, fit] of plan.pipelines) {
    const test = transform(fit, x);
    plan.methods.forEach((m, i) => {
      if (m !== method) return;
      const perm = plan.featurePerms[i];
      for (let r = 0; r < nRows; r++) {
        const [src, row] = r < plan.nTrain ? [fit.xTrain.data, r] : [test.data, r - plan.nTrain];
        for (let j = 0; j < f; j++) out[(i * nRows + r) * f + j] = src[row * f + perm[j]];
      }
    });
  }
  const y = new Float32Array(plan.nMembers * plan.nTrain);
  for (let i = 0; i < plan.nMembers; i++) {
    for (let r = 0; r < plan.nTrain; r++) {
      y[i * plan.nTrain + r] = plan.classPerms ? plan.classPerms[i][plan.yTrain[r]] : plan.yTrain[r];
    }
  }
  return {
    x: out, yTrain: y, nMembers: plan.nMembers, nRows, nFeatures: f, nTrain: plan.nTrain, nTest: x.rows,
    featurePerms: plan.featurePerms, classPerms: plan.classPerms, methods: plan.methods,
  };
}

/** The members of each model call as the wrappers batch them: per method group, np.array_split into ⌈size/batchSize⌉. */
export function modelBatches(plan, batchSize = 8) {
  const batches = [];
  for (const method of new Set(plan.methods)) {
    const idx = plan.methods.flatMap((m, i) => (m === method ? [i] : []));
    const parts = Math.ceil(idx.length / (batchSize || idx.length));
    const [base, extra] = [Math.floor(idx.length / parts), idx.length % parts];
    for (let p = 0, at = 0; p < parts; p++) {
      const size = base + (p < extra ? 1 : 0);
      batches.push(idx.slice(at, at + size));
      at += size;
    }
  }
  return batches;
}

// --- after the model ----------------------------------------------------------------------

/** Members' outputs as {data: Float32Array, shape}: a flat array with `shape`, {data, shape}, or nested arrays. */
function outputsArray(outputs, plan, name, ndims, shape = null) {
  let data;
  if (outputs && !Array.isArray(outputs) && !ArrayBuffer.isView(outputs) && outputs.data) {
    ({ data, shape } = outputs);
  } else if (ArrayBuffer.isView(outputs)) {
    data = outputs;
  } else if (Array.isArray(outputs)) {
    shape = [];
    for (let level = outputs; Array.isArray(level) || ArrayBuffer.isView(level); level = level[0]) shape.push(level.length);
    data = outputs.flat(Infinity);
  }
  if (!data || !shape) throw new TypeError(`${name} must be a nested array, {data, shape}, or a typed array with its shape`);
  const ok = (ndims === null || shape.length === ndims || ndims.includes?.(shape.length)) && shape[0] === plan.nMembers;
  if (!ok || data.length !== shape.reduce((a, b) => a * b, 1)) {
    throw new Error(`${name} must have ${Array.isArray(ndims) ? ndims.join(" or ") : ndims} axes, the first of ${plan.nMembers} members, ` +
      `got shape [${shape.join(", ")}] (${data.length} values)`);
  }
  const out = Float32Array.from(data, Number);
  const bad = out.findIndex((v) => !Number.isFinite(v));
  if (bad >= 0) throw new Error(`${name} has a non-finite value ${out[bad]} at flat index ${bad}`);
  return { data: out, shape };
}

/** out[i][..., c] = outputs[i][..., classPerms[i][c]]: member i's columns in the original class order. */
export function unshift(data, shape, classPerms) {
  const [members, rows, c] = shape;
  const out = new Float32Array(data.length);
  for (let i = 0; i < members; i++) {
    for (let r = 0; r < rows; r++) {
      const at = (i * rows + r) * c;
      for (let k = 0; k < c; k++) out[at + k] = data[at + classPerms[i][k]];
    }
  }
  return out;
}

/**
 * predict_proba (Float32Array, nTest × C) from the members' outputs (plan order): members ×
 * nTest × C logits over each member's shifted classes (or probabilities with
 * averageLogits false). Un-shift, average in float32 member by member, softmax(avg / T),
 * then divide each row by its sum.
 */
export function aggregateProba(outputs, plan, { softmaxTemperature = SOFTMAX_TEMPERATURE, averageLogits = true, shape } = {}) {
  if (!plan.classPerms) throw new Error("aggregateProba needs a classification plan; this one is regression");
  const arr = outputsArray(outputs, plan, "outputs", 3, shape);
  const [members, rows, c] = arr.shape;
  if (c !== plan.nClasses) throw new Error(`outputs have ${c} classes on their last axis, the plan ${plan.nClasses}`);
  if (typeof softmaxTemperature !== "number" || !(Number.isFinite(softmaxTemperature) && softmaxTemperature > 0)) {
    throw new Error(`softmax_temperature must be positive and finite, got ${softmaxTemperature}`);
  }
  const aligned = unshift(arr.data, arr.shape, plan.classPerms);
  let avg = new Float32Array(rows * c);
  for (let i = 0; i < members; i++) {
    for (let k = 0; k < rows * c; k++) avg[k] = f32(avg[k] + aligned[i * rows * c + k]);
  }
  for (let k = 0; k < avg.length; k++) avg[k] = f32(avg[k] / members);
  if (averageLogits) avg = softmax(avg, c, softmaxTemperature);
  const out = new Float32Array(avg.length);
  for (let at = 0; at < avg.length; at += c) {
    const sum = pairwiseSum(avg, at, c, 1, f32);
    for (let k = 0; k < c; k++) out[at + k] = f32(avg[at + k] / sum);
  }
  return out;
}

/** float32((k + 1) / (n + 1)), k = 0 … n−1: the quantile levels of the raw outputs. */
export function defaultAlphaLevels(nQuantiles = NUM_QUANTILES) {
  return Float32Array.from({ length: nQuantiles }, (_, k) => (k + 1) / (nQuantiles + 1));
}

const logf = (x) => f32(Math.log(x));

/** The level-only parts of one tail's least-squares slope: centred log levels and their mean square. */
function tailLevels(values) {
  const k = values.length;
  const lvl = Float32Array.from(values, logf);
  const mean = f32(pairwiseSum(lvl, 0, k, 1, f32) / k);
  const lc = lvl.map((v) => f32(v - mean));
  const sq = lc.map((v) => f32(v * v));
  return { lc, denom: Math.max(f32(pairwiseSum(sq, 0, k, 1, f32) / k), f32(TOL)) };
}

function tailBeta(q, start, k, tail, sign) {
  const qs = q.subarray(start, start + k);
  const qMean = f32(pairwiseSum(qs, 0, k, 1, f32) / k);
  const prod = qs.map((v, i) => f32(f32(v - qMean) * tail.lc[i]));
  const beta = f32(f32(sign * f32(pairwiseSum(prod, 0, k, 1, f32) / k)) / tail.denom);
  return Math.min(Math.max(Math.abs(beta), f32(0.01)), f32(100));
}

/** The model's quantile distribution Q(α) (exponential tails) of one sorted row `q` at `alphas`, float32. */
export function quantileIcdf(q, alphas, levels, tails = null) {
  const n = q.length;
  const k = Math.min(TAIL_QUANTILES, Math.floor(n / 4));
  tails ??= {
    left: tailLevels(Array.from(levels.subarray(0, k), (v) => Math.max(v, f32(TOL)))),
    right: tailLevels(Array.from(levels.subarray(n - k), (v) => Math.max(f32(1 - v), f32(TOL)))),
  };
  const betaL = tailBeta(q, 0, k, tails.left, 1);
  const betaR = tailBeta(q, n - k, k, tails.right, -1);
  const [aL, aR] = [levels[0], levels[n - 1]];
  const [qL, qR] = [q[0], q[n - 1]];
  const bL = f32(qL - f32(betaL * logf(f32(Math.max(aL, TOL)))));
  const bR = f32(qR + f32(betaR * logf(f32(1 - Math.min(aR, 1 - TOL)))));
  return Float32Array.from(alphas, (alpha) => {
    if (alpha < aL) return f32(f32(betaL * logf(Math.max(alpha, f32(TOL)))) + bL);
    if (alpha > aR) return f32(f32(-betaR * logf(Math.max(f32(1 - alpha), f32(TOL)))) + bR);
    if (alpha >= aR) return qR;
    let lo = 0;
    let hi = n - 1;  // searchsorted(levels[:-1], alpha, side="right")
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (levels[mid] <= alpha) lo = mid + 1; else hi = mid;
    }
    const seg = Math.min(Math.max(lo - 1, 0), n - 2);
    const t = f32(f32(alpha - levels[seg]) / Math.max(f32(levels[seg + 1] - levels[seg]), f32(TOL)));
    return f32(q[seg] + f32(Math.min(Math.max(t, 0), 1) * f32(q[seg + 1] - q[seg])));
  });
}

function summaryOptions(n, { alphas = null, alphaLevels = null } = {}) {
  const levels = alphaLevels ? Float32Array.from(alphaLevels) : defaultAlphaLevels(n);
  if (levels.length !== n) throw new Error(`alpha_levels must have ${n} values, got ${levels.length}`);
  const a = alphas ?? DEFAULT_ALPHAS;
  if (!a.length || !Array.from(a).every((v) => v >= 0 && v <= 1)) {
    throw new Error(`alphas must be a non-empty list of levels in [0, 1], got [${Array.from(a).join(", ")}]`);
  }
  const k = Math.min(TAIL_QUANTILES, Math.floor(n / 4));
  const tails = {
    left: tailLevels(Array.from(levels.subarray(0, k), (v) => Math.max(v, f32(TOL)))),
    right: tailLevels(Array.from(levels.subarray(n - k), (v) => Math.max(f32(1 - v), f32(TOL)))),
  };
  return { levels, alphas: Float32Array.from(a), tails };
}

/**
 * TabICL.predict_stats of one output type from raw quantiles ({data, shape: [..., n]}):
 * {data: Float32Array, shape}. The rows are sorted first; "mean" / "variance" (ddof 1)
 * accumulate in float64; "median" is Q(0.5), "quantiles" Q at `alphas` (default 0.1 … 0.9).
 */
export function quantileSummary(raw, outputType = "mean", options = {}) {
  if (!OUTPUT_TYPES.includes(outputType)) throw new Error(`output_type must be one of ${OUTPUT_TYPES.join(", ")}, got ${outputType}`);
  const { data, shape } = raw;
  const n = shape[shape.length - 1];
  const rows = data.length / n;
  const { levels, alphas, tails } = summaryOptions(n, options);
  const width = { mean: 1, variance: 1, median: 1, quantiles: alphas.length, raw_quantiles: n }[outputType];
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    const q = Float32Array.from(data.subarray(r * n, (r + 1) * n)).sort();
    if (outputType === "mean" || outputType === "variance") {
      const mean = pairwiseSum(q, 0, n) / n;
      out[r] = outputType === "mean" ? mean : pairwiseSum(Float64Array.from(q, (v) => (v - mean) * (v - mean)), 0, n) / (n - 1);
    } else if (outputType === "raw_quantiles") {
      out.set(q, r * n);
    } else {
      out.set(quantileIcdf(q, outputType === "median" ? Float32Array.of(0.5) : alphas, levels, tails), r * width);
    }
  }
  return { data: out, shape: width === 1 && outputType !== "quantiles" ? shape.slice(0, -1) : [...shape.slice(0, -1), width] };
}

/**
 * The regressor's predict value from per-member statistics ({data, shape: [members, nTest(, k)]}):
 * each value v → v·fl32(scale) + fl32(mean) in float32, then the mean over the members.
 */
export function aggregateRegression(stats, plan) {
  if (plan.yScale === null || plan.yScale === undefined) throw new Error("aggregateRegression needs a regression plan; this one classifies");
  const arr = outputsArray(stats, plan, "stats", [2, 3]);
  const [scale, mean] = [f32(plan.yScale), f32(plan.yMean)];
  const scaled = arr.data.map((v) => f32(f32(v * scale) + mean));
  const inner = scaled.length / plan.nMembers;
  const sums = columnSums(scaled, plan.nMembers, inner, f32);
  return { data: Float32Array.from(sums, (s) => f32(s / plan.nMembers)), shape: arr.shape.slice(1) };
}

/**
 * TabICLRegressor.predict(X, outputType, alphas) from the members' raw quantiles (members ×
 * nTest × nQuantiles): {data, shape} for one output type, an object by type for a list.
 */
export function predictRegression(rawQuantiles, plan, outputType = "mean", options = {}) {
  const raw = outputsArray(rawQuantiles, plan, "raw_quantiles", 3, options.shape);
  const types = typeof outputType === "string" ? [outputType] : [...outputType];
  const out = Object.fromEntries(types.map((t) => [t, aggregateRegression(quantileSummary(raw, t, options), plan)]));
  return typeof outputType === "string" ? out[outputType] : out;
}
