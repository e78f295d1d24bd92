// A user's table, checked and typed for SPEC §6 and the models: the JavaScript twin of
// arenalite's datasets/table.py `read_table` (same rules, same refusals word for word),
// taking the typed columns of parse.js. The result's `features` are the format the
// bridge's runner encodes per model (encoding.js):
//   {name, kind: "numeric", values: Float64Array (NaN = missing)}
//   {name, kind: "categorical", codes: Int32Array (-1 = missing), categories (sorted)}

import { repr, reprList, reprString } from "../py_repr.js";
import { parseNumber } from "./cells.js";
import { parseDatetime } from "./dates.js";

export const TASKS = ["binary", "multiclass", "regression"];
export const MAX_INTEGER_CLASSES = 20;
export const MIN_CLASS_ROWS = 3;
export const UNIQUE_TEXT_MIN_ROWS = 10;
export const NUMERIC_SHARE = 0.9;

const isText = (col) => col.type === "text";
const isNumeric = (col) => col.type === "int" || col.type === "float";

function isMissing(col, i) {
  return isText(col) ? col.codes[i] < 0 : Number.isNaN(col.values[i]);
}

/** A cell as the value Python holds (str, bool, number) or null when missing. */
export function cellValue(col, i) {
  if (isMissing(col, i)) return null;
  if (isText(col)) return col.categories[col.codes[i]];
  if (col.type === "bool") return col.values[i] === 1;
  return col.values[i];
}

function show(col, i) {
  return repr(cellValue(col, i), col.type === "int");
}

function missingRows(col, n) {
  const rows = [];
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (isMissing(col, i)) {
      count++;
      if (rows.length < 5) rows.push(i);
    }
  }
  return { count, rows };
}

function checkFinite(col, n, label = "column") {
  let count = 0;
  let first = -1;
  for (let i = 0; i < n; i++) {
    const x = col.values[i];
    if (x === Infinity || x === -Infinity) {
      count++;
      if (first < 0) first = i;
    }
  }
  if (count) {
    throw new Error(`${label} ${reprString(col.name)} has an infinite value ` +
      `(${repr(col.values[first])}) at row ${first} (${count} in all); make such cells ` +
      "empty (missing) or finite");
  }
}

/** Distinct non-missing values of a column, sorted as Python sorts them, with each row's
 * code into them (-1 missing). Text columns are sorted already. */
export function sortedCodes(col, n) {
  if (isText(col)) return { values: col.categories, codes: col.codes };
  const distinct = [...new Set(Array.from(col.values.subarray(0, n)).filter((x) => !Number.isNaN(x)))];
  distinct.sort((a, b) => a - b);
  const index = new Map(distinct.map((x, k) => [x, k]));
  const codes = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const x = col.values[i];
    codes[i] = Number.isNaN(x) ? -1 : index.get(x);
  }
  const values = col.type === "bool" ? distinct.map((x) => x === 1) : distinct;
  return { values, codes };
}

function taskOf(col, n) {
  const { values } = sortedCodes(col, n);
  const k = values.length;
  if (!isNumeric(col)) return k === 2 ? "binary" : "multiclass";
  const integral = values.every((x) => x === Math.round(x));
  if (integral && k <= MAX_INTEGER_CLASSES) return k === 2 ? "binary" : "multiclass";
  return "regression";
}

