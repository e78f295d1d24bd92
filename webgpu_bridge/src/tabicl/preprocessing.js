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
import {
  NORM_METHODS, SCALE_EPSILON, STD_FLOOR, Z_CLIP, applyPower, columnMeanVar, columnSums, fitPipeline, fitPower,
  impute, imputeMeans, powerColumns, softClip, standardScalerStats, transform,
} from "../wrapper_preprocessing.js";

// --- the shared rules (../wrapper_preprocessing.js, ../yeo_johnson.js) ------------------------

export {
  pairwiseSum, BRENT_XTOL, NORM_METHODS, SCALE_EPSILON, STD_FLOOR, Z_CLIP, applyPower, columnMeanVar, columnSums,
  fitPipeline, fitPower, fminbound, impute, imputeMeans, powerColumns, softClip, standardScalerStats, transform,
  yeoJohnson, yeoJohnsonLambda, yeoJohnsonValue,
};

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
