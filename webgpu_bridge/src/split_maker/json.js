// The split file's text (arenalite.splits.to_json): Python's json.dumps of values, and the
// canonical order and layout of the file's keys, byte for byte Python's.
import { reprFloat } from "../py_repr.js";
import { intText } from "./py_values.js";

const HEADER_KEYS = ["schema", "version", "dataset", "n_rows", "task", "kind", "seed", "n_repeats",
  "n_folds"];

/** json.dumps(value, separators=(",", ":"), ensure_ascii=False) of a JSON-like value
 * (integral numbers as ints, others as Python's float repr). */
export function pyJson(value) {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
    return Number.isInteger(value) ? intText(value) : reprFloat(value);
  }
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return `[${Array.from(value, pyJson).join(",")}]`;
  return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${pyJson(v)}`).join(",")}}`;
}

function indexList(rows) {
  return `[${Array.prototype.join.call(rows, ",")}]`;
}

/**
 * arenalite.splits.to_json: the canonical JSON text of a split object (fixed key order,
 * compact, a final newline), byte for byte Python's. A `fingerprint` key, wherever it sits
 * in the object, is written after excluded_columns, as Python writes it. (Python validates
 * the object first; this writes what it is given.)
 */
export function toJson(splits) {
  const keys = splits.kind === "random" ? [...HEADER_KEYS, "test_fraction"] : HEADER_KEYS;
  const parts = keys.map((key) => {
    const value = splits[key];
    const text = key === "test_fraction" ? reprFloat(Number(value)) : pyJson(value);
    return `${JSON.stringify(key)}:${text}`;
  });
  parts.push(`"excluded_columns":${pyJson(splits.excluded_columns)}`);
  if ("fingerprint" in splits) parts.push(`"fingerprint":${pyJson(splits.fingerprint)}`);
  const entries = splits.splits.map((e) => `{"id":${JSON.stringify(e.id)},"repeat":${e.repeat},` +
    `"fold":${e.fold},"train":${indexList(e.train)},"test":${indexList(e.test)}}`);
  parts.push(`"splits":[${entries.join(",")}]`);
  return `{${parts.join(",")}}\n`;
}
