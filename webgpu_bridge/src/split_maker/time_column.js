// The time column of temporal splits: `_time_values` (numbers, or datetimes as microseconds,
// and whether they are ints), and a time value as Python prints it in messages.
import { reprFloat } from "../py_repr.js";
import { column } from "./inputs.js";
import { datetime64Str, datetimeRepr, intText, pyRepr } from "./py_values.js";

function dtypeOf(values) {
  const strings = Array.prototype.every.call(values, (v) => typeof v === "string");
  if (!strings) return "object";
  return `<U${Math.max(1, ...Array.from(values, (v) => [...v].length))}`;
}

/** `_time_values`: the time column as {values (us for dates), kind, isInt}. */
export function timeValues(time, nRows, timeKind) {
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
export function showTime(time, v) {
  if (time.kind === "datetime") return datetimeRepr(v);
  return time.isInt ? intText(v) : reprFloat(v);
}

/** A time value as str() of the numpy scalar prints it. */
export function strTime(time, v) {
  return time.kind === "datetime" ? datetime64Str(v) : showTime(time, v);
}