function readTarget(col, n, givenTask) {
  const name = reprString(col.name);
  const missing = missingRows(col, n);
  if (missing.count) {
    throw new Error(`target column ${name} has ${missing.count} missing value(s), first at ` +
      `rows ${reprList(missing.rows, true)}; fill or remove those rows`);
  }
  let task = givenTask ?? null;
  if (task === null) task = taskOf(col, n);
  else if (!TASKS.includes(task)) {
    throw new Error(`task must be one of ('binary', 'multiclass', 'regression'), got ${repr(task)}`);
  }
  if (task === "regression") {
    if (!isNumeric(col)) {
      let i = 0;
      if (isText(col)) {
        const bad = col.categories.map((c) => parseNumber(c) === null);
        const found = col.codes.findIndex((c) => bad[c]);
        i = found < 0 ? 0 : found;
      }
      throw new Error(`target column ${name} of a regression task must be numbers; ` +
        `row ${i} has ${show(col, i)}`);
    }
    checkFinite(col, n);
    return { y: Float64Array.from(col.values.subarray(0, n)), task, classes: null };
  }
  const { values: classes, codes } = sortedCodes(col, n);
  const isInt = col.type === "int";
  if (classes.length < 2) {
    throw new Error(`target column ${name} has one class only (${repr(classes[0], isInt)}); a ` +
      `${task} task needs two or more`);
  }
  if (task === "binary" && classes.length !== 2) {
    throw new Error(`target column ${name} has ${classes.length} classes, not the two of a ` +
      `binary task: ${reprList(classes.slice(0, 6), isInt)}`);
  }
  const counts = new Int32Array(classes.length);
  for (let i = 0; i < n; i++) counts[codes[i]]++;
  const small = counts.findIndex((c) => c < MIN_CLASS_ROWS);
  if (small >= 0) {
    throw new Error(`class ${repr(classes[small], isInt)} of target column ${name} has ` +
      `${counts[small]} row(s) (first at row ${codes.indexOf(small)}), fewer than the ` +
      `${MIN_CLASS_ROWS} folds of SPEC §6`);
  }
  return { y: Float64Array.from(codes.subarray(0, n)), task, classes, classesAreInt: isInt };
}

function readGroups(col, n) {
  const name = reprString(col.name);
  const missing = missingRows(col, n);
  if (missing.count) {
    throw new Error(`group column ${name} has ${missing.count} missing value(s), first at rows ` +
      `${reprList(missing.rows, true)}; every row needs its entity id`);
  }
  const { values, codes } = sortedCodes(col, n);
  if (values.length < 2) {
    throw new Error(`group column ${name} has a single group (${show(col, 0)}); grouped folds ` +
      "need at least 3");
  }
  return { ids: Array.from(codes.subarray(0, n), (c) => values[c]), codes: codes.subarray(0, n) };
}

function readTime(col, n) {
  const name = reprString(col.name);
  const missing = missingRows(col, n);
  if (missing.count) {
    throw new Error(`time column ${name} has ${missing.count} missing value(s), first at rows ` +
      `${reprList(missing.rows, true)}; temporal folds need every row's time`);
  }
  if (isNumeric(col)) {
    checkFinite(col, n);
    return { values: Float64Array.from(col.values.subarray(0, n)), kind: "numeric" };
  }
  const parsed = (isText(col) ? col.categories : ["False", "True"]).map(parseDatetime);
  const out = new Float64Array(n);
  let bad = 0;
  let first = -1;
  for (let i = 0; i < n; i++) {
    const code = isText(col) ? col.codes[i] : col.values[i];
    const ms = parsed[code];
    if (ms === null) {
      bad++;
      if (first < 0) first = i;
    }
    out[i] = ms ?? NaN;
  }
  if (bad) {
    throw new Error(`time column ${name}: row ${first} has ${show(col, first)}, which does not ` +
      `parse as a date or time (${bad} such cells)`);
  }
  return { values: out, kind: "datetime" };
}

