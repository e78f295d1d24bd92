// TabICL checkpoints read in a page, a worker or Node without Python or torch: the
// package's `.ckpt` (torch's zip serialization, read by ../checkpoint/torch.js: data.pkl
// through a restricted pickle interpreter that refuses every foreign class by name before
// anything is built) and arenalite's
// safetensors layout (metadata {"format": "arenalite.tabicl", "version": "1", "config":
// JSON}). The JavaScript twin of pkg/arenalite/models/tabicl/checkpoint.py: the same
// CONFIG_DEFAULTS, expectedShapes, checks and (as far as JavaScript allows) messages.
//
//   const { config, tensors, shapes, format } = await readCheckpoint(bytes, { name });
//   // tensors: Map(state-dict name → Float32Array, C order), in state-dict order;
//   // shapes: Map(name → number[]); config: every key of CONFIG_DEFAULTS, in its order.

import { PyDict, PyFloat, Refused, floatRepr, pyRepr, typeName } from "../checkpoint/pickle.js";
import { jsonFloatKeys, readSafetensors } from "../checkpoint/safetensors.js";
import { configFrom, few, listRepr, readTorchZip, sniff } from "../checkpoint/torch.js";
import { asBytes } from "../checkpoint/zip.js";
export { Refused };

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
const KEYS = Object.keys(CONFIG_DEFAULTS);

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
  let read;
  let format;
  if (sniff(bytes, where) === "zip") {
    const { obj, tensors, shapes } = await readTorchZip(bytes, where, { model: "TabICL" });
    read = { ...configFrom(obj.get("config")), tensors, shapes };
    format = "ckpt";
  } else {
    read = parseTabiclSafetensors(bytes, String(name), where);
    format = "safetensors";
  }
  const config = checkConfig(read.config, where, read.floats);
  const checked = checkTensors(config, read.tensors, read.shapes, where);
  return { config, tensors: checked.tensors, shapes: checked.shapes, format };
}

// --- arenalite's safetensors layout -------------------------------------------------------

/** arenalite's TabICL safetensors: {config, floats, tensors, shapes} before the checks. */
export function parseTabiclSafetensors(bytes, name = "<bytes>", where = `checkpoint ${pyRepr(name)}`) {
  const { metadata, tensors, shapes } = readSafetensors(asBytes(bytes), name, { finite: false });
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
