// Google TabFM checkpoints read in a page, a worker or Node without Python or torch: the
// JavaScript twin of pkg/arenalite/models/tabfm/checkpoint.py (and of model.py's load):
// the package's save_pretrained folder (config.json + model.safetensors; in Node its path,
// or the parent of classification/ and regression/ with the task picking; in a page the
// two files picked together) or `arenalite convert tabfm`'s single .safetensors (the config
// as JSON in its metadata). The same ARCHITECTURE, expectedShapes and checks as Python's,
// and every refusal in Python's words (the JSON read by ../py_json.js, the file by
// ../safetensors.js's checked reader): nothing from a file is used until all of it is
// checked.
//
//   const w = await loadTabfmWeights("tabfm-1.0.0", { task: "classification" });
//   // w: {config, tensors: Map(name → Float32Array), shapes: Map(name → number[]), name}
//   // without a task, a folder path (or a page's files of both task folders) gives
//   // {name, forTask(task)}: tabfmWeightsFor(w, task) reads the task's folder then.
import { PyJsonError, PyJsonFloat, decodeUtf8, isPyInt, loadsPython, pyValueRepr, universalNewlines } from "../py_json.js";
import { reprString } from "../py_repr.js";
import { checkedHeader, readSafetensors } from "../checkpoint/safetensors.js";

export const FORMAT = "arenalite.tabfm";
export const VERSION = "1";
export const CONFIG_NAME = "config.json";
export const WEIGHTS_NAME = "model.safetensors";
export const TASKS = Object.freeze(["classification", "regression"]);
/** tabfm.src.pytorch.model.TabFM.__init__'s parameters and defaults (tabfm 1.0.1), in order. */
export const ARCHITECTURE = Object.freeze({
  embed_dim: 8, max_classes: 3, col_num_blocks: 2, col_nhead: 2,
  col_num_inds: 4, row_num_blocks: 2, row_nhead: 2, row_num_cls: 2,
  icl_num_blocks: 2, icl_nhead: 2, ff_factor: 2, feature_group_size: 3,
  num_freq: 32, decoder_hidden: null, is_classifier: true,
});
/** The keys the hub's config.json adds. */
export const HUB_KEYS = Object.freeze(["task", "model_type", "version", "framework"]);
/** The v1.0.0 checkpoint's architecture. */
export const V1_0_0 = Object.freeze({ ...ARCHITECTURE, embed_dim: 256, max_classes: 10, col_num_blocks: 3,
  col_nhead: 4, col_num_inds: 256, row_num_blocks: 3, row_nhead: 8, row_num_cls: 8, icl_num_blocks: 24,
  icl_nhead: 8, ff_factor: 4, feature_group_size: 3 });

const KEYS = Object.keys(ARCHITECTURE);
const listRepr = (items) => `[${items.map(reprString).join(", ")}]`;
const isNode = typeof process !== "undefined" && !!process.versions?.node;

function typeName(value) {
  if (value === null) return "NoneType";
  if (typeof value === "boolean") return "bool";
  if (typeof value === "string") return "str";
  if (value instanceof PyJsonFloat) return "float";
  if (typeof value === "number") return Number.isInteger(value) ? "int" : "float";
  return Array.isArray(value) ? "list" : "dict";
}

const isDict = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof PyJsonFloat);
const pyStr = (v) => (v === true ? "True" : v === false ? "False" : v === null ? "None" : pyValueRepr(v));

// --- config and the state dict it implies -------------------------------------------------

/**
 * `config` completed with ARCHITECTURE's defaults and checked (checkpoint.py's
 * check_config): the hub's keys kept as given, `task` setting `is_classifier`; an unknown
 * key, a wrong type, a head count that does not divide its width or a row head of odd
 * width throws an Error starting with `where`. A value read by ../py_json.js keeps
 * Python's type (16.0 is a float, not an integer).
 */
