// SPEC §6's split maker in JavaScript: arenalite.splits `make_splits` and `to_json` ported
// rule for rule, so that the page writes the very file `arenalite splits` writes (same
// bytes) and refuses bad options with the Python messages word for word. The algorithms are
// in the docstring of pkg/arenalite/splits.py; numpy's default_rng is numpy_random.js.
//
// Inputs (camelCase of the Python keywords):
//   y       numbers (Array or typed array): class values for classification (shown in
//           messages as Python ints, as the table loader's int64 codes are), values for
//           regression (shown as floats); strings also work for classification.
//   groups  entity ids, strings, numbers or booleans (np.unique's sorted order: numbers
//           numerically, strings by code point); numbers in a Float32/64Array are shown
//           as floats (5.0), elsewhere integral numbers as ints.
//   time    numbers; timeKind "datetime": milliseconds since the epoch (UTC), as
//           datetime64[us] (pandas 3's to_datetime); "int" / "float": an int64 / float64
//           column; "numeric" (default): int when every value is an integer.
//   gap     a number (the time column's units), or a string as `--gap` reads it: a number
//           ("7", "2.5") or a pandas duration ("7D", "12h", "1 days 02:00:00") for dates.
// TypeErrors of Python are thrown as TypeError, ValueErrors as Error, with the same text.

import { defaultRng } from "./numpy_random.js";
import { compareCodePoints, formatFixed, formatGeneral, reprFloat, reprString } from "./py_repr.js";

export const SCHEMA = "arenalite.splits";
export const VERSION = 1;
export const TASKS = ["binary", "multiclass", "regression"];
export const KINDS = ["iid", "holdout", "grouped", "temporal", "kfold", "random"];
export const CHOSEN_KINDS = ["kfold", "random"];
export const N_FOLDS = 3;
export const IID_SEED = 4267;
export const HOLDOUT_SEED = 42;
export const HOLDOUT_MIN_ROWS = 1_000_000;
export const HOLDOUT_TEST_ROWS = 250_000;
export const REPEAT_RULE = [[500, 20], [2_500, 10], [250_000, 3]];
export const KFOLD_FOLDS = 5;
export const KFOLD_REPEATS = 2;
export const RANDOM_REPEATS = 10;
export const RANDOM_TEST_FRACTION = 0.3;
export const GROUP_LABELS = ["per_sample", "per_group"];
export const ROW_ORDER_MIN_ROWS = 50;
export const ROW_ORDER_MIN_RHO = 0.15;
export const ROW_ORDER_Z = 3.29;
export const ROW_ORDER_KINDS = ["iid", "holdout", "kfold", "random"];
const TASKS_REPR = "('binary', 'multiclass', 'regression')";
const US_PER_DAY = 86_400_000_000;

// ----------------------------------------------------------------------------- protocol

/** Rows in one training part of an `nFolds`-fold split: nRows*(nFolds-1)//nFolds. */
export function effectiveTrainingRows(nRows, nFolds = N_FOLDS) {
  return Math.floor(nRows * (nFolds - 1) / nFolds);
}

/** Test rows of a `random` split: floor(testFraction * nRows + 1/2). */
export function randomTestRows(nRows, testFraction) {
  return Math.floor(testFraction * nRows + 0.5);
}

/** Repeats of the 3-fold split for `nTrain` effective training rows (SPEC §6). */
export function nRepeatsFor(nTrain) {
  for (const [bound, repeats] of REPEAT_RULE) if (nTrain < bound) return repeats;
  return 1;
}

// ----------------------------------------------------------------------------- Python's text

/** A value as Python would hold it, for repr(): tagged floats and timedeltas. */
const pyFloat = (value) => ({ py: "float", value });
const pyTimedelta = (us) => ({ py: "timedelta", us });

function intText(x) {
  return Math.abs(x) < 1e21 ? String(x) : BigInt(x).toString();
}

/** repr() of a JavaScript value read as Python's: integral numbers are ints. */
export function pyRepr(value) {
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return Number.isInteger(value) ? intText(value) : reprFloat(value);
  if (typeof value === "string") return reprString(value);
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return `[${Array.from(value, pyRepr).join(", ")}]`;
  if (value.py === "float") return reprFloat(value.value);
  if (value.py === "timedelta") return timedeltaRepr(value.us);
  if (value.py === "datetime") return datetimeRepr(value.us);
  return String(value);
}

/** repr() of datetime.timedelta(microseconds=us). */
export function timedeltaRepr(us) {
  const days = Math.floor(us / US_PER_DAY);
  const rest = us - days * US_PER_DAY;
  const seconds = Math.floor(rest / 1e6);
  const micro = rest - seconds * 1e6;
  const args = [];
  if (days) args.push(`days=${days}`);
  if (seconds) args.push(`seconds=${seconds}`);
  if (micro) args.push(`microseconds=${micro}`);
  return `datetime.timedelta(${args.length ? args.join(", ") : "0"})`;
}

function datetimeFields(us) {
  const ms = Math.floor(us / 1000);
  const d = new Date(ms);
  const micro = d.getUTCMilliseconds() * 1000 + (us - ms * 1000);
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(),
    d.getUTCMinutes(), d.getUTCSeconds(), micro];
}

