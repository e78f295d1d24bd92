// TabPFN v3 checkpoints read in a page, a worker or Node without Python or torch: the
// tabpfn package's `.ckpt` (torch.save's zip, through ../checkpoint/torch.js: data.pkl by a
// restricted pickle interpreter that refuses every foreign class by name before anything is
// built) or a `.safetensors` (the package's, or `arenalite convert tabpfn`'s). The
// JavaScript twin of pkg/arenalite/models/tabpfn/checkpoint.py: the generation checked
// before any tensor is read (v2, v2.5, v2.6, v3.5 refused by name), the config completed
// with CONFIG_DEFAULTS and checked, the state dict exactly expectedShapes(config), the
// inference config completed (or the package's v2.5 defaults); every refusal worded as
// Python's.
//
//   const w = await loadTabpfnWeights("model.ckpt");
//   // {config, tensors: Map(name → Float32Array), shapes: Map(name → number[]), name,
//   //  criterion, borders, task, inferenceConfig, inferenceConfigSource, description, format}

import { PyDict, PyFloat, PySet, PyTuple, pyRepr, typeName } from "../checkpoint/pickle.js";
import { readSafetensors } from "../checkpoint/safetensors.js";
import { few, listRepr, plain, readTorchZip, sniff } from "../checkpoint/torch.js";
import { asBytes } from "../checkpoint/zip.js";
import { readBytes } from "../io.js";

export const FORMAT = "arenalite.tabpfn";
export const VERSION = "1";
export const ARCHITECTURE = "tabpfn_v3";
/** `architecture_name` → generation, as tabpfn.architectures.ARCHITECTURES (9.2.0) names them. */
export const GENERATIONS = Object.freeze({
  tabpfn_v2: "v2", base: "v2.5", tabpfn_v2_5: "v2.5", tabpfn_v2_6: "v2.6", tabpfn_v3: "v3", tabpfn_v3_5: "v3.5",
});
/** The `name` default of the other generations' configs. */
export const CONFIG_NAMES = Object.freeze({ "TabPFN-v2": "v2", "TabPFN-v2.5": "v2.5", "TabPFN-v2.6": "v2.6", "TabPFN-v3.5": "v3.5" });
/** Config keys of another generation that v3's lacks, checked in this order. */
export const OTHER_CONFIG_KEYS = Object.freeze([
  ["v3.5", ["fourier_encoding_num_frequencies", "cell_ecdf_num_frequencies", "cell_ecdf_num_buckets", "cell_embed_row_chunk_size"]],
  ["v2.5 or v2.6", ["encoder_type", "encoder_mlp_hidden_dim", "num_thinking_rows"]],
  ["v2", ["emsize", "nhead", "features_per_group", "seed"]],
]);
/** tabpfn.architectures.tabpfn_v3.TabPFNV3Config's fields and defaults (tabpfn 9.2.0), in order. */
export const CONFIG_DEFAULTS = Object.freeze({
  max_num_classes: -1, num_buckets: -1, name: "TabPFN-v3",
  embed_dim: 128, dist_embed_num_blocks: 3, dist_embed_num_heads: 8,
  dist_embed_num_inducing_points: 128, feature_group_size: 3,
  feat_agg_num_blocks: 3, feat_agg_num_heads: 8, feat_agg_num_cls_tokens: 4,
  feat_agg_rope_base: 100_000, use_rope: true,
  nlayers: 24, icl_num_heads: 8, icl_num_kv_heads: null, icl_num_kv_heads_test: null,
  decoder_head_dim: 64, decoder_num_heads: 6, decoder_use_softmax_scaling: false,
  ff_factor: 2, dropout: 0.0, softmax_scaling_mlp_hidden_dim: 64,
  layernorm_elementwise_affine: true, use_nan_indicators: true,
  inference_chunk_cells: 2048 * 768, max_batched_estimator_rows: 32768,
  max_batched_estimator_cells: 768_000_000, inference_col_chunk_size: 4,
});
const POSITIVE = ["embed_dim", "dist_embed_num_heads", "dist_embed_num_inducing_points",
  "feature_group_size", "feat_agg_num_heads", "feat_agg_num_cls_tokens", "icl_num_heads",
  "decoder_head_dim", "decoder_num_heads", "ff_factor", "softmax_scaling_mlp_hidden_dim",
  "inference_chunk_cells", "max_batched_estimator_rows", "max_batched_estimator_cells",
  "inference_col_chunk_size"];
