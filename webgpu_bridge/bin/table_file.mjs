// A table file read under Node exactly as the page's worker reads a picked file: gunzip
// when .gz, PapaParse, then the loader's checks (src/table/). Shared by the Node tools.
import { readFile } from "node:fs/promises";
import { gunzipSync } from "node:zlib";
import Papa from "papaparse";
import { defaultName, parseTableText, tableSuffix } from "../src/table/parse.js";
import { readTable } from "../src/table/table.js";
import { reprString } from "../src/py_repr.js";

/** The text of a table file (a .gz one decompressed); a missing file is one clear error. */
export async function tableText(path) {
  const suffix = tableSuffix(path);
  let bytes;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if (err.code === "ENOENT") throw new Error(`table file ${reprString(path)} does not exist`, { cause: err });
    throw err;
  }
  if (suffix.endsWith(".gz")) bytes = gunzipSync(bytes);
  return new TextDecoder("utf-8").decode(bytes);
}

/** Parse and check a table file; `options` are readTable's (target, task, groupColumn, …). */
export async function readTableFile(path, options = {}) {
  const text = await tableText(path);
  const parsed = await parseTableText(Papa, () => text, { path, size: text.length });
  return readTable(parsed, { name: defaultName(path), ...options });
}