export function checkConfig(config, where = "Google TabFM config") {
  if (!isDict(config)) {
    throw new Error(`${where}: the config must be a JSON object, got ${typeName(config)}`);
  }
  const unknown = Object.keys(config).filter((k) => !KEYS.includes(k) && !HUB_KEYS.includes(k));
  if (unknown.length) {
    throw new Error(`${where}: unknown config key(s) ${listRepr(unknown.sort())}: this reader knows ` +
      `tabfm 1.0.1's ${listRepr([...KEYS, ...HUB_KEYS])} and will not guess what a newer release's key changes`);
  }
  const out = {};
  for (const key of KEYS) out[key] = Object.hasOwn(config, key) ? config[key] : ARCHITECTURE[key];
  for (const key of HUB_KEYS) {
    if (!Object.hasOwn(config, key)) continue;
    if (typeof config[key] !== "string") {
      throw new Error(`${where}: ${reprString(key)} must be a string, got ${pyValueRepr(config[key])}`);
    }
    out[key] = config[key];
  }
  const task = Object.hasOwn(config, "task") ? config.task : null;
  if (task !== null && !TASKS.includes(task)) {
    throw new Error(`${where}: 'task' must be one of ${listRepr(TASKS)}, got ${pyValueRepr(task)}`);
  }
  if (typeof out.is_classifier !== "boolean") {
    throw new Error(`${where}: 'is_classifier' must be true or false, got ${pyValueRepr(out.is_classifier)}`);
  }
  if (task !== null) {
    if (Object.hasOwn(config, "is_classifier") && out.is_classifier !== (task === "classification")) {
      throw new Error(`${where}: 'task' ${reprString(task)} contradicts 'is_classifier' ${pyStr(out.is_classifier)}`);
    }
    out.is_classifier = task === "classification";
  }
  const fail = (key, what) => new Error(`${where}: ${reprString(key)} must be ${what}, got ${pyValueRepr(out[key])}`);
  for (const key of ["embed_dim", "max_classes", "col_nhead", "col_num_inds", "row_nhead", "row_num_cls",
    "icl_nhead", "ff_factor", "feature_group_size", "num_freq"]) {
    if (!isPyInt(out[key]) || out[key] < 1) throw fail(key, "a positive integer");
  }
  for (const key of ["col_num_blocks", "row_num_blocks", "icl_num_blocks"]) {
    if (!isPyInt(out[key]) || out[key] < 0) throw fail(key, "a non-negative integer");
  }
  if (out.decoder_hidden !== null && (!isPyInt(out.decoder_hidden) || out.decoder_hidden < 1)) {
    throw fail("decoder_hidden", "null or a positive integer");
  }
  const iclDim = out.embed_dim * out.row_num_cls;
  for (const [key, width, what] of [["col_nhead", out.embed_dim, "embed_dim"], ["row_nhead", out.embed_dim, "embed_dim"],
    ["icl_nhead", iclDim, "embed_dim × row_num_cls"]]) {
    if (width % out[key]) throw new Error(`${where}: ${key}=${out[key]} does not divide ${what} = ${width}`);
  }
  if (Math.floor(out.embed_dim / out.row_nhead) % 2) {
    throw new Error(`${where}: row heads of odd width (${out.embed_dim} / ${out.row_nhead}) cannot be ` +
      "rotated in pairs (RoPE)");
  }
  return out;
}

/** One MultiheadAttentionBlock's entries, in state-dict order. */
function attentionBlock(shapes, p, d, heads, ff) {
  const hd = Math.floor(d / heads);
  shapes.set(`${p}attn.per_dim_scale`, [hd]);
  for (const proj of ["q_proj", "k_proj", "v_proj", "out_proj"]) {
    shapes.set(`${p}attn.${proj}.weight`, [d, d]).set(`${p}attn.${proj}.bias`, [d]);
  }
  shapes.set(`${p}attn.query_ln.weight`, [hd]).set(`${p}attn.key_ln.weight`, [hd]);
  for (const norm of ["pre_attn_ln", "post_attn_ln", "pre_ff_ln", "post_ff_ln"]) shapes.set(`${p}${norm}.weight`, [d]);
  shapes.set(`${p}linear1.weight`, [ff, d]).set(`${p}linear1.bias`, [ff])
    .set(`${p}linear1_gate.weight`, [ff, d]).set(`${p}linear1_gate.bias`, [ff])
    .set(`${p}linear2.weight`, [d, ff]).set(`${p}linear2.bias`, [d]);
}

