// The page's table worker: reads a picked file (.csv, .csv.gz, .tsv, .tsv.gz) off the main
// thread, so a million-row file never freezes the page, and makes SPEC §6's splits.
// Messages in: {type: "parse", id, file} and {type: "splits", id, input} (make_splits.js's
// options). Out: {type: "progress", id, phase, fraction, rows}, {type: "parsed", id,
// parsed} (typed arrays transferred), {type: "splits", id, splits, warnings}, or
// {type: "error", id, message}. Nothing leaves the machine: the file is read here.
import { MAX_TEXT_CHARS, parseTableText, tableSuffix } from "../webgpu_bridge/src/table/parse.js";
import { makeSplits } from "../webgpu_bridge/src/make_splits.js";

const PAPAPARSE = new URL("../webgpu_bridge/vendor/papaparse/papaparse.min.js", import.meta.url);
let papa = null;

/** PapaParse is a UMD script: give it a CommonJS-like `module` to fill, then take it back. */
async function loadPapa() {
  if (papa) return papa;
  self.module = { exports: {} };
  self.exports = self.module.exports;
  try {
    await import(PAPAPARSE.href);
    papa = self.module.exports;
  } finally {
    delete self.module;
    delete self.exports;
  }
  if (typeof papa?.parse !== "function") throw new Error(`the CSV parser ${PAPAPARSE.pathname} did not load`);
  return papa;
}

async function fileText(file) {
  const gz = tableSuffix(file.name).endsWith(".gz");
  let text;
  try {
    // Response.text() decodes UTF-8 (a BOM dropped), as the Python loader's utf-8-sig
    text = gz ? await new Response(file.stream().pipeThrough(new DecompressionStream("gzip"))).text()
      : await file.text();
  } catch (err) {
    if (gz && err instanceof TypeError) {
      throw new Error(`'${file.name}' is not a readable gzip file (${err.message})`, { cause: err });
    }
    throw new Error(`'${file.name}' could not be read in this page: ${err.message} (the page ` +
      `holds up to ${MAX_TEXT_CHARS.toLocaleString("en")} characters of table text)`, { cause: err });
  }
  if (text.length > MAX_TEXT_CHARS) {
    throw new Error(`'${file.name}' is ${text.length.toLocaleString("en")} characters of text, past ` +
      `the ${MAX_TEXT_CHARS.toLocaleString("en")} this page holds; cut the table (fewer rows or ` +
      "columns) or run it with the Node runner (arenalite run --runner webgpu)");
  }
  return text;
}

function transferables(parsed) {
  return parsed.columns.map((c) => (c.values ?? c.codes).buffer);
}

async function parse(id, file) {
  post({ type: "progress", id, phase: "reading", fraction: 0, rows: 0 });
  const Papa = await loadPapa();
  const text = await fileText(file);
  let last = 0;
  const parsed = await parseTableText(Papa, () => text, {
    path: file.name, size: text.length,
    onProgress(fraction, rows) {
      const now = performance.now();
      if (now - last < 100 && fraction < 1) return;
      last = now;
      post({ type: "progress", id, phase: "parsing", fraction, rows });
    },
  });
  post({ type: "parsed", id, parsed }, transferables(parsed));
}

function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

self.onmessage = async ({ data }) => {
  const { id } = data;
  try {
    if (data.type === "parse") await parse(id, data.file);
    else if (data.type === "splits") {
      const warnings = [];
      const splits = makeSplits({ ...data.input, warnings });
      post({ type: "splits", id, splits, warnings });
    } else throw new Error(`unknown message ${JSON.stringify(data.type)}`);
  } catch (err) {
    post({ type: "error", id, message: err.message ?? String(err) });
  }
};
