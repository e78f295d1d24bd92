// What the TabICL-family wrappers' preprocessing shares, as numpy/sklearn compute it: the
// JavaScript twin of pkg/arenalite/models/wrapper_preprocessing.py: impute_means, impute,
// standard_scaler_stats (TabICL's, TabPFN's and TabFM's JavaScript preprocessing) and one
// normalisation method's pipeline, fitPipeline / transform (z-score with std + 1e-6 clipped
// to ±100, for "power" Yeo-Johnson and a StandardScaler, the soft outlier clipping), the
// same rules in tabicl 2.2.0 and Google tabfm 1.0.1. numpy's
// summation orders are kept: a C-ordered matrix's column sums run row after row, a
// Fortran-ordered one's (`fortran`) pairwise down each column, as np.sum does.
//
// A matrix is {rows, cols, data: Float64Array} in row-major order.
import { pairwiseSum } from "./numpy_sum.js";
import { yeoJohnsonLambda, yeoJohnsonValue } from "./yeo_johnson.js";

export const NORM_METHODS = Object.freeze(["none", "power"]);
export const SCALE_EPSILON = 1e-6;
export const Z_CLIP = 100.0;
export const STD_FLOOR = 1e-6;

const EPS = 2 ** -52;

const mapMatrix = (m, fn) => ({ rows: m.rows, cols: m.cols, data: m.data.map((v, i) => fn(v, i % m.cols)) });

/**
 * np.sum(x, axis=0) of a rows × cols matrix (row-major data): pairwise for one column or a
 * Fortran-ordered array (`fortran`), else row after row.
 */
export function columnSums(data, rows, cols, round = (x) => x, fortran = false) {
  const out = new Float64Array(cols);
  if (fortran && cols > 1) {
    const col = new Float64Array(rows);
    for (let j = 0; j < cols; j++) {
      for (let r = 0; r < rows; r++) col[r] = data[r * cols + j];
      out[j] = pairwiseSum(col, 0, rows, 1, round);
    }
    return out;
  }
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

/** The training column means over the non-NaN values; 0 for an all-NaN column (SimpleImputer). */
export function imputeMeans(m, fortran = false) {
  const { rows, cols, data } = m;
  const filled = data.map((v) => (Number.isNaN(v) ? 0 : v));
  const count = new Float64Array(cols);
  for (let i = 0; i < data.length; i++) if (!Number.isNaN(data[i])) count[i % cols] += 1;
  return columnSums(filled, rows, cols, undefined, fortran).map((s, j) => (count[j] ? (s * 1.0) / count[j] : 0));
}

/** Replace each NaN by its column's training mean (a new matrix). */
export function impute(m, means) {
  return mapMatrix(m, (v, j) => (Number.isNaN(v) ? means[j] : v));
}

/** Mean and scale of sklearn's StandardScaler (corrected two-pass variance; scale 1 for ~constant). */
export function standardScalerStats(m, fortran = false) {
  const { rows, cols, data } = m;
  const mean = columnSums(data, rows, cols, undefined, fortran).map((s) => s / rows);
  const temp = data.map((v, i) => v - mean[i % cols]);
  const correction = columnSums(temp, rows, cols, undefined, fortran);
  const sq = temp.map((v) => v * v);
  const sums = columnSums(sq, rows, cols, undefined, fortran);
  const scale = new Float64Array(cols);
  for (let j = 0; j < cols; j++) {
    const v = (sums[j] - (correction[j] ** 2) / rows) / rows;
    const constant = v <= rows * EPS * v + (rows * mean[j] * EPS) ** 2;
    scale[j] = constant ? 1.0 : Math.sqrt(v);
  }
  return { mean, scale };
}

// --- one normalisation method's pipeline (fit_pipeline / transform) ------------------------

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
