// TabICL's per-column preprocessing of numeric features, as tabicl 2.2.0 does it: the
// JavaScript twin of pkg/arenalite/models/tabicl/preprocessing.py (docs/tabicl_preprocessing.md
// defines it): mean imputation, the constant-column filter, then per normalisation method
// ("none" or "power") a pipeline fitted on the training rows: z-score (std + 1e-6, clipped
// to ±100), for "power" Yeo-Johnson (λ by scipy's bounded Brent search, fminbound, step for
// step) and a StandardScaler, then the soft outlier clipping. float64 on the CPU; numpy's
// summation orders are kept (pairwise sums along a contiguous axis, row after row down the
// columns of a matrix), so the results are numpy's up to the last bits of log1p/expm1/log.
//
// A matrix is {rows, cols, data: Float64Array} in row-major order.
import { pairwiseSum } from "../numpy_sum.js";

export const NORM_METHODS = Object.freeze(["none", "power"]);
export const SCALE_EPSILON = 1e-6;
export const Z_CLIP = 100.0;
export const STD_FLOOR = 1e-6;
export const BRENT_XTOL = 1.48e-8;
const EPS = 2 ** -52;
const TINY = 2.2250738585072014e-308;
const MAX = 1.7976931348623157e308;

// --- numpy's sums -------------------------------------------------------------------------

export { pairwiseSum };

/** np.sum(x, axis=0) of a rows × cols matrix: pairwise for one column, else row after row. */
export function columnSums(data, rows, cols, round = (x) => x) {
  const out = new Float64Array(cols);
  if (cols === 1) {
    out[0] = pairwiseSum(data, 0, rows, 1, round);
    return out;
  }
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < cols; j++) out[j] = round(out[j] + data[r * cols + j]);
  }
  return out;
}

/** np.mean(x, axis=0) and np.var(x, axis=0, ddof) with numpy's operation order. */
export function columnMeanVar(m, ddof = 0) {
  const { rows, cols, data } = m;
  const mean = columnSums(data, rows, cols).map((s) => s / rows);
  const sq = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const d = data[i] - mean[i % cols];
    sq[i] = d * d;
  }
  const v = columnSums(sq, rows, cols).map((s) => s / Math.max(rows - ddof, 0));
  return { mean, variance: v };
}

/** np.nanmean and np.nanvar(ddof) down the columns (NaNs as zeros in the sums, not counted). */
function nanMeanVar(m, ddof) {
  const { rows, cols, data } = m;
  const filled = data.map((v) => (Number.isNaN(v) ? 0 : v));
  const count = new Float64Array(cols);
  for (let i = 0; i < data.length; i++) if (!Number.isNaN(data[i])) count[i % cols] += 1;
  const mean = columnSums(filled, rows, cols).map((s, j) => s / count[j]);
  const sq = new Float64Array(data.length);
  for (let i = 0; i < data.length; i++) {
    const d = Number.isNaN(data[i]) ? 0 : data[i] - mean[i % cols];
    sq[i] = d * d;
  }
  const variance = columnSums(sq, rows, cols).map((s, j) => s / Math.max(count[j] - ddof, 0));
  return { mean, variance };
}

const mapMatrix = (m, fn) => ({ rows: m.rows, cols: m.cols, data: m.data.map((v, i) => fn(v, i % m.cols)) });

// --- imputation and the constant-column filter ----------------------------------------------

/** The training column means over the non-NaN values; 0 for an all-NaN column (SimpleImputer). */
export function imputeMeans(m) {
  const { rows, cols, data } = m;
  const filled = data.map((v) => (Number.isNaN(v) ? 0 : v));
  const count = new Float64Array(cols);
  for (let i = 0; i < data.length; i++) if (!Number.isNaN(data[i])) count[i % cols] += 1;
  return columnSums(filled, rows, cols).map((s, j) => (count[j] ? (s * 1.0) / count[j] : 0));
}

/** Replace each NaN by its column's training mean (a new matrix). */
export function impute(m, means) {
  return mapMatrix(m, (v, j) => (Number.isNaN(v) ? means[j] : v));
}

