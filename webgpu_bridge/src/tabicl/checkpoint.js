// TabICL checkpoints read in a page, a worker or Node without Python or torch: the
// package's `.ckpt` (torch's zip serialization: <archive>/data.pkl read by the restricted
// pickle interpreter of ../checkpoint/pickle.js, which resolves only ALLOWED and refuses every other
// class by name before anything is built; each state-dict tensor a
// torch._utils._rebuild_tensor_v2 of a storage record <archive>/data/<key>) and arenalite's
// safetensors layout (metadata {"format": "arenalite.tabicl", "version": "1", "config":
// JSON}). The JavaScript twin of pkg/arenalite/models/tabicl/checkpoint.py: the same
// CONFIG_DEFAULTS, expectedShapes, checks and (as far as JavaScript allows) messages.
//
//   const { config, tensors, shapes, format } = await readCheckpoint(bytes, { name });
//   // tensors: Map(state-dict name → Float32Array, C order), in state-dict order;
//   // shapes: Map(name → number[]); config: every key of CONFIG_DEFAULTS, in its order.

import { PyCallable, PyDict, PyFloat, PySet, PyTuple, PickleError, Refused, floatRepr, iterate, pyRepr, typeName, unpickle } from "../checkpoint/pickle.js";
export { Refused };
import { ZipArchive, ZipError, asBytes } from "../checkpoint/zip.js";

export const FORMAT = "arenalite.tabicl";
export const VERSION = "1";
/** tabicl._model.tabicl.TabICL.__init__'s parameters and defaults (tabicl 2.2.0), in order. */
export const CONFIG_DEFAULTS = Object.freeze({
  max_classes: 10, num_quantiles: 999, embed_dim: 128,
  col_num_blocks: 3, col_nhead: 8, col_num_inds: 128, col_affine: false,
  col_feature_group: "same", col_feature_group_size: 3, col_target_aware: true,
  col_ssmax: "qassmax-mlp-elementwise",
  row_num_blocks: 3, row_nhead: 8, row_num_cls: 4, row_rope_base: 100000,
  row_rope_interleaved: true,
  icl_num_blocks: 12, icl_nhead: 8, icl_ssmax: "qassmax-mlp-elementwise",
  ff_factor: 2, dropout: 0.0, activation: "gelu", norm_first: true,
  bias_free_ln: false, zero_init: true, recompute: false,
});
export const SSMAX_KINDS = Object.freeze(["none", "ssmax", "ssmax-mlp", "ssmax-mlp-elementwise",
  "qassmax-mlp", "qassmax-mlp-elementwise"]);
/** Hidden width of the SSMax MLPs (fixed in tabicl._model.ssmax). */
export const SSMAX_HIDDEN = 64;
export const ACTIVATIONS = Object.freeze(["gelu", "relu"]);
/** Largest data.pkl read (bytes). */
export const MAX_PICKLE = 2 ** 28;
/** torch's typed storage classes → [element type, bytes per element]. */
const STORAGES = {
  FloatStorage: ["f4", 4], HalfStorage: ["f2", 2], BFloat16Storage: ["bf16", 2], DoubleStorage: ["f8", 8],
  LongStorage: ["i8", 8], IntStorage: ["i4", 4], ShortStorage: ["i2", 2], CharStorage: ["i1", 1],
  ByteStorage: ["u1", 1], BoolStorage: ["b1", 1],
};
const FLOAT_STORAGES = ["FloatStorage", "HalfStorage", "BFloat16Storage", "DoubleStorage"];
/** Every [module, name] the unpickler resolves; anything else is refused. */
export const ALLOWED = Object.freeze([
  ["torch._utils", "_rebuild_tensor_v2"], ["torch._utils", "_rebuild_tensor"],
  ["torch._utils", "_rebuild_parameter"], ["torch._utils", "_rebuild_parameter_with_state"],
  ["collections", "OrderedDict"], ["torch", "Size"], ["builtins", "set"], ["builtins", "frozenset"],
  ...Object.keys(STORAGES).map((name) => ["torch", name]),
]);

const KEYS = Object.keys(CONFIG_DEFAULTS);
const listRepr = (items) => `[${items.map(pyRepr).join(", ")}]`;

// --- config and the state dict it implies -------------------------------------------------

function valueRepr(value, isFloat) {
  return isFloat && typeof value === "number" ? floatRepr(value) : pyRepr(toPython(value));
}

function toPython(value) {
  if (Array.isArray(value)) return value.map(toPython);
  if (value !== null && typeof value === "object" && !(value instanceof PyFloat)) {
    const d = new PyDict();
    for (const [k, v] of Object.entries(value)) d.set(k, toPython(v));
    return d;
  }
  return value;
}

