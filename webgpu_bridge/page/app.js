// The WebGPU timing page: finds the adapter, lists the bundled datasets, runs the chosen
// models on the first N persisted splits of each, and shows / downloads the results table.
import { Bridge, ELSEWHERE, IMPLEMENTATIONS, REGISTRY, RESULT_COLUMNS, checkModel, modelLabel, parameterCount, runSplits } from "../webgpu_bridge/src/index.js";
import { rowsPerSecondChart, stageChart } from "./chart.js";
import { modelFromInputs, paramInput } from "./model_form.js";
import { csvText, firstSplits, formatNumber, repeatsFor, summarize } from "./summary.js";
import { setupOwnTable } from "./own_table.js";

const WEIGHTS = new URL("../webgpu_bridge/weights/", import.meta.url).href;
const DATA = new URL("./data/", import.meta.url);
const $ = (id) => document.getElementById(id);
const LOST = "The GPU device was lost; reload the page to time again.";

// files: per model whose weights have no default file (tabicl, tabpfn, tabfm), the
// checkpoint picked from disk and read in this page ({name, weights}), or null
// own: the dataset-list entry of the user's table (own_table.js), or null
const state = { bridge: null, catalogue: [], rows: [], cappedAt: null, files: {}, own: null };

async function fetchJson(name) {
  const url = new URL(name, DATA);
  const response = await fetch(url);
  if (!response.ok) throw new Error(`could not load ${url.pathname}: HTTP ${response.status}`);
  return response.json();
}

function setStatus(text, kind = "") {
  const status = $("status");
  status.textContent = text;
  status.className = `status ${kind}`;
}

function showNoWebGpu(reason, headline = "WebGPU is not available in this browser: nothing can be timed here.") {
  setStatus(headline, "bad");
  $("no-webgpu-reason").textContent = reason;
  $("no-webgpu").hidden = false;
  $("run").disabled = true;
}

/** One adapter field: its value, or the label and value both hidden when it is empty. */
function adapterField(id, value) {
  const dd = $(id);
  dd.textContent = value ?? "";
  const empty = !dd.textContent;
  dd.hidden = empty;
  dd.previousElementSibling.hidden = empty;  // its <dt> label
}

function showAdapter(info) {
  adapterField("adapter-description", info.description);
  adapterField("adapter-vendor", info.vendor);
  adapterField("adapter-architecture", info.architecture);
  adapterField("adapter-fallback", info.isFallbackAdapter
    ? "yes: a software fallback, times are not those of a GPU" : "no");
  $("adapter").hidden = false;
  setStatus(`Ready: ${info.label}`, "ok");
}

/** Create the bridge; any failure (no navigator.gpu, no adapter, timeout) is shown, never thrown. */
async function connect() {
  if (!window.isSecureContext) {
    showNoWebGpu("this page is not a secure context (it needs http://127.0.0.1, localhost or https)");
    return;
  }
  try {
    state.bridge = await Bridge.create({ defaultWeights: WEIGHTS });
  } catch (err) {
    showNoWebGpu(err.message ?? String(err));
    return;
  }
  state.bridge.device.lost.then((info) => {
    showNoWebGpu(`the GPU device was lost (${info.reason ?? "unknown"}: ${info.message || "no message"})`,
      LOST);
    document.body.dataset.state = "lost";
  });
  showAdapter(state.bridge.adapterInfo);
  $("run").disabled = state.catalogue.length === 0;
}