/** repr() of numpy.datetime64(us, "us").item(): a datetime.datetime (an int out of its range). */
export function datetimeRepr(us) {
  const fields = datetimeFields(us);
  if (fields[0] < 1 || fields[0] > 9999) return intText(us);
  if (fields[6] === 0) {
    fields.pop();
    if (fields[5] === 0) fields.pop();
  }
  return `datetime.datetime(${fields.join(", ")})`;
}

/** str() of numpy.datetime64(us, "us"): 2024-03-01T12:30:00.000000. */
export function datetime64Str(us) {
  const [y, mo, d, h, mi, s, micro] = datetimeFields(us);
  const p = (x, n = 2) => String(x).padStart(n, "0");
  return `${p(y, 4)}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:${p(s)}.${p(micro, 6)}`;
}

// ----------------------------------------------------------------------------- gap

const FLOAT_TEXT = /^[+-]?(?:(?:\d(?:_?\d)*)(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const UNIT_NS = new Map([
  ...["w"].map((u) => [u, 7n * 86_400_000_000_000n]),
  ...["d", "day", "days"].map((u) => [u, 86_400_000_000_000n]),
  ...["h", "hr", "hour", "hours"].map((u) => [u, 3_600_000_000_000n]),
  ...["m", "min", "minute", "minutes"].map((u) => [u, 60_000_000_000n]),
  ...["s", "sec", "second", "seconds"].map((u) => [u, 1_000_000_000n]),
  ...["ms", "milli", "millis", "millisecond", "milliseconds"].map((u) => [u, 1_000_000n]),
  ...["us", "µs", "micro", "micros", "microsecond", "microseconds"].map((u) => [u, 1000n]),
  ...["ns", "nano", "nanos", "nanosecond", "nanoseconds"].map((u) => [u, 1n]),
]);

/** Python's float(text), or null when float() would refuse it. */
export function pythonFloat(text) {
  const t = text.trim();
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(t);
  if (special) return special[2].toLowerCase() === "nan" ? NaN : special[1] === "-" ? -Infinity : Infinity;
  return FLOAT_TEXT.test(t) ? Number(t.replaceAll("_", "")) : null;
}

/** A decimal number of `unit` nanoseconds, truncated to whole nanoseconds, as a BigInt. */
function decimalNs(number, unitNs) {
  const [whole, frac = ""] = number.split(".");
  const scale = 10n ** BigInt(frac.length);
  return (BigInt(whole || "0") * scale + BigInt(frac || "0")) * unitNs / scale;
}

function clockNs(h, m, s, frac = "") {
  return decimalNs(`${Number(h) * 3600 + Number(m) * 60 + Number(s)}.${frac}`, 1_000_000_000n);
}

/** The pandas.Timedelta(text) forms `--gap` takes, in nanoseconds (BigInt), or null. */
export function timedeltaNs(text) {
  const t = text.trim();
  let m = /^([+-]?)\s*(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?$/.exec(t);
  if (m) return (m[1] === "-" ? -1n : 1n) * clockNs(m[2], m[3], m[4], m[5]);
  m = /^([+-]?)\s*(\d+)\s*days?,?\s+\+?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d+))?$/i.exec(t);
  if (m) return (m[1] === "-" ? -1n : 1n) * BigInt(m[2]) * UNIT_NS.get("d") + clockNs(m[3], m[4], m[5], m[6]);
  m = /^([+-]?)\s*(.*)$/s.exec(t);
  const parts = [...m[2].matchAll(/\s*(\d+(?:\.\d*)?)\s*([a-zA-Zµ]+)\s*,?/gy)];
  if (!parts.length || parts.map((p) => p[0]).join("") !== m[2]) return null;
  let ns = 0n;
  for (const [, number, unit] of parts) {
    if (unit === "M" || unit === "Y" || unit === "y" || !UNIT_NS.has(unit.toLowerCase())) return null;
    ns += decimalNs(number, UNIT_NS.get(unit.toLowerCase()));
  }
  return m[1] === "-" ? -ns : ns;
}

/** `gap` as the CLI's --gap gives it to make_splits: an int, a float, a timedelta (us). */
export function gapValue(gap) {
  if (typeof gap === "number") return Number.isInteger(gap) ? gap : pyFloat(gap);
  if (typeof gap !== "string") return gap;
  const number = pythonFloat(gap);
  if (number !== null) return Number.isInteger(number) ? number : pyFloat(number);
  const ns = timedeltaNs(gap);
  if (ns === null) {
    throw new TypeError(`--gap must be a number or a duration such as 7D or 12h, got ${reprString(gap)}`);
  }
  const us = ns >= 0n ? (ns + 500n) / 1000n : -((-ns + 499n) / 1000n);
  return pyTimedelta(Number(us));
}

const isNumber = (v) => typeof v === "number" || v?.py === "float";
const numberOf = (v) => (typeof v === "number" ? v : v.value);

function isZeroGap(gap) {
  return isNumber(gap) && numberOf(gap) === 0;
}

/** `_gap_value`: the gap checked against the time column's type; null when it is zero. */
function checkedGap(gap, time) {
  if (isZeroGap(gap)) return null;
  if (time.kind === "datetime") {
    if (gap?.py !== "timedelta") {
      throw new TypeError("gap for a datetime64[us] time column must be a timedelta (e.g. " +
        `numpy.timedelta64(7, 'D')), got ${pyRepr(gap)}`);
    }
    if (gap.us < 0) throw new Error(`gap must be a non-negative timedelta, got ${pyRepr(gap)}`);
    return gap.us === 0 ? null : { value: gap.us, isInt: true, shown: pyRepr(gap) };
  }
  if (!isNumber(gap)) {
    throw new TypeError(`gap for a numeric time column must be a number in its units, got ${pyRepr(gap)}`);
  }
  const value = numberOf(gap);
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`gap must be a finite number at least 0, got ${pyRepr(gap)}`);
  }
  return value === 0 ? null : { value, isInt: typeof gap === "number", shown: pyRepr(gap) };
}

