// Tables with categorical and missing cells as the numbers each model takes: the two
// encodings of arenalite.models.encoding (docs/models.md, "Tables"), giving the same float64
// numbers, each fitted on the context (train) rows only. Which one a model takes is its
// registry entry's "encoding" key (registry.json, which Python reads too).
//
// A table's columns (`features`): {name, kind: "numeric", values: Float64Array (NaN:
// missing)} or {name, kind: "categorical", codes: Int32Array (-1: missing), categories:
// strings, numbers or booleans, sorted as Python's sorted() sorts them}. A column's levels
// are the categories whose code occurs in the context rows, in category order.
import { modelEntry } from "./models.js";
import { pairwiseSum } from "./numpy_sum.js";

export { pairwiseSum };

/** A categorical column with more context levels than this gets ordinal codes (common encoding). */
export const MAX_ONE_HOT_LEVELS = 10;
/** The encodings a registry entry may name. */
export const ENCODINGS = ["tabicl", "common"];

/** The encoding model `name` takes (its registry entry's "encoding"). */
export function modelEncoding(name) {
  const encoding = modelEntry(name).encoding;
  if (!ENCODINGS.includes(encoding)) {
    throw new RangeError(`registry.json: model '${name}' has encoding ${JSON.stringify(encoding ?? null)}; ` +
      `known: ${ENCODINGS.join(", ")}`);
  }
  return encoding;
}

/**
 * Check a table's columns (`features`, the format above) against its row count; returns
 * them with plain arrays made typed (numeric values: null → NaN). Throws naming the column.
 */
export function checkFeatures(features, nRows, dataset = "dataset") {
  if (!Array.isArray(features) || !features.length) {
    throw new TypeError(`${dataset}: features must be a non-empty array of columns`);
  }
  const seen = new Set();
  return features.map((f, j) => {
    const name = f?.name;
    if (typeof name !== "string") throw new TypeError(`${dataset}: features[${j}] has no string name`);
    if (seen.has(name)) throw new RangeError(`${dataset}: column name '${name}' appears twice`);
    seen.add(name);
    const where = `${dataset}: column '${name}'`;
    const data = f.kind === "numeric" ? f.values : f.kind === "categorical" ? f.codes : null;
    if (!data) {
      throw new TypeError(`${where} must be {kind: "numeric", values} or {kind: "categorical", codes, categories}`);
    }
    if (data.length !== nRows) throw new RangeError(`${where} has ${data.length} cells, y has ${nRows}`);
    return f.kind === "numeric" ? numericColumn(f, where) : categoricalColumn(f, where);
  });
}

function numericColumn(f, where) {
  const values = f.values instanceof Float64Array ? f.values
    : Float64Array.from(f.values, (v) => (v === null ? NaN : v));
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === Infinity || v === -Infinity) {
      throw new RangeError(`${where} has an infinite value ${v} in row ${i}; make it empty (missing) or finite`);
    }
  }
  return { name: f.name, kind: "numeric", values };
}

function categoricalColumn(f, where) {
  if (!Array.isArray(f.categories)) throw new TypeError(`${where} has no categories array`);
  const codes = f.codes instanceof Int32Array ? f.codes : Int32Array.from(f.codes);
  const K = f.categories.length;
  for (let i = 0; i < codes.length; i++) {
    if (codes[i] < -1 || codes[i] >= K || codes[i] !== f.codes[i]) {
      throw new RangeError(`${where}: row ${i} has code ${f.codes[i]}, not -1 (missing) or 0..${K - 1}`);
    }
  }
  return { name: f.name, kind: "categorical", codes, categories: f.categories };
}

/** The Node runner's job form of a column (numeric values: a list, null for missing). */
export function featuresFromJson(features) {
  return features.map((f) => (f.kind === "numeric"
    ? { name: f.name, kind: "numeric", values: Float64Array.from(f.values, (v) => (v === null ? NaN : v)) }
    : { ...f, codes: Int32Array.from(f.codes) }));
}

