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
import { reprString } from "./py_repr.js";
import { numericTable } from "./tabfm/preprocessing.js";

export { pairwiseSum };

/** A categorical column with more context levels than this gets ordinal codes (common encoding). */
export const MAX_ONE_HOT_LEVELS = 10;
/** The most distinct context values (missing counted) of a tabpfn categorical column (encoding.py's TABPFN_MAX_LEVELS). */
export const TABPFN_MAX_LEVELS = 30;
/** The encodings a registry entry may name (a model's own Python function: FUNCTIONS). */
export const ENCODINGS = ["tabicl", "common", "tabpfn", "tabfm"];
/** A registry "encoding" that names a model's own Python function → its JavaScript twin here. */
export const FUNCTIONS = { "arenalite.models.tabfm.predictor:encode": "tabfm" };

/** The encoding model `name` takes (its registry entry's "encoding"). */
export function modelEncoding(name) {
  const named = modelEntry(name).encoding;
  const encoding = Object.hasOwn(FUNCTIONS, named ?? "") ? FUNCTIONS[named] : named;
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
  if (encoding === "tabpfn") return tabpfnTable(features, trainRows, testRows);
  if (encoding === "tabfm") return tabfmTable(features, trainRows, testRows);
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

/** Row-major float64 of columns (each a Float64Array of `rows` cells). */
function rowMajor(columns, rows) {
  const F = columns.length;
  const x = new Float64Array(rows * F);
  columns.forEach((col, j) => { for (let i = 0; i < rows; i++) x[i * F + j] = col[i]; });
  return x;
}

/** The cells of `rows` of a numeric column (NaN: missing). */
const cellsOf = (values, rows) => Float64Array.from(rows, (r) => values[r]);

/** The context's codes of a categorical column: present levels (in category order) and whether a cell is missing. */
function contextLevels(f, trainRows) {
  const seen = new Uint8Array(f.categories.length);
  let missing = false;
  for (const r of trainRows) {
    const c = f.codes[r];
    if (c < 0) missing = true;
    else seen[c] = 1;
  }
  return { seen, missing };
}

/**
 * One categorical column (a pandas category, as read_table keeps text, bool and categorical=
 * columns) as the tabpfn package's cleaning hands it on (encoding.py's _tabpfn_column):
 * {train, test, declared}.
 */
function tabpfnCategorical(f, trainRows, testRows) {
  const { seen, missing } = contextLevels(f, trainRows);
  const present = f.categories.filter((_, c) => seen[c]);
  if (present.some((v) => typeof v === "boolean")) {
    throw new TypeError(`column ${reprString(f.name)} holds True/False in a category column, ` +
      "which the tabpfn package refuses; give it dtype bool or 'boolean'");
  }
  const strings = present.every((v) => typeof v === "string");
  const numbers = present.every((v) => typeof v === "number");
  if (!strings && !numbers) {
    const kinds = [...new Set(present.map((v) => (typeof v === "string" ? "str" : Number.isInteger(v) ? "int" : "float")))].sort();
    throw new TypeError(`column ${reprString(f.name)} mixes value types [${kinds.map((k) => `'${k}'`).join(", ")}]; ` +
      "the tabpfn package's encoder takes a column of strings only or of numbers only");
  }
  const n = present.length + (missing ? 1 : 0);
  if (numbers && present.length && n > TABPFN_MAX_LEVELS) {
    const value = (r) => (f.codes[r] < 0 ? NaN : f.categories[f.codes[r]]);
    return { train: Float64Array.from(trainRows, value), test: Float64Array.from(testRows, value), declared: true };
  }
  if (!numbers && n > TABPFN_MAX_LEVELS) {
    throw new RangeError(`column ${reprString(f.name)} has ${n} distinct values (a missing cell counted); ` +
      `tabpfn takes at most ${TABPFN_MAX_LEVELS} in a text or category column (the package's handling of ` +
      "free text is not ported): group rare values, or give numbers");
  }
  // sklearn's OrdinalEncoder: positions among the context levels (the categories' sorted
  // order), unknown -1, missing NaN where the context has a missing cell, else -1
  const position = new Int32Array(f.categories.length).fill(-1);
  let k = 0;
  f.categories.forEach((_, c) => { if (seen[c]) position[c] = k++; });
  const code = (r) => (f.codes[r] < 0 ? (missing ? NaN : -1) : position[f.codes[r]]);
  return { train: Float64Array.from(trainRows, code), test: Float64Array.from(testRows, code), declared: true };
}

/**
 * The tabpfn package's cleaning of a table (encoding.py's tabpfn_table): in table order,
 * numbers as float64 with NaN kept, categorical columns as ordinal codes of their sorted
 * context values (declared categorical); a numeric column constant over the context
 * (missing counted as one value) gets the context's value in every test row too.
 * Returns {xTrain, xTest, nFeatures, featureNames, categoricalIndices}.
 */
function tabpfnTable(features, trainRows, testRows) {
  const columns = features.map((f) => {
    if (f.kind === "categorical") return tabpfnCategorical(f, trainRows, testRows);
    const train = cellsOf(f.values, trainRows);
    let test = cellsOf(f.values, testRows);
    const allMissing = train.every(Number.isNaN);
    const constant = allMissing || (!train.some(Number.isNaN) && train.every((v) => v === train[0]));
    if (constant) test = new Float64Array(test.length).fill(train[0]);
    return { train, test, declared: false };
  });
  return {
    xTrain: rowMajor(columns.map((c) => c.train), trainRows.length),
    xTest: rowMajor(columns.map((c) => c.test), testRows.length),
    nFeatures: columns.length, featureNames: features.map((f) => f.name),
    categoricalIndices: columns.flatMap((c, j) => (c.declared ? [j] : [])),
  };
}

/**
 * Google TabFM's own encoding (the registry names tabfm.predictor:encode): the package's
 * TransformToNumerical, src/tabfm/preprocessing.js's numericTable, its leading
 * nCategorical columns declared categorical.
 */
function tabfmTable(features, trainRows, testRows) {
  const { xTrain, xTest, nFeatures, nCategorical, featureNames } = numericTable(features, trainRows, testRows);
  return { xTrain, xTest, nFeatures, featureNames,
    categoricalIndices: Array.from({ length: nCategorical }, (_, j) => j) };
}