function checkNumbers(out, fail, floats) {
  const integer = (key) => typeof out[key] === "number" && Number.isInteger(out[key]) && !floats.has(key);
  for (const key of ["embed_dim", "col_nhead", "col_num_inds", "col_feature_group_size",
    "row_nhead", "row_num_cls", "icl_nhead", "ff_factor"]) {
    if (!integer(key) || out[key] < 1) throw fail(key, "a positive integer");
  }
  for (const key of ["max_classes", "num_quantiles", "col_num_blocks", "row_num_blocks", "icl_num_blocks"]) {
    if (!integer(key) || out[key] < 0) throw fail(key, "a non-negative integer");
  }
  if (out.max_classes === 0 && out.num_quantiles < 1) throw fail("num_quantiles", "positive for a regressor (max_classes 0)");
  const rope = out.row_rope_base;
  if (typeof rope !== "number" || !(rope > 0 && rope < Infinity)) throw fail("row_rope_base", "a positive number");
  const dropout = out.dropout;
  if (typeof dropout !== "number" || !(dropout >= 0 && dropout <= 1)) throw fail("dropout", "a number in [0, 1]");
}

function checkKinds(out, fail) {
  for (const key of ["col_affine", "col_target_aware", "row_rope_interleaved", "norm_first",
    "bias_free_ln", "zero_init", "recompute"]) {
    if (typeof out[key] !== "boolean") throw fail(key, "true or false");
  }
  if (![false, true, "same", "valid"].includes(out.col_feature_group)) {
    throw fail("col_feature_group", "false, true, 'same' or 'valid'");
  }
  for (const key of ["col_ssmax", "icl_ssmax"]) {
    if (typeof out[key] !== "boolean" && !SSMAX_KINDS.includes(out[key])) {
      throw fail(key, `true, false or one of ${listRepr(SSMAX_KINDS)}`);
    }
  }
  if (!ACTIVATIONS.includes(out.activation)) throw fail("activation", `one of ${listRepr(ACTIVATIONS)}`);
}

/**
 * `config` completed with CONFIG_DEFAULTS (in their order) and checked, as Python's
 * check_config: unknown keys, wrong types and head counts that do not divide their width
 * throw an Error starting with `where`. `floats`: keys whose values were Python floats
 * (an integral float is not an integer there; JSON and JavaScript cannot tell them apart).
 */
export function checkConfig(config, where = "TabICL config", floats = new Set()) {
  const proto = config !== null && typeof config === "object" ? Object.getPrototypeOf(config) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    throw new Error(`${where}: the config must be a dict, got ${typeName(config)}`);
  }
  const unknown = Object.keys(config).filter((k) => !KEYS.includes(k));
  if (unknown.length) {
    throw new Error(`${where}: unknown config keys ${listRepr(unknown.sort())} (TabICL takes ${listRepr(KEYS)})`);
  }
  const out = {};
  for (const key of KEYS) out[key] = config[key] === undefined ? CONFIG_DEFAULTS[key] : config[key];
  const fail = (key, what) => new Error(`${where}: ${pyRepr(key)} must be ${what}, got ${valueRepr(out[key], floats.has(key))}`);
  checkNumbers(out, fail, floats);
  checkKinds(out, fail);
  const iclDim = out.embed_dim * out.row_num_cls;
  for (const [key, width] of [["col_nhead", out.embed_dim], ["row_nhead", out.embed_dim], ["icl_nhead", iclDim]]) {
    if (width % out[key]) {
      const what = key !== "icl_nhead" ? "embed_dim" : "embed_dim × row_num_cls";
      throw new Error(`${where}: ${key}=${out[key]} does not divide ${what} = ${width}`);
    }
  }
  if (Math.floor(out.embed_dim / out.row_nhead) === 2) {
    throw new Error(`${where}: row heads of width 2 (embed_dim=${out.embed_dim}, row_nhead=${out.row_nhead}) ` +
      "are not possible: TabICL's rotary embedding divides by the head width minus 2");
  }
  return out;
}

const ssmaxKind = (value) => (typeof value === "boolean" ? (value ? "qassmax-mlp-elementwise" : "none") : value);