// ----------------------------------------------------------------------------- input checks

function pyTypeName(value) {
  if (typeof value === "string") return "str";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  if (typeof value === "boolean") return "bool";
  if (value === null || value === undefined) return "NoneType";
  return value.constructor === Object || !value.constructor ? "dict" : value.constructor.name;
}

function intParam(value, name, minimum) {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new TypeError(`${name} must be an integer, got ${pyRepr(value)}`);
  }
  if (value < minimum) throw new Error(`${name} must be at least ${minimum}, got ${value}`);
  return value;
}

/** `_test_rows`: the test rows T of a test fraction (a float, as --test-fraction reads it). */
function testRows(testFraction, nRows, name) {
  if (typeof testFraction !== "number") {
    throw new TypeError(`${name} must be a number between 0 and 1, got ${pyRepr(testFraction)}`);
  }
  const shown = reprFloat(testFraction);
  if (!(testFraction > 0 && testFraction < 1)) {
    throw new Error(`${name} must be strictly between 0 and 1, got ${shown}`);
  }
  const rows = randomTestRows(nRows, testFraction);
  if (!(rows >= 1 && rows < nRows)) {
    throw new Error(`${name}=${shown} puts ${rows} of ${nRows} rows in the test part; both parts ` +
      "need at least one row");
  }
  return rows;
}

function isMissing(v) {
  return v === null || v === undefined || (typeof v === "number" && !Number.isFinite(v));
}

/** `_column`: a one-dimensional column of nRows values without missing ones. */
function column(values, name, nRows, showMissing = pyRepr) {
  if (typeof values === "string" || (typeof values === "object" && values !== null &&
      !Array.isArray(values) && !ArrayBuffer.isView(values))) {
    throw new TypeError(`${name} must be array-like, got ${pyTypeName(values)}`);
  }
  if (!Array.isArray(values) && !ArrayBuffer.isView(values)) {
    throw new Error(`${name} must be one-dimensional, got shape ()`);
  }
  if (Array.isArray(values) && values.length && Array.isArray(values[0])) {
    throw new Error(`${name} must be one-dimensional, got shape (${values.length}, ${values[0].length})`);
  }
  if (values.length !== nRows) throw new Error(`${name} has ${values.length} values but n_rows is ${nRows}`);
  for (let row = 0; row < nRows; row++) {
    if (isMissing(values[row])) {
      throw new Error(`${name} has a missing or non-finite value (${showMissing(values[row])}) at row ${row}`);
    }
  }
  return values;
}

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

/** How a y value prints: class values as ints (the loader's int64 codes), targets as floats. */
function yShow(task) {
  return task === "regression" ? (v) => (typeof v === "number" ? reprFloat(v) : pyRepr(v)) : pyRepr;
}

function groupShow(groups) {
  const floats = groups instanceof Float64Array || groups instanceof Float32Array;
  return (v) => (floats && typeof v === "number" ? reprFloat(v) : pyRepr(v));
}

function classCodes(y, task) {
  const { values, codes } = uniqueCodes(y);
  const show = yShow(task);
  if (values.length < 2) {
    throw new Error(`y of a ${task} task needs at least two classes, got only ${show(values[0])}`);
  }
  if (task === "binary" && values.length > 2) {
    throw new Error(`y of a binary task must hold two classes, got ${values.length}: ` +
      `[${values.slice(0, 5).map(show).join(", ")}]`);
  }
  return codes;
}

function dtypeOf(values) {
  const strings = Array.prototype.every.call(values, (v) => typeof v === "string");
  if (!strings) return "object";
  return `<U${Math.max(1, ...Array.from(values, (v) => [...v].length))}`;
}

