// make_splits' checks of its inputs: integer parameters, test fractions, the y and groups
// columns (one-dimensional, nRows values, none missing), y's class codes, and how values print.
import { reprFloat } from "../py_repr.js";
import { randomTestRows } from "./protocol.js";
import { pyRepr, pyTypeName } from "./py_values.js";
import { uniqueCodes } from "./unique.js";

/** `_int_param`: an integer parameter of at least `minimum`. */
export function intParam(value, name, minimum) {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new TypeError(`${name} must be an integer, got ${pyRepr(value)}`);
  }
  if (value < minimum) throw new Error(`${name} must be at least ${minimum}, got ${value}`);
  return value;
}

/** `_test_rows`: the test rows T of a test fraction (a float, as --test-fraction reads it). */
export function testRows(testFraction, nRows, name) {
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
export function column(values, name, nRows, showMissing = pyRepr) {
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

/** How a y value prints: class values as ints (the loader's int64 codes), targets as floats. */
export function yShow(task) {
  return task === "regression" ? (v) => (typeof v === "number" ? reprFloat(v) : pyRepr(v)) : pyRepr;
}

export function groupShow(groups) {
  const floats = groups instanceof Float64Array || groups instanceof Float32Array;
  return (v) => (floats && typeof v === "number" ? reprFloat(v) : pyRepr(v));
}

export function classCodes(y, task) {
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