/** Columns with more than one distinct training value (UniqueFeatureFilter): booleans. */
export function keptFeatures(m) {
  const { rows, cols, data } = m;
  const keep = new Array(cols).fill(rows <= 1);
  if (rows <= 1) return keep;
  for (let j = 0; j < cols; j++) {
    for (let r = 1; r < rows; r++) {
      if (data[r * cols + j] !== data[j]) { keep[j] = true; break; }
    }
  }
  if (!keep.some(Boolean)) keep[0] = true;
  return keep;
}

/** The kept columns of a matrix. */
export function selectColumns(m, keep) {
  const index = keep.flatMap((k, j) => (k ? [j] : []));
  const data = new Float64Array(m.rows * index.length);
  for (let r = 0; r < m.rows; r++) {
    for (let c = 0; c < index.length; c++) data[r * index.length + c] = m.data[r * m.cols + index[c]];
  }
  return { rows: m.rows, cols: index.length, data };
}

// --- Yeo-Johnson --------------------------------------------------------------------------

/** scipy's Yeo-Johnson transform of one value at λ. */
export function yeoJohnsonValue(x, lambda) {
  if (x >= 0) return Math.abs(lambda) < EPS ? Math.log1p(x) : Math.expm1(lambda * Math.log1p(x)) / lambda;
  return Math.abs(lambda - 2) > EPS ? -Math.expm1((2 - lambda) * Math.log1p(-x)) / (2 - lambda) : -Math.log1p(-x);
}

/** The transform of a contiguous sample (Float64Array). */
export function yeoJohnson(x, lambda) {
  return x.map((v) => yeoJohnsonValue(v, lambda));
}

function negLlf(lambda, x, signLogSum) {
  const y = yeoJohnson(x, lambda);
  const n = x.length;
  const mean = pairwiseSum(y, 0, n) / n;
  const sq = y.map((v) => (v - mean) * (v - mean));
  const sigma = pairwiseSum(sq, 0, n) / n;
  const logSigma = sigma >= TINY ? Math.log(sigma) : -Infinity;
  const llf = (-n / 2) * logSigma + (lambda - 1) * signLogSum;
  return llf === Infinity || llf === -Infinity ? Infinity : -llf;
}

/** scipy.optimize.fminbound(func, x1, x2, xtol, maxfun=500): _minimize_scalar_bounded step for step. */
export function fminbound(func, x1, x2, xatol = 1e-5, maxfun = 500) {
  const sqrtEps = Math.sqrt(2.2e-16);
  const golden = 0.5 * (3.0 - Math.sqrt(5.0));
  let [a, b] = [x1, x2];
  let fulc = a + golden * (b - a);
  let [nfc, xf] = [fulc, fulc];
  let rat = 0.0;
  let e = 0.0;
  let x = xf;
  let fx = func(x);
  let num = 1;
  let [ffulc, fnfc] = [fx, fx];
  let xm = 0.5 * (a + b);
  let tol1 = sqrtEps * Math.abs(xf) + xatol / 3.0;
  let tol2 = 2.0 * tol1;
  while (Math.abs(xf - xm) > tol2 - 0.5 * (b - a)) {
    ({ rat, e } = brentStep({ xf, nfc, fulc, fx, fnfc, ffulc, a, b, xm, e, rat, tol1, tol2, golden }));
    const si = Math.sign(rat) + (rat === 0 ? 1 : 0);
    x = xf + si * Math.max(Math.abs(rat), tol1);
    const fu = func(x);
    num += 1;
    if (fu <= fx) {
      if (x >= xf) a = xf; else b = xf;
      [fulc, ffulc] = [nfc, fnfc];
      [nfc, fnfc] = [xf, fx];
      [xf, fx] = [x, fu];
    } else {
      if (x < xf) a = x; else b = x;
      if (fu <= fnfc || nfc === xf) {
        [fulc, ffulc] = [nfc, fnfc];
        [nfc, fnfc] = [x, fu];
      } else if (fu <= ffulc || fulc === xf || fulc === nfc) {
        [fulc, ffulc] = [x, fu];
      }
    }
    xm = 0.5 * (a + b);
    tol1 = sqrtEps * Math.abs(xf) + xatol / 3.0;
    tol2 = 2.0 * tol1;
    if (num >= maxfun) break;
  }
  return xf;
}

