// Python's text for values, so that the page and the Node tools print the Python loader's
// messages word for word: repr() of str, float, int, bool and lists, and format specs
// ("{:.6g}", "{:.2f}", "{:,}", ties to even as Python rounds) used in the messages and in
// `arenalite describe`. Shared by the table reader and the split maker.

/** repr() of a Python str: single quotes unless the text holds ' and no ". */
export function reprString(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (ch === "\\") out += "\\\\";
    else if (ch === quote) out += `\\${quote}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + quote;
}

/** repr() of a Python float: shortest round-trip digits, exponent form outside 1e-4 … 1e16. */
export function reprFloat(x) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const [mantissa, exp] = x.toExponential().split("e");
  const e = Number(exp);
  const digits = mantissa.replace("-", "").replace(".", "");
  const sign = x < 0 ? "-" : "";
  if (e < -4 || e >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
  const whole = digits.padEnd(e + 1, "0");
  const frac = digits.slice(e + 1);
  return `${sign}${whole.slice(0, e + 1)}.${frac || "0"}`;
}

/**
 * repr() of a cell value as Python holds it: strings quoted, booleans True/False, numbers
 * as int or float by `isInt` (a column read as int64 prints 3, as float64 prints 3.0).
 */
export function repr(value, isInt = false) {
  if (value === null || value === undefined) return "None";
  if (typeof value === "string") return reprString(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  if (typeof value === "number") return isInt && Number.isInteger(value) ? String(value) : reprFloat(value);
  if (Array.isArray(value)) return reprList(value);
  return String(value);
}

/** repr() of a Python list. */
export function reprList(values, isInt = false) {
  return `[${values.map((v) => repr(v, isInt)).join(", ")}]`;
}

/** Digits of |x| rounded to `digits` places by `method` (toFixed / toExponential), ties to
 * even as Python's formatting rounds them (JavaScript rounds ties away from zero). */
function roundedText(x, method, digits) {
  const text = Math.abs(x)[method](digits);
  const exact = Math.abs(x)[method](Math.min(100, digits + 40));
  const [mantissa, exponent] = exact.split("e");
  const cut = mantissa.indexOf(".") < 0 ? mantissa.length : mantissa.indexOf(".") + digits + (digits ? 1 : 0);
  const kept = mantissa.slice(0, cut).replace(/\.$/, "");
  const last = Number(kept[kept.length - 1]);
  if (/^50*$/.test(mantissa.slice(cut).replace(".", "")) && last % 2 === 0) {
    return exponent === undefined ? kept : `${kept}e${exponent}`;
  }
  return text;
}

function signOf(x, plus) {
  return x < 0 || Object.is(x, -0) ? "-" : plus ? "+" : "";
}

/** Python's format(x, ".{digits}f") (and "+.{digits}f" with `plus`). */
export function formatFixed(x, digits, plus = false) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return `${signOf(x, plus)}inf`;
  return signOf(x, plus) + roundedText(x, "toFixed", digits);
}

/** Python's format(x, ".{precision}g"). */
export function formatGeneral(x, precision) {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return `${signOf(x)}inf`;
  if (x === 0) return `${signOf(x)}0`;
  const p = Math.max(precision, 1);
  const [mantissa, exp] = roundedText(x, "toExponential", p - 1).split("e");
  const e = Number(exp);
  const strip = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (e < -4 || e >= p) {
    return `${signOf(x)}${strip(mantissa)}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  }
  const digits = mantissa.replace(".", "");
  const text = e < 0 ? `0.${"0".repeat(-e - 1)}${digits}`
    : digits.length > e + 1 ? `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}` : digits.padEnd(e + 1, "0");
  return signOf(x) + strip(text);
}

/** Python's format(n, ","). */
export function thousands(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Python's str.ljust / f"{s:<{w}}" (by code points, as Python counts). */
export function padRight(text, width) {
  const n = [...text].length;
  return n >= width ? text : text + " ".repeat(width - n);
}

/** Python's sort order of str (by code point), for sort comparators. */
export function compareCodePoints(a, b) {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i);
    const y = b.codePointAt(i);
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}