/** One MultiheadAttentionBlock's state-dict entries, in order, added to `shapes`. */
function attentionBlock(shapes, p, d, heads, ff, ssmax, biasFree) {
  shapes.set(`${p}linear1.weight`, [ff, d]).set(`${p}linear1.bias`, [ff])
    .set(`${p}linear2.weight`, [d, ff]).set(`${p}linear2.bias`, [d]);
  for (const norm of ["norm1", "norm2"]) {
    shapes.set(`${p}${norm}.weight`, [d]);
    if (!biasFree) shapes.set(`${p}${norm}.bias`, [d]);
  }
  shapes.set(`${p}attn.in_proj_weight`, [3 * d, d]).set(`${p}attn.in_proj_bias`, [3 * d])
    .set(`${p}attn.out_proj.weight`, [d, d]).set(`${p}attn.out_proj.bias`, [d]);
  const s = `${p}attn.ssmax_layer.`;
  const h = SSMAX_HIDDEN;
  const hd = Math.floor(d / heads);
  if (ssmax === "ssmax") {
    shapes.set(`${s}scales`, [heads]);
  } else if (ssmax.startsWith("ssmax-mlp")) {
    const out = ssmax.endsWith("elementwise") ? d : heads;
    shapes.set(`${s}mlp.0.weight`, [h, 1]).set(`${s}mlp.0.bias`, [h])
      .set(`${s}mlp.2.weight`, [out, h]).set(`${s}mlp.2.bias`, [out]);
  } else if (ssmax.startsWith("qassmax-mlp")) {
    const [base, query] = ssmax.endsWith("elementwise") ? [d, hd] : [heads, 1];
    shapes.set(`${s}base_mlp.0.weight`, [h, 1]).set(`${s}base_mlp.0.bias`, [h])
      .set(`${s}base_mlp.2.weight`, [base, h]).set(`${s}base_mlp.2.bias`, [base])
      .set(`${s}query_mlp.0.weight`, [h, hd]).set(`${s}query_mlp.0.bias`, [h])
      .set(`${s}query_mlp.2.weight`, [query, h]).set(`${s}query_mlp.2.bias`, [query]);
  }
}

function layerNorm(shapes, p, d, biasFree) {
  shapes.set(`${p}weight`, [d]);
  if (!biasFree) shapes.set(`${p}bias`, [d]);
}

function columnShapes(shapes, c) {
  const e = c.embed_dim;
  const p = "col_embedder.";
  const width = c.col_feature_group ? c.col_feature_group_size : 1;
  shapes.set(`${p}in_linear.weight`, [e, width]).set(`${p}in_linear.bias`, [e]);
  for (let i = 0; i < c.col_num_blocks; i++) {
    const b = `${p}tf_col.blocks.${i}.`;
    shapes.set(`${b}ind_vectors`, [c.col_num_inds, e]);
    attentionBlock(shapes, `${b}multihead_attn1.`, e, c.col_nhead, e * c.ff_factor, ssmaxKind(c.col_ssmax), c.bias_free_ln);
    attentionBlock(shapes, `${b}multihead_attn2.`, e, c.col_nhead, e * c.ff_factor, "none", c.bias_free_ln);
  }
  if (c.col_target_aware) {
    shapes.set(`${p}y_encoder.weight`, [e, c.max_classes ? c.max_classes : 1]).set(`${p}y_encoder.bias`, [e]);
  }
  if (c.col_affine) {
    for (const part of ["w", "b"]) {
      shapes.set(`${p}out_${part}.weight`, [e, e]).set(`${p}out_${part}.bias`, [e]);
      if (c.norm_first) layerNorm(shapes, `${p}ln_${part}.`, e, c.bias_free_ln);
    }
  }
}

/**
 * Every state-dict name of TabICL(**config) and its shape, in state-dict order (a Map);
 * `config` may omit keys (the defaults fill them) and is checked (checkConfig).
 */
export function expectedShapes(config) {
  const c = checkConfig(config);
  const e = c.embed_dim;
  const icl = e * c.row_num_cls;
  const shapes = new Map();
  columnShapes(shapes, c);
  let p = "row_interactor.";
  shapes.set(`${p}cls_tokens`, [c.row_num_cls, e]);
  for (let i = 0; i < c.row_num_blocks; i++) {
    attentionBlock(shapes, `${p}tf_row.blocks.${i}.`, e, c.row_nhead, e * c.ff_factor, "none", c.bias_free_ln);
  }
  shapes.set(`${p}tf_row.rope.freqs`, [Math.floor(Math.floor(e / c.row_nhead) / 2)]);
  if (c.norm_first) layerNorm(shapes, `${p}out_ln.`, e, c.bias_free_ln);
  p = "icl_predictor.";
  for (let i = 0; i < c.icl_num_blocks; i++) {
    attentionBlock(shapes, `${p}tf_icl.blocks.${i}.`, icl, c.icl_nhead, icl * c.ff_factor, ssmaxKind(c.icl_ssmax), c.bias_free_ln);
  }
  if (c.norm_first) layerNorm(shapes, `${p}ln.`, icl, c.bias_free_ln);
  const outDim = c.max_classes ? c.max_classes : c.num_quantiles;
  shapes.set(`${p}y_encoder.weight`, [icl, c.max_classes ? c.max_classes : 1]).set(`${p}y_encoder.bias`, [icl])
    .set(`${p}decoder.0.weight`, [2 * icl, icl]).set(`${p}decoder.0.bias`, [2 * icl])
    .set(`${p}decoder.2.weight`, [outDim, 2 * icl]).set(`${p}decoder.2.bias`, [outDim]);
  return shapes;
}

