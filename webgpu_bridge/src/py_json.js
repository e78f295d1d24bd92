// JSON read as Python's json.loads reads it, so that a loader in a page or in Node refuses a
// broken file with the Python loader's words: the same decoder errors ("Expecting value:
// line 1 column 5 (char 4)", "Extra data", "Unterminated string starting at", …), the same
// literals (NaN, Infinity, -Infinity), UTF-8 decoded with Python's error text, and Python's
// types kept where JavaScript would lose them: a float whose value is integral (16.0, 1e3)
// or not finite is a PyJsonFloat, so that a check for an integer refuses it and repr()
// prints it as Python does. Other numbers are plain: integers as written, floats with a
// fraction (which no integer check takes).
import { reprFloat, reprString } from "./py_repr.js";

/** A JSON number that Python reads as a float although JavaScript could not tell it from an int. */
export class PyJsonFloat {
  constructor(value) { this.value = value; }
  valueOf() { return this.value; }
}

/** A decoding error, with Python's message (JSONDecodeError's or UnicodeDecodeError's). */
export class PyJsonError extends Error {}

const WS = new Set([" ", "\t", "\n", "\r"]);
const ESCAPES = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const NUMBER = /^(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?/;

function fail(message, chars, pos) {
  let line = 1;
  let last = -1;
  for (let i = 0; i < pos; i++) if (chars[i] === "\n") { line += 1; last = i; }
  return new PyJsonError(`${message}: line ${line} column ${pos - last} (char ${pos})`);
}

class StopIteration {
  constructor(at) { this.at = at; }
}

function skip(chars, i) {
  while (i < chars.length && WS.has(chars[i])) i += 1;
  return i;
}

function scanString(chars, end) {
  const begin = end - 1;
  let out = "";
  let i = end;
  for (;;) {
    if (i >= chars.length) throw fail("Unterminated string starting at", chars, begin);
    const c = chars[i];
    if (c === '"') return [out, i + 1];
    if (c !== "\\") {
      if (c.codePointAt(0) <= 0x1f) throw fail("Invalid control character at", chars, i);
      out += c;
      i += 1;
      continue;
    }
    i += 1;
    if (i >= chars.length) throw fail("Unterminated string starting at", chars, begin);
    const e = chars[i];
    if (e !== "u") {
      if (!Object.hasOwn(ESCAPES, e)) throw fail("Invalid \\escape", chars, i - 1);
      out += ESCAPES[e];
      i += 1;
      continue;
    }
    const hex = chars.slice(i + 1, i + 5).join("");
    if (i + 5 >= chars.length) throw fail("Invalid \\uXXXX escape", chars, i);
    if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw fail("Invalid \\uXXXX escape", chars, i);
    let code = parseInt(hex, 16);
    i += 5;
    if (code >= 0xd800 && code <= 0xdbff && i + 6 < chars.length && chars[i] === "\\" && chars[i + 1] === "u") {
      const low = chars.slice(i + 2, i + 6).join("");
      if (!/^[0-9a-fA-F]{4}$/.test(low)) throw fail("Invalid \\uXXXX escape", chars, i + 1);
      const lo = parseInt(low, 16);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        code = 0x10000 + ((code - 0xd800) << 10) + (lo - 0xdc00);
        i += 6;
      }
    }
    out += String.fromCodePoint(code);
  }
}

function scanObject(chars, start) {
  const out = {};
  let i = skip(chars, start);
  if (chars[i] === "}") return [out, i + 1];
  for (;;) {
    if (chars[i] !== '"') throw fail("Expecting property name enclosed in double quotes", chars, i);
    const [key, afterKey] = scanString(chars, i + 1);
    i = skip(chars, afterKey);
    if (chars[i] !== ":") throw fail("Expecting ':' delimiter", chars, i);
    const [value, afterValue] = scanValue(chars, skip(chars, i + 1));
    out[key] = value;
    i = skip(chars, afterValue);
    if (chars[i] === "}") return [out, i + 1];
    if (chars[i] !== ",") throw fail("Expecting ',' delimiter", chars, i);
    i = skip(chars, i + 1);
  }
}

