// A table file's text into typed columns, as the Python loader reads it (datasets/table.py
// `_read_file`): PapaParse (passed in, so the page's worker and Node share this code)
// splits the rows in chunks; cells.js types them. The file-level refusals are the
// Python messages, word for word.

import { ColumnReader } from "./cells.js";
import { repr, reprString } from "../py_repr.js";

export const SUFFIXES = [".csv", ".csv.gz", ".tsv", ".tsv.gz", ".parquet"];
const CHUNK_CHARS = 1 << 22;
/** The longest string a JavaScript engine holds (V8: 2^29 - 24 characters): the most
 * table text the page reads at once. */
export const MAX_TEXT_CHARS = 2 ** 29 - 24;

/** The file type of a table file name (longest suffix first), or a Python-worded error. */
export function tableSuffix(path) {
  const name = path.split(/[\\/]/).pop().toLowerCase();
  const found = [...SUFFIXES].sort((a, b) => b.length - a.length).find((s) => name.endsWith(s));
  if (!found) {
    throw new Error(`${reprString(path)}: unsupported table file type; arenalite reads ` +
      SUFFIXES.join(", "));
  }
  if (found === ".parquet") {
    throw new Error(`${reprString(path)}: the browser and Node tools read .csv, .csv.gz, .tsv ` +
      "and .tsv.gz; save the table as CSV (arenalite's Python loader reads Parquet)");
  }
  return found;
}

/** The table's name from its file: `sales.csv.gz` → `sales`. */
export function defaultName(path) {
  const name = path.split(/[\\/]/).pop();
  return name.slice(0, name.length - tableSuffix(path).length);
}

/** The column separator of a table file name. */
export function delimiterOf(path) {
  return tableSuffix(path).startsWith(".tsv") ? "\t" : ",";
}

function checkHeader(header, path) {
  if (!header || header.length === 0 || (header.length === 1 && header[0] === "")) {
    throw new Error(`${reprString(path)} is empty (no header row)`);
  }
  const seen = new Map();
  header.forEach((name, position) => {
    if (seen.has(name)) {
      throw new Error(`${reprString(path)}: column name ${repr(name)} appears twice (at ` +
        `position ${seen.get(name)} and ${position}); rename one`);
    }
    seen.set(name, position);
  });
}

function onePass(Papa, input, { path, delimiter, forceText, onProgress, size }) {
  return new Promise((resolve, reject) => {
    let reader = null;
    let failure = null;
    Papa.parse(input, {
      delimiter, header: false, skipEmptyLines: false, dynamicTyping: false,
      chunkSize: CHUNK_CHARS,
      chunk(results, parser) {
        try {
          let rows = results.data;
          if (reader === null) {
            const header = rows[0];
            if (header?.[0]?.startsWith("\ufeff")) header[0] = header[0].slice(1);
            checkHeader(header, path);
            reader = new ColumnReader(header, { forceText });
            rows = rows.slice(1);
          }
          reader.add(rows);
          onProgress?.(Math.min(results.meta.cursor / (size || 1), 1), reader.rows);
        } catch (err) {
          failure = err;
          parser.abort();
        }
      },
      complete() {
        if (failure) reject(failure);
        else if (reader === null) reject(new Error(`${reprString(path)} is empty (no header row)`));
        else resolve(reader);
      },
      error(err) { reject(new Error(`${reprString(path)}: ${err.message ?? err}`)); },
    });
  });
}

/**
 * Parse a table file's text (a string, or a File/Blob in a browser worker) into
 * {header, nRows, columns} (cells.js columns). `path` names the file in messages;
 * `onProgress(fraction, rows)` follows the parse; `size` is the input's length for it.
 * `getInput()` gives the input again when a column must be read a second time.
 */
export async function parseTableText(Papa, getInput, { path, onProgress, size } = {}) {
  const delimiter = delimiterOf(path);
  let reader = await onePass(Papa, getInput(), { path, delimiter, forceText: [], onProgress, size });
  const again = reader.switchedColumns();
  if (again.length) {
    reader = await onePass(Papa, getInput(), { path, delimiter, forceText: again, onProgress, size });
  }
  const { nRows, columns } = reader.finish();
  if (nRows === 0) throw new Error(`${reprString(path)} has a header but no data rows`);
  return { header: reader.header, nRows, columns };
}
