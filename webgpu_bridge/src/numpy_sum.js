// numpy's float64 summation order (np.add.reduce on a contiguous array: pairwise, 8-way
// unrolled blocks of at most 128 values), so that a JavaScript mean or sum equals numpy's
// to the last bit. One place for the encodings, the split maker and TabICL's preprocessing.

function plainSum(a, lo, n) {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[lo + i];
    return res;
  }
  if (n <= 128) {
    let r0 = a[lo], r1 = a[lo + 1], r2 = a[lo + 2], r3 = a[lo + 3];
    let r4 = a[lo + 4], r5 = a[lo + 5], r6 = a[lo + 6], r7 = a[lo + 7];
    let i = 8;
    for (const end = n - (n % 8); i < end; i += 8) {
      r0 += a[lo + i]; r1 += a[lo + i + 1]; r2 += a[lo + i + 2]; r3 += a[lo + i + 3];
      r4 += a[lo + i + 4]; r5 += a[lo + i + 5]; r6 += a[lo + i + 6]; r7 += a[lo + i + 7];
    }
    let res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) res += a[lo + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return plainSum(a, lo, n2) + plainSum(a, lo + n2, n - n2);
}

function roundedSum(a, start, n, stride, round) {
  if (n < 8) {
    let res = round(0);
    for (let i = 0; i < n; i++) res = round(res + a[start + i * stride]);
    return res;
  }
  if (n <= 128) {
    const r = [];
    for (let j = 0; j < 8; j++) r.push(round(a[start + j * stride]));
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (let j = 0; j < 8; j++) r[j] = round(r[j] + a[start + (i + j) * stride]);
    }
    let res = round(round(round(r[0] + r[1]) + round(r[2] + r[3])) + round(round(r[4] + r[5]) + round(r[6] + r[7])));
    for (; i < n; i++) res = round(res + a[start + i * stride]);
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return round(roundedSum(a, start, n2, stride, round) + roundedSum(a, start + n2 * stride, n - n2, stride, round));
}

/**
 * numpy's sum of n values of `a` from `start`, `stride` apart. `round` (e.g. Math.fround)
 * rounds every partial sum, for numpy's float32 sums; without it the sum is float64.
 */
export function pairwiseSum(a, start = 0, n = a.length - start, stride = 1, round = null) {
  if (round === null && stride === 1) return plainSum(a, start, n);
  return roundedSum(a, start, n, stride, round ?? ((x) => x));
}