/** One step's (rat, e): a parabolic step where it is safe, else golden section. */
function brentStep(s) {
  let { rat, e } = s;
  const { xf, nfc, fulc, fx, fnfc, ffulc, a, b, xm, tol1, tol2, golden } = s;
  let useGolden = true;
  if (Math.abs(e) > tol1) {
    useGolden = false;
    let r = (xf - nfc) * (fx - ffulc);
    let q = (xf - fulc) * (fx - fnfc);
    let p = (xf - fulc) * q - (xf - nfc) * r;
    q = 2.0 * (q - r);
    if (q > 0.0) p = -p;
    q = Math.abs(q);
    r = e;
    e = rat;
    if (Math.abs(p) < Math.abs(0.5 * q * r) && p > q * (a - xf) && p < q * (b - xf)) {
      rat = (p + 0.0) / q;
      const x = xf + rat;
      if (x - a < tol2 || b - x < tol2) {
        const si = Math.sign(xm - xf) + (xm - xf === 0 ? 1 : 0);
        rat = tol1 * si;
      }
    } else {
      useGolden = true;
    }
  }
  if (useGolden) {
    e = xf >= xm ? a - xf : b - xf;
    rat = golden * e;
  }
  return { rat, e };
}

/** The maximum-likelihood Yeo-Johnson λ of a finite sample (scipy ≥ 1.12's yeojohnson_normmax). */
export function yeoJohnsonLambda(sample) {
  const x = Float64Array.from(sample);
  if (x.every((v) => v === 0)) return 1.0;
  let maxAbs = 0;
  for (const v of x) maxAbs = Math.max(maxAbs, Math.abs(v));
  const log1pMax = Math.log1p(20 * maxAbs);
  const logEps = Math.log(EPS);
  const logTiny = (Math.log(TINY) - logEps) / 2;
  const logMax = (Math.log(MAX) + logEps) / 2;
  let lb = logTiny / log1pMax;
  let ub = logMax / log1pMax;
  if (x.every((v) => v < 0)) {
    [lb, ub] = [2 - ub, 2 - lb];
  } else if (x.some((v) => v < 0)) {
    [lb, ub] = [Math.max(2 - ub, lb), Math.min(2 - lb, ub)];
  }
  const signLog = x.map((v) => Math.sign(v) * Math.log1p(Math.abs(v)));
  const signLogSum = pairwiseSum(signLog, 0, x.length);
  return fminbound((lambda) => negLlf(lambda, x, signLogSum), lb, ub, BRENT_XTOL);
}

/** Mean and scale of sklearn's StandardScaler (corrected two-pass variance; scale 1 for ~constant). */
export function standardScalerStats(m) {
  const { rows, cols, data } = m;
  const mean = columnSums(data, rows, cols).map((s) => s / rows);
  const temp = data.map((v, i) => v - mean[i % cols]);
  const correction = columnSums(temp, rows, cols);
  const sq = temp.map((v) => v * v);
  const sums = columnSums(sq, rows, cols);
  const scale = new Float64Array(cols);
  for (let j = 0; j < cols; j++) {
    const v = (sums[j] - (correction[j] ** 2) / rows) / rows;
    const constant = v <= rows * EPS * v + (rows * mean[j] * EPS) ** 2;
    scale[j] = constant ? 1.0 : Math.sqrt(v);
  }
  return { mean, scale };
}

const column = (m, j) => {
  const out = new Float64Array(m.rows);
  for (let r = 0; r < m.rows; r++) out[r] = m.data[r * m.cols + j];
  return out;
};

/** Fit the Yeo-Johnson stage on z (rows × cols): {fit: {lambdas, constant, mean, scale}, out}. */
export function fitPower(z) {
  const { rows, cols } = z;
  const { mean, variance } = columnMeanVar(z);
  const constant = Array.from(variance, (v, j) => v <= rows * EPS * v + (rows * mean[j] * EPS) ** 2);
  const out = { rows, cols, data: Float64Array.from(z.data) };
  const lambdas = new Float64Array(cols).fill(1);
  for (let j = 0; j < cols; j++) {
    if (constant[j]) continue;
    lambdas[j] = yeoJohnsonLambda(column(out, j));
    for (let r = 0; r < rows; r++) out.data[r * cols + j] = yeoJohnsonValue(out.data[r * cols + j], lambdas[j]);
  }
  const stats = standardScalerStats(out);
  const fit = { lambdas, constant, mean: stats.mean, scale: stats.scale };
  return { fit, out: mapMatrix(out, (v, j) => (v - stats.mean[j]) / stats.scale[j]) };
}

