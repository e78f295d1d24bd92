// The few special functions TabPFN's JavaScript needs, in double precision (not scipy's
// code; accurate to ~1e-15 relative, far inside the float32 tolerance the outputs are held
// to): erfc (Taylor series of erf near 0, Lentz's continued fraction beyond), ndtri (the
// standard normal quantile: Acklam's rational start, one Halley step on erfc) and erfinv.

const SQRT2 = Math.SQRT2;
const SQRT_PI = Math.sqrt(Math.PI);

function erfSeries(x) {
  // erf(x) = 2/√π Σ (−1)^n x^(2n+1) / (n! (2n+1))
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 200; n++) {
    term *= -x2 / n;
    const add = term / (2 * n + 1);
    sum += add;
    if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
  }
  return (2 / SQRT_PI) * sum;
}

function erfcFraction(x) {
  // erfc(x) = exp(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), modified Lentz
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 500; n++) {
    const a = n / 2;
    d = x + a * d;
    d = Math.abs(d) < tiny ? 1 / tiny : 1 / d;
    c = x + a / c;
    if (Math.abs(c) < tiny) c = tiny;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return Math.exp(-x * x) / SQRT_PI / f;
}

/** The complementary error function. */
export function erfc(x) {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 2) return 1 - erfSeries(x);
  if (x > 27.3) return 0;
  return erfcFraction(x);
}

/** The error function. */
export function erf(x) {
  return Math.abs(x) < 2 ? erfSeries(x) : Math.sign(x) * (1 - erfc(Math.abs(x)));
}

const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];

function acklam(p) {
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q /
    (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1);
}

/** The standard normal quantile Φ⁻¹(p): −inf at 0, inf at 1, NaN outside [0, 1]. */
export function ndtri(p) {
  if (Number.isNaN(p) || p < 0 || p > 1) return NaN;
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p > 0.5) return -ndtri(1 - p);
  let x = acklam(p);
  for (let i = 0; i < 2; i++) {
    const e = 0.5 * erfc(-x / SQRT2) - p;
    const u = e * Math.sqrt(2 * Math.PI) * Math.exp((x * x) / 2);
    x -= u / (1 + (x * u) / 2);
  }
  return x;
}

/** The inverse error function: ndtri((y + 1)/2)/√2, from the nearer tail. */
export function erfinv(y) {
  if (y === 0) return y;
  return y < 0 ? ndtri((1 + y) / 2) / SQRT2 : -ndtri((1 - y) / 2) / SQRT2;
}
