// TabPFN v3's per-member preprocessing of a float feature matrix, as tabpfn 9.2.0 does it:
// the JavaScript twin of pkg/arenalite/models/tabpfn/preprocessing.py, step for step and
// name for name (docs/models.md, "TabPFN preprocessing and ensemble"): the modalities, the
// cleaning, then per member ±inf set aside, constant columns removed, the reshape
// (squashing scaler, quantile, Yeo-Johnson power, robust, none; originals appended or
// not), the categorical encoding, the SVD features, the SHA-256 row fingerprint (Web
// Crypto), the feature shuffle, ±inf written back, and the soft clip of the model input.
//
// float64 on the CPU as numpy's, with numpy's algorithms where round-off depends on them
// (nanpercentile's lerp, np.interp, np.around, the column sums' order). The truncated SVD
// is exact (a Jacobi eigendecomposition of XᵀX, not ARPACK) with scikit-learn's sign rule,
// so its features agree with Python's to round-off, not bit for bit; where a row's cells
// differ in their last bits, its fingerprint (a hash) may differ (fingerprintFlips counts).
//
// A matrix is {rows, cols, data: Float64Array}, row-major.
import { defaultRng } from "../numpy_random.js";
import { columnSums, impute, imputeMeans, standardScalerStats } from "../wrapper_preprocessing.js";
import { yeoJohnsonLambda, yeoJohnsonValue } from "../yeo_johnson.js";
import { ndtri } from "./special.js";

export const NUMERICAL = 0;
export const CATEGORICAL = 1;
export const CONSTANT = 2;
export const MIN_SAMPLES_FOR_CATEGORICAL = 100;
export const MAX_UNIQUE_FOR_CATEGORICAL = 30;
export const MIN_UNIQUE_FOR_NUMERICAL = 4;
export const SQUASH_MAX_ABS = 3.0;
export const APPEND_TO_ORIGINAL_THRESHOLD = 500;
export const QUANTILE_DIVISORS = Object.freeze({
  quantile_uni: 5, quantile_norm: 5, quantile_uni_coarse: 10, quantile_norm_coarse: 10, quantile_uni_fine: 1, quantile_norm_fine: 1,
});
export const POWER_TRANSFORMS = Object.freeze(["safepower", "power"]);
export const RESHAPE_TRANSFORMS = Object.freeze(["squashing_scaler_default", ...Object.keys(QUANTILE_DIVISORS), ...POWER_TRANSFORMS, "robust", "none"]);
export const QUANTILE_SUBSAMPLE = 100_000;
export const BOUNDS_THRESHOLD = 1e-7;
export const CATEGORICAL_ENCODINGS = Object.freeze(["ordinal_very_common_categories_shuffled", "numeric", "none"]);
export const MIN_CATEGORY_COUNT = 10;
export const HASH_DECIMALS = 12;
export const MAX_COLLISION_RETRIES = 100;
export const SVD_DIVISORS = Object.freeze({ svd: 2, svd_quarter_components: 4 });
export const OUTLIER_STD = 12.0;
const EPS = 2 ** -52;
const TINY = 2.2250738585072014e-308;
/** ndtri(0.75) − ndtri(0.25): RobustScaler(unit_variance=True)'s divisor. */
const ROBUST_ADJUST = 1.3489795003921634;
const f32 = Math.fround;
const pyList = (a) => `(${a.map((x) => `'${x}'`).join(", ")})`;

// --- matrices -------------------------------------------------------------------------------

export const matrix = (rows, cols, data = new Float64Array(rows * cols)) => ({ rows, cols, data });

/** Column j as a Float64Array. */
export function column(m, j) {
  const out = new Float64Array(m.rows);
  for (let r = 0; r < m.rows; r++) out[r] = m.data[r * m.cols + j];
  return out;
}

/** The columns `index` (in that order) of m. */
export function take(m, index) {
  const out = matrix(m.rows, index.length);
  for (let r = 0; r < m.rows; r++) {
    for (let c = 0; c < index.length; c++) out.data[r * index.length + c] = m.data[r * m.cols + index[c]];
  }
  return out;
}

/** Matrices side by side (same rows). */
export function hstack(parts) {
  const rows = parts[0].rows;
  const cols = parts.reduce((a, p) => a + p.cols, 0);
  const out = matrix(rows, cols);
  let at = 0;
  for (const p of parts) {
    for (let r = 0; r < rows; r++) for (let c = 0; c < p.cols; c++) out.data[r * cols + at + c] = p.data[r * p.cols + c];
    at += p.cols;
  }
  return out;
}

const range = (n) => Array.from({ length: n }, (_, i) => i);
const flatnonzero = (mask) => mask.flatMap((b, i) => (b ? [i] : []));

/** Sorted non-NaN values of a column (np.sort, NaN dropped). */
function sortedFinite(values) {
  const out = Float64Array.from(values.filter((v) => !Number.isNaN(v)));
  return out.sort();
}

