// The Yeo-Johnson transform and its maximum-likelihood λ as scipy 1.17 / sklearn 1.9 compute
// them: the JavaScript twin of pkg/arenalite/models/yeo_johnson.py, the one copy every model's
// JavaScript uses (TabICL's power normalisation, TabPFN's power presets and target
// transform). scipy's fminbound (_minimize_scalar_bounded) step for step; numpy's pairwise
// sums (../numpy_sum.js), so λ is numpy's up to the last bits of log1p/expm1/log.
import { pairwiseSum } from "./numpy_sum.js";

export const BRENT_XTOL = 1.48e-8;
const EPS = 2 ** -52;
const TINY = 2.2250738585072014e-308;
const MAX = 1.7976931348623157e308;

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

/** The maximum-likelihood Yeo-Johnson λ of a finite sample (scipy ≥ 1.12's yeojohnson_normmax;
 * a caller drops NaN cells first, as sklearn's _yeo_johnson_optimize does). */
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