function mlp(shapes, p, dims) {
  for (let k = 0; k + 1 < dims.length; k++) {
    shapes.set(`${p}layers.${k}.weight`, [dims[k + 1], dims[k]]).set(`${p}layers.${k}.bias`, [dims[k + 1]]);
  }
}

/** Every state-dict name of TabFM(**config) and its shape, in state-dict order (a Map). */
export function expectedShapes(config) {
  const c = checkConfig(config);
  const e = c.embed_dim;
  const ff = e * c.ff_factor;
  const icl = e * c.row_num_cls;
  const hidden = c.decoder_hidden || 2 * icl;
  const { max_classes: classes, feature_group_size: g, num_freq: nf } = c;
  const shapes = new Map([["cls_tokens", [c.row_num_cls, e]]]);
  let p = "cell_embedder.";
  shapes.set(`${p}fourier_frequencies`, [g, nf]).set(`${p}fourier_frequencies_cat`, [g, nf])
    .set(`${p}in_linear.weight`, [e, 2 * nf]).set(`${p}in_linear.bias`, [e])
    .set(`${p}in_linear_cat.weight`, [e, 2 * nf]).set(`${p}in_linear_cat.bias`, [e]);
  if (c.is_classifier) shapes.set(`${p}y_embedder_lookup.weight`, [classes, e]);
  else mlp(shapes, `${p}y_embedder_lookup.`, [1, 6, e]);
  for (p of ["col_embedder.", "col_embedder_2."]) {
    for (let i = 0; i < c.col_num_blocks; i++) {
      const b = `${p}tf_col.blocks.${i}.`;
      shapes.set(`${b}ind_vectors`, [c.col_num_inds, e]);
      attentionBlock(shapes, `${b}mab1.`, e, c.col_nhead, ff);
      attentionBlock(shapes, `${b}mab2.`, e, c.col_nhead, ff);
    }
    shapes.set(`${p}out_w.weight`, [e, e]).set(`${p}out_w.bias`, [e]).set(`${p}ln_w.weight`, [e]);
  }
  for (p of ["row_interactor.", "row_interactor_2."]) {
    const hd = Math.floor(e / c.row_nhead);
    shapes.set(`${p}tf_row.rope.freqs`, [Math.floor((hd + 1) / 2)]);
    for (let i = 0; i < c.row_num_blocks; i++) attentionBlock(shapes, `${p}tf_row.blocks.${i}.`, e, c.row_nhead, ff);
    shapes.set(`${p}out_ln.weight`, [e]);
  }
  p = "icl_predictor.";
  for (let i = 0; i < c.icl_num_blocks; i++) {
    attentionBlock(shapes, `${p}tf_icl.blocks.${i}.`, icl, c.icl_nhead, icl * c.ff_factor);
  }
  shapes.set(`${p}ln.weight`, [icl]);
  if (c.is_classifier) {
    shapes.set(`${p}y_encoder.projection.weight`, [icl, classes]).set(`${p}y_encoder.projection.bias`, [icl]);
    mlp(shapes, `${p}decoder.`, [icl, hidden, classes]);
  } else {
    mlp(shapes, `${p}y_encoder.`, [1, hidden, icl]);
    mlp(shapes, `${p}decoder.`, [icl, hidden, 1]);
  }
  return shapes;
}

function few(names, limit = 8) {
  const more = names.length > limit ? `, … ${names.length - limit} more` : "";
  return `[${names.slice(0, limit).map(reprString).join(", ")}${more}]`;
}

function brief(config) {
  return ["is_classifier", "max_classes", "embed_dim", "col_num_blocks", "row_num_blocks", "icl_num_blocks"]
    .map((k) => `${k}=${pyStr(Object.hasOwn(config, k) ? config[k] : ARCHITECTURE[k])}`).join(", ");
}

/**
 * {tensors, shapes} in state-dict order after checking they are exactly the config's with
 * its shapes (state_dict.check's wording); the Error names the culprit.
 */