function few(names, limit = 8) {
  const shown = names.slice(0, limit).map(pyRepr).join(", ");
  return `[${shown}${names.length > limit ? `, … ${names.length - limit} more` : ""}]`;
}

function brief(config) {
  return ["max_classes", "embed_dim", "col_num_blocks", "row_num_blocks", "icl_num_blocks"]
    .map((k) => `${k}=${config[k] ?? CONFIG_DEFAULTS[k]}`).join(", ");
}

/**
 * {tensors, shapes} in state-dict order after checking they are exactly the config's, with
 * its shapes; the Error names the missing, unexpected or wrong-shaped tensor.
 */
export function checkTensors(config, tensors, shapes, where) {
  const want = expectedShapes(config);
  const missing = [...want.keys()].filter((n) => !tensors.has(n));
  const extra = [...tensors.keys()].filter((n) => !want.has(n));
  if (missing.length || extra.length) {
    const parts = [];
    if (missing.length) parts.push(`missing tensors ${few(missing)}`);
    if (extra.length) parts.push(`unexpected tensors ${few(extra)}`);
    throw new Error(`${where}: ${parts.join(" and ")} for its config (TabICL with ${brief(config)} has ${want.size} tensors)`);
  }
  const outTensors = new Map();
  for (const [name, shape] of want) {
    const got = shapes.get(name);
    if (got.length !== shape.length || got.some((n, i) => n !== shape[i])) {
      throw new Error(`${where}: tensor ${pyRepr(name)} has shape [${got.join(", ")}], expected [${shape.join(", ")}] for its config`);
    }
    outTensors.set(name, tensors.get(name));
  }
  return { tensors: outTensors, shapes: new Map(want) };
}

// --- the restricted unpickler's records and globals ---------------------------------------

class StorageType {
  static pyName = "_StorageType";
  constructor(name) { this.name = name; }
  repr() { return `_StorageType(name=${pyRepr(this.name)})`; }
}

class Storage {
  static pyName = "_Storage";
  constructor(kind, key, numel) { this.kind = kind; this.key = key; this.numel = numel; }
  same(other) { return this.kind === other.kind && this.key === other.key && this.numel === other.numel; }
  repr() { return `_Storage(kind=${pyRepr(this.kind)}, key=${pyRepr(this.key)}, numel=${this.numel})`; }
}

class TensorRef {
  static pyName = "_TensorRef";
  constructor(storage, offset, size, stride) { Object.assign(this, { storage, offset, size, stride }); }
  repr() {
    return `_TensorRef(storage=${this.storage.repr()}, offset=${this.offset}, size=${pyRepr(new PyTuple(this.size))}, ` +
      `stride=${pyRepr(new PyTuple(this.stride))})`;
  }
}

const isInt = (v) => typeof v === "number" || typeof v === "bigint";

function indexTuple(value, what) {
  if (Array.isArray(value)) value = new PyTuple(value);
  if (!(value instanceof PyTuple) || !value.items.every((v) => isInt(v) && v >= 0)) {
    throw new Refused(`has a tensor whose ${what} is ${pyRepr(value)}, not a tuple of non-negative integers`);
  }
  return value.items.map(Number);
}

function rebuildTensor([storage = null, offset = null, size = null, stride = null]) {
  if (!(storage instanceof Storage)) throw new Refused(`has a tensor built on a ${typeName(storage)}, not a saved storage`);
  if (!isInt(offset) || offset < 0) throw new Refused(`has a tensor whose storage offset is ${pyRepr(offset)}`);
  const dims = indexTuple(size, "size");
  const steps = indexTuple(stride, "stride");
  if (dims.length !== steps.length) throw new Refused(`has a tensor of size [${dims.join(", ")}] but stride [${steps.join(", ")}]`);
  return new TensorRef(storage, Number(offset), dims, steps);
}

function rebuildParameter([data = null]) {
  if (!(data instanceof TensorRef)) throw new Refused(`has a parameter wrapping a ${typeName(data)}, not a tensor`);
  return data;
}

function orderedDict(args, { newOnly = false } = {}) {
  const d = new PyDict("OrderedDict");
  if (args.length > 1) throw new PickleError(`TypeError: expected at most 1 arguments, got ${args.length}`);
  if (newOnly || !args.length) return d;
  if (args[0] instanceof PyDict) {
    for (const [k, v] of args[0].entries()) d.set(k, v);
    return d;
  }
  for (const pair of iterate(args[0])) {
    const kv = iterate(pair);
    if (kv.length !== 2) throw new PickleError("ValueError: need 2 items to unpack an OrderedDict pair");
    d.set(kv[0], kv[1]);
  }
  return d;
}