/** `_kind`: a feature column as the runner's format; refuses stray text and per-row ids. */
function feature(col, n, forced) {
  const { name } = col;
  if (forced || col.type === "bool") {
    const { values, codes } = sortedCodes(col, n);
    return { name, kind: "categorical", codes: Int32Array.from(codes.subarray(0, n)), categories: values };
  }
  if (isNumeric(col)) {
    checkFinite(col, n);
    return { name, kind: "numeric", values: col.values.subarray(0, n) };
  }
  const number = col.categories.map((c) => parseNumber(c) !== null);
  let present = 0;
  let numbers = 0;
  let stray = 0;
  let first = -1;
  for (let i = 0; i < n; i++) {
    const c = col.codes[i];
    if (c < 0) continue;
    present++;
    if (number[c]) numbers++;
    else {
      stray++;
      if (first < 0) first = i;
    }
  }
  if (present && numbers >= NUMERIC_SHARE * present && stray) {
    throw new Error(`column ${reprString(name)} holds numbers but row ${first} has ` +
      `${show(col, first)} (${stray} such cells); make it an empty cell (missing), or name the ` +
      "column in categorical= (--categorical)");
  }
  if (n >= UNIQUE_TEXT_MIN_ROWS && col.categories.length === n) {
    throw new Error(`column ${reprString(name)} is text with a different value in every row ` +
      `(row 0: ${show(col, 0)}), an id rather than a feature; name it in leakage_columns= ` +
      "(--leakage-columns) to leave it out, or as group_column= if rows of one entity share it");
  }
  return { name, kind: "categorical", codes: col.codes.subarray(0, n), categories: col.categories };
}

function requireColumn(byName, header, column, option) {
  if (!byName.has(column)) {
    throw new Error(`${option} ${reprString(column)} is not a column of the table; its columns ` +
      `are ${reprList(header)}`);
  }
}

/**
 * Check and type a parsed table (parse.js) as `arenalite.datasets.read_table` does: same
 * options (camelCase), same errors. Returns the table object the page, describe.js, the
 * split maker and the runner take.
 */
export function readTable(parsed, { name, target = null, task = null, groupColumn = null,
  timeColumn = null, leakageColumns = [], categorical = [] } = {}) {
  const { header, nRows: n, columns } = parsed;
  const byName = new Map(columns.map((c) => [c.name, c]));
  if (target === null || target === undefined || target === "") {
    throw new Error(`name the target column with target= (--target); the columns are ${reprList(header)}`);
  }
  requireColumn(byName, header, target, "target column");
  if (groupColumn && timeColumn) {
    throw new Error("give either group_column (grouped folds) or time_column (temporal " +
      "folds), not both");
  }
  for (const col of leakageColumns) {
    if (col === target) {
      throw new Error(`leakage column ${reprString(col)} is the target column; the target is ` +
        "never a feature, so leave it out of leakage_columns");
    }
    requireColumn(byName, header, col, "leakage column");
  }
  for (const col of categorical) {
    requireColumn(byName, header, col, "categorical column");
    if (col === target) throw new Error(`categorical column ${reprString(col)} is the target column`);
  }
  const targetInfo = readTarget(byName.get(target), n, task || null);
  let groups = null;
  let time = null;
  if (groupColumn) {
    requireColumn(byName, header, groupColumn, "group column");
    if (groupColumn === target) throw new Error(`group column ${reprString(groupColumn)} is the target column`);
    groups = readGroups(byName.get(groupColumn), n);
  }
  if (timeColumn) {
    requireColumn(byName, header, timeColumn, "time column");
    if (timeColumn === target) throw new Error(`time column ${reprString(timeColumn)} is the target column`);
    time = readTime(byName.get(timeColumn), n);
  }
  const excluded = [...new Set([groupColumn, timeColumn, ...leakageColumns].filter(Boolean))];
  const featureNames = header.filter((c) => c !== target && !excluded.includes(c));
  if (!featureNames.length) {
    throw new Error(`no feature columns are left (target ${reprString(target)}, excluded ` +
      `${reprList(excluded)})`);
  }
  const features = featureNames.map((c) => feature(byName.get(c), n, categorical.includes(c)));
  const missing = Object.fromEntries(featureNames.map((c) => [c, byName.get(c).missing]));
  return {
    name: name || "table", nRows: n, columns: [...header], target, ...targetInfo,
    nClasses: targetInfo.classes ? targetInfo.classes.length : null,
    features, kinds: Object.fromEntries(features.map((f) => [f.name, f.kind])), missing,
    groupColumn: groupColumn || null, timeColumn: timeColumn || null,
    groups: groups?.ids ?? null, groupCodes: groups?.codes ?? null,
    time: time?.values ?? null, timeKind: time?.kind ?? null,
    excludedColumns: excluded,
  };
}