/** `_time_values`: the time column as {values (us for dates), kind, isInt}. */
function timeValues(time, nRows, timeKind) {
  if (!["numeric", "int", "float", "datetime"].includes(timeKind)) {
    throw new Error(`timeKind must be 'numeric', 'int', 'float' or 'datetime', got ${pyRepr(timeKind)}`);
  }
  const dates = timeKind === "datetime";
  column(time, "time", nRows, dates ? () => "None" : pyRepr);
  const values = new Float64Array(nRows);
  let integral = true;
  for (let i = 0; i < nRows; i++) {
    const v = time[i];
    if (typeof v !== "number") {
      throw new TypeError(`time must be numeric or datetime64, got dtype ${dtypeOf(time)} (convert ` +
        "text dates with pandas.to_datetime first)");
    }
    values[i] = dates ? Math.round(v * 1000) : v;
    if (integral && !Number.isInteger(v)) integral = false;
  }
  const isInt = dates || timeKind === "int" || (timeKind === "numeric" && integral);
  return { values, kind: dates ? "datetime" : "numeric", isInt };
}

/** A time value as `_show` prints it (datetimes as datetime.datetime). */
function showTime(time, v) {
  if (time.kind === "datetime") return datetimeRepr(v);
  return time.isInt ? intText(v) : reprFloat(v);
}

/** A time value as str() of the numpy scalar prints it. */
function strTime(time, v) {
  return time.kind === "datetime" ? datetime64Str(v) : showTime(time, v);
}

// ----------------------------------------------------------------------------- generators

function toArray(typed, length) {
  return Array.from(typed.subarray(0, length));
}

/** `_split`: one entry; train and test ascending. */
function split(repeat, fold, train, test) {
  return { id: `r${repeat}-f${fold}`, repeat, fold, train, test };
}

/** `_fold_lists`: per fold, the rows of that fold (test) and the others (train), ascending. */
function foldLists(fold, nFolds, repeat) {
  const n = fold.length;
  const out = [];
  const test = new Int32Array(n);
  const train = new Int32Array(n);
  for (let f = 0; f < nFolds; f++) {
    let nTest = 0;
    let nTrain = 0;
    for (let i = 0; i < n; i++) {
      if (fold[i] === f) test[nTest++] = i;
      else train[nTrain++] = i;
    }
    if (!nTest) {
      throw new Error(`fold ${f} of repeat ${repeat} has no test rows: group sizes are too uneven ` +
        `for ${nFolds} folds`);
    }
    out.push(split(repeat, f, toArray(train, nTrain), toArray(test, nTest)));
  }
  return out;
}

/** `_stratified`: `order` stably sorted by class code (a counting sort; unchanged for null). */
function stratified(order, codes) {
  if (codes === null) return order;
  let nClasses = 0;
  for (let i = 0; i < codes.length; i++) if (codes[i] >= nClasses) nClasses = codes[i] + 1;
  const start = new Int32Array(nClasses + 1);
  for (let j = 0; j < order.length; j++) start[codes[order[j]] + 1]++;
  for (let c = 0; c < nClasses; c++) start[c + 1] += start[c];
  const out = new Int32Array(order.length);
  for (let j = 0; j < order.length; j++) {
    const row = order[j];
    out[start[codes[row]]++] = row;
  }
  return out;
}

/** `_iid_folds`: per repeat, position j of the (stratified) permutation goes to fold j % nFolds. */
function iidFolds(n, codes, nRepeats, nFolds) {
  const rng = defaultRng(IID_SEED);
  const folds = [];
  for (let r = 0; r < nRepeats; r++) {
    const order = stratified(rng.permutation(n), codes);
    const fold = new Int32Array(n);
    for (let j = 0; j < n; j++) fold[order[j]] = j % nFolds;
    folds.push(fold);
  }
  return folds;
}

function iid(nRows, codes, nRepeats, nFolds) {
  return iidFolds(nRows, codes, nRepeats, nFolds).flatMap((fold, r) => foldLists(fold, nFolds, r));
}

/** `_random`: positions j with floor((j+1)T/n) > floor(jT/n) of the (stratified) permutation test. */
function random(nRows, codes, nRepeats, nTest, seed) {
  const rng = defaultRng(seed);
  const atTest = new Uint8Array(nRows);
  let acc = 0;
  for (let j = 0; j < nRows; j++) {
    acc += nTest;
    if (acc >= nRows) {
      acc -= nRows;
      atTest[j] = 1;
    }
  }
  const splits = [];
  const isTest = new Uint8Array(nRows);
  const train = new Int32Array(nRows);
  const test = new Int32Array(nRows);
  for (let r = 0; r < nRepeats; r++) {
    const order = stratified(rng.permutation(nRows), codes);
    for (let j = 0; j < nRows; j++) isTest[order[j]] = atTest[j];
    let a = 0;
    let b = 0;
    for (let i = 0; i < nRows; i++) {
      if (isTest[i]) test[b++] = i;
      else train[a++] = i;
    }
    splits.push(split(r, 0, toArray(train, a), toArray(test, b)));
  }
  return splits;
}

/** `_group_codes`: codes of the sorted distinct group ids, at least nFolds of them. */
function groupCodes(groups, nFolds) {
  const unique = uniqueCodes(groups);
  if (unique.values.length < nFolds) {
    throw new Error(`groups must hold at least ${nFolds} distinct ids, got ${unique.values.length}`);
  }
  return unique;
}

