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
import { BRENT_XTOL, fminbound, yeoJohnson, yeoJohnsonLambda, yeoJohnsonValue } from "../yeo_johnson.js";
import { columnMeanVar, columnSums, impute, imputeMeans, standardScalerStats } from "../wrapper_preprocessing.js";

export const NORM_METHODS = Object.freeze(["none", "power"]);
export const SCALE_EPSILON = 1e-6;
export const Z_CLIP = 100.0;
export const STD_FLOOR = 1e-6;
const EPS = 2 ** -52;

// --- numpy's sums -------------------------------------------------------------------------

export { pairwiseSum, BRENT_XTOL, columnMeanVar, columnSums, fminbound, impute, imputeMeans, standardScalerStats, yeoJohnson, yeoJohnsonLambda, yeoJohnsonValue };

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
