// Google TabFM's preprocessing of a table, as tabfm 1.0.1's wrappers do it: the JavaScript
// twin of pkg/arenalite/models/tabfm/preprocessing.py (docs/models.md, "Google TabFM
// (tabfm)", "Preprocessing and ensemble").
//
// 1. numericTable — TransformToNumerical on a table's columns (the format of ../encoding.js:
//    {name, kind: "numeric", values} or {name, kind: "categorical", codes, categories}),
//    fitted on the context rows. A categorical column is what arenalite's Table makes of
//    text and bools, a pandas `category`, which the package takes as categorical: codes in
//    order of first appearance in the context (a value seen fewer than
//    MIN_CATEGORY_FREQUENCY times, an unseen value and a missing cell: −1). A column may
//    say the pandas dtype a user's DataFrame gave it instead (`dtype`): "object" or "str"
//    (text: when its cells mostly read as dates, five columns: the UTC timestamp in
//    microseconds, year, month, day, day of week, missing cells the context's mean
//    timestamp), "bool" or "boolean" (pandas takes bool as a number), "datetime64[...]" (a
//    date column). A number column is mean-imputed (an all-missing one dropped). Output:
//    categorical codes first, then numbers, then the date columns.
// 2. uniqueFilter — UniqueFeatureFilter: columns with more than one distinct context value.
// 3. the pipelines per normalisation method: ../wrapper_preprocessing.js (TabICL's rules).
// 4. scaleTargets — the regressor's StandardScaler on the float64 targets.
//
// Dates are read by ../table/dates.js (ISO 8601 dates and date-times with or without an
// offset, "2024/03/01", month-first "03/01/2024"); pandas' mixed-format parser also reads
// month names and free text ("March 3rd"), which this takes as categorical. Past
// DATE_SAMPLE context cells the test looks at pandas' sample of them (Series.sample(500,
// random_state=0): numpy's legacy RandomState(0).permutation, reproduced here). Where every
// query cell of a date column is missing or unreadable, pandas reads them at a resolution
// of seconds, and the package (and Python's port) then fails to fill in the context's mean
// timestamp, or gives it in seconds; this gives it in µs.
//
// A matrix is {rows, cols, data: Float64Array} in row-major order.
import { pairwiseSum } from "../numpy_sum.js";
import { reprFloat, reprString } from "../py_repr.js";
import { PyRandom } from "../pyrandom.js";
import { parseDatetime } from "../table/dates.js";
import { NORM_METHODS, fitPipeline, imputeMeans, standardScalerStats, transform } from "../wrapper_preprocessing.js";

export { NORM_METHODS, fitPipeline, transform };

export const MIN_CATEGORY_FREQUENCY = 2;
export const DATETIME_PARTS = Object.freeze(["year", "month", "day", "dayofweek"]);
export const DATE_SAMPLE = 500;
export const DATE_NULL_SHARE = 0.8;

const NUMBER_TEXT = /^\s*[-+]?(?:(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][-+]?\d+)?|nan|inf|infinity)\s*$/i;

const dtypeOf = (f) => (f.kind === "numeric" ? "float64" : f.dtype ?? "category");
const isText = (f) => ["object", "str", "string"].includes(dtypeOf(f));
const isBoolean = (f) => ["bool", "boolean"].includes(dtypeOf(f));

/** The cell text of a categorical column's row (null: missing). */
function cell(f, row) {
  const c = f.codes[row];
  return c < 0 ? null : f.categories[c];
}

/**
 * numpy's RandomState(seed).permutation(n): MT19937 seeded by init_genrand, then the legacy
 * shuffle from the last item down, each index drawn by random_interval (masked 32-bit draws).
 */