/** A column fitted on the context rows: its width and how a cell becomes numbers. */
function fitColumn(f, encoding, trainRows, scratch) {
  if (f.kind === "numeric") {
    let k = 0;
    for (let i = 0; i < trainRows.length; i++) {
      const v = f.values[trainRows[i]];
      if (!Number.isNaN(v)) scratch[k++] = v;
    }
    return { f, width: 1, mean: k ? pairwiseSum(scratch, 0, k) / k : 0, names: [f.name] };
  }
  const K = f.categories.length;
  const position = new Int32Array(K).fill(-1);
  for (let i = 0; i < trainRows.length; i++) {
    const c = f.codes[trainRows[i]];
    if (c >= 0) position[c] = 0;  // seen in the context
  }
  const levels = [];
  for (let c = 0; c < K; c++) if (position[c] === 0) position[c] = levels.push(f.categories[c]) - 1;
  const hot = encoding === "common" && levels.length <= MAX_ONE_HOT_LEVELS;
  return { f, position, hot, width: hot ? levels.length : 1,
    names: hot ? levels.map((v) => `${f.name}=${v}`) : [f.name] };
}

/** Write a fitted column's cells of `rows` into the row-major `x` (F wide) at column `col`. */
function writeColumn(fit, rows, x, F, col) {
  const { f } = fit;
  if (f.kind === "numeric") {
    for (let i = 0; i < rows.length; i++) {
      const v = f.values[rows[i]];
      x[i * F + col] = Number.isNaN(v) ? fit.mean : v;
    }
    return;
  }
  for (let i = 0; i < rows.length; i++) {
    const c = f.codes[rows[i]];
    const p = c >= 0 ? fit.position[c] : -1;
    if (!fit.hot) x[i * F + col] = p;
    else if (p >= 0) x[i * F + col + p] = 1;
  }
}

/**
 * Encode a table's columns for the rows of one split: `encoding` "tabicl" (ordinal codes of
 * the context levels, unknown and missing -1; numbers mean-imputed with the context mean;
 * categorical columns first, then numeric, each in table order) or "common" (table order;
 * numbers mean-imputed; a categorical column one-hot over its context levels when it has at
 * most MAX_ONE_HOT_LEVELS, else one column of codes; unknown and missing: all zeros / -1).
 * `trainRows` / `testRows`: row indices (arrays or typed arrays). Returns row-major float64
 * {xTrain, xTest, nFeatures, featureNames} (one-hot columns named "column=level").
 */
export function encodeFeatures(encoding, features, trainRows, testRows) {
  if (!ENCODINGS.includes(encoding)) {
    throw new RangeError(`unknown encoding ${JSON.stringify(encoding)}; known: ${ENCODINGS.join(", ")}`);
  }
  if (!trainRows.length || !testRows.length) throw new RangeError("a split needs train and test rows");
  const ordered = encoding === "tabicl"
    ? [...features.filter((f) => f.kind === "categorical"), ...features.filter((f) => f.kind === "numeric")]
    : features;
  const scratch = new Float64Array(trainRows.length);
  const fits = ordered.map((f) => fitColumn(f, encoding, trainRows, scratch));
  const F = fits.reduce((s, fit) => s + fit.width, 0);
  if (F === 0) {
    throw new RangeError(`no column is left after encoding: ${ordered.map((f) => `'${f.name}'`).join(", ")} ` +
      "have no present value in the context rows");
  }
  const xTrain = new Float64Array(trainRows.length * F);
  const xTest = new Float64Array(testRows.length * F);
  let col = 0;
  for (const fit of fits) {
    writeColumn(fit, trainRows, xTrain, F, col);
    writeColumn(fit, testRows, xTest, F, col);
    col += fit.width;
  }
  return { xTrain, xTest, nFeatures: F, featureNames: fits.flatMap((fit) => fit.names) };
}
