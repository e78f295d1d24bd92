// numpy's sorting of float64 for temporal splits: the stable argsort (an LSD radix sort on
// order-preserving 64-bit keys) and searchsorted(side="left").

/** Float64 values as order-preserving 64-bit keys: [low words, high words]. */
function sortKeys(values) {
  const n = values.length;
  const bits = new Float64Array(n);
  for (let i = 0; i < n; i++) bits[i] = values[i] + 0;  // -0 sorts with +0, as in numpy
  const words = new Uint32Array(bits.buffer);  // little-endian: word 2i low, 2i+1 high
  const lo = new Uint32Array(n);
  const hi = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const h = words[2 * i + 1];
    const negative = (h & 0x80000000) !== 0;
    lo[i] = negative ? ~words[2 * i] : words[2 * i];
    hi[i] = negative ? ~h : h ^ 0x80000000;
  }
  return [lo, hi];
}

/** numpy's stable argsort of numbers (ties keep row order): an LSD radix sort of the keys,
 * 16 bits a pass (a pass whose digit all rows share is skipped). */
export function stableArgsort(values) {
  const n = values.length;
  let [lo, hi] = sortKeys(values);
  let order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  let lo2 = new Uint32Array(n);
  let hi2 = new Uint32Array(n);
  let order2 = new Int32Array(n);
  const count = new Int32Array(65537);
  for (let pass = 0; pass < 4; pass++) {
    const src = pass < 2 ? lo : hi;
    const shift = (pass & 1) * 16;
    count.fill(0);
    for (let i = 0; i < n; i++) count[((src[i] >>> shift) & 0xffff) + 1]++;
    if (count.includes(n)) continue;
    for (let d = 0; d < 65536; d++) count[d + 1] += count[d];
    for (let j = 0; j < n; j++) {
      const at = count[(src[j] >>> shift) & 0xffff]++;
      order2[at] = order[j];
      lo2[at] = lo[j];
      hi2[at] = hi[j];
    }
    [order, order2, lo, lo2, hi, hi2] = [order2, order, lo2, lo, hi2, hi];
  }
  return order;
}

/** np.searchsorted(sorted, value, side="left"). */
export function searchLeft(sorted, value) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