/** `_grouped`: permuted groups in cumulative row order, cut into nFolds row parts. */
function grouped({ codes, counts }, nRepeats, nFolds) {
  const nRows = codes.length;
  const nGroups = counts.length;
  const rng = defaultRng(IID_SEED);
  const splits = [];
  const groupFold = new Int32Array(nGroups);
  for (let r = 0; r < nRepeats; r++) {
    const perm = rng.permutation(nGroups);
    let start = 0;
    for (let p = 0; p < nGroups; p++) {
      groupFold[perm[p]] = Math.floor(start * nFolds / nRows);
      start += counts[perm[p]];
    }
    splits.push(...foldLists(codes.map((g) => groupFold[g]), nFolds, r));
  }
  return splits;
}

/** `_per_group_codes`: each group's target code; refused when a group has two targets. */
function perGroupCodes(groups, unique, y, task, name, target) {
  const { codes } = unique;
  const yCodes = uniqueCodes(y).codes;
  const first = new Int32Array(unique.values.length).fill(-1);
  for (let i = 0; i < codes.length; i++) if (first[codes[i]] < 0) first[codes[i]] = i;
  for (let row = 0; row < codes.length; row++) {
    const other = first[codes[row]];
    if (yCodes[row] === yCodes[other]) continue;
    const show = yShow(task);
    throw new Error(`group_labels='per_group' needs one target value per group, but group ` +
      `${groupShow(groups)(groups[row])} (column ${reprString(name)}) has ${target} = ` +
      `${show(y[other])} at row ${other} but ${show(y[row])} at row ${row}; use ` +
      "group_labels='per_sample'");
  }
  return first.map((row) => yCodes[row]);
}