/** Every column transformed at its λ (λ 1 included), unscaled. */
export function powerColumns(fit, m) {
  return mapMatrix(m, (v, j) => yeoJohnsonValue(v, fit.lambdas[j]));
}

export function applyPower(fit, m) {
  return mapMatrix(powerColumns(fit, m), (v, j) => (v - fit.mean[j]) / fit.scale[j]);
}

// --- the outlier stage and the pipeline ----------------------------------------------------

function outlierBounds(m, threshold) {
  const ddof = m.rows > 1 ? 1 : 0;
  const first = nanMeanVar(m, ddof);
  const std1 = first.variance.map((v) => Math.max(Math.sqrt(v), STD_FLOOR));
  const clean = mapMatrix(m, (v, j) => (v < first.mean[j] - threshold * std1[j] || v > first.mean[j] + threshold * std1[j] ? NaN : v));
  const second = nanMeanVar(clean, ddof);
  const std2 = second.variance.map((v) => Math.max(Math.sqrt(v), STD_FLOOR));
  return {
    lower: second.mean.map((mu, j) => mu - threshold * std2[j]),
    upper: second.mean.map((mu, j) => mu + threshold * std2[j]),
  };
}

const npMax = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b));
const npMin = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b));

/** OutlierRemover.transform: x ← max(L − log1p|x|, x), then min(U + log1p|x|, x). */
export function softClip(m, lower, upper) {
  return mapMatrix(m, (v, j) => {
    const x = npMax(-Math.log1p(Math.abs(v)) + lower[j], v);
    return npMin(Math.log1p(Math.abs(x)) + upper[j], x);
  });
}

const clip = (v, lo, hi) => npMin(npMax(v, lo), hi);

/** Fit one PreprocessingPipeline on the imputed, filtered training rows. */
export function fitPipeline(x, method, outlierThreshold = 4.0) {
  if (!NORM_METHODS.includes(method)) {
    throw new Error(`norm method must be one of ('none', 'power'), got '${method}'`);
  }
  const { mean: zMean, variance } = columnMeanVar(x);
  const zScale = variance.map((v) => Math.sqrt(v) + SCALE_EPSILON);
  let z = mapMatrix(x, (v, j) => clip((v - zMean[j]) / zScale[j], -Z_CLIP, Z_CLIP));
  const zMin = new Float64Array(x.cols).fill(Infinity);
  const zMax = new Float64Array(x.cols).fill(-Infinity);
  z.data.forEach((v, i) => {
    const j = i % x.cols;
    zMin[j] = npMin(zMin[j], v);
    zMax[j] = npMax(zMax[j], v);
  });
  let power = null;
  if (method === "power") ({ fit: power, out: z } = fitPower(z));
  const { lower, upper } = outlierBounds(z, outlierThreshold);
  return { method, zMean, zScale, zMin, zMax, power, lower, upper, xTrain: softClip(z, lower, upper) };
}

/** Apply a fitted pipeline to new rows (imputed, filtered); the package's ±inf fallback included. */
export function transform(fit, x) {
  let z = mapMatrix(x, (v, j) => clip((v - fit.zMean[j]) / fit.zScale[j], -Z_CLIP, Z_CLIP));
  if (fit.power) {
    let out = powerColumns(fit.power, z);
    if (out.data.some((v) => v === Infinity || v === -Infinity)) {
      out = powerColumns(fit.power, mapMatrix(z, (v, j) => clip(v, fit.zMin[j], fit.zMax[j])));
    }
    z = mapMatrix(out, (v, j) => (v - fit.power.mean[j]) / fit.power.scale[j]);
  }
  return softClip(z, fit.lower, fit.upper);
}
