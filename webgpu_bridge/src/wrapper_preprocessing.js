// What the TabICL-family wrappers' preprocessing shares, as numpy/sklearn compute it: the
// JavaScript twin of pkg/arenalite/models/wrapper_preprocessing.py's impute_means, impute and
// standard_scaler_stats (used by TabICL's and TabPFN's JavaScript preprocessing). numpy's
// summation orders are kept: a C-ordered matrix's column sums run row after row, a
// Fortran-ordered one's (`fortran`) pairwise down each column, as np.sum does.
//
// A matrix is {rows, cols, data: Float64Array} in row-major order.
import { pairwiseSum } from "./numpy_sum.js";

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