const COUNTS = ["dist_embed_num_blocks", "feat_agg_num_blocks", "nlayers"];
const INTEGERS = ["max_num_classes", "num_buckets"];
const OPTIONAL = ["icl_num_kv_heads", "icl_num_kv_heads_test"];
const FLAGS = ["use_rope", "decoder_use_softmax_scaling", "layernorm_elementwise_affine", "use_nan_indicators"];

/** tabpfn.inference_config.InferenceConfig's fields and defaults (9.2.0), in order. */
export const INFERENCE_DEFAULTS = Object.freeze({
  PREPROCESS_TRANSFORMS: null,
  MAX_UNIQUE_FOR_CATEGORICAL_FEATURES: 30, MIN_UNIQUE_FOR_NUMERICAL_FEATURES: 4,
  MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE: 100, MIN_CARDINALITY_FOR_TEXT: 30,
  SOFTMAX_TEMPERATURE: 0.9, N_ESTIMATORS: "auto", TRANSFORM_DATES: false,
  TRANSFORM_TEXT: false, TEXT_N_COMPONENTS: 30, OUTLIER_REMOVAL_STD: "auto",
  FEATURE_SHIFT_METHOD: "shuffle", CLASS_SHIFT_METHOD: "shuffle",
  FINGERPRINT_FEATURE: true, POLYNOMIAL_FEATURES: "no", SUBSAMPLE_SAMPLES: null,
  SAMPLE_SUBSAMPLING_METHOD: "auto", ENABLE_GPU_PREPROCESSING: false,
  FEATURE_SUBSAMPLING_METHOD: "balanced", FEATURE_SUBSAMPLING_CONSTANT_FEATURE_COUNT: 50,
  FEATURE_SUBSAMPLING_IMPORTANCE_TOP_K_COUNT: "auto",
  REGRESSION_Y_PREPROCESS_TRANSFORMS: [null, "safepower"],
  USE_SKLEARN_16_DECIMAL_PRECISION: false, MAX_NUMBER_OF_CLASSES: 10,
  MAX_NUMBER_OF_FEATURES: 500, MAX_NUMBER_OF_SAMPLES: 10_000, MAX_CPU_SAMPLES: 1000,
  FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM: true, PASSTHROUGH_INF: false,
  _REGRESSION_DEFAULT_OUTLIER_REMOVAL_STD: null,
  _CLASSIFICATION_DEFAULT_OUTLIER_REMOVAL_STD: 12.0,
});
/** tabpfn.preprocessing.PreprocessorConfig's fields and defaults, in order (`name` required). */
export const PREPROCESSOR_DEFAULTS = Object.freeze({
  name: null, categorical_name: "none", append_original: false, max_features_per_estimator: 500,
  global_transformer_name: null, max_onehot_cardinality: null, differentiable: false,
});
const preprocessor = (given) => ({ ...PREPROCESSOR_DEFAULTS, ...given });
const SQUASHING_SVD = preprocessor({ name: "squashing_scaler_default",
  categorical_name: "ordinal_very_common_categories_shuffled", global_transformer_name: "svd_quarter_components" });
const V2_5_CHANGES = { FEATURE_SUBSAMPLING_METHOD: "random", MAX_NUMBER_OF_FEATURES: 2000, MAX_NUMBER_OF_SAMPLES: 50_000 };
/** What a v3 checkpoint without an inference config runs with (the package's v2.5 defaults). */
export const V2_5_INFERENCE_CONFIG = Object.freeze({
  classification: { ...INFERENCE_DEFAULTS, ...V2_5_CHANGES, PREPROCESS_TRANSFORMS: [
    SQUASHING_SVD, preprocessor({ name: "none", categorical_name: "numeric" })] },
  regression: { ...INFERENCE_DEFAULTS, ...V2_5_CHANGES, PREPROCESS_TRANSFORMS: [
    preprocessor({ name: "quantile_uni_coarse", categorical_name: "numeric", append_original: "auto" }), SQUASHING_SVD] },
});
/** The bar distribution's state a regressor's state dict may carry as `criterion.<key>`. */
export const CRITERION_KEYS = Object.freeze(["borders", "losses_per_bucket"]);

const deepCopy = (value) => structuredClone(value);
const isInt = (v) => typeof v === "number" || typeof v === "bigint";
const isNumber = (v) => isInt(v) || v instanceof PyFloat;
const num = (v) => (v instanceof PyFloat ? v.value : Number(v));
const isDict = (v) => v instanceof PyDict;
const strKey = (k) => (typeof k === "string" ? k : pyRepr(k));
const sortedStr = (keys) => listRepr(keys.map(strKey).sort());
const pyStr = (v) => (typeof v === "string" ? v : pyRepr(v));
const thousands = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

