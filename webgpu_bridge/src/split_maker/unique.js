// np.unique(values, return_inverse=True, return_counts=True): the sorted distinct values
// (numbers numerically, strings by code point), each row's code and each value's count.
import { compareCodePoints } from "../py_repr.js";

function compareValues(a, b) {
  const ta = typeof a;
  if (ta !== typeof b && !(ta !== "string" && typeof b !== "string")) {
    const names = (v) => (typeof v === "string" ? "str" : "int");
    throw new TypeError(`'<' not supported between instances of '${names(b)}' and '${names(a)}'`);
  }
  if (ta === "string") return compareCodePoints(a, b);
  return a - b;
}

/** np.unique(values, return_inverse=True, return_counts=True). */
export function uniqueCodes(values) {
  const n = values.length;
  const codes = new Int32Array(n);
  let max = -1;
  let small = true;
  for (let i = 0; i < n && small; i++) {
    const v = values[i];
    small = typeof v === "number" && Number.isInteger(v) && v >= 0 && v < 8 * n + 1024;
    if (v > max) max = v;
  }
  if (small) return uniqueSmallInts(values, max, codes);
  const distinct = new Set(values);
  const numbers = ArrayBuffer.isView(values) || [...distinct].every((v) => typeof v === "number");
  const sorted = numbers ? Array.from(Float64Array.from(distinct).sort()) : [...distinct].sort(compareValues);
  const index = new Map(sorted.map((v, k) => [v, k]));
  const counts = new Float64Array(sorted.length);
  for (let i = 0; i < n; i++) {
    const c = index.get(values[i]);
    codes[i] = c;
    counts[c]++;
  }
  return { values: sorted, codes, counts };
}

function uniqueSmallInts(values, max, codes) {
  const seen = new Int32Array(max + 1);
  for (let i = 0; i < values.length; i++) seen[values[i]]++;
  const sorted = [];
  const counts = [];
  for (let v = 0; v <= max; v++) {
    if (!seen[v]) continue;
    seen[v] = sorted.length;
    sorted.push(v);
    counts.push(0);
  }
  for (let i = 0; i < values.length; i++) {
    const c = seen[values[i]];
    codes[i] = c;
    counts[c]++;
  }
  return { values: sorted, codes, counts: Float64Array.from(counts) };
}
