// Cells of a CSV as pandas.read_csv types them (the Python loader, datasets/table.py),
// column by column as rows stream in, into typed arrays: no per-cell objects, so a
// million-row file fits. The parser (PapaParse) splits rows; this decides what a cell is.
//
// A column is, over all its cells (missing ones aside):
// - "int":   every cell an integer ("+3", " 7") and none missing (pandas int64);
// - "float": every cell a number (incl. "inf", ".5", "1E+05"), or integers with missing
//            cells (float64); a column with no value at all is float too;
// - "bool":  every cell True/TRUE/true/False/FALSE/false (bool); with a missing cell in
//            the first SNIFF_ROWS rows it is text, as the Python loader's sniff makes it (a
//            missing cell only later: pandas keeps Python bools, the same values here);
// - "text":  anything else: the raw strings, as sorted categories (Python's str order).
// Missing: pandas' default NA strings, exactly (" NA" with a space is text, as in pandas).

import { compareCodePoints } from "../py_repr.js";

export const NA_STRINGS = new Set(["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN",
  "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
  "nan", "null"]);
const INTEGER = /^\s*[+-]?\d+\s*$/;
const NUMBER = /^\s*([+-]?)(?:(\d+)\.?(\d*)|\.(\d+))(?:[eE]([+-]?)(\d+))?\s*$/;
const INFINITE = /^\s*([+-]?)(?:inf|infinity)\s*$/i;
const TRUE = new Set(["True", "TRUE", "true"]);
const FALSE = new Set(["False", "FALSE", "false"]);

/**
 * A decimal number's text as the Python loader reads it: the correctly rounded double
 * (datasets/table.py asks pandas for it on every version), which is what `Number()` of
 * the same digits gives. The text is rebuilt first because pandas also takes forms that
 * `Number()` does not ("5.", " 7 ", "1E+05" with spaces around).
 */
function decimalNumber(sign, whole, fraction, expSign, expDigits) {
  return Number(`${sign}${whole || "0"}.${fraction || "0"}e${expSign || ""}${expDigits || "0"}`);
}

/** A cell as a number the way pandas' C parser reads it, or null when it is not one. */
export function parseNumber(cell) {
  const m = NUMBER.exec(cell);
  if (m) return decimalNumber(m[1], m[2] ?? "", m[3] ?? m[4] ?? "", m[5], m[6]);
  const inf = INFINITE.exec(cell);
  return inf ? (inf[1] === "-" ? -Infinity : Infinity) : null;
}

const GROW = 1 << 16;
/** pandas types text columns from the first rows (datasets/table.py SNIFF_ROWS). */
export const SNIFF_ROWS = 1000;

function grown(array, need) {
  if (need <= array.length) return array;
  const out = new array.constructor(Math.max(need, array.length * 2, GROW));
  out.set(array);
  return out;
}

/** One column's running state: numbers or booleans in a Float64Array, or text codes. */
class Column {
  constructor(name, forceText) {
    this.name = name;
    this.mode = forceText ? "text" : "empty";  // empty → number | bool | text
    this.allInt = true;
    this.values = new Float64Array(0);
    this.codes = new Int32Array(0);
    this.levels = new Map();
    this.missing = 0;
    this.present = 0;
    this.switched = false;  // text after numbers/booleans: those cells' strings are gone
    this.earlyMissing = false;  // missing within pandas' first SNIFF_ROWS rows
  }

  toText(rows) {
    if (this.present > 0) this.switched = true;
    this.mode = "text";
    this.codes = new Int32Array(Math.max(rows, GROW)).fill(-1);
  }

  add(row, cell) {
    if (cell === undefined || NA_STRINGS.has(cell)) {
      this.missing++;
      if (row < SNIFF_ROWS) this.earlyMissing = true;
      if (this.mode === "text") {
        this.codes = grown(this.codes, row + 1);
        this.codes[row] = -1;
      } else {
        this.values = grown(this.values, row + 1);
        this.values[row] = NaN;
      }
      return;
    }
    this.present++;
    if (this.mode !== "text") {
      const wantBool = this.mode === "bool" || this.mode === "empty";
      if (wantBool && (TRUE.has(cell) || FALSE.has(cell))) {
        this.mode = "bool";
        this.values = grown(this.values, row + 1);
        this.values[row] = TRUE.has(cell) ? 1 : 0;
        return;
      }
      if (this.mode !== "bool") {
        const x = parseNumber(cell);
        if (x !== null) {
          this.mode = "number";
          if (this.allInt && !INTEGER.test(cell)) this.allInt = false;
          this.values = grown(this.values, row + 1);
          this.values[row] = x;
          return;
        }
      }
      this.present--;
      this.toText(row);
      this.present++;
    }
    let code = this.levels.get(cell);
    if (code === undefined) {
      code = this.levels.size;
      this.levels.set(cell, code);
    }
    this.codes = grown(this.codes, row + 1);
    this.codes[row] = code;
  }

  /** A bool column with a missing cell in the sniffed rows is text in pandas: its
   * raw spellings ("TRUE", "false") become the categories. */
  textInPandas() {
    return this.mode === "bool" && this.earlyMissing;
  }

  /** The finished column (n rows): {name, type, values | codes + categories, missing}. */
  finish(n) {
    const { name, missing } = this;
    if (this.mode === "text") {
      const raw = [...this.levels.keys()];
      const order = raw.map((_, i) => i).sort((a, b) => compareCodePoints(raw[a], raw[b]));
      const rank = new Int32Array(raw.length);
      order.forEach((old, i) => { rank[old] = i; });
      const codes = this.codes.slice(0, n);
      for (let i = 0; i < n; i++) if (codes[i] >= 0) codes[i] = rank[codes[i]];
      return { name, type: "text", codes, categories: order.map((i) => raw[i]), missing };
    }
    const values = this.values.slice(0, n);
    if (this.mode === "bool") return { name, type: "bool", values, missing };
    const type = this.mode === "number" && this.allInt && missing === 0 ? "int" : "float";
    return { name, type, values, missing };
  }
}

/**
 * Typed columns from rows of cells (arrays of strings), fed in chunks: `add(rows)` then
 * `finish()`. `forceText` names columns kept as text from the first row (a second pass,
 * when `switchedColumns()` reports a number column that turned out to hold text).
 */
export class ColumnReader {
  constructor(header, { forceText = [], source = "table" } = {}) {
    this.header = header;
    this.source = source;
    this.columns = header.map((name) => new Column(name, forceText.includes(name)));
    this.rows = 0;
    this.line = 1;
  }

  /** Add parsed rows (arrays of cells; fewer cells than columns: the rest missing). */
  add(rows) {
    const width = this.columns.length;
    for (const cells of rows) {
      this.line++;
      if (cells.length === 1 && cells[0].trim() === "") continue;  // a blank line, as pandas skips
      if (cells.length > width) {
        throw new Error(`Error tokenizing data. C error: Expected ${width} fields in line ` +
          `${this.line}, saw ${cells.length}`);
      }
      const r = this.rows++;
      for (let j = 0; j < width; j++) this.columns[j].add(r, cells[j]);
    }
  }

  /** Names of the columns that must be read again as text (see Column.switched). */
  switchedColumns() {
    return this.columns.filter((c) => c.switched || c.textInPandas()).map((c) => c.name);
  }

  finish() {
    return { nRows: this.rows, columns: this.columns.map((c) => c.finish(this.rows)) };
  }
}