/** Python's truthiness of an unpickled or JSON value. */
function truthy(v) {
  if (v === null || v === undefined) return false;
  if (typeof v === "boolean") return v;
  if (isInt(v)) return Number(v) !== 0;
  if (v instanceof PyFloat) return v.value !== 0;
  if (typeof v === "string" || Array.isArray(v)) return v.length > 0;
  if (v instanceof PyDict) return v.size > 0;
  if (v instanceof PyTuple || v instanceof PySet) return v.items.length > 0;
  return true;
}

// --- JSON as Python's json.loads gives it (floats kept as floats) -------------------------

/** A JSON text (already valid) as Python values: objects → PyDict, floats → PyFloat. */
export function pyJson(text) {
  let i = 0;
  const ws = () => { while (i < text.length && " \t\n\r".includes(text[i])) i++; };
  const value = () => {
    ws();
    const ch = text[i];
    if (ch === "{") {
      i++;
      const d = new PyDict();
      ws();
      if (text[i] === "}") { i++; return d; }
      for (;;) {
        const key = value();
        ws(); i++;  // ':'
        d.set(key, value());
        ws();
        if (text[i++] === "}") return d;
      }
    }
    if (ch === "[") {
      i++;
      const items = [];
      ws();
      if (text[i] === "]") { i++; return items; }
      for (;;) {
        items.push(value());
        ws();
        if (text[i++] === "]") return items;
      }
    }
    if (ch === "\"") {
      const start = i;
      i++;
      while (text[i] !== "\"") i += text[i] === "\\" ? 2 : 1;
      i++;
      return JSON.parse(text.slice(start, i));
    }
    const m = /^(?:true|false|null|NaN|-?Infinity|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    i += m[0].length;
    const token = m[0];
    if (token === "true" || token === "false") return token === "true";
    if (token === "null") return null;
    if (/[.eEIN]/.test(token)) return new PyFloat(Number(token));
    const n = Number(token);
    return Number.isSafeInteger(n) ? n : BigInt(token);
  };
  return value();
}

// --- the generation, the config and the state dict it implies ----------------------------

/** "classification" (max_num_classes ≥ 2) or "regression", of a checked config. */
export const taskOf = (config) => (config.max_num_classes >= 2 ? "classification" : "regression");

/**
 * Throws unless `checkpoint` (the file's dict, a PyDict) is TabPFN v3's, naming the
 * generation it is: by architecture_name as the package's load_model reads it, then by its
 * config's name and keys.
 */
export function checkGeneration(checkpoint, where) {
  const hasName = checkpoint.has("architecture_name");
  const name = hasName ? checkpoint.get("architecture_name") : "tabpfn_v2";
  const config = checkpoint.get("config");
  if (!hasName && !(isDict(config) && OTHER_CONFIG_KEYS[2][1].some((k) => config.has(k)))) {
    const keys = isDict(config) ? listRepr(config.keys().map(strKey).sort().slice(0, 8)) : pyStr(config);
    throw new Error(`${where}: not a TabPFN checkpoint: no 'architecture_name' (the tabpfn package reads such a file as ` +
      "TabPFN v2) and its config is not v2's (no 'emsize', 'nhead' or 'features_per_group'; it holds " +
      `${keys})`);
  }
  if (typeof name !== "string") throw new Error(`${where}: 'architecture_name' must be a string, got ${pyRepr(name)}`);
  if (name !== ARCHITECTURE) {
    if (!Object.hasOwn(GENERATIONS, name)) {
      throw new Error(`${where}: architecture_name ${pyRepr(name)} is none of the tabpfn package's ` +
        `(${listRepr(Object.keys(GENERATIONS).sort())}); only TabPFN v3 checkpoints (${pyRepr(ARCHITECTURE)}) are read`);
    }
    const said = hasName ? `architecture_name ${pyRepr(name)}` : "no architecture_name, which the tabpfn package reads as v2";
    throw new Error(`${where}: TabPFN ${GENERATIONS[name]} checkpoints are not supported yet (${said}); only TabPFN v3 is read`);
  }
  if (!isDict(config)) return;
  const configName = config.get("name");
  if (typeof configName === "string" && Object.hasOwn(CONFIG_NAMES, configName)) {
    throw new Error(`${where}: TabPFN ${CONFIG_NAMES[configName]} checkpoints are not supported yet ` +
      `(architecture_name ${pyRepr(name)}, but its config's name is ${pyRepr(configName)})`);
  }
  for (const [generation, keys] of OTHER_CONFIG_KEYS) {
    const found = keys.filter((k) => config.has(k));
    if (found.length) {
      throw new Error(`${where}: TabPFN ${generation} checkpoints are not supported yet ` +
        `(architecture_name ${pyRepr(name)}, but its config holds ${generation}'s keys ${listRepr(found)})`);
    }
  }
}

/** A plain object (from JavaScript) as the PyDict Python would hold; PyDicts pass through. */
function asPyDict(config) {
  if (config instanceof PyDict) return config;
  const proto = config !== null && typeof config === "object" ? Object.getPrototypeOf(config) : undefined;
  if (proto !== Object.prototype && proto !== null) return config;
  const d = new PyDict();
  for (const [k, v] of Object.entries(config)) d.set(k, v);
  return d;
}

/**
 * `config` (a PyDict as read, or a plain object) completed with CONFIG_DEFAULTS (in their
 * order) and checked, as Python's check_config: integral floats of integer fields become
 * ints; unknown keys, wrong types, head counts that do not divide their width, an odd
 * rotary head width, a config that is neither classifier nor regressor throw an Error
 * starting with `where`. Returns a plain object.
 */
export function checkConfig(config, where = "TabPFN v3 config") {
  const given = asPyDict(config);
  if (!isDict(given)) throw new Error(`${where}: the config must be a dict, got ${typeName(given)}`);
  const unknown = given.keys().filter((k) => !(typeof k === "string" && Object.hasOwn(CONFIG_DEFAULTS, k)));
  if (unknown.length) {
    throw new Error(`${where}: unknown config keys ${sortedStr(unknown)} (TabPFN v3 takes ${listRepr(Object.keys(CONFIG_DEFAULTS))})`);
  }
  const out = {};
  for (const [key, fallback] of Object.entries(CONFIG_DEFAULTS)) out[key] = given.has(key) ? given.get(key) : fallback;
  const fail = (key, what) => new Error(`${where}: ${pyRepr(key)} must be ${what}, got ${pyRepr(out[key])}`);
  const integer = (key) => {
    const v = out[key];
    if (v instanceof PyFloat && Number.isInteger(v.value)) out[key] = v.value;
    return isInt(out[key]);
  };
  for (const key of POSITIVE) if (!integer(key) || out[key] < 1) throw fail(key, "a positive integer");
  for (const key of COUNTS) if (!integer(key) || out[key] < 0) throw fail(key, "a non-negative integer");
  for (const key of INTEGERS) if (!integer(key)) throw fail(key, "an integer");
  for (const key of OPTIONAL) if (out[key] !== null && (!integer(key) || out[key] < 1)) throw fail(key, "null or a positive integer");
  for (const key of FLAGS) if (typeof out[key] !== "boolean") throw fail(key, "true or false");
  if (typeof out.name !== "string") throw fail("name", "a string");
  const base = out.feat_agg_rope_base;
  if (!isNumber(base) || !(num(base) >= 1 && num(base) < Infinity)) throw fail("feat_agg_rope_base", "a number of at least 1");
  const dropout = out.dropout;
  if (!isNumber(dropout) || !(num(dropout) >= 0 && num(dropout) <= 1)) throw fail("dropout", "a number in [0, 1]");
  for (const key of Object.keys(out)) if (isInt(out[key]) || out[key] instanceof PyFloat) out[key] = num(out[key]);
  if (out.max_num_classes < 2 && out.num_buckets < 1) {
    throw new Error(`${where}: neither a classifier (max_num_classes ${out.max_num_classes}, at least 2) nor a regressor ` +
      `(num_buckets ${out.num_buckets}, at least 1)`);
  }
  const e = out.embed_dim;
  const icl = e * out.feat_agg_num_cls_tokens;
  for (const [key, width, what] of [["dist_embed_num_heads", e, "embed_dim"], ["feat_agg_num_heads", e, "embed_dim"],
    ["icl_num_heads", icl, "embed_dim × feat_agg_num_cls_tokens"]]) {
    if (width % out[key]) throw new Error(`${where}: ${key}=${out[key]} does not divide ${what} = ${width}`);
  }
  const colHead = Math.floor(e / out.feat_agg_num_heads);
  if (out.use_rope && colHead % 2) {
    throw new Error(`${where}: rotary embedding needs an even head width; embed_dim ${e} / feat_agg_num_heads ` +
      `${out.feat_agg_num_heads} = ${colHead}`);
  }
  const { icl_num_heads: heads, icl_num_kv_heads: kv, icl_num_kv_heads_test: kvTest } = out;
  if (kv !== null && heads % kv) throw new Error(`${where}: icl_num_kv_heads=${kv} does not divide icl_num_heads=${heads}`);
  if (kvTest !== null) {
    if (heads % kvTest) throw new Error(`${where}: icl_num_kv_heads_test=${kvTest} does not divide icl_num_heads=${heads}`);
    const trainKv = kv !== null ? kv : heads;
    if (kvTest > trainKv) throw new Error(`${where}: icl_num_kv_heads_test=${kvTest} is more than the train rows' KV heads (${trainKv})`);
  }
  return out;
}

function softmaxScaling(shapes, p, heads, headDim, hidden) {
  shapes.set(`${p}base_mlp.0.weight`, [hidden, 1]).set(`${p}base_mlp.0.bias`, [hidden])
    .set(`${p}base_mlp.2.weight`, [heads * headDim, hidden]).set(`${p}base_mlp.2.bias`, [heads * headDim])
    .set(`${p}query_mlp.0.weight`, [hidden, headDim]).set(`${p}query_mlp.0.bias`, [hidden])
    .set(`${p}query_mlp.2.weight`, [headDim, hidden]).set(`${p}query_mlp.2.bias`, [headDim]);
}
const projections = (shapes, p, d, names) => names.forEach((n) => shapes.set(`${p}${n}_projection.weight`, [d, d]));
const mlp = (shapes, p, d, ff) => shapes.set(`${p}mlp.0.weight`, [ff, d]).set(`${p}mlp.2.weight`, [d, ff]);
const norms = (shapes, p, names, d, affine) => affine && names.forEach((n) => shapes.set(`${p}${n}.weight`, [d]));

/**
 * Every state-dict name of the package's TabPFN v3 for `config` and its shape, in
 * state-dict order (a Map; criterion entries are not the model's). `config` may omit keys.
 */
export function expectedShapes(config) {
  const c = checkConfig(config);
  const { embed_dim: e, ff_factor: ff, layernorm_elementwise_affine: affine, softmax_scaling_mlp_hidden_dim: hidden } = c;
  const classes = taskOf(c) === "classification" ? c.max_num_classes : null;
  const icl = e * c.feat_agg_num_cls_tokens;
  const shapes = new Map();
  shapes.set("regression_borders", [Math.max(c.num_buckets + 1, 0)])
    .set("x_embed.weight", [e, c.feature_group_size * (c.use_nan_indicators ? 2 : 1)]).set("x_embed.bias", [e]);
  if (classes) shapes.set("col_y_encoder.embedding.weight", [classes, e]);
  else shapes.set("col_y_encoder.weight", [e, 1]).set("col_y_encoder.bias", [e]);
  const heads = c.dist_embed_num_heads;
  for (let i = 0; i < c.dist_embed_num_blocks; i++) {
    const p = `feature_distribution_embedder.layers.${i}.`;
    shapes.set(`${p}inducing_vectors`, [c.dist_embed_num_inducing_points, e]);
    for (const block of ["cross_attn_block1", "cross_attn_block2"]) {
      const b = `${p}${block}.`;
      if (block === "cross_attn_block1") softmaxScaling(shapes, `${b}attn.softmax_scaling_layer.`, heads, Math.floor(e / heads), hidden);
      projections(shapes, `${b}attn.`, e, ["q", "k", "v", "out"]);
      mlp(shapes, b, e, e * ff);
      norms(shapes, b, ["layernorm_q", "layernorm_kv", "layernorm2"], e, affine);
    }
  }
  let p = "column_aggregator.";
  shapes.set(`${p}cls_tokens`, [c.feat_agg_num_cls_tokens, e]);
  for (let i = 0; i < c.feat_agg_num_blocks; i++) {
    const b = `${p}blocks.${i}.`;
    projections(shapes, `${b}attention.`, e, ["q", "k", "v", "out"]);
    norms(shapes, b, ["layernorm", "layernorm_mlp"], e, affine);
    mlp(shapes, b, e, e * ff);
  }
  if (c.use_rope) shapes.set(`${p}rope.freqs`, [Math.floor((Math.floor(e / c.feat_agg_num_heads) + 1) / 2)]);
  norms(shapes, p, ["out_ln"], e, affine);
  if (classes) shapes.set("icl_y_encoder.embedding.weight", [classes, icl]);
  else shapes.set("icl_y_encoder.weight", [icl, 1]).set("icl_y_encoder.bias", [icl]);
  const headDim = Math.floor(icl / c.icl_num_heads);
  const kv = (c.icl_num_kv_heads || c.icl_num_heads) * headDim;
  for (let i = 0; i < c.nlayers; i++) {
    const b = `icl_blocks.${i}.`;
    softmaxScaling(shapes, `${b}icl_attention.softmax_scaling_layer.`, c.icl_num_heads, headDim, hidden);
    projections(shapes, `${b}icl_attention.`, icl, ["q", "out"]);
    shapes.set(`${b}icl_attention.k_projection.weight`, [kv, icl]).set(`${b}icl_attention.v_projection.weight`, [kv, icl]);
    norms(shapes, b, ["layernorm", "layernorm_mlp"], icl, affine);
    mlp(shapes, b, icl, icl * ff);
  }
  norms(shapes, "", ["output_norm"], icl, affine);
  if (classes) {
    p = "many_class_decoder.";
    const width = c.decoder_head_dim * c.decoder_num_heads;
    for (const n of ["q", "k"]) shapes.set(`${p}${n}_projection.weight`, [width, icl]).set(`${p}${n}_projection.bias`, [width]);
    if (c.decoder_use_softmax_scaling) softmaxScaling(shapes, `${p}softmax_scaling_layer.`, c.decoder_num_heads, c.decoder_head_dim, hidden);
  } else {
    shapes.set("output_projection.0.weight", [icl * ff, icl]).set("output_projection.0.bias", [icl * ff])
      .set("output_projection.2.weight", [c.num_buckets, icl * ff]).set("output_projection.2.bias", [c.num_buckets]);
  }
  return shapes;
}

function brief(config) {
  return ["max_num_classes", "num_buckets", "embed_dim", "dist_embed_num_blocks", "feat_agg_num_blocks", "nlayers"]
    .map((k) => `${k}=${config[k] ?? CONFIG_DEFAULTS[k]}`).join(", ");
}

const shapeText = (shape) => `[${shape.join(", ")}]`;

/**
 * {tensors, shapes, criterion} after checking the state dict holds exactly the config's
 * tensors with its shapes and at most CRITERION_KEYS besides (a regressor's: num_buckets + 1
 * borders, num_buckets losses), as Python's check_tensors; the Error names the culprit.
 */
export function checkTensors(config, tensors, shapes, where) {
  const want = expectedShapes(config);
  const criterionNames = [...tensors.keys()].filter((n) => n.startsWith("criterion."));
  const modelNames = [...tensors.keys()].filter((n) => !n.startsWith("criterion."));
  const missing = [...want.keys()].filter((n) => !modelNames.includes(n));
  const extra = modelNames.filter((n) => !want.has(n))
    .concat(criterionNames.filter((n) => !CRITERION_KEYS.includes(n.slice("criterion.".length))));
  if (missing.length || extra.length) {
    const parts = [];
    if (missing.length) parts.push(`missing tensors ${few(missing)}`);
    if (extra.length) parts.push(`unexpected tensors ${few(extra)}`);
    throw new Error(`${where}: ${parts.join(" and ")} for its config (TabPFN v3 with ${brief(config)} has ${want.size} tensors)`);
  }
  const out = new Map();
  for (const [name, shape] of want) {
    const got = shapes.get(name);
    if (got.length !== shape.length || got.some((n, i) => n !== shape[i])) {
      throw new Error(`${where}: tensor ${pyRepr(name)} has shape ${shapeText(got)}, expected ${shapeText(shape)} for its config`);
    }
    out.set(name, tensors.get(name));
  }
  const c = checkConfig(config);
  const regression = taskOf(c) === "regression";
  const wantCriterion = { borders: [c.num_buckets + 1], losses_per_bucket: [c.num_buckets] };
  for (const full of criterionNames) {
    const key = full.slice("criterion.".length);
    const got = shapes.get(full);
    const bad = regression ? got.length !== 1 || got[0] !== wantCriterion[key][0] : got.length !== 1;
    if (bad) {
      const expected = regression ? shapeText(wantCriterion[key]) : "1-D";
      throw new Error(`${where}: tensor ${pyRepr(full)} has shape ${shapeText(got)}, expected ${expected} for its config`);
    }
  }
  const criterion = new Map();
  for (const key of CRITERION_KEYS) if (tensors.has(`criterion.${key}`)) criterion.set(key, tensors.get(`criterion.${key}`));
  return { tensors: out, shapes: new Map(want), criterion };
}

// --- the inference config ----------------------------------------------------------------

/**
 * A checkpoint's inference config (a PyDict as read, or a plain object) completed as the
 * package's InferenceConfig(**value) completes it (Python's check_inference_config); a
 * plain object with every field of INFERENCE_DEFAULTS in order.
 */
export function checkInferenceConfig(value, where) {
  const given = asPyDict(value);
  if (!isDict(given)) throw new Error(`${where}: 'inference_config' must be a dict, got ${typeName(given)}`);
  const entries = new Map(given.entries().map(([k, v]) => [k, v]));
  if (entries.has("CONSTANT_FEATURE_COUNT")) {
    const v = entries.get("CONSTANT_FEATURE_COUNT");
    entries.delete("CONSTANT_FEATURE_COUNT");
    entries.set("FEATURE_SUBSAMPLING_CONSTANT_FEATURE_COUNT", v);
  }
  const unknown = [...entries.keys()].filter((k) => !(typeof k === "string" && Object.hasOwn(INFERENCE_DEFAULTS, k)));
  if (unknown.length) {
    throw new Error(`${where}: unknown inference_config keys ${sortedStr(unknown)} (the tabpfn package's InferenceConfig refuses them)`);
  }
  if (!entries.has("PREPROCESS_TRANSFORMS")) {
    throw new Error(`${where}: inference_config has no 'PREPROCESS_TRANSFORMS', which the tabpfn package's InferenceConfig requires`);
  }
  const out = {};
  for (const [key, fallback] of Object.entries(INFERENCE_DEFAULTS)) out[key] = entries.has(key) ? entries.get(key) : deepCopy(fallback);
  const transforms = out.PREPROCESS_TRANSFORMS;
  if (!Array.isArray(transforms) && !(transforms instanceof PyTuple)) {
    throw new Error(`${where}: inference_config 'PREPROCESS_TRANSFORMS' must be a list, got ${typeName(transforms)}`);
  }
  const completed = [];
  (Array.isArray(transforms) ? transforms : transforms.items).forEach((raw, i) => {
    const entry = asPyDict(raw);
    const what = `inference_config PREPROCESS_TRANSFORMS[${i}]`;
    if (!isDict(entry)) throw new Error(`${where}: ${what} must be a dict, got ${typeName(entry)}`);
    const bad = entry.keys().filter((k) => !(typeof k === "string" && Object.hasOwn(PREPROCESSOR_DEFAULTS, k)));
    if (bad.length) {
      throw new Error(`${where}: ${what} has unknown keys ${sortedStr(bad)} (PreprocessorConfig takes ${listRepr(Object.keys(PREPROCESSOR_DEFAULTS))})`);
    }
    if (!entry.has("name")) throw new Error(`${where}: ${what} has no 'name'`);
    const one = {};
    for (const [key, fallback] of Object.entries(PREPROCESSOR_DEFAULTS)) one[key] = entry.has(key) ? plain(entry.get(key)) : fallback;
    completed.push(one);
  });
  for (const key of Object.keys(out)) out[key] = key === "PREPROCESS_TRANSFORMS" ? completed : plain(out[key]);
  return out;
}

/**
 * [the inference config, "checkpoint" | "v2.5 defaults"] as the package picks it for a v3
 * file: the checkpoint's when there and not empty, else V2_5_INFERENCE_CONFIG of the task.
 */
export function inferenceConfigOf(checkpoint, task, where) {
  const value = checkpoint.get("inference_config");
  if (truthy(value)) return [checkInferenceConfig(value, where), "checkpoint"];
  return [deepCopy(V2_5_INFERENCE_CONFIG[task]), "v2.5 defaults"];
}

// --- reading ------------------------------------------------------------------------------

/** The checkpoint dict of a safetensors file (each metadata value JSON), as Python's. */
function safetensorsCheckpoint(metadata, where) {
  const obj = new PyDict();
  for (const [key, value] of Object.entries(metadata)) {
    try {
      JSON.parse(value);
    } catch {
      throw new Error(`${where}: safetensors metadata ${pyRepr(key)} is not JSON: ${pyRepr(Array.from(value).slice(0, 80).join(""))} ` +
        "(not a TabPFN checkpoint's metadata)");
    }
    obj.set(key, pyJson(value));
  }
  for (const [key, want] of [["format", FORMAT], ["version", VERSION]]) {
    if (obj.has(key) && obj.get(key) !== want) {
      throw new Error(`${where}: safetensors metadata ${pyRepr(key)} must be ${pyRepr(want)}, got ${pyRepr(obj.get(key))}`);
    }
  }
  if (!obj.has("config")) {
    throw new Error(`${where}: safetensors metadata has no 'config' (its keys: ${listRepr(Object.keys(metadata).sort())}; not a TabPFN checkpoint)`);
  }
  return obj;
}

function describe(c, params, name, source) {
  const classifier = taskOf(c) === "classification";
  const head = classifier ? `${c.max_num_classes} classes` : `${c.num_buckets} buckets`;
  const base = name === null ? null : String(name).split(/[\\/]/).pop();
  const text = `TabPFN v3 ${classifier ? "classifier" : "regressor"}${base === null ? "" : ` from ${base}`} (${head}, ` +
    `embed_dim ${c.embed_dim}, ${c.nlayers} ICL layers, ${thousands(params)} parameters); `;
  if (source === "checkpoint") return `${text}inference config from the checkpoint`;
  const task = classifier ? "multiclass" : "regression";
  return `${text}the checkpoint has no inference config, so the tabpfn package's v2.5 ${task} defaults, as the package ` +
    `falls back (InferenceConfig.get_default(${pyRepr(task)}, ModelVersion.V2_5))`;
}

/**
 * Read a TabPFN v3 checkpoint from its bytes: the package's `.ckpt` (or `.safetensors`) or
 * arenalite's `.safetensors`, told by content. `name` is the file as Python's `str(path)`
 * names it in the messages ("checkpoint 'name': ..."). Resolves to {config, tensors,
 * shapes, criterion, borders, task, inferenceConfig, inferenceConfigSource, description,
 * format}; rejects with Python's message for every refusal.
 */
export async function readCheckpoint(input, { name = "<bytes>" } = {}) {
  const bytes = asBytes(input);
  const where = `checkpoint ${pyRepr(String(name))}`;
  const inspect = (obj) => {
    checkGeneration(obj, where);
    checkConfig(obj.get("config"), where);
  };
  let obj;
  let read;
  let format;
  if (sniff(bytes, where) === "zip") {
    read = await readTorchZip(bytes, where, { model: "TabPFN", required: ["config", "state_dict"], inspect });
    obj = read.obj;
    format = "ckpt";
  } else {
    const base = String(name).split(/[\\/]/).pop();
    read = readSafetensors(bytes, base, { finite: false });
    obj = safetensorsCheckpoint(read.metadata, where);
    inspect(obj);
    format = "safetensors";
  }
  const config = checkConfig(obj.get("config"), where);
  const { tensors, shapes, criterion } = checkTensors(config, read.tensors, read.shapes, where);
  const task = taskOf(config);
  const [inferenceConfig, inferenceConfigSource] = inferenceConfigOf(obj, task, where);
  let params = 0;
  for (const [n, a] of tensors) if (n !== "regression_borders") params += a.length;
  return {
    config, tensors, shapes, criterion, task, inferenceConfig, inferenceConfigSource, format,
    borders: task === "regression" ? criterion.get("borders") ?? tensors.get("regression_borders") : null,
    description: describe(config, params, name === "<bytes>" ? null : name, inferenceConfigSource),
  };
}

async function readPath(source) {
  const where = `checkpoint ${pyRepr(String(source))}`;
  const isNode = typeof process !== "undefined" && !!process.versions?.node;
  if (isNode && typeof source === "string" && !/^[a-z][a-z0-9+.-]*:/i.test(source)) {
    const { stat } = await import("node:fs/promises");
    const info = await stat(source).catch(() => null);
    if (info?.isDirectory()) throw new Error(`${where} is a directory, not a file`);
    if (!info?.isFile()) throw new Error(`${where} does not exist`);
  }
  return readBytes(source);
}

/**
 * TabPFN v3 weights from a path or URL, bytes, {bytes, name} or an already read checkpoint
 * ({config, tensors, shapes}): resolves to readCheckpoint's object plus `name`.
 */
export async function loadTabpfnWeights(source) {
  if (source && source.tensors instanceof Map && source.config) {
    if (source.shapes instanceof Map) return source;
    throw new TypeError("TabPFN weights objects need `shapes` (a Map of tensor shapes)");
  }
  const named = async (bytes, name) => ({ ...(await readCheckpoint(bytes, { name })), name });
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) return named(source, "<bytes>");
  if (source && (source.bytes instanceof ArrayBuffer || ArrayBuffer.isView(source?.bytes))) {
    return named(source.bytes, String(source.name ?? "<bytes>"));
  }
  if (typeof source !== "string" && !(source instanceof URL)) {
    throw new TypeError("TabPFN weights must be a .ckpt / .safetensors path or URL, bytes, or a read checkpoint");
  }
  return named(await readPath(source), String(source));
}