export function checkTensors(config, tensors, shapes, where) {
  const want = expectedShapes(config);
  const missing = [...want.keys()].filter((n) => !tensors.has(n));
  const extra = [...tensors.keys()].filter((n) => !want.has(n));
  if (missing.length || extra.length) {
    const parts = [];
    if (missing.length) parts.push(`missing tensors ${few(missing)}`);
    if (extra.length) parts.push(`unexpected tensors ${few(extra)}`);
    throw new Error(`${where}: ${parts.join(" and ")} for its config (Google TabFM with ${brief(config)} ` +
      `has ${want.size} tensors)`);
  }
  const outTensors = new Map();
  for (const [name, shape] of want) {
    const got = shapes.get(name);
    if (got.length !== shape.length || got.some((n, i) => n !== shape[i])) {
      throw new Error(`${where}: tensor ${reprString(name)} has shape [${got.join(", ")}], expected ` +
        `[${shape.join(", ")}] for its config`);
    }
    outTensors.set(name, tensors.get(name));
  }
  return { tensors: outTensors, shapes: new Map(want) };
}

// --- the two files' bytes -------------------------------------------------------------------

/** config.json's bytes as Python reads them (read_text, json.loads), checked. */
export function parseConfigFile(bytes, cfgPath) {
  const where = `Google TabFM config ${reprString(cfgPath)}`;
  let config;
  try {
    config = loadsPython(universalNewlines(decodeUtf8(new Uint8Array(bytes))));
  } catch (error) {
    if (!(error instanceof PyJsonError)) throw error;
    throw new Error(`${where} is not JSON: ${error.message}`, { cause: error });
  }
  return checkConfig(config, where);
}

/**
 * checkpoint.py's _read_safetensors on a file's bytes: {config (the metadata's, when
 * `converted`), tensors, shapes}; `path` names the file, `where` starts the messages.
 */
export function parseWeightsFile(bytes, path, where, converted = false) {
  const name = baseName(path);
  let metadata;
  let tensors;
  let shapes;
  try {
    const header = checkedHeader(bytes, name, { dtypes: ["F32"] });
    const size = bytes.byteLength - header.dataStart;
    const end = Math.max(0, ...[...header.entries.values()].map((e) => e.end));
    if (end !== size) {
      throw new Error(`weights file ${reprString(name)}: its tensors end at byte ${end} of a ${size}-byte ` +
        "buffer (a header that lies about its size?)");
    }
    ({ metadata, tensors, shapes } = readSafetensors(bytes, name, { dtypes: ["F32"] }));
  } catch (error) {
    throw new Error(`${where}: ${error.message}`, { cause: error });
  }
  if (!converted) return { config: null, tensors, shapes };
  for (const [key, want] of [["format", FORMAT], ["version", VERSION]]) {
    if (metadata[key] !== want) {
      throw new Error(`${where}: safetensors metadata ${reprString(key)} must be ${reprString(want)}, got ` +
        `${pyValueRepr(metadata[key] ?? null)} (not a Google TabFM checkpoint written by \`arenalite convert ` +
        "tabfm`; give the folder instead)");
    }
  }
  let config;
  try {
    config = loadsPython(metadata.config ?? "");
  } catch (error) {
    if (!(error instanceof PyJsonError)) throw error;
    throw new Error(`${where}: safetensors metadata 'config' is not JSON: ${pyValueRepr(metadata.config ?? null)}`,
      { cause: error });
  }
  return { config, tensors, shapes };
}

/** The checked checkpoint of parsed parts (read_checkpoint's last steps). */
function finish(config, tensors, shapes, weightsPath, task) {
  const where = `Google TabFM weights ${reprString(weightsPath)}`;
  const checked = checkConfig(config, where);
  if (task !== undefined && task !== null && checked.is_classifier !== (task === "classification")) {
    const have = checked.is_classifier ? "classification" : "regression";
    throw new Error(`${where}: a ${have} checkpoint, asked for ${task}`);
  }
  return { config: checked, ...checkTensors(checked, tensors, shapes, where), name: weightsPath };
}

