// The page's "Your own table" section: a file picked from disk is parsed in a worker
// (table_worker.js), its columns' roles are chosen from the header, and the table is
// checked, described and split exactly as `arenalite describe` / `arenalite splits` do
// (src/table/, src/make_splits.js); or the user's split file is checked against it.
// The result is one more dataset for the run: {own: true, dataset, splits, ...}.
import { checkTableSplits, fingerprint } from "../webgpu_bridge/src/table/fingerprint.js";
import { defaultName } from "../webgpu_bridge/src/table/parse.js";
import { describeTable } from "../webgpu_bridge/src/table/describe.js";
import { readTable } from "../webgpu_bridge/src/table/table.js";
import { parseSplits } from "../webgpu_bridge/src/splits.js";
import { splitsJson } from "../webgpu_bridge/src/make_splits.js";

const $ = (id) => document.getElementById(id);
const ROLE_SELECTS = ["table-target", "table-task", "table-group", "table-time", "table-leakage",
  "table-categorical"];

/** The worker, and one promise per request (by id). */
class TableWorker {
  constructor() {
    this.worker = new Worker(new URL("./table_worker.js", import.meta.url), { type: "module" });
    this.pending = new Map();
    this.next = 0;
    this.worker.onmessage = ({ data }) => {
      const job = this.pending.get(data.id);
      if (!job) return;
      if (data.type === "progress") job.onProgress?.(data);
      else {
        this.pending.delete(data.id);
        if (data.type === "error") job.reject(new Error(data.message));
        else job.resolve(data);
      }
    };
    this.worker.onerror = (event) => {
      for (const job of this.pending.values()) job.reject(new Error(`the table worker failed: ${event.message}`));
      this.pending.clear();
    };
  }

  request(message, onProgress) {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ ...message, id });
    });
  }
}

function options(select, names, { none = null } = {}) {
  const keep = new Set([...select.selectedOptions].map((o) => o.value));
  const items = none === null ? [] : [new Option(none, "")];
  for (const name of names) items.push(new Option(name, name, false, keep.has(name)));
  select.replaceChildren(...items);
}

function picked(id) {
  return [...$(id).selectedOptions].map((o) => o.value).filter(Boolean);
}

/** The first N rows of a parsed table (cells.js columns), for the "Rows" field. */
function firstRows(parsed, n) {
  if (!n || n >= parsed.nRows) return parsed;
  const columns = parsed.columns.map((c) => (c.values
    ? { ...c, values: c.values.subarray(0, n), missing: countMissing(c.values, n, Number.isNaN) }
    : { ...c, codes: c.codes.subarray(0, n), missing: countMissing(c.codes, n, (v) => v < 0) }));
  return { ...parsed, nRows: n, columns: keepPresentCategories(columns) };
}

function countMissing(values, n, isMissing) {
  let k = 0;
  for (let i = 0; i < n; i++) if (isMissing(values[i])) k++;
  return k;
}

/** After a cut, a text column's categories are only those still present (pandas' read). */
function keepPresentCategories(columns) {
  return columns.map((c) => {
    if (!c.codes) return c;
    const seen = new Uint8Array(c.categories.length);
    for (const code of c.codes) if (code >= 0) seen[code] = 1;
    if (seen.every(Boolean)) return c;
    const rank = new Int32Array(c.categories.length);
    const categories = [];
    c.categories.forEach((v, k) => { if (seen[k]) { rank[k] = categories.length; categories.push(v); } });
    const codes = Int32Array.from(c.codes, (code) => (code < 0 ? -1 : rank[code]));
    return { ...c, codes, categories };
  });
}