function groupedPerGroup(codes, nGroups, classes, nRepeats, nFolds) {
  return iidFolds(nGroups, classes, nRepeats, nFolds)
    .flatMap((groupFold, r) => foldLists(codes.map((g) => groupFold[g]), nFolds, r));
}

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
function stableArgsort(values) {
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
function searchLeft(sorted, value) {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The rows whose sorted position (`position`: row → position) is in [from, to), ascending. */
function rowsAt(position, from, to) {
  const out = new Int32Array(Math.max(0, to - from));
  let k = 0;
  for (let row = 0; row < position.length; row++) {
    const p = position[row];
    if (p >= from && p < to) out[k++] = row;
  }
  return Array.from(out);
}

/** The block bounds of `_temporal`: cuts at k n / (nFolds+1), each moved back to its run's start. */
function temporalBounds(sorted, nFolds) {
  const n = sorted.length;
  const bounds = [0];
  for (let k = 1; k <= nFolds; k++) bounds.push(searchLeft(sorted, sorted[Math.floor(k * n / (nFolds + 1))]));
  bounds.push(n);
  if (bounds.some((b, k) => k > 0 && b - bounds[k - 1] <= 0)) {
    let distinct = n ? 1 : 0;
    for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) distinct++;
    throw new Error(`time has too few distinct values (${distinct}) to cut ${n} rows into ` +
      `${nFolds + 1} ordered blocks`);
  }
  return bounds;
}

/** `_temporal`: an expanding window over time-ordered blocks, less the rows within `gap`. */
function temporal(time, nFolds, gap, name) {
  const t = time.values;
  const order = stableArgsort(t);
  const sorted = new Float64Array(t.length);
  const position = new Int32Array(t.length);
  for (let p = 0; p < t.length; p++) {
    sorted[p] = t[order[p]];
    position[order[p]] = p;
  }
  const bounds = temporalBounds(sorted, nFolds);
  const splits = [];
  for (let k = 0; k < nFolds; k++) {
    let nTrain = bounds[k + 1];
    if (gap !== null) {
      const start = sorted[nTrain];
      if (!(start - sorted[0] > gap.value)) {
        throw new Error(`gap=${gap.shown} leaves fold ${k} no training rows: its test block starts ` +
          `at row ${order[nTrain]} (${name} ${showTime(time, start)}) and no row is more than the ` +
          "gap before it");
      }
      nTrain = searchLeft(sorted.subarray(0, nTrain), start - gap.value);
    }
    splits.push(split(0, k, rowsAt(position, 0, nTrain), rowsAt(position, bounds[k + 1], bounds[k + 2])));
  }
  return splits;
}

/** `_check_time`: the latest training time is before the earliest test time, by more than gap. */
function checkTime(time, where, train, test, gap) {
  const t = time.values;
  if (!train.length) throw new Error("zero-size array to reduction operation maximum which has no identity");
  let row = train[0];
  for (const i of train) if (t[i] > t[row]) row = i;
  let earliest = Infinity;
  for (const i of test) if (t[i] < earliest) earliest = t[i];
  const latest = t[row];
  if (gap === null && !(latest < earliest)) {
    throw new Error(`${where}: training row ${row} at time ${strTime(time, latest)} is not before ` +
      `the earliest test time ${strTime(time, earliest)}`);
  }
  if (gap !== null && !(earliest - latest > gap.value)) {
    throw new Error(`${where}: training row ${row} at time ${strTime(time, latest)} is not more than ` +
      `gap=${gap.shown} before the earliest test time ${strTime(time, earliest)}`);
  }
}

/** `_check_groups`: no group in both train and test. */
function checkGroups(groups, { codes, counts }, where, train, test) {
  const inTrain = new Uint8Array(counts.length);
  for (const i of train) inTrain[codes[i]] = 1;
  for (const row of test) {
    if (inTrain[codes[row]]) {
      throw new Error(`${where}: group ${groupShow(groups)(groups[row])} (row ${row}) is in both ` +
        "train and test");
    }
  }
}

// ----------------------------------------------------------------------------- options

/** `_chosen`: [nFolds, nRepeats, splits, extra header keys] of a kfold or random split. */
function chosen(kind, nRows, codes, nRepeats, nFolds, testFraction) {
  if (kind === "kfold") {
    const folds = intParam(nFolds ?? KFOLD_FOLDS, "n_folds", 2);
    if (folds > nRows) throw new Error(`n_folds=${folds} needs at least ${folds} rows, got n_rows=${nRows}`);
    const repeats = nRepeats ?? KFOLD_REPEATS;
    return [folds, repeats, iid(nRows, codes, repeats, folds), {}];
  }
  const fraction = testFraction ?? RANDOM_TEST_FRACTION;
  const nTest = testRows(fraction, nRows, "test_fraction");
  const repeats = nRepeats ?? RANDOM_REPEATS;
  return [1, repeats, random(nRows, codes, repeats, nTest, IID_SEED), { test_fraction: fraction }];
}

function checkKind(kind, groups, time, nFolds, testFraction) {
  if (kind !== null && !CHOSEN_KINDS.includes(kind)) {
    throw new Error("kind must be None (SPEC §6's rule: iid, holdout, grouped or temporal by the " +
      `inputs), 'kfold' or 'random', got ${pyRepr(kind)}`);
  }
  if (kind !== null && (groups !== null || time !== null)) {
    throw new Error(`kind=${pyRepr(kind)} splits rows, not groups or time periods: give ` +
      "groups/time without kind, or kind without groups/time");
  }
  if (nFolds !== null && kind !== "kfold") {
    throw new Error("n_folds is chosen only with kind='kfold' (SPEC §6's rule uses " +
      `${N_FOLDS} folds), got n_folds=${pyRepr(nFolds)} with kind=${pyRepr(kind)}`);
  }
  if (testFraction !== null && kind !== "random") {
    const shown = typeof testFraction === "number" ? reprFloat(testFraction) : pyRepr(testFraction);
    throw new Error("test_fraction is chosen only with kind='random', got " +
      `test_fraction=${shown} with kind=${pyRepr(kind)}`);
  }
}

function checkOptions({ groups, time, y, gap, groupLabels, targetColumn, warnRowOrder }) {
  if (time === null && !isZeroGap(gap)) {
    throw new Error(`gap applies to temporal splits (give time=...), got gap=${pyRepr(gap)} ` +
      "without time");
  }
  if (groupLabels !== null && !GROUP_LABELS.includes(groupLabels)) {
    throw new Error("group_labels must be None, 'per_sample' or 'per_group', " +
      `got ${pyRepr(groupLabels)}`);
  }
  if (groupLabels !== null && groups === null) {
    throw new Error(`group_labels=${pyRepr(groupLabels)} applies to grouped splits (give ` +
      "groups=...)");
  }
  if (groupLabels === "per_group" && y === null) {
    throw new Error("group_labels='per_group' needs y, to check one target value per group and " +
      "to stratify the groups");
  }
  if (targetColumn !== null && typeof targetColumn !== "string") {
    throw new TypeError(`target_column must be a string or None, got ${pyRepr(targetColumn)}`);
  }
  if (typeof warnRowOrder !== "boolean") {
    throw new TypeError(`warn_row_order must be True or False, got ${pyRepr(warnRowOrder)}`);
  }
}

function excludedColumns(groupColumn, timeColumn, leakageColumns) {
  const out = [];
  for (const col of [groupColumn, timeColumn, ...(leakageColumns ?? [])]) {
    if (col === null || col === undefined) continue;
    if (typeof col !== "string") throw new TypeError(`excluded column names must be strings, got ${pyRepr(col)}`);
    if (!out.includes(col)) out.push(col);
  }
  return out;
}

// ----------------------------------------------------------------------------- row order

/** numpy's pairwise sum of float64 (np.add.reduce on a contiguous array). */
function pairwiseSum(a, lo = 0, n = a.length) {
  if (n < 8) {
    let res = 0;
    for (let i = lo; i < lo + n; i++) res += a[i];
    return res;
  }
  if (n <= 128) {
    const r = Array.from({ length: 8 }, (_, j) => a[lo + j]);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j] += a[lo + i + j];
    let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; i++) res += a[lo + i];
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwiseSum(a, lo, n2) + pairwiseSum(a, lo + n2, n - n2);
}

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** `row_order_correlation`: Spearman rho of row position and the target, and its class. */
export function rowOrderCorrelation(y, task) {
  if (!TASKS.includes(task)) throw new Error(`task must be one of ${TASKS_REPR}, got ${pyRepr(task)}`);
  const arr = column(y, "y", y?.length ?? 0);
  const n = arr.length;
  const centred = new Float64Array(n);
  for (let i = 0; i < n; i++) centred[i] = i - (n - 1) / 2;
  const { values, codes, counts } = uniqueCodes(arr);
  if (values.length < 2) return [0.0, null];
  if (task === "regression") {
    const rankOf = new Float64Array(values.length);
    let cum = 0;
    for (let c = 0; c < values.length; c++) {
      cum += counts[c];
      rankOf[c] = cum - (counts[c] + 1) / 2;
    }
    const ranks = Float64Array.from(codes, (c) => rankOf[c]);
    const mean = pairwiseSum(ranks) / n;
    for (let i = 0; i < n; i++) ranks[i] -= mean;
    return [dot(centred, ranks) / Math.sqrt(dot(centred, centred) * dot(ranks, ranks)), null];
  }
  const offset = new Float64Array(values.length);
  for (let i = 0; i < n; i++) offset[codes[i]] += centred[i];
  let best = -1;
  let bestRho = 0;
  for (let c = 0; c < values.length; c++) {
    const share = counts[c] / n;
    const rho = share * (offset[c] / counts[c]) / Math.sqrt(share * (1 - share) * (n * n - 1) / 12);
    if (best < 0 || Math.abs(rho) > Math.abs(bestRho)) [best, bestRho] = [c, rho];
  }
  return [bestRho, values[best]];
}

