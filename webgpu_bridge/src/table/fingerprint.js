// What a split file records of its table, and the check that a split file fits a table:
// the JavaScript twin of datasets/table.py `fingerprint`, `fingerprint_mismatch` and
// `check_table_splits` (same hashes, same messages), so a file made by `arenalite splits`
// is accepted here and a foreign one refused with the Python words.

import { repr, reprList } from "../py_repr.js";

async function sha256Hex(bytes) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function int64Bytes(values) {
  const out = new BigInt64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = BigInt(values[i]);
  return new Uint8Array(out.buffer);  // little-endian on every platform WebGPU runs on
}

/** Codes 0..K-1 of the sorted distinct values (numbers), as pandas.factorize(sort=True). */
export function sortedValueCodes(values) {
  const distinct = Float64Array.from(new Set(values)).sort();
  const codes = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    let lo = 0;
    let hi = distinct.length - 1;
    const x = values[i];
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (distinct[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    codes[i] = lo;
  }
  return codes;
}

/** Rows, all column names, and SHA-256 of the target (codes int64 or float64) and of the
 * groups' and time's sorted-distinct codes (int64), little-endian, as Python hashes them. */
export async function fingerprint(table) {
  const y = table.classes ? int64Bytes(table.y) : new Uint8Array(Float64Array.from(table.y).buffer);
  const out = { n_rows: table.nRows, columns: [...table.columns], target: table.target,
    target_sha256: await sha256Hex(y) };
  if (table.groupCodes) out.groups_sha256 = await sha256Hex(int64Bytes(table.groupCodes));
  if (table.time) out.time_sha256 = await sha256Hex(int64Bytes(sortedValueCodes(table.time)));
  return out;
}

const KEYS = ["n_rows", "columns", "target", "target_sha256", "groups_sha256", "time_sha256"];
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const shown = (v) => (v === undefined ? "None" : repr(v, true));

/** A sentence naming what differs between two fingerprints, or null when they agree. */
export function fingerprintMismatch(expected, actual) {
  for (const key of KEYS) {
    if (same(expected[key], actual[key])) continue;
    if (key === "columns") {
      const was = expected.columns ?? [];
      const gone = was.filter((c) => !actual.columns.includes(c));
      const added = actual.columns.filter((c) => !was.includes(c));
      return gone.length || added.length
        ? `columns differ (in the split file only: ${reprList(gone)}; in the table only: ${reprList(added)})`
        : "the columns are in another order";
    }
    return `${key} differs (split file: ${shown(expected[key])}, table: ${shown(actual[key])})`;
  }
  return null;
}

/** Refuse a split file made from another table (`source` names the file), naming what differs. */
export async function checkTableSplits(table, persisted, source) {
  const recorded = persisted.fingerprint;
  if (!recorded) {
    if (persisted.n_rows !== table.nRows) {
      throw new Error(`${source} was made for ${persisted.n_rows} rows; table ${repr(table.name)} ` +
        `has ${table.nRows}`);
    }
    return;
  }
  const why = fingerprintMismatch(recorded, await fingerprint(table));
  if (why) throw new Error(`${source} was made from another table than ${repr(table.name)}: ${why}`);
  const missing = (persisted.excluded_columns ?? []).filter((c) => !table.columns.includes(c));
  if (missing.length) {
    throw new Error(`${source} excludes column(s) ${reprList(missing)} that table ` +
      `${repr(table.name)} lacks`);
  }
}