/** np.unique of the non-NaN values (sorted; -0.0 and 0.0 one value). */
function uniqueValues(values) {
  const s = sortedFinite(values);
  const out = [];
  for (let i = 0; i < s.length; i++) if (i === 0 || s[i] !== s[i - 1]) out.push(s[i]);
  return Float64Array.from(out);
}

/** np.searchsorted(values, x) (side left). */
function searchsorted(values, x) {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (values[mid] < x) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// --- numpy's percentiles and interp ----------------------------------------------------------

/** numpy's _lerp. */
function lerp(a, b, t) {
  const d = b - a;
  return t >= 0.5 ? b - d * (1 - t) : a + d * t;
}

/**
 * np.nanpercentile(values, qs) of one column ("linear"): `fractions` are q/100 as numpy
 * computes them. NaN for an all-NaN column.
 */
export function nanQuantiles(values, fractions) {
  const s = sortedFinite(values);
  const n = s.length;
  return fractions.map((q) => {
    if (n === 0) return NaN;
    const virtual = (n - 1) * q;
    let prev = Math.floor(virtual);
    let next = prev + 1;
    if (virtual >= n - 1) { prev = n - 1; next = n - 1; } else if (virtual < 0) { prev = 0; next = 0; }
    const gamma = virtual - (virtual >= n - 1 ? -1 : prev);
    return lerp(s[prev], s[next], gamma);
  });
}

/** np.linspace(0, 1, q) · 100 / 100, as nanpercentile(x, linspace(0, 1, q) * 100) sees it. */
export function quantileFractions(q) {
  const step = 1 / (q - 1);
  return range(q).map((i) => {
    const ref = q > 1 && i === q - 1 ? 1 : i * (q > 1 ? step : 0);
    return (ref * 100) / 100;
  });
}

/** np.interp(x, xp, fp) (xp ascending), numpy's compiled algorithm. */
export function interp(x, xp, fp) {
  const n = xp.length;
  if (Number.isNaN(x)) return NaN;
  if (x > xp[n - 1]) return fp[n - 1];
  if (x < xp[0]) return fp[0];
  let lo = 0;
  let hi = n;
  while (lo < hi) {  // j: the last index with xp[j] <= x
    const mid = (lo + hi) >> 1;
    if (xp[mid] <= x) lo = mid + 1; else hi = mid;
  }
  const j = lo - 1;
  if (j === n - 1) return fp[j];
  if (xp[j] === x) return fp[j];
  const slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  let out = slope * (x - xp[j]) + fp[j];
  if (Number.isNaN(out)) {
    out = slope * (x - xp[j + 1]) + fp[j + 1];
    if (Number.isNaN(out) && fp[j] === fp[j + 1]) out = fp[j];
  }
  return out;
}

// --- modalities and cleaning ------------------------------------------------------------------

/** Distinct values per column, NaN counted once as a value (nunique(dropna=False)). */
export function countDistinct(m) {
  return range(m.cols).map((j) => {
    const c = column(m, j);
    const finite = uniqueValues(c).length;
    return finite + (c.some((v) => Number.isNaN(v)) ? 1 : 0);
  });
}

/** Each column's modality code (NUMERICAL, CATEGORICAL, CONSTANT), as preprocessing.modalities. */
export function modalities(xTrain, categoricalIndices = null, { minSamples = MIN_SAMPLES_FOR_CATEGORICAL,
  maxUniqueForCategory = MAX_UNIQUE_FOR_CATEGORICAL, minUniqueForNumerical = MIN_UNIQUE_FOR_NUMERICAL } = {}) {
  const nUnique = countDistinct(xTrain);
  const declared = new Set((categoricalIndices ?? []).map(Number));
  const bigEnough = xTrain.rows > minSamples;
  return nUnique.map((n, j) => {
    if (n <= 1 && !declared.has(j)) return CONSTANT;
    if ((declared.has(j) && n <= maxUniqueForCategory) || (!declared.has(j) && bigEnough && n < minUniqueForNumerical)) return CATEGORICAL;
    return NUMERICAL;
  });
}

function encodeOrdinal(fit, x) {
  for (const [j, values] of fit.categories) {
    for (let r = 0; r < x.rows; r++) {
      const v = x.data[r * x.cols + j];
      if (Number.isNaN(v)) continue;
      const pos = searchsorted(values, v);
      x.data[r * x.cols + j] = pos < values.length && values[pos] === v ? pos : -1;
    }
  }
  return x;
}

/** clean_data fitted on the training rows: [fit, the rows cleaned (a new matrix)]. */
export function fitClean(xTrain, modality) {
  const categories = new Map();
  const constants = new Map();
  modality.forEach((code, j) => {
    if (code === CATEGORICAL) categories.set(j, uniqueValues(column(xTrain, j)));
    if (code === CONSTANT) constants.set(j, xTrain.data[j]);
  });
  const fit = { categories, constants };
  return [fit, encodeOrdinal(fit, matrix(xTrain.rows, xTrain.cols, Float64Array.from(xTrain.data)))];
}

/** clean_data_transform of new rows (a new matrix): constants, then ordinal codes. */
export function clean(fit, x) {
  const out = matrix(x.rows, x.cols, Float64Array.from(x.data));
  for (const [j, value] of fit.constants) for (let r = 0; r < x.rows; r++) out.data[r * x.cols + j] = value;
  return encodeOrdinal(fit, out);
}

// --- ±inf and constant columns -----------------------------------------------------------------

/** [a copy with ±inf → NaN, the ±inf values (0 elsewhere), the columns whose ±inf are not all equal]. */
export function setAsideInfs(x) {
  const out = matrix(x.rows, x.cols, Float64Array.from(x.data));
  const infs = new Float64Array(x.data.length);
  const forced = new Array(x.cols).fill(false);
  const anyInf = new Array(x.cols).fill(false);
  for (let i = 0; i < out.data.length; i++) {
    const v = out.data[i];
    if (v === Infinity || v === -Infinity) {
      infs[i] = v;
      out.data[i] = NaN;
      anyInf[i % x.cols] = true;
    }
  }
  for (let j = 0; j < x.cols; j++) {
    if (!anyInf[j]) continue;
    for (let r = 1; r < x.rows; r++) if (infs[r * x.cols + j] !== infs[j]) { forced[j] = true; break; }
  }
  return [out, infs, forced];
}

/** Write the set-aside ±inf back (in place) into each output column from its source (< 0: none). */
export function restoreInfs(x, infs, inCols, sources) {
  sources.forEach((src, j) => {
    if (src < 0) return;
    for (let r = 0; r < x.rows; r++) {
      const v = infs[r * inCols + src];
      if (v === Infinity || v === -Infinity) x.data[r * x.cols + j] = v;
    }
  });
  return x;
}

/** RemoveConstantFeaturesStep: booleans per column. */
export function keptFeatures(x, forced = null) {
  const keep = range(x.cols).map((j) => {
    let same = 0;
    let allNan = true;
    for (let r = 0; r < x.rows; r++) {
      const v = x.data[r * x.cols + j];
      if (v === x.data[j]) same++;
      if (!Number.isNaN(v)) allNan = false;
    }
    return same / x.rows < 1.0 && !allNan;
  }).map((k, j) => k || Boolean(forced?.[j]));
  if (!keep.some(Boolean)) throw new Error("All features are constant and would have been removed");
  return keep;
}

// --- the reshape transforms -------------------------------------------------------------------

const nanMin = (c) => c.reduce((a, v) => (Number.isNaN(v) ? a : Math.min(a, v)), Infinity);
const nanMax = (c) => c.reduce((a, v) => (Number.isNaN(v) ? a : Math.max(a, v)), -Infinity);

/** SquashingScaler fitted on the finite values (±inf → NaN). */
export function fitSquashing(x, maxAbs = SQUASH_MAX_ABS) {
  const fit = { center: [], scale: [], robust: [], minmax: [], zero: [], maxAbs };
  for (let j = 0; j < x.cols; j++) {
    const c = column(x, j).map((v) => (Number.isFinite(v) ? v : NaN));
    let lo = nanMin(c);
    let hi = nanMax(c);
    if (lo === Infinity) { lo = NaN; hi = NaN; }
    const [q25, q50, q75] = nanQuantiles(c, [0.25, 0.5, 0.75]);
    const zero = hi === lo;
    const minmax = q25 === q75 && !zero;
    const robust = !(minmax || zero);
    fit.center.push(q50);
    fit.scale.push(robust ? q75 - q25 : 2.0 / (hi - lo + TINY));
    fit.robust.push(robust);
    fit.minmax.push(minmax);
    fit.zero.push(zero);
  }
  return fit;
}

/** The fitted squashing scaler on rows. */
export function squash(fit, x) {
  const out = matrix(x.rows, x.cols);
  const b = fit.maxAbs;
  for (let i = 0; i < x.data.length; i++) {
    const j = i % x.cols;
    const v = x.data[i];
    if (v === Infinity) { out.data[i] = b; continue; }
    if (v === -Infinity) { out.data[i] = -b; continue; }
    let z = v;
    if (fit.robust[j]) z = (v - fit.center[j]) / fit.scale[j];
    else if (fit.minmax[j]) z = (v - fit.center[j]) * fit.scale[j];
    if (fit.zero[j] && Number.isFinite(z)) z = 0.0;
    out.data[i] = z / Math.sqrt(1 + (z / b) ** 2);
  }
  return out;
}

/** A quantile preset's quantile count. */
export function quantileCount(nSamples, transformName = "quantile_uni_coarse") {
  const divisor = QUANTILE_DIVISORS[transformName];
  const user = divisor === 1 ? nSamples : Math.max(Math.floor(nSamples / divisor), 2);
  return Math.max(1, Math.min(user, nSamples, Math.floor(QUANTILE_SUBSAMPLE * 0.2)));
}

/** sklearn QuantileTransformer's references per column (Q × T). */
export function fitQuantiles(x, transformName = "quantile_uni_coarse") {
  if (x.rows > QUANTILE_SUBSAMPLE) {
    throw new Error(`${x.rows} training rows: past ${QUANTILE_SUBSAMPLE} sklearn's QuantileTransformer subsamples them, not ported yet`);
  }
  const fractions = quantileFractions(quantileCount(x.rows, transformName));
  const out = matrix(fractions.length, x.cols);
  for (let j = 0; j < x.cols; j++) {
    nanQuantiles(column(x, j), fractions).forEach((v, i) => { out.data[i * x.cols + j] = v; });
  }
  return out;
}

const CLIP_MIN = ndtri(BOUNDS_THRESHOLD - EPS);
const CLIP_MAX = ndtri(1 - (BOUNDS_THRESHOLD - EPS));

/** The quantile transform (uniform, or `normal`) per column; NaN kept. */
export function quantileTransform(quantiles, x, normal = false) {
  const Q = quantiles.rows;
  const refs = range(Q).map((i) => (Q > 1 && i === Q - 1 ? 1 : i * (Q > 1 ? 1 / (Q - 1) : 0)));
  const negRefs = refs.map((r) => -r).reverse();
  const out = matrix(x.rows, x.cols, Float64Array.from(x.data));
  for (let j = 0; j < x.cols; j++) {
    const q = column(quantiles, j);
    const negQ = Array.from(q, (v) => -v).reverse();
    for (let r = 0; r < x.rows; r++) {
      const i = r * x.cols + j;
      const v = x.data[i];
      if (Number.isNaN(v)) continue;
      const lower = normal ? v - BOUNDS_THRESHOLD < q[0] : v === q[0];
      const upper = normal ? v + BOUNDS_THRESHOLD > q[Q - 1] : v === q[Q - 1];
      let t = 0.5 * (interp(v, q, refs) - interp(-v, negQ, negRefs));
      if (upper) t = 1;
      if (lower) t = 0;
      out.data[i] = normal ? Math.min(Math.max(ndtri(t), CLIP_MIN), CLIP_MAX) : t;
    }
  }
  return out;
}

/** ±inf → NaN (a new matrix). */
const finite = (m) => matrix(m.rows, m.cols, m.data.map((v) => (v === Infinity || v === -Infinity ? NaN : v)));

function safeStandard(x, fit) {
  let z = finite(x);
  const pre = fit ? fit.preMeans : imputeMeans(z);
  z = impute(z, pre);
  const { mean, scale } = fit ? fit : standardScalerStats(z);
  z = finite(matrix(z.rows, z.cols, z.data.map((v, i) => (v - mean[i % z.cols]) / scale[i % z.cols])));
  const post = fit ? fit.postMeans : imputeMeans(z);
  return { out: impute(z, post), preMeans: pre, mean, scale, postMeans: post };
}

/** Fit safepower / power on training rows: [fit, the rows as fit_transform gives them]. */
export function fitPower(x) {
  const n = x.rows;
  const sums = columnSums(x.data, n, x.cols);
  const mean = sums.map((s) => s / n);
  const sq = x.data.map((v, i) => (v - mean[i % x.cols]) ** 2);
  const variance = columnSums(sq, n, x.cols).map((s) => s / n);
  const constant = Array.from(variance, (v, j) => v <= n * EPS * v + (n * mean[j] * EPS) ** 2);
  const out = matrix(n, x.cols, Float64Array.from(x.data));
  const lambdas = new Float64Array(x.cols).fill(1);
  for (let j = 0; j < x.cols; j++) {
    if (constant[j]) continue;
    lambdas[j] = yeoJohnsonLambda(column(out, j).filter((v) => !Number.isNaN(v)));
    for (let r = 0; r < n; r++) out.data[r * x.cols + j] = yeoJohnsonValue(out.data[r * x.cols + j], lambdas[j]);
  }
  const s = safeStandard(out, null);
  return [{ lambdas, constant, preMeans: s.preMeans, mean: s.mean, scale: s.scale, postMeans: s.postMeans }, s.out];
}

/** The fitted power preset on new rows (every column at its λ, then the safe scaler). */
export function powerTransform(fit, x) {
  const out = matrix(x.rows, x.cols, x.data.map((v, i) => yeoJohnsonValue(v, fit.lambdas[i % x.cols])));
  return safeStandard(out, fit).out;
}

function nanMedian(values) {
  const s = sortedFinite(values);
  const n = s.length;
  if (!n) return NaN;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/** RobustScaler(unit_variance=True) fitted on training rows. */
export function fitRobust(x) {
  const center = [];
  const scale = [];
  for (let j = 0; j < x.cols; j++) {
    const c = column(x, j);
    center.push(nanMedian(c));
    const [q25, q75] = nanQuantiles(c, [0.25, 0.75]);
    let s = q75 - q25;
    if (s < 10 * EPS) s = 1.0;
    scale.push(s / ROBUST_ADJUST);
  }
  return { center, scale };
}

export function robustTransform(fit, x) {
  return matrix(x.rows, x.cols, x.data.map((v, i) => (v - fit.center[i % x.cols]) / fit.scale[i % x.cols]));
}

/** The step's append_to_original decision. */
export function appendOriginal(setting, nFeatures, maxFeaturesPerEstimator) {
  if (setting === "auto") return nFeatures < APPEND_TO_ORIGINAL_THRESHOLD && nFeatures <= maxFeaturesPerEstimator / 2;
  return Boolean(setting);
}

/** Fit ReshapeFeatureDistributionsStep: [fit, the transformed training rows]. */
export function fitReshape(x, categorical, transformName, applyToCategorical, append = false) {
  if (!RESHAPE_TRANSFORMS.includes(transformName)) {
    throw new Error(`reshape transform '${transformName}' is not ported yet (only ${pyList(RESHAPE_TRANSFORMS)})`);
  }
  const cats = flatnonzero(categorical);
  const nums = flatnonzero(categorical.map((c) => !c));
  const transformed = applyToCategorical ? [...cats, ...nums] : nums;
  let passthrough;
  let categoricalOut;
  if (append) [passthrough, categoricalOut] = [range(x.cols), cats];
  else if (applyToCategorical) [passthrough, categoricalOut] = [[], []];
  else [passthrough, categoricalOut] = [cats, range(cats.length)];
  const fit = { transformName, passthrough, transformed, categoricalOut, squash: null, quantiles: null, power: null, robust: null };
  let moved = take(x, transformed);
  if (transformed.length) {
    if (transformName === "squashing_scaler_default") fit.squash = fitSquashing(moved);
    else if (Object.hasOwn(QUANTILE_DIVISORS, transformName)) fit.quantiles = fitQuantiles(moved, transformName);
    else if (POWER_TRANSFORMS.includes(transformName)) [fit.power, moved] = fitPower(moved);
    else if (transformName === "robust") fit.robust = fitRobust(moved);
  }
  fit.sources = [...passthrough, ...transformed];
  if (fit.power === null) return [fit, reshape(fit, x)];
  return [fit, hstack([take(x, passthrough), moved])];
}

/** The fitted step on rows: [passthrough columns, transformed columns]. */
export function reshape(fit, x) {
  let moved = take(x, fit.transformed);
  if (fit.squash) moved = squash(fit.squash, moved);
  if (fit.quantiles) moved = quantileTransform(fit.quantiles, moved, fit.transformName.includes("_norm"));
  if (fit.power) moved = powerTransform(fit.power, moved);
  if (fit.robust) moved = robustTransform(fit.robust, moved);
  return hstack([take(x, fit.passthrough), moved]);
}

// --- the categorical encoding ---------------------------------------------------------------------

/** The categorical columns the package encodes (every value ≥ 10 times, fewer than rows // 10 values). */
export function veryCommonCategoricals(x, categorical) {
  return categorical.filter((j) => {
    const c = column(x, j);
    const counts = new Map();
    for (const v of c) {
      const key = Number.isNaN(v) ? "nan" : v === 0 ? 0 : v;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return x.rows > 0 && Math.min(...counts.values()) >= MIN_CATEGORY_COUNT && counts.size < Math.floor(x.rows / 10);
  });
}

/** Fit EncodeCategoricalFeaturesStep: [fit or null, the encoded rows]. */
export function fitEncode(x, categorical, name, seed) {
  if (!CATEGORICAL_ENCODINGS.includes(name)) {
    throw new Error(`categorical encoding '${name}' is not ported yet (only ${pyList(CATEGORICAL_ENCODINGS)})`);
  }
  if (name !== CATEGORICAL_ENCODINGS[0]) return [null, x];
  const columns = veryCommonCategoricals(x, categorical);
  if (!columns.length) return [null, x];
  const rng = defaultRng(seed);
  const categories = [];
  const perms = [];
  for (const j of columns) {
    const c = column(x, j);
    const values = uniqueValues(c);
    categories.push(values);
    perms.push(rng.permutation(values.length + (c.some((v) => Number.isNaN(v)) ? 1 : 0)));
  }
  const fit = { columns, categories, perms };
  return [fit, encode(fit, x)];
}

/** The encoded columns first, then the rest in order. */
export function encodeSources(fit, nFeatures) {
  const rest = range(nFeatures).filter((j) => !fit.columns.includes(j));
  return [...fit.columns, ...rest];
}

/** The fitted encoding on rows. */
export function encode(fit, x) {
  if (!fit) return x;
  const out = take(x, encodeSources(fit, x.cols));
  fit.categories.forEach((values, k) => {
    const perm = fit.perms[k];
    for (let r = 0; r < out.rows; r++) {
      const i = r * out.cols + k;
      const v = out.data[i];
      const pos = searchsorted(values, v);
      out.data[i] = !Number.isNaN(v) && pos < values.length && values[pos] === v ? perm[pos] : NaN;
    }
  });
  return out;
}

// --- the row fingerprint ------------------------------------------------------------------------

/** np.rint: round half to even, the sign kept. */
function rint(y) {
  if (!Number.isFinite(y)) return y;
  let r = Math.round(y);
  if (r - y === 0.5 && r % 2 !== 0) r -= 1;
  return r === 0 && (y < 0 || Object.is(y, -0)) ? -0 : r;
}

/** np.around(x, 12). */
export const around12 = (x) => rint(x * 1e12) / 1e12;

const TWO64 = 2 ** 64;

/** (h & (2⁶⁴ − 1)) / (2⁶⁴ − 1) as Python divides the ints (correctly rounded). */
function hashFraction(low) {
  if (low < 2n ** 53n) return Number(low) / TWO64;
  const shift = BigInt(low.toString(2).length - 53);
  const half = 1n << (shift - 1n);
  const rem = low & ((1n << shift) - 1n);
  let top = low >> shift;
  if (rem >= half) top += 1n;  // v/(2⁶⁴−1) lies just above v/2⁶⁴: a tie rounds up
  return (Number(top) * 2 ** Number(shift)) / TWO64;
}

const subtle = () => globalThis.crypto?.subtle ?? (() => { throw new Error("TabPFN's row fingerprint needs Web Crypto (globalThis.crypto.subtle)"); })();

async function rowHash(bytes, salt) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setBigUint64(bytes.length - 8, BigInt(salt), true);
  const digest = new Uint8Array(await subtle().digest("SHA-256", bytes));
  let low = 0n;
  for (let k = 24; k < 32; k++) low = (low << 8n) | BigInt(digest[k]);
  return hashFraction(low);
}

function rowBytes(x, r) {
  const bytes = new Uint8Array(x.cols * 8 + 8);
  const view = new DataView(bytes.buffer);
  for (let c = 0; c < x.cols; c++) {
    const v = around12(x.data[r * x.cols + c]);
    if (Number.isNaN(v)) view.setUint32(c * 8 + 4, 0x7ff80000, true);  // numpy's NaN
    else view.setFloat64(c * 8, v, true);
  }
  return bytes;
}

/**
 * AddFingerprintFeaturesStep's column (Float64Array of x.rows): per row the low 64 bits of
 * SHA-256(the row's float64 bytes after np.around(·, 12) ‖ salt as 8 little-endian bytes)
 * over 2⁶⁴ − 1, the salt `nCells`; training rows rehash a repeated hash with salt + 1, + 2, …
 */
export async function fingerprint(x, nCells, isTest) {
  const out = new Float64Array(x.rows);
  if (isTest) {
    for (let r = 0; r < x.rows; r++) out[r] = await rowHash(rowBytes(x, r), nCells);
    return out;
  }
  const seen = new Set();
  const counter = new Map();
  for (let r = 0; r < x.rows; r++) {
    const row = rowBytes(x, r);
    const base = await rowHash(row, nCells);
    let add = counter.get(base) ?? 0;
    let h = add === 0 ? base : await rowHash(row, nCells + add);
    let allNan = true;
    for (let c = 0; c < x.cols; c++) if (!Number.isNaN(x.data[r * x.cols + c])) allNan = false;
    let retries = 0;
    while (seen.has(h) && !allNan) {
      add += 1;
      retries += 1;
      if (retries > MAX_COLLISION_RETRIES) throw new Error(`fingerprint collision not resolved for row ${r}`);
      h = await rowHash(row, nCells + add);
    }
    out[r] = h;
    seen.add(h);
    counter.set(base, add + 1);
  }
  return out;
}

/** ShuffleFeaturesStep's column order. */
export function featureOrder(method, nFeatures, shift, seed) {
  if (method === "shuffle") return Array.from(defaultRng(seed).permutation(nFeatures));
  if (method === "rotate") return range(nFeatures).map((i) => (((i - shift) % nFeatures) + nFeatures) % nFeatures);
  if (method === null || method === undefined) return range(nFeatures);
  throw new Error(`unknown feature shift method '${method}'`);
}

// --- the SVD features ------------------------------------------------------------------------------

/** get_svd_n_components. */
export function svdComponents(name, nSamples, nFeatures) {
  if (!Object.hasOwn(SVD_DIVISORS, name)) throw new Error(`unknown global transformer '${name}' (only ('svd', 'svd_quarter_components'))`);
  return Math.max(1, Math.min(Math.floor(nSamples / 10) + 1, Math.floor(nFeatures / SVD_DIVISORS[name])));
}

/** The safe StandardScaler(with_mean=False) on Fortran-ordered rows; fitted when `fit` is null. */
function scaled(fit, x) {
  let z = finite(x);
  const pre = fit ? fit.preMeans : imputeMeans(z, true);
  z = impute(z, pre);
  const scale = fit ? fit.scale : standardScalerStats(z, true).scale;
  z = finite(matrix(z.rows, z.cols, z.data.map((v, i) => v / scale[i % z.cols])));
  const post = fit ? fit.postMeans : imputeMeans(z, true);
  return { out: impute(z, post), preMeans: pre, scale, postMeans: post };
}

/** Eigenvalues (descending) and eigenvectors (rows) of a symmetric F × F matrix (cyclic Jacobi). */
export function symmetricEigen(a, F) {
  const A = Float64Array.from(a);
  const V = new Float64Array(F * F);
  for (let i = 0; i < F; i++) V[i * F + i] = 1;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    let diag = 0;
    for (let p = 0; p < F; p++) {
      diag += A[p * F + p] ** 2;
      for (let q = p + 1; q < F; q++) off += A[p * F + q] ** 2;
    }
    if (off <= 1e-36 * diag || off === 0) break;
    for (let p = 0; p < F - 1; p++) {
      for (let q = p + 1; q < F; q++) {
        const apq = A[p * F + q];
        if (apq === 0) continue;
        const theta = (A[q * F + q] - A[p * F + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < F; k++) {
          const akp = A[k * F + p];
          const akq = A[k * F + q];
          A[k * F + p] = c * akp - s * akq;
          A[k * F + q] = s * akp + c * akq;
        }
        for (let k = 0; k < F; k++) {
          const apk = A[p * F + k];
          const aqk = A[q * F + k];
          A[p * F + k] = c * apk - s * aqk;
          A[q * F + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < F; k++) {
          const vkp = V[k * F + p];
          const vkq = V[k * F + q];
          V[k * F + p] = c * vkp - s * vkq;
          V[k * F + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = range(F).sort((i, j) => A[j * F + j] - A[i * F + i]);
  return { values: order.map((i) => A[i * F + i]), vectors: order.map((i) => Float64Array.from(range(F), (k) => V[k * F + i])) };
}

/**
 * Fit AddSVDFeaturesStep (null below 2 columns): the top-k right singular vectors of the
 * scaled rows (exact; Python's ARPACK run agrees to round-off where the spectrum is not
 * degenerate), sign-flipped so each row's largest |entry| is positive (svd_flip).
 */
export function fitSvd(x, name) {
  const { rows: n, cols: F } = x;
  if (F < 2) return null;
  const s = scaled(null, x);
  const k = svdComponents(name, n, F);
  const gram = new Float64Array(F * F);
  const colsOf = range(F).map((j) => column(s.out, j));
  for (let p = 0; p < F; p++) {
    for (let q = p; q < F; q++) {
      let acc = 0;
      const a = colsOf[p];
      const b = colsOf[q];
      for (let r = 0; r < n; r++) acc += a[r] * b[r];
      gram[p * F + q] = acc;
      gram[q * F + p] = acc;
    }
  }
  const { vectors } = symmetricEigen(gram, F);
  const components = vectors.slice(0, k).map((v) => {
    let at = 0;
    for (let i = 1; i < F; i++) if (Math.abs(v[i]) > Math.abs(v[at])) at = i;
    const sign = Math.sign(v[at]) || 0;
    return v.map((e) => e * sign);
  });
  return { preMeans: s.preMeans, scale: s.scale, postMeans: s.postMeans, components };
}

/** The SVD features of rows (n × K): scaled rows @ components.T. */
export function svdFeatures(fit, x) {
  if (!fit) return matrix(x.rows, 0);
  const z = scaled(fit, x).out;
  const K = fit.components.length;
  const out = matrix(x.rows, K);
  for (let r = 0; r < x.rows; r++) {
    for (let k = 0; k < K; k++) {
      const comp = fit.components[k];
      let acc = 0;
      for (let j = 0; j < x.cols; j++) acc += z.data[r * x.cols + j] * comp[j];
      out.data[r * K + k] = acc;
    }
  }
  return out;
}

// --- a member's pipeline -------------------------------------------------------------------------

/** Each output column's column in the cleaned input (−1: an SVD or fingerprint feature). */
export function memberSources(fit) {
  const keptIdx = flatnonzero(fit.kept);
  let src = fit.reshape.sources.map((i) => keptIdx[i]);
  if (fit.encode) src = encodeSources(fit.encode, src.length).map((i) => src[i]);
  const k = (fit.svd ? fit.svd.components.length : 0) + (fit.nCells !== null ? 1 : 0);
  src = [...src, ...new Array(k).fill(-1)];
  return fit.order ? fit.order.map((i) => src[i]) : src;
}

/** The output's categorical columns (the soft clip leaves them alone). */
export function memberCategorical(fit) {
  let cats;
  if (fit.encode) cats = range(fit.encode.columns.length);
  else if (fit.encoding === "numeric") cats = fit.reshape.categoricalOut;
  else cats = [];
  if (!fit.order) return cats;
  return flatnonzero(fit.order.map((o) => cats.includes(o)));
}

/**
 * A member's CPU pipeline on cleaned training rows (preprocessing.fit_member): resolves to
 * [fit, the member's training rows (float64)].
 */
export async function fitMember(xTrain, modality, transformName, categoricalName, seed, {
  appendOriginalSetting = false, maxFeaturesPerEstimator = 500, globalTransformerName = null,
  addFingerprint = false, shuffle = false, shiftMethod = "shuffle", shift = 0,
} = {}) {
  const [x, infs, forced] = setAsideInfs(xTrain);
  const kept = keptFeatures(x, forced);
  const keptIdx = flatnonzero(kept);
  const append = appendOriginal(appendOriginalSetting, keptIdx.length, maxFeaturesPerEstimator);
  const [rs, reshaped] = fitReshape(take(x, keptIdx), keptIdx.map((j) => modality[j] === CATEGORICAL), transformName,
    categoricalName === "numeric", append);
  const [enc, encoded] = fitEncode(reshaped, rs.categoricalOut, categoricalName, seed);
  let out = encoded;
  let sv = null;
  if (globalTransformerName !== null && globalTransformerName !== "None") {
    sv = fitSvd(out, globalTransformerName);
    out = hstack([out, svdFeatures(sv, out)]);
  }
  let nCells = null;
  if (addFingerprint) {
    nCells = out.rows * out.cols;
    out = hstack([out, matrix(out.rows, 1, await fingerprint(out, nCells, false))]);
  }
  const order = shuffle ? featureOrder(shiftMethod, out.cols, shift, seed) : null;
  if (order) out = take(out, order);
  const fit = { kept, reshape: rs, encode: enc, svd: sv, nCells, order, encoding: categoricalName };
  return [fit, restoreInfs(out, infs, xTrain.cols, memberSources(fit))];
}

/** The fitted member steps on new (cleaned) rows. */
export async function transformMember(fit, xIn) {
  const [x, infs] = setAsideInfs(xIn);
  let out = encode(fit.encode, reshape(fit.reshape, take(x, flatnonzero(fit.kept))));
  if (fit.svd) out = hstack([out, svdFeatures(fit.svd, out)]);
  if (fit.nCells !== null) out = hstack([out, matrix(out.rows, 1, await fingerprint(out, fit.nCells, true))]);
  if (fit.order) out = take(out, fit.order);
  return restoreInfs(out, infs, xIn.cols, memberSources(fit));
}

// --- the model input: float32 and the soft clip ------------------------------------------------------

/** torch_nanmean / torch_nanstd (n − 1, at least 1) down the columns, in float32, row after row. */
function nanMeanStd32(x, rows, cols) {
  const count = new Float64Array(cols);
  const sum = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < cols; j++) {
      const v = x[r * cols + j];
      if (Number.isNaN(v)) continue;
      count[j] += 1;
      sum[j] = f32(sum[j] + v);
    }
  }
  const mean = Array.from(sum, (s, j) => f32(s / Math.max(count[j], 1)));
  const sq = new Float64Array(cols);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < cols; j++) {
      const v = x[r * cols + j];
      if (Number.isNaN(v)) continue;
      const d = f32(v - mean[j]);
      sq[j] = f32(sq[j] + f32(d * d));
    }
  }
  const std = Array.from(sq, (s, j) => f32(Math.sqrt(f32(s / Math.max(count[j] - 1, 1)))));
  return { mean, std };
}

/** TorchSoftClipOutliers.fit on float32 training columns: [lower, upper]. */
export function softClipBounds(x, rows, cols, nSigma = OUTLIER_STD) {
  if (rows <= 1) return [new Array(cols).fill(-Infinity), new Array(cols).fill(Infinity)];
  let { mean, std } = nanMeanStd32(x, rows, cols);
  const sigma = f32(nSigma);
  let cut = std.map((s) => f32(s * sigma));
  const masked = Float32Array.from(x, (v, i) => {
    const j = i % cols;
    return v > f32(mean[j] + cut[j]) || v < f32(mean[j] - cut[j]) ? NaN : v;
  });
  ({ mean, std } = nanMeanStd32(masked, rows, cols));
  cut = std.map((s) => f32(s * sigma));
  return [mean.map((m, j) => f32(m - cut[j])), mean.map((m, j) => f32(m + cut[j]))];
}

/** max(−log(1 + |x|) + lower, x), then min(log(1 + |·|) + upper, ·), in float32; NaN kept. */
export function softClip(v, lower, upper) {
  if (Number.isNaN(v)) return v;
  const low = Math.max(f32(f32(-Math.log(f32(1 + Math.abs(v)))) + lower), v);
  return Math.min(f32(f32(Math.log(f32(1 + Math.abs(low)))) + upper), low);
}

/**
 * A member's model input (Float32Array, training then test rows, `cols` wide): cast to
 * float32, then (outlierStd not null) the soft clip of the numerical columns with bounds
 * from the training rows.
 */
export function modelInput(fit, xTrain, xTest, outlierStd = OUTLIER_STD) {
  const cols = xTrain.cols;
  const x = new Float32Array((xTrain.rows + xTest.rows) * cols);
  x.set(xTrain.data);
  x.set(xTest.data, xTrain.data.length);
  if (outlierStd === null || outlierStd === undefined) return x;
  const cats = new Set(memberCategorical(fit));
  const num = range(cols).filter((j) => !cats.has(j));
  const train = new Float32Array(xTrain.rows * num.length);
  for (let r = 0; r < xTrain.rows; r++) num.forEach((j, c) => { train[r * num.length + c] = x[r * cols + j]; });
  const [lower, upper] = softClipBounds(train, xTrain.rows, num.length, outlierStd);
  for (let r = 0; r < xTrain.rows + xTest.rows; r++) {
    num.forEach((j, c) => { x[r * cols + j] = softClip(x[r * cols + j], lower[c], upper[c]); });
  }
  return x;
}