function pySet(kind) {
  return (args, { newOnly = false } = {}) => {
    if (args.length > 1) throw new PickleError(`TypeError: ${kind} expected at most 1 argument, got ${args.length}`);
    const s = new PySet([], kind);
    if ((newOnly && kind === "set") || !args.length) return s;
    const seen = new Set();
    for (const item of iterate(args[0])) {
      const h = pyRepr(item);
      if (!seen.has(h)) { seen.add(h); s.items.push(item); }
    }
    return s;
  };
}

const FUNCTIONS = {
  _rebuild_tensor_v2: rebuildTensor, _rebuild_tensor: rebuildTensor,
  _rebuild_parameter: rebuildParameter, _rebuild_parameter_with_state: rebuildParameter,
};

function findClass(rawModule, name) {
  const module = rawModule === "__builtin__" ? "builtins" : rawModule;
  if (!ALLOWED.some(([m, n]) => m === module && n === name)) {
    throw new Refused(`refers to class ${pyRepr(`${module}.${name}`)}, which a TabICL checkpoint never contains; refusing to load it`);
  }
  if (module === "torch._utils") return new PyCallable(name, FUNCTIONS[name]);
  if (module === "collections") return new PyCallable(name, orderedDict, true);
  if (name === "Size") return new PyCallable(name, (args) => new PyTuple(args.length ? [...iterate(args[0])] : []), true);
  if (module === "builtins") return new PyCallable(name, pySet(name), true);
  return new StorageType(name);
}

function persistentLoad(pid) {
  const items = pid instanceof PyTuple ? pid.items : null;
  if (!items || items.length !== 5 || items[0] !== "storage" || !(items[1] instanceof StorageType) ||
      typeof items[2] !== "string" || !isInt(items[4]) || items[4] < 0) {
    throw new Refused(`has a persistent id ${pyRepr(pid)} that is not a torch storage record`);
  }
  return new Storage(items[1].name, items[2], Number(items[4]));
}

function buildState(inst, state) {
  if (inst instanceof StorageType || inst instanceof Storage || inst instanceof TensorRef) {
    throw new Refused(`sets the state of a ${inst.constructor.pyName.replace(/^_+|_+$/g, "")} record, which torch.save never does`);
  }
  if (!(inst instanceof PyDict) || inst.typeName !== "OrderedDict") {
    throw new PickleError(`AttributeError: '${typeName(inst)}' object has no attribute '__dict__'`);
  }
  const parts = state instanceof PyTuple && state.items.length === 2 ? state.items : [state, null];
  for (const part of parts) {
    if (part !== null && !(part instanceof PyDict)) {
      throw new PickleError(`AttributeError: '${typeName(part)}' object has no attribute 'items'`);
    }
  }
  inst.attributes = parts;  // an OrderedDict's attributes (a state dict's _metadata): kept, unused
}

// --- reading ------------------------------------------------------------------------------

/**
 * Read a TabICL checkpoint from its bytes: the package's `.ckpt` or arenalite's
 * `.safetensors`, told apart by content. Resolves to {config, tensors, shapes, format};
 * rejects with an Error naming `name` and the culprit (truncated or corrupt file, a
 * foreign class in data.pkl, a missing config/state_dict/storage, a tensor beyond its
 * storage, unknown config keys, missing, unexpected or wrong-shaped tensors).
 */
export async function readCheckpoint(input, { name = "<bytes>" } = {}) {
  const bytes = asBytes(input);
  const where = `checkpoint ${pyRepr(String(name))}`;
  const head = bytes.subarray(0, 16);
  const magic = String.fromCharCode(...head.subarray(0, 4));
  let read;
  let format;
  if (magic === "PK\x03\x04" || magic === "PK\x05\x06") {
    read = await readZip(bytes, where);
    format = "ckpt";
  } else if (head.length >= 9 && head[8] === 0x7b) {
    read = parseTabiclSafetensors(bytes, String(name), where);
    format = "safetensors";
  } else if (head[0] === 0x80) {
    throw new Error(`${where} is a bare pickle (torch's legacy format, before torch 1.6, or not torch's at all), ` +
      "which is not read; torch.save of torch 1.6 or later writes the zip format read here");
  } else {
    throw new Error(`${where} is neither a torch checkpoint (a zip archive holding data.pkl) nor a safetensors file`);
  }
  const config = checkConfig(read.config, where, read.floats);
  const checked = checkTensors(config, read.tensors, read.shapes, where);
  return { config, tensors: checked.tensors, shapes: checked.shapes, format };
}