/** A converted single file's bytes as a checked checkpoint ({config, tensors, shapes, name}). */
export function readConvertedBytes(bytes, path, task = null) {
  const { config, tensors, shapes } = parseWeightsFile(bytes, path, `Google TabFM checkpoint ${reprString(path)}`, true);
  return finish(config, tensors, shapes, path, task);
}

/** A folder's two files' bytes (config.json, model.safetensors) as a checked checkpoint. */
export function readFolderBytes(configBytes, weightsBytes, folder, task = null) {
  const cfgPath = joinPath(folder, CONFIG_NAME);
  const weightsPath = joinPath(folder, WEIGHTS_NAME);
  const config = parseConfigFile(configBytes, cfgPath);
  if (weightsBytes === null) {
    throw new Error(`Google TabFM checkpoint folder ${reprString(folder)} has no ${WEIGHTS_NAME}`);
  }
  const { tensors, shapes } = parseWeightsFile(weightsBytes, weightsPath, `Google TabFM weights ${reprString(weightsPath)}`);
  return finish(config, tensors, shapes, weightsPath, task);
}

// --- paths ----------------------------------------------------------------------------------

/** str(Path(text)): repeated and trailing slashes and "." parts dropped. */
export function pyPath(text) {
  const s = String(text);
  const absolute = s.startsWith("/");
  const parts = s.split("/").filter((p) => p !== "" && p !== ".");
  const out = (absolute ? "/" : "") + parts.join("/");
  return out || (absolute ? "/" : ".");
}

function joinPath(folder, name) {
  return folder === "." ? name : folder.endsWith("/") ? folder + name : `${folder}/${name}`;
}

function baseName(path) {
  const s = pyPath(path);
  return s.slice(s.lastIndexOf("/") + 1);
}

async function nodeFs() {
  const fs = await import("node:fs");
  return fs;
}

function kind(fs, p) {
  try {
    const st = fs.statSync(p);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : "other";
  } catch {
    return null;
  }
}

/**
 * checkpoint.py's resolve in Node: the checkpoint `path` names (a file, a folder holding
 * config.json, or the parent of classification/ and regression/ with `task` picking).
 */
export async function resolveTabfm(path, task = null) {
  const fs = await nodeFs();
  const p = pyPath(path);
  if (kind(fs, p) === "file") return p;
  if (kind(fs, p) !== "dir") throw new Error(`Google TabFM checkpoint ${reprString(p)} does not exist`);
  if (task !== null && !TASKS.includes(task)) {
    throw new Error(`Google TabFM checkpoint ${reprString(p)}: task must be one of ${listRepr(TASKS)}, got ` +
      `${pyValueRepr(task)}`);
  }
  if (kind(fs, joinPath(p, CONFIG_NAME)) !== null || kind(fs, joinPath(p, WEIGHTS_NAME)) !== null) return p;
  const subs = TASKS.filter((t) => kind(fs, joinPath(p, t)) === "dir");
  if (!subs.length) {
    throw new Error(`Google TabFM checkpoint folder ${reprString(p)} holds neither ${CONFIG_NAME} and ` +
      `${WEIGHTS_NAME} nor classification/ or regression/ folders`);
  }
  let pick = task;
  if (pick === null) {
    if (subs.length > 1) {
      throw new Error(`Google TabFM checkpoint folder ${reprString(p)} holds both classification/ and ` +
        `regression/: say which task (or give ${reprString(joinPath(p, "classification"))} or ` +
        `${reprString(joinPath(p, "regression"))})`);
    }
    pick = subs[0];
  }
  if (!subs.includes(pick)) {
    throw new Error(`Google TabFM checkpoint folder ${reprString(p)} has no ${pick}/ folder (it holds ` +
      `${subs.map((s) => `${s}/`).join(", ")})`);
  }
  return joinPath(p, pick);
}

const readFile = (fs, p) => {
  const buf = fs.readFileSync(p);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
};

/**
 * checkpoint.py's read_checkpoint in Node: a save_pretrained folder, the parent of
 * classification/ and regression/ (`task` picks), or a converted file; every message
 * names the path as given.
 */