/** `_warn_row_order`: the warning's text when |rho| passes both bounds, else null. */
function rowOrderWarning(y, task, kind, name) {
  const n = y.length;
  if (n < ROW_ORDER_MIN_ROWS) return null;
  const [rho, label] = rowOrderCorrelation(y, task);
  const bound = Math.max(ROW_ORDER_MIN_RHO, ROW_ORDER_Z / Math.sqrt(n - 1));
  if (!(Math.abs(rho) > bound)) return null;
  let what;
  if (label === null && typeof y[0] !== "number") {
    what = `${name} follows the row order (Spearman rho=${formatFixed(rho, 2, true)})`;
  } else if (label === null) {
    const half = Math.floor(n / 2);
    const v = Float64Array.from(y);
    const mean = (lo, len) => formatGeneral(pairwiseSum(v, lo, len) / len, 4);
    what = `${name} follows the row order (Spearman rho=${formatFixed(rho, 2, true)}: mean ` +
      `${mean(0, half)} in rows 0..${half - 1}, ${mean(half, n - half)} in rows ${half}..${n - 1})`;
  } else {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (y[i] === label) {
        sum += i;
        count++;
      }
    }
    what = `${name} follows the row order (Spearman rho=${formatFixed(rho, 2, true)} for class ` +
      `${yShow(task)(label)}, whose rows average row ${formatFixed(sum / count, 1)} of 0..${n - 1})`;
  }
  return `row order leaks the target: ${what}; |rho| > ${formatFixed(bound, 2)} over ${n} rows, so ` +
    `the table looks sorted, not shuffled. The ${kind} split draws rows at random and stays valid, ` +
    "but sorted rows often mean time or collection order: if so, give the time column (time=, " +
    "time_column=, --time-column: temporal folds) or the entity column (groups=, group_column=, " +
    "--group-column).";
}

// ----------------------------------------------------------------------------- make_splits

const orNull = (v) => (v === undefined ? null : v);

/** The options of makeSplits with Python's defaults: null / undefined are None, except for
 * timeKind, leakageColumns, gap and warnRowOrder, where they mean "not given". */
function optionsOf(options) {
  const o = { ...options };
  for (const key of ["y", "groups", "time", "dataset", "groupColumn", "timeColumn", "nRepeats", "kind",
    "nFolds", "testFraction", "groupLabels", "targetColumn"]) o[key] = orNull(o[key]);
  o.timeKind ??= "numeric";
  o.leakageColumns ??= [];
  o.gap ??= 0;
  o.warnRowOrder ??= false;
  return o;
}

/** make_splits' checks of its options, in its order; the class codes of y (or null). */
function checkInputs(o) {
  o.nRows = intParam(o.nRows, "n_rows", N_FOLDS);
  if (!TASKS.includes(o.task)) throw new Error(`task must be one of ${TASKS_REPR}, got ${pyRepr(o.task)}`);
  if (o.dataset !== null && typeof o.dataset !== "string") {
    throw new TypeError(`dataset must be a string or None, got ${pyRepr(o.dataset)}`);
  }
  if (o.groups !== null && o.time !== null) {
    throw new Error("give either groups (grouped folds) or time (temporal folds), not both");
  }
  checkKind(o.kind, o.groups, o.time, o.nFolds, o.testFraction);
  checkOptions(o);
  if (o.nRepeats !== null) o.nRepeats = intParam(o.nRepeats, "n_repeats", 1);
  const classification = o.task !== "regression";
  if (o.y !== null) {
    column(o.y, "y", o.nRows);
    return classification ? classCodes(o.y, o.task) : null;
  }
  if (classification && o.groups === null && o.time === null) {
    throw new Error(`y is needed to stratify the folds of a ${o.task} task`);
  }
  return null;
}