function cell(tag, text, attrs = {}) {
  const node = document.createElement(tag);
  node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

async function listDatasets() {
  try {
    state.catalogue = await fetchJson("datasets.json");
  } catch (err) {
    $("dataset-rows").replaceChildren(cell("tr", ""));
    $("dataset-rows").firstChild.append(cell("td", `The dataset list could not be loaded: ${err.message}`,
      { colspan: "6" }));
    return;
  }
  $("dataset-rows").replaceChildren(...state.catalogue.map(datasetRow));
}

/** A row of the dataset list: a checkbox (id `ds-NAME`, or `ds-own` for the user's table). */
function datasetRow(d) {
  const tr = document.createElement("tr");
  const box = document.createElement("input");
  Object.assign(box, { type: "checkbox", id: d.own ? "ds-own" : `ds-${d.name}`, name: "dataset",
    value: d.name, checked: true });
  const name = cell("label", d.name, { for: box.id });
  const task = d.task + (d.n_classes ? ` (${d.n_classes} classes)` : "");
  const splits = `${d.n_splits} (${d.n_repeats} × ${d.n_folds} folds, ${d.kind})`;
  tr.append(cell("td", ""), cell("td", ""), cell("td", task), cell("td", formatNumber(d.n_rows)),
    cell("td", String(d.n_features)), cell("td", splits));
  tr.children[0].append(box);
  tr.children[1].append(name);
  if (d.own) {
    tr.id = "own-row";
    tr.children[1].append(cell("span", " (your table)", { class: "help" }));
  }
  return tr;
}

/** The user's table in the dataset list (replacing the previous one), or out of it. */
function showOwnTable(entry) {
  state.own = entry;
  $("own-row")?.remove();
  if (entry) $("dataset-rows").append(datasetRow(entry));
}

/** The datasets ticked in the list: bundled ones, then the user's table. */
function chosenDatasets() {
  const bundled = state.catalogue.filter((d) => $(`ds-${d.name}`).checked);
  return state.own && $("ds-own")?.checked ? [...bundled, state.own] : bundled;
}

/**
 * `nSplits`, or the most splits any chosen dataset's file holds when it asks for more; the
 * field then shows the capped count and a note says why (a run never silently differs
 * from what the form shows).
 */
function capSplits(datasets, nSplits) {
  const most = Math.max(...datasets.map((d) => d.n_splits));
  if (nSplits <= most) {
    if (nSplits !== state.cappedAt) $("splits-note").textContent = "";  // a new count: no note
    return nSplits;
  }
  state.cappedAt = most;
  $("n-splits").value = String(most);
  $("splits-note").textContent = `Capped at ${most}: the chosen datasets' split files hold at ` +
    `most ${most} splits each (you asked for ${formatNumber(nSplits)}).`;
  return most;
}

/** A one-line description of a checkpoint read in this page (the model's `describe`). */
function describeCheckpoint(entry, name, w) {
  const what = IMPLEMENTATIONS[entry.name].describe?.(w) ?? entry.summary;
  const format = w.format ? `${w.format}, ` : "";
  const count = parameterCount(w);
  return `${name}: ${what}${count === null ? "" : `, ${formatNumber(count)} parameters`} (${format}read in this page)`;
}

/** What a weights input's picked files are for the model's loader: one file {bytes, name}, several {files}. */
async function pickedSource(files) {
  const read = await Promise.all(files.map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
  return read.length === 1 ? read[0] : { files: read };
}

/**
 * A file input for a weights parameter without a default file (tabicl, tabpfn, tabfm): the
 * registry's `accept` and `multiple` say what may be picked, the model's own loader
 * (IMPLEMENTATIONS[name].loadWeights) reads it here, never uploaded; a pick it refuses gets
 * the loader's message under the input.
 */
function weightsFileInput(entry, key) {
  const spec = entry.params[key];
  const id = `${entry.name}-${key}`;
  const input = Object.assign(document.createElement("input"),
    { type: "file", id, accept: spec.accept ?? "", multiple: Boolean(spec.multiple) });
  input.setAttribute("aria-describedby", `${id}-status`);
  const status = cell("span", `no file chosen: ${spec.pick ?? spec.help}`, { id: `${id}-status`, class: "help" });
  state.files[entry.name] = null;
  input.addEventListener("change", async () => {
    const files = [...(input.files ?? [])];
    state.files[entry.name] = null;
    delete input.dataset.loaded;
    if (!files.length) return;
    const name = files.map((f) => f.name).join(" + ");
    status.textContent = `reading ${name}…`;
    status.className = "help";
    try {
      const weights = await IMPLEMENTATIONS[entry.name].loadWeights(await pickedSource(files));
      state.files[entry.name] = { name: files.length === 1 ? name : (weights.name ?? name), weights };
      status.textContent = describeCheckpoint(entry, name, weights);
      input.dataset.loaded = "yes";
    } catch (err) {
      status.textContent = err.message ?? String(err);
      status.className = "file-error";
      input.dataset.loaded = "no";
    }
  });
  return [cell("label", key, { for: id, class: "param" }), input, status];
}

/** One checkbox per registry model, with an input per parameter (the registry's bounds). */
function listModels() {
  const rows = REGISTRY.map((e) => {
    const div = cell("div", "", { class: "model" });
    // a model that needs the user's file (a checkpoint) starts unticked
    const needsFile = Object.values(e.params).some((p) => p.type === "weights" && !p.file);
    const box = Object.assign(document.createElement("input"),
      { type: "checkbox", id: `use-${e.name}`, name: "model", value: e.name, checked: !needsFile });
    const label = cell("label", ` — ${e.summary}`, { for: box.id });
    label.prepend(cell("code", e.name));
    // the parameters as a grid under the model: label, input, help (one row each)
    const params = cell("div", "", { class: "params" });
    for (const key of Object.keys(e.params)) {
      if (e.params[key].type === "weights" && !e.params[key].file) {
        params.append(...weightsFileInput(e, key));
        continue;
      }
      const attrs = paramInput(e, key);
      if (!attrs) continue;
      const input = document.createElement("input");
      for (const [k, v] of Object.entries(attrs)) input.setAttribute(k, v);
      params.append(cell("label", key, { for: attrs.id, class: "param" }), input,
        cell("span", e.params[key].help ?? "", { id: `${attrs.id}-help`, class: "help" }));
    }
    div.append(box, label);
    if (params.childElementCount) div.append(params);
    return div;
  });
  // the registry's models without a WebGPU port yet: listed, not selectable, with where they run
  for (const [name, entry] of Object.entries(ELSEWHERE)) {
    const div = cell("div", "", { class: "model elsewhere", id: `elsewhere-${name}` });
    const box = Object.assign(document.createElement("input"),
      { type: "checkbox", id: `use-${name}`, disabled: true });
    const label = cell("label", ` — ${entry.summary}`, { for: box.id });
    label.prepend(cell("code", name));
    div.append(box, label, cell("p", `Not on WebGPU yet: ${name} runs in the ${entry.runners.join(", ")} ` +
      `runner (arenalite run --model ${name} ... --runner ${entry.runners[0]}).`, { class: "help" }));
    rows.push(div);
  }
  $("model-list").replaceChildren(...rows);
}

/** The form's choices, checked; throws an Error naming the field that is wrong. */
function readChoices() {
  const datasets = chosenDatasets();
  if (!datasets.length) throw new Error("choose at least one dataset");
  const positiveInt = (id, what) => {
    const value = Number($(id).value);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${what} must be a positive whole number`);
    return value;
  };
  const nSplits = capSplits(datasets, positiveInt("n-splits", "Splits per dataset"));
  const batchRows = positiveInt("batch-rows", "Query batch size");
  const models = REGISTRY.filter((e) => $(`use-${e.name}`).checked).map((e) => {
    const texts = Object.fromEntries(Object.keys(e.params).map((key) => {
      const input = $(`${e.name}-${key}`);
      return [key, input?.type === "checkbox" ? String(input.checked) : input?.value];
    }));
    const model = modelFromInputs(e, texts, batchRows, checkModel);
    return e.name in state.files ? withFile(e, model) : model;
  });
  if (!models.length) throw new Error("choose at least one model");
  return { datasets, models, nSplits };
}

/**
 * The model with the checkpoint picked for it, labelled by the file's name as Python labels a
 * path: "tabicl(weights=FILE, n_estimators=2)" (several files: the loader's name for them).
 */
function withFile(entry, model) {
  const picked = state.files[entry.name];
  if (!picked) {
    const [key, spec] = Object.entries(entry.params).find(([, p]) => p.type === "weights");
    throw new Error(`${entry.name} needs ${spec.pick ?? spec.help} in its ${key} field ` +
      "(the page reads it here; nothing is uploaded)");
  }
  return { ...model, label: modelLabel({ ...model, weights: picked.name, batchRows: undefined }), weights: picked.weights };
}

/** One labelled progress bar per dataset × model; returns them by "model\0dataset". */
function progressBars(datasets, models, nSplits) {
  const bars = new Map();
  const parts = [];
  for (const d of datasets) {
    for (const m of models) {
      const label = modelLabel(m);
      const id = `progress-${parts.length}`;
      const n = repeatsFor(nSplits, d.n_folds, d.n_repeats) * d.n_folds;
      const bar = Object.assign(document.createElement("progress"), { id, max: n, value: 0 });
      const count = cell("span", `0 / ${n} splits`, { class: "count" });
      parts.push(cell("label", `${label} on ${d.name}`, { for: id }), bar, count);
      bars.set(`${label}\u0000${d.name}`, { bar, count, n });
    }
  }
  $("progress").replaceChildren(...parts);
  $("progress-section").hidden = false;
  return bars;
}

/** `promise`, or a rejection as soon as the device is lost (so a run never hangs on it). */
function unlessLost(promise) {
  const lost = state.bridge.device.lost.then((info) => {
    throw new Error(`the GPU device was lost during the run: ${info.message || info.reason}`);
  });
  lost.catch(() => {});  // handled by the race; this only keeps a late loss from being "unhandled"
  return Promise.race([promise, lost]);
}

async function runAll({ datasets, models, nSplits }) {
  const bars = progressBars(datasets, models, nSplits);
  const rows = [];
  const stages = [];
  const warmups = new Map();
  for (const d of datasets) {
    const [dataset, splits] = d.own ? [d.dataset, d.splits]
      : await Promise.all([fetchJson(`${d.name}.json`), fetchJson(`${d.name}.splits.json`)]);
    const chosen = firstSplits(splits, nSplits);
    for (const model of models) {
      const key = `${modelLabel(model)}\u0000${d.name}`;
      const { bar, count, n } = bars.get(key);
      setStatus(`Running ${modelLabel(model)} on ${d.name}…`);
      const got = await unlessLost(runSplits(state.bridge, dataset, chosen, [model], {
        onProgress: (done) => { bar.value = done; count.textContent = `${done} / ${n} splits`; },
        onMember: (done, k, members) => {
          bar.value = done + k / members;
          count.textContent = `${done} / ${n} splits · split ${done + 1}: member ${k} / ${members}`;
        },
        onTimings: (row, timings) => stages.push({ model: row.model, dataset: row.dataset, stages: timings }),
      }));
      warmups.set(key, state.bridge.warmups.at(-1)?.warmup_ms ?? null);
      rows.push(...got);
    }
  }
  return { rows, warmups, stages };
}

function msCell(s) {
  const td = cell("td", formatNumber(s.median));
  td.append(cell("span", `${formatNumber(s.min)}–${formatNumber(s.max)}`, { class: "range" }));
  return td;
}

function showResults(rows, warmups, stages) {
  const summaries = summarize(rows, warmups);
  const head = document.createElement("tr");
  for (const h of ["Model", "Dataset", "Metric", "Score", "Splits", "Embed ms", "Layers ms", "Head ms",
    "Total ms", "GPU ms", "Rows/s", "Warm-up ms"]) head.append(cell("th", h, { scope: "col" }));
  const body = summaries.map((s) => {
    const tr = document.createElement("tr");
    const score = s.score.mean.toFixed(4) + (s.score.se === null ? "" : ` ± ${s.score.se.toFixed(4)}`);
    tr.append(cell("th", s.model, { scope: "row" }), cell("td", s.dataset), cell("td", s.metric),
      cell("td", score), cell("td", String(s.nSplits)), msCell(s.embed), msCell(s.layers),
      msCell(s.head), msCell(s.total), s.gpuTotal ? msCell(s.gpuTotal) : cell("td", "–"),
      cell("td", formatNumber(s.rowsPerS)),
      cell("td", formatNumber(s.warmupMs)));
    return tr;
  });
  const caption = cell("caption", `Per model × dataset, over the first splits of each file ` +
    `(${state.bridge.adapterInfo.description})`);
  const thead = document.createElement("thead");
  thead.append(head);
  const tbody = document.createElement("tbody");
  tbody.append(...body);
  $("results").replaceChildren(caption, thead, tbody);
  $("chart").replaceChildren(rowsPerSecondChart(summaries),
    cell("figcaption", "Median rows per second over splits (higher is faster).", { class: "help" }),
    stageChart(stages),
    cell("figcaption", "Median wall time of each stage over splits: embed (standardization, " +
      "upload, embedding), each layer (context pass and query batches), head (including the " +
      "read-back); a checkpoint model (tabicl, tabpfn, tabfm): embed = its preprocessing and " +
      "cell/column stages, then each of its layers by the model's own names (row blocks, ICL " +
      "layers), head = the decoder and the ensemble's aggregation, summed over its members. " +
      "Hover a segment for its value.", { class: "help" }));
  $("results-section").hidden = false;
  $("download").disabled = rows.length === 0;
}

/** Before a run: no previous results on screen and nothing to download until it ends. */
function clearResults() {
  state.rows = [];
  $("download").disabled = true;
  $("results-section").hidden = true;
  $("results").replaceChildren();
  $("chart").replaceChildren();
}

function download() {
  const blob = new Blob([csvText(state.rows, RESULT_COLUMNS)], { type: "text/csv" });
  const link = Object.assign(document.createElement("a"), {
    href: URL.createObjectURL(blob), download: "arenalite_webgpu_results.csv",
  });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

async function onRun(event) {
  event.preventDefault();
  $("form-error").textContent = "";
  let choices;
  try {
    choices = readChoices();
  } catch (err) {
    $("form-error").textContent = err.message;
    return;
  }
  $("run").disabled = true;
  clearResults();
  document.body.dataset.state = "running";
  const started = performance.now();
  try {
    const { rows, warmups, stages } = await runAll(choices);
    state.rows = rows;
    showResults(rows, warmups, stages);
    setStatus(`Done: ${rows.length} result rows in ${formatNumber((performance.now() - started) / 1000)} s ` +
      `on ${state.bridge.adapterInfo.label}`, "ok");
    document.body.dataset.state = "done";
  } catch (err) {
    // a lost device may make a GPU call fail before device.lost settles: say the cause
    const { lost } = state.bridge;  // set by the Bridge as soon as device.lost settles
    setStatus(lost ? `The run stopped. ${LOST}` : `The run stopped: ${err.message ?? err}`, "bad");
    document.body.dataset.state = lost ? "lost" : "failed";
  } finally {
    $("run").disabled = Boolean(state.bridge.lost);
  }
}

listModels();
setupOwnTable(showOwnTable);
$("setup").addEventListener("submit", onRun);
$("n-splits").addEventListener("change", () => {
  const chosen = chosenDatasets();
  const value = Number($("n-splits").value);
  if (chosen.length && Number.isInteger(value) && value >= 1) capSplits(chosen, value);
});
$("download").addEventListener("click", download);
await listDatasets();
await connect();
document.body.dataset.state = state.bridge ? "ready" : "unavailable";
