// TabPFN v3 regression targets and output aggregation, as TabPFNRegressor (tabpfn 9.2.0):
// the JavaScript twin of pkg/arenalite/models/tabpfn/regression.py. fitTarget z-scores
// y_train and applies the member's target transform; predictFromLogits takes the members'
// raw bar-distribution logits to predict's output in y's units (each member's borders
// mapped back through its inverse transform and repaired, its distribution re-binned onto
// the common borders, the mean over members, then the bar distribution's mean, median,
// mode or quantiles). float32 where the package is (borders, probabilities), float64 for
// the re-binning weights and the final scaling.
import { pairwiseSum } from "../numpy_sum.js";
import { yeoJohnsonLambda, yeoJohnsonValue } from "../yeo_johnson.js";
import { erfc, erfinv } from "./special.js";

export const TARGET_TRANSFORMS = Object.freeze([null, "safepower", "power", "log", "1_plus_log", "exp"]);
export const NAN_BORDER_LIMIT = 1e3;
export const DEFAULT_QUANTILES = Object.freeze([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
export const OUTPUT_TYPES = Object.freeze(["mean", "median", "mode", "quantiles", "main"]);
const EPS = 2 ** -52;
const TINY = 2.2250738585072014e-308;
const f32 = Math.fround;
const F32_MAX = 3.4028234663852886e38;
const pyName = (t) => (t === null ? "None" : `'${t}'`);

const mean = (a) => pairwiseSum(Float64Array.from(a), 0, a.length) / a.length;
function variance(a) {
  const m = mean(a);
  return pairwiseSum(Float64Array.from(a, (v) => (v - m) * (v - m)), 0, a.length) / a.length;
}

/** ±inf → NaN → the mean of the finite values (0 when none). */
function finiteOrMean(x) {
  const y = x.map((v) => (Number.isFinite(v) ? v : NaN));
  const ok = y.filter((v) => !Number.isNaN(v));
  if (ok.length === y.length) return y;
  const fill = ok.length ? pairwiseSum(Float64Array.from(ok), 0, ok.length) / ok.length : 0.0;
  return y.map((v) => (Number.isNaN(v) ? fill : v));
}

/**
 * Z-score y_train and apply the member's target transform: [fit, the member's y_train for
 * the model (Float32Array)], as regression.fit_target.
 */
export function fitTarget(yTrain, transformName) {
  if (!TARGET_TRANSFORMS.includes(transformName)) {
    throw new Error(`target transform ${pyName(transformName)} is not ported (only (None, 'safepower', 'power', 'log', '1_plus_log', 'exp'))`);
  }
  const y = Float64Array.from(yTrain);
  if (!y.length) throw new Error(`y_train must be a non-empty 1-d array, got shape (0,)`);
  if (!y.every(Number.isFinite)) throw new Error("y_train has NaN or ±inf values");
  if (y.every((v) => v === y[0])) {
    throw new Error("y_train is constant: the package predicts y_train[0] for every row without calling the model");
  }
  const mu = mean(y);
  const std = Math.sqrt(variance(y)) + 1e-20;
  const z = y.map((v) => (v - mu) / std);
  const fit = { mean: mu, std, transformName, lmbda: 1.0, scalerMean: 0.0, scalerScale: 1.0 };
  if (transformName === null) return [fit, Float32Array.from(z)];
  if (["log", "1_plus_log", "exp"].includes(transformName)) {
    const fn = { log: Math.log, "1_plus_log": Math.log1p, exp: Math.exp }[transformName];
    return [fit, Float32Array.from(z, fn)];
  }
  const n = z.length;
  const v = variance(z);
  const constant = v <= n * EPS * v + (n * mean(z) * EPS) ** 2;
  const lmbda = constant ? 1.0 : yeoJohnsonLambda(z);
  const t = finiteOrMean(constant ? Float64Array.from(z) : z.map((x) => yeoJohnsonValue(x, lmbda)));
  const sMean = mean(t);
  const sVar = variance(t);
  let sScale = Math.sqrt(sVar);
  if (sVar <= n * EPS * sVar + (n * sMean * EPS) ** 2 || sScale < 10 * EPS) sScale = 1.0;
  const out = finiteOrMean(t.map((x) => (x - sMean) / sScale));
  return [{ ...fit, lmbda, scalerMean: sMean, scalerScale: sScale }, Float32Array.from(out)];
}

// --- the member's borders -----------------------------------------------------------------------

function inversePower(x, lmbda) {
  if (x >= 0) return Math.abs(lmbda) < EPS ? Math.exp(x) - 1 : (x * lmbda + 1) ** (1 / lmbda) - 1;
  return Math.abs(lmbda - 2) > EPS ? 1 - (-(2 - lmbda) * x + 1) ** (1 / (2 - lmbda)) : 1 - Math.exp(-x);
}

const LOG_MAX = Math.log(F32_MAX);
const BOUND = LOG_MAX - 4 * (2 ** (Math.floor(Math.log2(LOG_MAX)) - 52));
const clip = (v, lo, hi) => (Number.isNaN(v) ? v : Math.min(Math.max(v, lo), hi));

function inverseSafe(x, lmbda) {
  if (x >= 0) {
    const arg = Math.abs(lmbda) < EPS ? x : Math.log1p(x * lmbda) / lmbda;
    return Math.expm1(clip(arg, -BOUND, BOUND));
  }
  const arg = Math.abs(lmbda - 2) > EPS ? Math.log1p(-(2 - lmbda) * x) / (2 - lmbda) : -x;
  return -Math.expm1(clip(arg, -BOUND, BOUND));
}

function inverseTarget(fit, borders) {
  const b = Float32Array.from(borders);
  const t = fit.transformName;
  if (t === "log") return b.map((v) => Math.exp(v));  // a Float32Array: each value rounded
  if (t === "1_plus_log") return b.map((v) => f32(Math.exp(v)) - 1);
  if (t === "exp") return b.map((v) => Math.log(v));
  const scale = f32(fit.scalerScale);
  const shift = f32(fit.scalerMean);
  const unscaled = b.map((v) => f32(f32(v * scale) + shift));
  const inv = t === "power" ? inversePower : inverseSafe;
  return unscaled.map((v) => inv(v, fit.lmbda));  // float64 arithmetic, float32 result
}

function cancelBroken(bt, broken) {
  const out = Float32Array.from(bt);
  const n = out.length;
  const falls = [];
  const rises = [];
  for (let i = 0; i < n - 1; i++) {
    if (broken[i] && !broken[i + 1]) falls.push(i);
    if (!broken[i] && broken[i + 1]) rises.push(i);
  }
  if (falls.length > 1 || rises.length > 1 || (falls.length && !broken[0]) || (rises.length && !broken[n - 1])) {
    throw new Error("broken borders lie inside the grid, not in runs at its ends");
  }
  if (falls.length) {
    const firstGood = falls[0] + 1;
    for (let i = 0; i < firstGood; i++) out[i] = out[firstGood];
    out[0] = f32(out[1] - 1);
  }
  if (rises.length) {
    const lastGood = rises[0];
    for (let i = lastGood + 1; i < n; i++) out[i] = out[lastGood];
    out[n - 1] = f32(out[n - 2] + 1);
  }
  const mask = Array.from({ length: n - 1 }, (_, i) => broken[i + 1] || broken[i]);
  return [out, mask];
}

/** A member's borders in the z-scored space (Float32Array) and its bucket cancel mask (or null). */
export function memberBorders(fit, borders, repairNanBorders = true) {
  if (borders.length < 4) throw new Error(`borders must be 1-d with at least 4 entries, got shape (${borders.length},)`);
  if (fit.transformName === null) return [Float32Array.from(borders), null];
  let bt = inverseTarget(fit, borders);
  let mask = null;
  if (repairNanBorders) {
    const broken = Array.from(bt, (v) => !Number.isFinite(v) || v > NAN_BORDER_LIMIT || v < -NAN_BORDER_LIMIT);
    if (broken.some(Boolean)) [bt, mask] = cancelBroken(bt, broken);
  }
  const n = bt.length;
  if (Number.isNaN(bt[n - 1])) {
    let max = -Infinity;
    for (const v of bt) if (!Number.isNaN(v)) max = Math.max(max, v);
    for (let i = 0; i < n; i++) if (Number.isNaN(bt[i])) bt[i] = max;
    bt[n - 1] = f32(bt[n - 1] + Math.abs(bt[n - 1]));
  }
  if (f32(bt[n - 1] - bt[n - 2]) < 1e-6) bt[n - 1] = f32(bt[n - 1] + Math.abs(f32(bt[n - 1] * f32(0.1))));
  if (bt[0] === bt[1]) bt[0] = f32(bt[0] - Math.abs(f32(bt[0] * f32(0.1))));
  let descending = true;
  for (let i = 1; i < n; i++) if (!(bt[i] < bt[i - 1])) descending = false;
  if (descending) {
    throw new Error(`target transform ${pyName(fit.transformName)} gave descending borders, which tabpfn 9.2.0 cannot predict with either`);
  }
  return [bt, mask];
}

// --- re-binning ---------------------------------------------------------------------------------

const ERFINV_HALF = erfinv(0.5);

function tailSurvival(distance, width) {
  const w = Math.max(width, TINY);
  const sigma = w / (Math.SQRT2 * ERFINV_HALF);
  return erfc(distance / (sigma * Math.SQRT2));
}

/** (len(frm) − 1) × (len(to) − 1) float64 weights taking bucket masses on frm to to (row-major). */
export function rebinMatrix(frm, to) {
  const f = Float64Array.from(frm);
  const t = Float64Array.from(to);
  const nFrm = f.length - 1;
  const nTo = t.length - 1;
  if (nFrm < 3) throw new Error("frm needs an interior bucket between its two tails");
  const lower = t.slice(0, -1);
  const upper = t.slice(1);
  lower[0] = -Infinity;
  upper[nTo - 1] = Infinity;
  const w = new Float64Array(nFrm * nTo);
  for (let i = 1; i < nFrm - 1; i++) {
    const lo = f[i];
    const hi = f[i + 1];
    const width = hi - lo;
    for (let k = 0; k < nTo; k++) {
      const overlap = Math.max(Math.min(hi, upper[k]) - Math.max(lo, lower[k]), 0.0);
      w[i * nTo + k] = width > 0 ? overlap / width : 0.0;
    }
    if (lo === hi) {
      let pos = 0;  // searchsorted(t, f[i], side="right") - 1, clipped
      while (pos < t.length && t[pos] <= lo) pos++;
      const dest = Math.min(Math.max(pos - 1, 0), nTo - 1);
      w[i * nTo + dest] += 1.0;
    }
  }
  const lowSurv = (y) => tailSurvival(f[1] - Math.min(y, f[1]), f[1] - f[0]);
  const highSurv = (y) => tailSurvival(Math.max(y, f[nFrm - 1]) - f[nFrm - 1], f[nFrm] - f[nFrm - 1]);
  for (let k = 0; k < nTo; k++) {
    w[k] = Math.max(lowSurv(upper[k]) - lowSurv(lower[k]), 0.0);
    w[(nFrm - 1) * nTo + k] = Math.max(highSurv(lower[k]) - highSurv(upper[k]), 0.0);
  }
  return w;
}

/** Row-wise softmax in float32 (the package's, max subtracted). */
export function softmax32(z, rows, width) {
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    let max = -Infinity;
    for (let k = 0; k < width; k++) max = Math.max(max, z[r * width + k]);
    for (let k = 0; k < width; k++) out[r * width + k] = f32(Math.exp(f32(z[r * width + k] - max)));
    const sum = pairwiseSum(out, r * width, width, 1, f32);  // numpy's float32 pairwise sum
    for (let k = 0; k < width; k++) out[r * width + k] = f32(out[r * width + k] / sum);
  }
  return out;
}

/** One member's (rows × buckets) float32 probabilities on the common borders. */
export function memberProbabilities(logits, rows, fit, borders, temperature, repairNanBorders = true) {
  const b = Float32Array.from(borders);
  const width = b.length - 1;
  if (logits.length !== rows * width) throw new Error(`logits must be (M, ${width}) for ${b.length} borders`);
  let z = Float32Array.from(logits);
  if (temperature !== 1) {
    const t = f32(temperature);
    z = z.map((v) => v / t);
  }
  const [frm, mask] = memberBorders(fit, b, repairNanBorders);
  if (mask) for (let r = 0; r < rows; r++) mask.forEach((m, k) => { if (m) z[r * width + k] = -Infinity; });
  const probs = softmax32(z, rows, width);
  if (frm.every((v, i) => v === b[i])) return probs;
  const w = Float32Array.from(rebinMatrix(frm, b));
  const out = new Float32Array(rows * width);
  for (let r = 0; r < rows; r++) {
    for (let i = 0; i < width; i++) {
      const p = probs[r * width + i];
      if (p === 0) continue;
      for (let k = 0; k < width; k++) out[r * width + k] += p * w[i * width + k];
    }
  }
  return out.map(f32);
}

/** The ensemble's log-probabilities: log of the members' mean probabilities (float32). */
export function aggregate(memberProbs) {
  const total = Float32Array.from(memberProbs[0]);
  for (const p of memberProbs.slice(1)) for (let i = 0; i < total.length; i++) total[i] = f32(total[i] + p[i]);
  const n = f32(memberProbs.length);
  return total.map((v) => f32(Math.log(f32(v / n))));
}

// --- decoding -----------------------------------------------------------------------------------

const halfnormalScale = (width) => f32(f32(width) / f32(f32(erfinv(f32(0.5))) * f32(Math.SQRT2)));
const halfnormalIcdf = (p, scale) => {
  const unit = f32(f32(f32(p) + 1) / 2);
  return f32(f32(scale * f32(erfinv(f32(f32(2 * unit) - 1)))) * f32(Math.SQRT2));
};

function icdf(probs, rows, b, q) {
  const out = new Float32Array(rows);
  if (q === 0 || q === 1) return out.fill(q === 0 ? -Infinity : Infinity);
  const nBars = b.length - 1;
  const qf = f32(q);
  const widths = Array.from({ length: nBars }, (_, i) => f32(b[i + 1] - b[i]));
  for (let r = 0; r < rows; r++) {
    const p = probs.subarray(r * nBars, (r + 1) * nBars);
    let acc = 0;
    const cum = new Float32Array(nBars);
    for (let k = 0; k < nBars; k++) { acc += p[k]; cum[k] = f32(acc); }
    let idx = 0;
    for (let k = 0; k < nBars; k++) if (cum[k] < qf) idx++;
    idx = Math.min(Math.max(idx, 0), nBars - 1);
    const before = idx === 0 ? 0 : cum[idx - 1];
    const cond = f32(Math.min(Math.max(f32(f32(qf - before) / p[idx]), 0), 1));
    let value = f32(b[idx] + f32(widths[idx] * cond));
    if (idx === 0) value = f32(b[1] - halfnormalIcdf(f32(1 - cond), halfnormalScale(widths[0])));
    if (idx === nBars - 1) value = f32(b[nBars - 1] + halfnormalIcdf(cond, halfnormalScale(widths[nBars - 1])));
    out[r] = value;
  }
  return out;
}

/**
 * The aggregated log-probabilities (rows × buckets) to predict's output in y's units:
 * "mean", "median", "mode" (Float64Array), "quantiles" (an array of them), "main" (all).
 */
export function decode(logp, rows, fit, borders, outputType = "mean", quantiles = null) {
  if (!OUTPUT_TYPES.includes(outputType)) throw new Error(`output_type '${outputType}' is not one of ('mean', 'median', 'mode', 'quantiles', 'main')`);
  const qs = quantiles ?? DEFAULT_QUANTILES;
  if (outputType === "main") {
    return Object.fromEntries(["mean", "median", "mode", "quantiles"].map((k) => [k, decode(logp, rows, fit, borders, k, qs)]));
  }
  const b = Float32Array.from(borders);
  const nBars = b.length - 1;
  const probs = softmax32(Float32Array.from(logp), rows, nBars);
  const raw = (v) => Float64Array.from(v, (x) => x * fit.std + fit.mean);
  if (outputType === "quantiles") return qs.map((q) => raw(icdf(probs, rows, b, q)));
  if (outputType === "median") return raw(icdf(probs, rows, b, 0.5));
  const widths = Array.from({ length: nBars }, (_, i) => f32(b[i + 1] - b[i]));
  const centres = widths.map((w, i) => f32(b[i] + f32(w / 2)));
  const out = new Float32Array(rows);
  if (outputType === "mode") {
    for (let r = 0; r < rows; r++) {
      let best = 0;
      for (let k = 1; k < nBars; k++) {
        if (f32(probs[r * nBars + k] / widths[k]) > f32(probs[r * nBars + best] / widths[best])) best = k;
      }
      out[r] = centres[best];
    }
    return raw(out);
  }
  const s = f32(Math.sqrt(2 / Math.PI));
  centres[0] = f32(b[1] - f32(halfnormalScale(widths[0]) * s));
  centres[nBars - 1] = f32(b[nBars - 1] + f32(halfnormalScale(widths[nBars - 1]) * s));
  for (let r = 0; r < rows; r++) {
    let acc = 0;
    for (let k = 0; k < nBars; k++) acc += probs[r * nBars + k] * centres[k];
    out[r] = f32(acc);
  }
  return raw(out);
}

/**
 * TabPFNRegressor.predict from the members' raw logits (each rows × buckets, Float32Array),
 * their target fits and the checkpoint's borders.
 */
export function predictFromLogits(memberLogits, rows, fits, borders, temperature, outputType = "mean", quantiles = null, repairNanBorders = true) {
  if (!memberLogits.length || memberLogits.length !== fits.length) {
    throw new Error(`member_logits (${memberLogits.length}) and fits (${fits.length}) must be non-empty and of the same length`);
  }
  if (fits.some((f) => f.mean !== fits[0].mean || f.std !== fits[0].std)) {
    throw new Error("fits differ in their z-scoring: they must come from one y_train");
  }
  const probs = memberLogits.map((z, i) => memberProbabilities(z, rows, fits[i], borders, temperature, repairNanBorders));
  return decode(aggregate(probs), rows, fits[0], borders, outputType, quantiles);
}