function saveText(text, name, type) {
  const link = Object.assign(document.createElement("a"), {
    href: URL.createObjectURL(new Blob([text], { type })), download: name,
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

/** The role fields' values as readTable's options. */
function roles(fileName) {
  return {
    name: defaultName(fileName), target: $("table-target").value || null,
    task: $("table-task").value || null, groupColumn: $("table-group").value || null,
    timeColumn: $("table-time").value || null, leakageColumns: picked("table-leakage"),
    categorical: picked("table-categorical"),
  };
}

/** The dataset-list entry of a checked table and its splits. */
function entryOf(table, splits) {
  return {
    own: true, name: table.name, task: table.task, n_rows: table.nRows,
    n_features: table.features.length, n_classes: table.nClasses, kind: splits.kind,
    n_repeats: splits.n_repeats, n_folds: splits.n_folds, n_splits: splits.splits.length,
    dataset: table, splits,
  };
}

/** The section's state: the picked file, its parsed columns, the user's split file. */
class OwnTable {
  constructor(onTable) {
    Object.assign(this, { onTable, worker: null, file: null, parsed: null, splitsFile: null,
      version: 0, entry: null, parseMs: 0 });
  }

  fail(message) {
    $("table-error").textContent = message;
    $("table-describe").hidden = true;
    document.querySelector(".own-actions").hidden = true;
    this.entry = null;
    this.onTable(null);
  }

  /** The user's split file checked against the table, or the page's own splits. */
  async splitsFor(table) {
    if (this.splitsFile) {
      const { splits, name } = this.splitsFile;
      parseSplits(splits, { nRows: table.nRows, task: table.task });
      await checkTableSplits(table, splits, name);
      $("table-splits-note").textContent = `splits from ${name}`;
      return splits;
    }
    $("table-status").textContent = "making the splits…";
    const made = await this.worker.request({ type: "splits", input: splitInput(table) });
    $("table-splits-note").textContent = made.warnings.join(" ") ||
      "made in this page: the file arenalite splits writes for these flags";
    return { ...made.splits, fingerprint: await fingerprint(table) };
  }

  /** Check, split and describe the table for the current roles (the latest call wins). */
  async refresh() {
    const version = ++this.version;
    $("table-error").textContent = "";
    if (!this.parsed) return;
    const t0 = performance.now();
    let table, splits, t1;
    try {
      table = readTable(firstRows(this.parsed, Number($("table-rows").value) || 0), roles(this.file.name));
      t1 = performance.now();
      splits = await this.splitsFor(table);
    } catch (err) {
      if (version === this.version) this.fail(err.message ?? String(err));
      return;
    }
    if (version !== this.version) return;
    const t2 = performance.now();
    // wall times of the last read, for the user and bench/bench_page_table.py
    Object.assign($("own-table").dataset, { parseMs: this.parseMs.toFixed(0),
      checkMs: (t1 - t0).toFixed(0), splitMs: (t2 - t1).toFixed(0) });
    const s = (ms) => (ms / 1000).toFixed(1);
    $("table-status").textContent = `${this.file.name}: ${table.nRows.toLocaleString("en")} rows ` +
      `(parsed in ${s(this.parseMs)} s, checked in ${s(t1 - t0)} s, split in ${s(t2 - t1)} s)`;
    $("table-describe").textContent = describeTable(table, splits);
    $("table-describe").hidden = false;
    document.querySelector(".own-actions").hidden = false;
    this.entry = entryOf(table, splits);
    this.onTable(this.entry);
  }

  async parse(file) {
    this.worker ??= new TableWorker();
    const bar = $("table-progress");
    Object.assign(bar, { hidden: false, value: 0 });
    const started = performance.now();
    try {
      const { parsed } = await this.worker.request({ type: "parse", file }, ({ phase, fraction, rows }) => {
        bar.value = fraction;
        $("table-status").textContent = phase === "reading" ? `reading ${file.name}…`
          : `parsing ${file.name}: ${rows.toLocaleString("en")} rows (${Math.round(fraction * 100)} %)`;
      });
      this.parseMs = performance.now() - started;
      return parsed;
    } finally {
      bar.hidden = true;
    }
  }

  async pickTable() {
    const file = $("table-file").files?.[0];
    Object.assign(this, { parsed: null, file: file ?? null });
    $("table-roles").hidden = true;
    $("table-describe").hidden = true;
    $("table-error").textContent = "";
    delete document.body.dataset.table;
    this.onTable(null);
    if (!file) return;
    try {
      this.parsed = await this.parse(file);
    } catch (err) {
      $("table-status").textContent = "";
      this.fail(err.message ?? String(err));
      return;
    }
    const names = this.parsed.header;
    options($("table-target"), names, { none: "(choose the target)" });
    const guess = names.find((n) => /^(target|label|class|y)$/i.test(n));
    if (guess && !$("table-target").value) $("table-target").value = guess;
    options($("table-group"), names, { none: "none" });
    options($("table-time"), names, { none: "none" });
    options($("table-leakage"), names);
    options($("table-categorical"), names);
    $("table-roles").hidden = false;
    document.body.dataset.table = "parsed";
    await this.refresh();
  }

  async pickSplits() {
    const file = $("table-splits-file").files?.[0];
    this.splitsFile = null;
    $("table-splits-clear").hidden = !file;
    if (file) {
      try {
        this.splitsFile = { name: file.name, splits: JSON.parse(await file.text()) };
      } catch (err) {
        this.fail(`${file.name} is not a JSON split file: ${err.message}`);
        return;
      }
    }
    await this.refresh();
  }
}

/**
 * Wire the section. `onTable(entry | null)` is called whenever the table, its roles or its
 * splits change: `entry` is the dataset-list entry of the checked table, null while none.
 */
export function setupOwnTable(onTable) {
  const section = new OwnTable(onTable);
  $("table-file").addEventListener("change", () => section.pickTable());
  $("table-splits-file").addEventListener("change", () => section.pickSplits());
  $("table-splits-clear").addEventListener("click", () => {
    $("table-splits-file").value = "";
    section.pickSplits();
  });
  for (const id of [...ROLE_SELECTS, "table-rows"]) $(id).addEventListener("change", () => section.refresh());
  $("table-splits-download").addEventListener("click", () => {
    if (section.entry) {
      saveText(splitsJson(section.entry.splits), `${section.entry.name}.splits.json`, "application/json");
    }
  });
  return section;
}

/** make_splits.js's input for a checked table (the flags of `arenalite splits`). */
function splitInput(table) {
  return {
    nRows: table.nRows, task: table.task, y: table.y, groups: table.groups, time: table.time,
    timeKind: table.timeKind, dataset: table.name, groupColumn: table.groupColumn,
    timeColumn: table.timeColumn, targetColumn: table.target,
    leakageColumns: table.excludedColumns.filter((c) => c !== table.groupColumn && c !== table.timeColumn),
    warnRowOrder: true,
  };
}