export async function readTabfmCheckpoint(path, task = null) {
  const fs = await nodeFs();
  const p = await resolveTabfm(path, task);
  if (kind(fs, p) === "file") return readConvertedBytes(readFile(fs, p), p, task);
  const cfgPath = joinPath(p, CONFIG_NAME);
  const weights = joinPath(p, WEIGHTS_NAME);
  if (kind(fs, cfgPath) !== "file") throw new Error(`Google TabFM checkpoint folder ${reprString(p)} has no ${CONFIG_NAME}`);
  const configBytes = readFile(fs, cfgPath);
  if (kind(fs, weights) !== "file") {
    parseConfigFile(configBytes, cfgPath);
    throw new Error(`Google TabFM checkpoint folder ${reprString(p)} has no ${WEIGHTS_NAME}`);
  }
  return readFolderBytes(configBytes, readFile(fs, weights), p, task);
}

/**
 * model.py's load in Node: readTabfmCheckpoint of the resolved real path (as Python's
 * checkpoint cache reads it, so its messages name the absolute path), then the task check.
 */
export async function loadTabfmPath(path, task = null) {
  const fs = await nodeFs();
  const p = await resolveTabfm(path, task);
  let w;
  if (kind(fs, p) === "file") {
    w = await readTabfmCheckpoint(fs.realpathSync(p));
  } else {
    const weights = joinPath(p, WEIGHTS_NAME);
    if (kind(fs, weights) !== "file") await readTabfmCheckpoint(p, task);
    const real = fs.realpathSync(weights);
    w = await readTabfmCheckpoint(real.slice(0, real.lastIndexOf("/")) || "/");
  }
  const have = w.config.is_classifier ? "classification" : "regression";
  if (task !== null && have !== task) {
    throw new Error(`Google TabFM checkpoint ${reprString(p)} is a ${have} checkpoint, asked for ${task}`);
  }
  return w;
}

// --- what a page picks ----------------------------------------------------------------------

async function fileBytes(item) {
  const data = item?.bytes ?? item;
  if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, data.byteLength);
  if (typeof data?.arrayBuffer === "function") return new Uint8Array(await data.arrayBuffer());
  throw new TypeError("Google TabFM weights: a picked file must be a File, bytes or {bytes, name}");
}

function fileName(item) {
  return String(item?.webkitRelativePath || item?.name || "<bytes>");
}

/** The picked files grouped by folder: Map(folder → {config, weights}) (folder "." for bare names). */
function byFolder(files) {
  const groups = new Map();
  for (const item of files) {
    const name = pyPath(fileName(item));
    const cut = name.lastIndexOf("/");
    const folder = cut < 0 ? "." : name.slice(0, cut);
    const base = name.slice(cut + 1);
    if (base !== CONFIG_NAME && base !== WEIGHTS_NAME) continue;
    if (!groups.has(folder)) groups.set(folder, { config: null, weights: null });
    groups.get(folder)[base === CONFIG_NAME ? "config" : "weights"] = item;
  }
  return groups;
}

async function readPicked(files, task) {
  if (files.length === 1 && baseName(fileName(files[0])) !== CONFIG_NAME) {
    return readConvertedBytes(await fileBytes(files[0]), pyPath(fileName(files[0])), task);
  }
  const groups = byFolder(files);
  if (!groups.size) {
    throw new Error(`Google TabFM checkpoint: the picked files hold neither ${CONFIG_NAME} and ${WEIGHTS_NAME} ` +
      "nor a converted .safetensors file");
  }
  let folder = [...groups.keys()][0];
  if (groups.size > 1) {
    const tasks = [...groups.keys()].filter((f) => TASKS.includes(baseName(f)));
    const pick = tasks.find((f) => baseName(f) === task);
    if (!pick) {
      throw new Error(`Google TabFM checkpoint: the picked files hold ${[...groups.keys()].map((f) => `${f}/`).join(", ")}` +
        (task ? `, none of them a ${task}/ folder` : ": say which task"));
    }
    folder = pick;
  }
  const { config, weights } = groups.get(folder);
  if (!config) throw new Error(`Google TabFM checkpoint folder ${reprString(folder)} has no ${CONFIG_NAME}`);
  return readFolderBytes(await fileBytes(config), weights ? await fileBytes(weights) : null, folder, task);
}

