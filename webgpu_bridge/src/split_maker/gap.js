// The temporal gap: `--gap` text read as Python's float() or pandas.Timedelta() reads it, and
// `_gap_value`'s check of the gap against the time column's type.
import { reprString } from "../py_repr.js";
import { pyFloat, pyRepr, pyTimedelta } from "./py_values.js";

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

/** A gap of zero (0 or 0.0): no gap at all, the default. */
export function isZeroGap(gap) {
  return isNumber(gap) && numberOf(gap) === 0;
}

/** `_gap_value`: the gap checked against the time column's type; null when it is zero. */
export function checkedGap(gap, time) {
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