/** A pickled config (a PyDict) as a plain object, and which keys held Python floats. */
function configFrom(value) {
  if (!(value instanceof PyDict)) return { config: value, floats: new Set() };
  const config = {};
  const floats = new Set();
  const plain = (v) => {
    if (v instanceof PyFloat) return v.value;
    if (Array.isArray(v)) return v.map(plain);
    if (v instanceof PyTuple || v instanceof PySet) return v.items.map(plain);
    if (v instanceof PyDict) return Object.fromEntries(v.entries().map(([k, x]) => [typeof k === "string" ? k : pyRepr(k), plain(x)]));
    return v;
  };
  for (const [k, v] of value.entries()) {
    const key = typeof k === "string" ? k : pyRepr(k);
    if (v instanceof PyFloat) floats.add(key);
    config[key] = plain(v);
  }
  return { config, floats };
}

async function readZip(bytes, where) {
  try {
    return await readArchive(new ZipArchive(bytes), where);
  } catch (error) {
    if (error instanceof ZipError) {
      throw new Error(`${where} is not a readable zip archive (truncated or corrupt): ${error.message}`, { cause: error });
    }
    throw error;
  }
}

async function unpickleRecord(archive, name, where) {
  const data = await archive.read(name);
  try {
    return unpickle(data, { findClass, persistentLoad, build: buildState });
  } catch (error) {
    if (error instanceof Refused) throw new Error(`${where}: data.pkl ${error.message}`, { cause: error });
    const what = error instanceof PickleError ? error.message : `${error.name}: ${error.message}`;
    throw new Error(`${where}: data.pkl is not a valid pickle (${what})`, { cause: error });
  }
}

async function readArchive(archive, where) {
  const pickles = archive.names.filter((n) => n.endsWith("/data.pkl") && n.split("/").length === 2);
  if (pickles.length !== 1) {
    throw new Error(`${where}: a torch checkpoint holds one <archive>/data.pkl; this zip holds ${pickles.length} ` +
      `(${few([...archive.names].sort())})`);
  }
  const prefix = pickles[0].slice(0, -"data.pkl".length);
  const size = archive.entries.get(pickles[0]).fileSize;
  if (size > MAX_PICKLE) throw new Error(`${where}: data.pkl is ${size} bytes, more than a TabICL checkpoint's (${MAX_PICKLE})`);
  let order = "little";
  if (archive.has(`${prefix}byteorder`)) {
    order = Array.from(await archive.read(`${prefix}byteorder`), (b) => (b < 128 ? String.fromCharCode(b) : "\ufffd")).join("").trim();
  }
  if (order !== "little" && order !== "big") throw new Error(`${where}: byteorder record says ${pyRepr(order)}, not little or big`);
  const obj = await unpickleRecord(archive, pickles[0], where);
  if (!(obj instanceof PyDict)) {
    throw new Error(`${where}: the checkpoint holds a ${typeName(obj)}, not a dict with 'config' and 'state_dict'`);
  }
  for (const key of ["config", "state_dict"]) {
    if (!obj.has(key)) {
      throw new Error(`${where}: the checkpoint has no ${pyRepr(key)} (its keys: ${listRepr(obj.keys().map((k) => (typeof k === "string" ? k : pyRepr(k))).sort())})`);
    }
  }
  const state = obj.get("state_dict");
  if (!(state instanceof PyDict)) throw new Error(`${where}: 'state_dict' is a ${typeName(state)}, not a dict`);
  checkStorages(obj, archive, prefix, where);
  const { tensors, shapes } = await materializeAll(state, archive, prefix, order === "little", where);
  return { ...configFrom(obj.get("config")), tensors, shapes };
}

/** Every storage the pickle refers to (state dict or not) must be a record of the zip. */
function checkStorages(obj, archive, prefix, where) {
  const seen = new Set();
  const stack = [obj];
  while (stack.length) {
    const item = stack.pop();
    if (item !== null && typeof item === "object") {
      if (seen.has(item)) continue;
      seen.add(item);
    }
    if (item instanceof TensorRef) {
      const key = item.storage.key;
      if (!archive.has(`${prefix}data/${key}`)) {
        throw new Error(`${where}: storage ${pyRepr(key)} is referred to but the archive has no record ${prefix}data/${key}`);
      }
    } else if (item instanceof PyDict) {
      stack.push(...item.values());
    } else if (Array.isArray(item)) {
      stack.push(...item);
    } else if (item instanceof PyTuple || item instanceof PySet) {
      stack.push(...item.items);
    }
  }
}