export function legacyPermutation(n, seed = 0) {
  const rng = new PyRandom(0);
  rng.initGenrand(seed);
  const out = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i >= 1; i--) {
    let mask = i;
    for (const shift of [1, 2, 4, 8, 16]) mask |= mask >>> shift;
    let j;
    do j = (rng.uint32() & mask) >>> 0; while (j > i);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * The package's date test of a text column (dtype "object"/"str") on its context rows: not
 * all numbers, not all missing, and at most 80 % missing after reading the cells (a sample
 * of DATE_SAMPLE past that many) as dates.
 */
export function looksLikeDates(f, rows) {
  if (!isText(f)) return false;
  const texts = Array.from(rows, (r) => cell(f, r));
  const present = texts.filter((t) => t !== null);
  if (!present.length) return false;
  if (present.every((t) => typeof t === "number" || (typeof t === "string" && NUMBER_TEXT.test(t)))) return false;
  const sample = texts.length > DATE_SAMPLE ? legacyPermutation(texts.length).slice(0, DATE_SAMPLE).map((i) => texts[i])
    : texts;
  const missing = sample.filter((t) => t === null || typeof t !== "string" || parseDatetime(t) === null).length;
  return !(missing / sample.length > DATE_NULL_SHARE);
}

/** "datetime", "numeric" or "categorical" per column, as the package decides (column_kinds). */
export function columnKinds(features, trainRows) {
  return features.map((f) => {
    if (dtypeOf(f).startsWith("datetime64") || looksLikeDates(f, trainRows)) return "datetime";
    if (f.kind === "numeric" || isBoolean(f)) return "numeric";
    return "categorical";
  });
}

/** A column's cells as float64 (NaN missing): numbers, or booleans as 0/1. */
function numbers(f, rows) {
  if (f.kind === "numeric") return Float64Array.from(rows, (r) => f.values[r]);
  return Float64Array.from(rows, (r) => (f.codes[r] < 0 ? NaN : Number(f.categories[f.codes[r]])));
}

/** Context value → code in first-appearance order, rare values left out (_categories). */
function categoryCodes(f, rows) {
  const counts = new Map();
  for (const r of rows) if (f.codes[r] >= 0) counts.set(f.codes[r], (counts.get(f.codes[r]) ?? 0) + 1);
  const position = new Int32Array(f.categories.length).fill(-1);
  let next = 0;
  for (const r of rows) {
    const c = f.codes[r];
    if (c < 0 || position[c] >= 0 || counts.get(c) < MIN_CATEGORY_FREQUENCY || String(f.categories[c]) === "nan") continue;
    position[c] = next++;
  }
  return position;
}

const codesOf = (f, position, rows) => Float64Array.from(rows, (r) => (f.codes[r] < 0 ? -1 : position[f.codes[r]]));

/** A date cell as UTC microseconds (null: missing or unreadable). */
function microseconds(f, row) {
  const t = cell(f, row);
  const ms = typeof t === "string" ? parseDatetime(t) : null;
  return ms === null ? null : ms * 1000;
}

/** The five date columns of rows, missing cells at `fill` (µs). */
function dateColumns(f, rows, fill) {
  const stamp = Float64Array.from(rows, (r) => microseconds(f, r) ?? fill);
  const parts = DATETIME_PARTS.map(() => new Float64Array(rows.length));
  stamp.forEach((us, i) => {
    const d = new Date(Math.floor(us / 1000));
    parts[0][i] = d.getUTCFullYear();
    parts[1][i] = d.getUTCMonth() + 1;
    parts[2][i] = d.getUTCDate();
    parts[3][i] = (d.getUTCDay() + 6) % 7;  // Monday 0, as pandas' dayofweek
  });
  return [stamp, ...parts];
}

/** The context's mean timestamp (pandas: the float64 sum of the stamps, missing as 0, truncated). */
function meanStamp(f, rows) {
  const stamps = new Float64Array(rows.length);
  let count = 0;
  rows.forEach((r, i) => {
    const us = microseconds(f, r);
    if (us !== null) { stamps[i] = us; count += 1; }
  });
  return count ? Math.trunc(pairwiseSum(stamps, 0, stamps.length) / count) : null;
}

function checkInfinite(cols, names, name) {
  const rows = cols.length ? cols[0].length : 0;
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < cols.length; j++) {
      const v = cols[j][r];
      if (v === Infinity || v === -Infinity) {
        throw new Error(`${name} column ${reprString(names[j])} has an infinite value ${reprFloat(v)} in row ${r}; ` +
          "make it empty (missing) or finite");
      }
    }
  }
}