function scanArray(chars, start) {
  const out = [];
  let i = skip(chars, start);
  if (chars[i] === "]") return [out, i + 1];
  for (;;) {
    const [value, after] = scanValue(chars, i);
    out.push(value);
    i = skip(chars, after);
    if (chars[i] === "]") return [out, i + 1];
    if (chars[i] !== ",") throw fail("Expecting ',' delimiter", chars, i);
    i = skip(chars, i + 1);
  }
}

const LITERALS = [["null", null], ["true", true], ["false", false], ["NaN", new PyJsonFloat(NaN)],
  ["Infinity", new PyJsonFloat(Infinity)], ["-Infinity", new PyJsonFloat(-Infinity)]];

function scanValue(chars, i) {
  if (i >= chars.length) throw new StopIteration(i);
  const c = chars[i];
  if (c === '"') return scanString(chars, i + 1);
  if (c === "{") return scanObject(chars, i + 1);
  if (c === "[") return scanArray(chars, i + 1);
  for (const [word, value] of LITERALS) {
    if (chars.slice(i, i + word.length).join("") === word) return [value, i + word.length];
  }
  const m = NUMBER.exec(chars.slice(i, i + 400).join(""));
  if (!m) throw new StopIteration(i);
  const value = Number(m[0]);
  const isFloat = m[2] !== undefined || m[3] !== undefined;
  return [isFloat && (Number.isInteger(value) || !Number.isFinite(value)) ? new PyJsonFloat(value) : value,
    i + m[0].length];
}

/** json.loads(text): the value, or a PyJsonError with Python's message. */
export function loadsPython(text) {
  const chars = Array.from(text);
  if (chars[0] === "\ufeff") throw fail("Unexpected UTF-8 BOM (decode using utf-8-sig)", chars, 0);
  let value;
  let end;
  try {
    [value, end] = scanValue(chars, skip(chars, 0));
  } catch (error) {
    if (error instanceof StopIteration) throw fail("Expecting value", chars, error.at);
    throw error;
  }
  end = skip(chars, end);
  if (end !== chars.length) throw fail("Extra data", chars, end);
  return value;
}

function utf8Error(bytes, start, end, reason) {
  const what = end - start > 1 ? `bytes in position ${start}-${end - 1}`
    : `byte 0x${bytes[start].toString(16).padStart(2, "0")} in position ${start}`;
  return new PyJsonError(`'utf-8' codec can't decode ${what}: ${reason}`);
}

/** bytes.decode("utf-8"): the text, or a PyJsonError with Python's UnicodeDecodeError message. */
export function decodeUtf8(bytes) {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    if (b < 0x80) { i += 1; continue; }
    let need;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) { need = 2; if (b === 0xe0) lo = 0xa0; if (b === 0xed) hi = 0x9f; }
    else if (b >= 0xf0 && b <= 0xf4) { need = 3; if (b === 0xf0) lo = 0x90; if (b === 0xf4) hi = 0x8f; }
    else throw utf8Error(bytes, i, i + 1, "invalid start byte");
    for (let k = 1; k <= need; k++) {
      if (i + k >= bytes.length) throw utf8Error(bytes, i, bytes.length, "unexpected end of data");
      const c = bytes[i + k];
      const [a, z] = k === 1 ? [lo, hi] : [0x80, 0xbf];
      if (c < a || c > z) throw utf8Error(bytes, i, i + k, "invalid continuation byte");
    }
    i += need + 1;
  }
  return new TextDecoder("utf-8").decode(bytes);
}

/** Path.read_text(): universal newlines (\r\n and \r become \n). */
export function universalNewlines(text) {
  return text.replace(/\r\n?/g, "\n");
}

/** repr() of a value loadsPython returned (dicts in their key order, floats as Python prints them). */
export function pyValueRepr(value) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "string") return reprString(value);
  if (value instanceof PyJsonFloat) return reprFloat(value.value);
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : reprFloat(value);
  if (Array.isArray(value)) return `[${value.map(pyValueRepr).join(", ")}]`;
  return `{${Object.entries(value).map(([k, v]) => `${reprString(k)}: ${pyValueRepr(v)}`).join(", ")}}`;
}

/** A Python int (a JSON integer, not a bool or a float). */
export function isPyInt(value) {
  return typeof value === "number" && Number.isInteger(value);
}