const isWebUrl = (source) => (source instanceof URL ? source.protocol !== "file:"
  : typeof source === "string" && (/^[a-z][a-z0-9+.-]*:/i.test(source) ? !source.startsWith("file:") : !isNode));

async function fetched(url) {
  const res = await fetch(url);
  return res.ok ? new Uint8Array(await res.arrayBuffer()) : null;
}

/**
 * Weights served over http(s) (a page's own server): a converted file's URL, or a folder's
 * (its config.json and model.safetensors; failing that, its `task`/ subfolder's).
 */
export async function loadTabfmUrl(url, task = null) {
  if (url.endsWith(".safetensors")) {
    const bytes = await fetched(url);
    if (!bytes) throw new Error(`Google TabFM checkpoint ${reprString(url)} does not exist`);
    return readConvertedBytes(bytes, url, task);
  }
  const base = url.replace(/\/+$/, "");
  for (const folder of task ? [base, `${base}/${task}`] : [base]) {
    const config = await fetched(`${folder}/${CONFIG_NAME}`);
    if (config) return readFolderBytes(config, await fetched(`${folder}/${WEIGHTS_NAME}`), folder, task);
  }
  throw new Error(`Google TabFM checkpoint folder ${reprString(base)} has no ${CONFIG_NAME}` +
    (task ? ` (nor has its ${task}/ folder)` : ""));
}

/**
 * Google TabFM weights from: a path (Node: a folder, the parent of classification/ and
 * regression/, or a converted file), an http(s) URL (a converted file, a folder served with
 * its two files, or the parent of task folders), {files: [File | {bytes, name}, ...]} (a
 * page: the folder's two files, a parent folder's four, or one converted file), one File /
 * bytes / {bytes, name} (a converted file), or an already read {config, tensors, shapes}. With
 * `task` ("classification" / "regression") the checkpoint must be of it; without one, a
 * folder or several picked folders give {name, forTask(task)} (read when the task is known).
 */
export async function loadTabfmWeights(source, { task = null } = {}) {
  if (source && source.tensors instanceof Map && source.config) {
    if (!(source.shapes instanceof Map)) throw new TypeError("Google TabFM weights objects need `shapes` (a Map)");
    return source;
  }
  if (isWebUrl(source)) {
    const url = String(source);
    if (task === null && !url.endsWith(".safetensors")) return { name: url, forTask: (t) => loadTabfmUrl(url, t) };
    return loadTabfmUrl(url, task);
  }
  if (typeof source === "string" || source instanceof URL) {
    if (!isNode) throw new TypeError("Google TabFM weights in a page are picked files ({files: [...]}) or a URL");
    const path = source instanceof URL ? (await import("node:url")).fileURLToPath(source) : source;
    if (task === null && kind(await nodeFs(), pyPath(path)) === "dir") {
      return { name: path, forTask: (t) => loadTabfmPath(path, t) };
    }
    return loadTabfmPath(path, task);
  }
  if (source && Array.isArray(source.files)) {
    if (task === null && byFolder(source.files).size > 1) {
      return { name: "<picked files>", forTask: (t) => readPicked(source.files, t) };
    }
    return readPicked(source.files, task);
  }
  if (source && (source.bytes !== undefined || typeof source.arrayBuffer === "function") ||
      source instanceof ArrayBuffer || ArrayBuffer.isView(source)) {
    return readPicked([source], task);
  }
  throw new TypeError("Google TabFM weights must be a checkpoint folder path, {files: [config.json, " +
    "model.safetensors]}, a converted .safetensors file, or read weights");
}

/** The checkpoint folder an arenalite task needs (predictor.py's checkpoint_task). */
export function checkpointTask(task) {
  return task === "regression" ? "regression" : "classification";
}

/** Weights for `task`: a deferred folder (loadTabfmWeights without a task) read now. */
export async function tabfmWeightsFor(weights, task) {
  return typeof weights?.forTask === "function" ? weights.forTask(checkpointTask(task)) : weights;
}