const toMatrix = (cols, rows) => {
  const data = new Float64Array(rows * cols.length);
  cols.forEach((col, j) => col.forEach((v, r) => { data[r * cols.length + j] = v; }));
  return { rows, cols: cols.length, data };
};

/**
 * TransformToNumerical().fit(train) applied to the train and test rows of a table's
 * columns (module comment): {xTrain, xTest (row-major Float64Array), nFeatures,
 * nCategorical (its leading categorical columns), featureNames}.
 */
export function numericTable(features, trainRows, testRows) {
  const kinds = columnKinds(features, trainRows);
  const of = (kind) => features.filter((_, j) => kinds[j] === kind);
  const outTrain = [];
  const outTest = [];
  const names = [];
  for (const f of of("categorical")) {
    const position = categoryCodes(f, trainRows);
    outTrain.push(codesOf(f, position, trainRows));
    outTest.push(codesOf(f, position, testRows));
    names.push(f.name);
  }
  const numeric = of("numeric");
  if (numeric.length) {
    const a = numeric.map((f) => numbers(f, trainRows));
    const b = numeric.map((f) => numbers(f, testRows));
    checkInfinite(a, numeric.map((f) => f.name), "X_train");
    checkInfinite(b, numeric.map((f) => f.name), "X_test");
    const means = imputeMeans(toMatrix(a, trainRows.length), true);
    numeric.forEach((f, j) => {
      if (a[j].every(Number.isNaN)) return;  // SimpleImputer drops an all-missing column
      outTrain.push(a[j].map((v) => (Number.isNaN(v) ? means[j] : v)));
      outTest.push(b[j].map((v) => (Number.isNaN(v) ? means[j] : v)));
      names.push(f.name);
    });
  }
  for (const f of of("datetime")) {
    const fill = meanStamp(f, trainRows);
    if (fill === null) {
      throw new Error(`X_train column ${reprString(f.name)} holds no date the package can read; Google TabFM takes it ` +
        "as a datetime column and would have no value to fill its missing cells with");
    }
    outTrain.push(...dateColumns(f, trainRows, fill));
    outTest.push(...dateColumns(f, testRows, fill));
    names.push(f.name, ...DATETIME_PARTS.map((p) => `${f.name}.${p}`));
  }
  if (!outTrain.length) {
    throw new Error("Google TabFM takes no column of X_train: every number column is missing in all context rows");
  }
  return {
    xTrain: toMatrix(outTrain, trainRows.length).data, xTest: toMatrix(outTest, testRows.length).data,
    nFeatures: outTrain.length, nCategorical: of("categorical").length, featureNames: names,
  };
}

/** UniqueFeatureFilter: columns with more than one distinct context value; all with one row. */
export function uniqueFilter(m) {
  const { rows, cols, data } = m;
  const keep = new Array(cols).fill(rows <= 1);
  if (rows <= 1) return keep;
  for (let j = 0; j < cols; j++) {
    for (let r = 1; r < rows; r++) {
      if (data[r * cols + j] !== data[j]) { keep[j] = true; break; }
    }
  }
  return keep;
}

/** The regressor's StandardScaler on the float64 targets: {scaled (Float64Array), mean, scale}. */
export function scaleTargets(y) {
  const col = { rows: y.length, cols: 1, data: Float64Array.from(y, Number) };
  const { mean, scale } = standardScalerStats(col);
  return { scaled: col.data.map((v) => (v - mean[0]) / scale[0]), mean: mean[0], scale: scale[0] };
}