async function materializeAll(state, archive, prefix, little, where) {
  const uses = new Map();
  for (const [name, ref] of state.entries()) {
    if (typeof name !== "string" || !(ref instanceof TensorRef)) {
      throw new Error(`${where}: state_dict entry ${pyRepr(name)} is a ${typeName(ref)}, not a tensor`);
    }
    uses.set(ref.storage.key, (uses.get(ref.storage.key) ?? 0) + 1);
  }
  const storages = new Map();
  const tensors = new Map();
  const shapes = new Map();
  for (const [name, ref] of state.entries()) {
    tensors.set(name, await materialize(name, ref, storages, archive, prefix, little, where));
    shapes.set(name, [...ref.size]);
    uses.set(ref.storage.key, uses.get(ref.storage.key) - 1);
    if (!uses.get(ref.storage.key)) storages.delete(ref.storage.key);  // its last tensor: let it go
  }
  return { tensors, shapes };
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** A float storage's bytes as float32 (f16, bf16, f64 widened or rounded as numpy does). */
function decodeStorage(raw, kind, numel, little) {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (kind === "FloatStorage" && little && raw.byteOffset % 4 === 0) {
    return new Float32Array(raw.buffer, raw.byteOffset, numel).slice();  // the common case: a copy
  }
  const flat = new Float32Array(numel);
  if (kind === "FloatStorage") {
    for (let i = 0; i < numel; i++) flat[i] = view.getFloat32(4 * i, little);
  } else if (kind === "DoubleStorage") {
    for (let i = 0; i < numel; i++) flat[i] = view.getFloat64(8 * i, little);
  } else if (kind === "HalfStorage") {
    for (let i = 0; i < numel; i++) flat[i] = halfToFloat(view.getUint16(2 * i, little));
  } else {
    const bits = new Uint32Array(flat.buffer);
    for (let i = 0; i < numel; i++) bits[i] = view.getUint16(2 * i, little) << 16;
  }
  return flat;
}

async function loadStorage(name, storage, storages, archive, prefix, little, where) {
  const cached = storages.get(storage.key);
  if (cached && !cached.storage.same(storage)) {
    throw new Error(`${where}: tensor ${pyRepr(name)} declares storage ${pyRepr(storage.key)} as ${storage.numel} elements of ` +
      `torch.${storage.kind}, another tensor as ${cached.storage.numel} of torch.${cached.storage.kind}`);
  }
  if (cached) return cached.flat;
  const itemsize = STORAGES[storage.kind][1];
  const record = `${prefix}data/${storage.key}`;
  const fileSize = archive.entries.get(record).fileSize;
  if (fileSize !== storage.numel * itemsize) {
    throw new Error(`${where}: storage ${pyRepr(storage.key)} (of tensor ${pyRepr(name)}) holds ${fileSize} bytes but declares ` +
      `${storage.numel} elements of torch.${storage.kind} (${storage.numel * itemsize} bytes)`);
  }
  const flat = decodeStorage(await archive.read(record), storage.kind, storage.numel, little);
  storages.set(storage.key, { storage, flat });
  return flat;
}

async function materialize(name, ref, storages, archive, prefix, little, where) {
  const storage = ref.storage;
  if (!FLOAT_STORAGES.includes(storage.kind)) {
    throw new Error(`${where}: tensor ${pyRepr(name)} is stored as torch.${storage.kind}; a TabICL state_dict holds ` +
      "floating-point tensors only");
  }
  const flat = await loadStorage(name, storage, storages, archive, prefix, little, where);
  const { size, stride, offset } = ref;
  const count = size.reduce((a, b) => a * b, 1);
  if (count === 0) return new Float32Array(0);
  const last = offset + size.reduce((acc, n, i) => acc + (n - 1) * stride[i], 0);
  if (last >= flat.length) {
    throw new Error(`${where}: tensor ${pyRepr(name)} (size [${size.join(", ")}], stride [${stride.join(", ")}], offset ${offset}) ` +
      `reaches element ${last} of storage ${pyRepr(storage.key)}, which holds ${storage.numel}`);
  }
  const contiguous = size.every((n, d) => n === 1 || stride[d] === size.slice(d + 1).reduce((a, b) => a * b, 1));
  if (contiguous) return flat.slice(offset, offset + count);
  const out = new Float32Array(count);
  const index = new Array(size.length).fill(0);
  let at = offset;
  for (let i = 0; i < count; i++) {
    out[i] = flat[at];
    for (let d = size.length - 1; d >= 0; d--) {  // odometer over the C-order index
      index[d] += 1;
      at += stride[d];
      if (index[d] < size[d]) break;
      at -= stride[d] * size[d];
      index[d] = 0;
    }
  }
  return out;
}

// --- arenalite's safetensors layout -------------------------------------------------------

const ST_DTYPES = { F32: 4, F64: 8, F16: 2 };
const MAX_HEADER = 100_000_000;

function stTensor(file, tensor, entry, buffer) {
  const keys = entry !== null && typeof entry === "object" && !Array.isArray(entry) ? Object.keys(entry).sort() : null;
  if (!keys || keys.join() !== "data_offsets,dtype,shape") {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} must have exactly the keys dtype, shape, data_offsets; got ${JSON.stringify(entry)}`);
  }
  const { dtype, shape, data_offsets: offsets } = entry;
  if (!Object.hasOwn(ST_DTYPES, dtype)) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} has dtype ${JSON.stringify(dtype)}; this reader takes ['F16', 'F32', 'F64']`);
  }
  if (!Array.isArray(shape) || !shape.every((s) => Number.isInteger(s) && s >= 0)) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} has shape ${JSON.stringify(shape)}, not a list of non-negative integers`);
  }
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(Number.isInteger) || !(offsets[0] >= 0 && offsets[0] <= offsets[1])) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} has data_offsets ${JSON.stringify(offsets)}, not [begin, end] with 0 <= begin <= end`);
  }
  const itemsize = ST_DTYPES[dtype];
  const count = shape.reduce((a, b) => a * b, 1);
  const [begin, end] = offsets;
  if (end - begin !== itemsize * count) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} spans ${end - begin} bytes but shape [${shape.join(", ")}] of ${dtype} needs ${itemsize * count}`);
  }
  if (end > buffer.length) {
    throw new Error(`${file}: tensor ${pyRepr(tensor)} ends at byte ${end} of a ${buffer.length}-byte buffer (the file is truncated)`);
  }
  const view = new DataView(buffer.buffer, buffer.byteOffset + begin, end - begin);
  const data = new Float32Array(count);
  for (let i = 0; i < count; i++) {
    data[i] = dtype === "F32" ? view.getFloat32(4 * i, true) : dtype === "F64" ? view.getFloat64(8 * i, true)
      : halfToFloat(view.getUint16(2 * i, true));
  }
  return { data, shape, begin, end };
}

function stHeader(bytes, file) {
  if (bytes.length < 8) {
    throw new Error(`${file} is ${bytes.length} bytes long; a safetensors file starts with an 8-byte header length`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true) + view.getUint32(4, true) * 2 ** 32;
  if (n > Math.min(MAX_HEADER, bytes.length - 8)) {
    throw new Error(`${file} declares a ${n}-byte header but holds ${bytes.length - 8} bytes after the length (truncated or not safetensors)`);
  }
  let header;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(8, 8 + n)));
  } catch (error) {
    throw new Error(`${file} has a header that is not JSON: ${error.message}`, { cause: error });
  }
  if (header === null || typeof header !== "object" || Array.isArray(header)) throw new Error(`${file}: the header must be a JSON object`);
  const metadata = header.__metadata__ ?? {};
  delete header.__metadata__;
  if (typeof metadata !== "object" || Array.isArray(metadata) || !Object.values(metadata).every((v) => typeof v === "string")) {
    throw new Error(`${file}: '__metadata__' must map strings to strings`);
  }
  return { header, metadata, buffer: bytes.subarray(8 + n) };
}

/** Keys of a flat JSON object whose numbers are written as floats (a '.' or an exponent). */
function jsonFloatKeys(text) {
  const floats = new Set();
  for (const m of text.matchAll(/"((?:[^"\\]|\\.)*)"\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g)) {
    if (/[.eE]/.test(m[2])) floats.add(m[1]);
  }
  return floats;
}

/** arenalite's TabICL safetensors: {config, floats, tensors, shapes} before the checks. */
export function parseTabiclSafetensors(bytes, name = "<bytes>", where = `checkpoint ${pyRepr(name)}`) {
  const file = `weights file ${pyRepr(name)}`;
  const { header, metadata, buffer } = stHeader(asBytes(bytes), file);
  const tensors = new Map();
  const shapes = new Map();
  const spans = [];
  for (const [tensor, entry] of Object.entries(header)) {
    const { data, shape, begin, end } = stTensor(file, tensor, entry, buffer);
    tensors.set(tensor, data);
    shapes.set(tensor, shape);
    spans.push([begin, end, tensor]);
  }
  spans.sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : 1));
  for (let i = 1; i < spans.length; i++) {
    if (spans[i][0] < spans[i - 1][1]) throw new Error(`${file}: tensors ${pyRepr(spans[i - 1][2])} and ${pyRepr(spans[i][2])} overlap`);
  }
  for (const [key, want] of [["format", FORMAT], ["version", VERSION]]) {
    if (metadata[key] !== want) {
      throw new Error(`${where}: safetensors metadata ${pyRepr(key)} must be ${pyRepr(want)}, got ${pyRepr(metadata[key] ?? null)} ` +
        "(not a TabICL checkpoint written by arenalite)");
    }
  }
  let config;
  try {
    config = JSON.parse(metadata.config ?? "");
  } catch (error) {
    throw new Error(`${where}: safetensors metadata 'config' is not JSON: ${pyRepr(metadata.config ?? null)}`, { cause: error });
  }
  return { config, floats: jsonFloatKeys(metadata.config), tensors, shapes };
}