function temporalSplits(o) {
  if (o.nRepeats !== null && o.nRepeats !== 1) {
    throw new Error(`temporal splits have exactly one repeat, got n_repeats=${o.nRepeats}`);
  }
  const time = timeValues(o.time, o.nRows, o.timeKind);
  const gap = checkedGap(o.gap, time);
  const splits = temporal(time, N_FOLDS, gap, o.timeColumn || "time");
  for (const entry of splits) checkTime(time, `make_splits: split '${entry.id}'`, entry.train, entry.test, gap);
  return { kind: "temporal", seed: null, repeats: 1, folds: N_FOLDS, splits };
}

function groupedSplits(o) {
  const ids = column(o.groups, "groups", o.nRows);
  const unique = groupCodes(ids, N_FOLDS);
  let repeats;
  let splits;
  if (o.groupLabels === "per_group") {
    const target = o.targetColumn === null ? "y" : `column ${reprString(o.targetColumn)}`;
    const byGroup = perGroupCodes(ids, unique, o.y, o.task, o.groupColumn || "groups", target);
    repeats = o.nRepeats ?? nRepeatsFor(effectiveTrainingRows(byGroup.length, N_FOLDS));
    splits = groupedPerGroup(unique.codes, byGroup.length, o.task !== "regression" ? byGroup : null,
      repeats, N_FOLDS);
  } else {
    repeats = o.nRepeats ?? nRepeatsFor(effectiveTrainingRows(o.nRows, N_FOLDS));
    splits = grouped(unique, repeats, N_FOLDS);
  }
  for (const entry of splits) checkGroups(ids, unique, `make_splits: split '${entry.id}'`, entry.train, entry.test);
  return { kind: "grouped", seed: IID_SEED, repeats, folds: N_FOLDS, splits };
}

function rowSplits(o, codes) {
  if (o.kind !== null) {
    const [folds, repeats, splits, extra] = chosen(o.kind, o.nRows, codes, o.nRepeats, o.nFolds, o.testFraction);
    return { kind: o.kind, seed: IID_SEED, repeats, folds, splits, extra };
  }
  if (o.nRows >= HOLDOUT_MIN_ROWS) {
    if (o.nRepeats !== null && o.nRepeats !== 1) {
      throw new Error(`the holdout split has exactly one repeat, got n_repeats=${o.nRepeats}`);
    }
    const splits = random(o.nRows, codes, 1, HOLDOUT_TEST_ROWS, HOLDOUT_SEED);
    return { kind: "holdout", seed: HOLDOUT_SEED, repeats: 1, folds: 1, splits };
  }
  const repeats = o.nRepeats ?? nRepeatsFor(effectiveTrainingRows(o.nRows, N_FOLDS));
  return { kind: "iid", seed: IID_SEED, repeats, folds: N_FOLDS, splits: iid(o.nRows, codes, repeats, N_FOLDS) };
}

/**
 * arenalite.splits.make_splits: the persisted-split object (schema version 1) for a dataset
 * of `nRows` rows, keys in the file's order, train/test as ascending Arrays of row numbers.
 *
 * makeSplits({nRows, task, y, groups, time, timeKind = "numeric", dataset, groupColumn,
 *   timeColumn, leakageColumns = [], nRepeats, kind, nFolds, testFraction, gap = 0,
 *   groupLabels, targetColumn, warnRowOrder = false, warnings})
 *
 * null / undefined stand for Python's None (for timeKind, leakageColumns, gap and warnRowOrder:
 * the default). With warnRowOrder, the RowOrderWarning's text is pushed onto the `warnings`
 * array (when one is given) instead of being printed. The file does not record `gap`.
 */
export function makeSplits(options) {
  const o = optionsOf(options);
  o.gap = gapValue(o.gap);
  const codes = checkInputs(o);
  let made;
  if (o.kind !== null) made = rowSplits(o, codes);
  else if (o.time !== null) made = temporalSplits(o);
  else if (o.groups !== null) made = groupedSplits(o);
  else made = rowSplits(o, codes);
  if (o.warnRowOrder && o.y !== null && ROW_ORDER_KINDS.includes(made.kind)) {
    const name = o.targetColumn === null ? "y" : `column ${reprString(o.targetColumn)}`;
    const warning = rowOrderWarning(o.y, o.task, made.kind, name);
    if (warning !== null && Array.isArray(o.warnings)) o.warnings.push(warning);
  }
  const excluded = excludedColumns(o.groupColumn, o.timeColumn, o.leakageColumns);
  return {
    schema: SCHEMA, version: VERSION, dataset: o.dataset, n_rows: o.nRows, task: o.task,
    kind: made.kind, seed: made.seed, n_repeats: made.repeats, n_folds: made.folds,
    ...made.extra, excluded_columns: excluded, splits: made.splits,
  };
}

// ----------------------------------------------------------------------------- to_json

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

/** The page's name for toJson: the text of a downloaded split file. */
export const splitsJson = toJson;
export { formatFixed, formatGeneral };
