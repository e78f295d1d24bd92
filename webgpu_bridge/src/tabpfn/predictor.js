// TabPFN v3 end to end on WebGPU: the JavaScript twin of pkg/arenalite/models/tabpfn/
// predictor.py (and the registry's `reference` of tabpfn/__init__.py). The members' draws
// (./ensemble.js) → per member its CPU pipeline and soft clip (./preprocessing.js; a
// regressor's target transform, ./regression.js) → fitContext + queryBatches (./model.js,
// the context's caches kept on the GPU for every query batch; ONE member's buffers alive at
// a time: every member reuses the cache key "m0") → the aggregation (predict_proba's, or
// the regressor's mean and spread: half the bar distribution's Φ(1) − Φ(−1) range).
//
// Timings: one StageTimer across the members, so T_fold = T_embed + Σ T_layer + T_head over
// the whole ensemble: `embed` = cleaning, draws and each member's inputs (CPU) + every
// member's embedding stages, one `layers` entry per row block then per ICL layer (summed
// over the members), `head` = every member's decoder with its read-back + the aggregation.
import { now } from "../engine.js";
import { pyRepr } from "../checkpoint/pickle.js";
import { drawMembers } from "./ensemble.js";
import { TabPFNMember } from "./model.js";
import {
  CATEGORICAL_ENCODINGS, RESHAPE_TRANSFORMS, clean, fitClean, fitMember, matrix, modalities, modelInput, transformMember,
} from "./preprocessing.js";
import { aggregate, decode, fitTarget, memberProbabilities, softmax32 } from "./regression.js";

/** Where TabPFN weights come from (predictor.py's WHERE_WEIGHTS, word for word). */
export const WHERE_WEIGHTS = "download tabpfn-v3-classifier-v3_default.ckpt (classification) or " +
  "tabpfn-v3-regressor-v3_default.ckpt (regression) from the Hugging Face hub repo " +
  "Prior-Labs/tabpfn_3 (under its own licence) and pass {'name': 'tabpfn', 'weights': " +
  "PATH} (on the command line --model tabpfn:weights=PATH); optionally convert it first with " +
  "'arenalite convert tabpfn CKPT -o OUT.safetensors'";
/** The error without weights (predictor.py's NO_WEIGHTS). */
export const NO_WEIGHTS = "model 'tabpfn' needs a TabPFN v3 checkpoint: " + WHERE_WEIGHTS;
export const DEFAULT_N_ESTIMATORS = 8;
export const DEFAULT_SOFTMAX_TEMPERATURE = 0.9;
/** The categorical encodings the predictor runs (predictor.py's ENCODINGS). */
export const ENCODINGS = Object.freeze(CATEGORICAL_ENCODINGS.slice(0, 2));
/** Φ(−1) and Φ(1): half the distance between these quantiles is a Gaussian's σ. */
export const GAUSSIAN_SIGMA_LEVELS = Object.freeze([0.15865525393145707, 0.8413447460685429]);

const listRepr = (items) => `[${items.map(pyRepr).join(", ")}]`;
const isClassifier = (config) => config.max_num_classes >= 2;

/** predictor.check_task: an Error when the checkpoint cannot do `task`. */
export function checkTabpfnTask(config, task, where) {
  if (task === "regression" && isClassifier(config)) {
    throw new Error(`${where} is a TabPFN v3 classifier; task 'regression' needs a TabPFN v3 regressor checkpoint`);
  }
  if (task !== "regression" && !isClassifier(config)) {
    throw new Error(`${where} is a TabPFN v3 regressor; task ${pyRepr(task)} needs a TabPFN v3 classifier checkpoint`);
  }
}

/** predictor.check_classes: an Error when the target has more classes than the checkpoint takes. */
export function checkClasses(config, inferenceConfig, nClasses) {
  const limit = Math.min(config.max_num_classes, Math.trunc(inferenceConfig?.MAX_NUMBER_OF_CLASSES ?? config.max_num_classes));
  if (nClasses > limit) {
    throw new Error(`TabPFN takes at most ${limit} classes (the checkpoint's max_num_classes and MAX_NUMBER_OF_CLASSES); ` +
      `the target has ${nClasses}`);
  }
}

/** The inference config's member configs, after refusing what is not ported (predictor._refuse_unported). */
export function refuseUnported(cfg, nFeatures) {
  for (const [key, off] of [["SUBSAMPLE_SAMPLES", null], ["POLYNOMIAL_FEATURES", "no"]]) {
    const value = cfg[key] === undefined ? off : cfg[key];
    if (value !== off) {
      throw new Error(`the checkpoint's inference config sets ${key}=${pyRepr(value)}; arenalite's TabPFN port runs only ` +
        `${key}=${pyRepr(off)}`);
    }
  }
  const transforms = cfg.PREPROCESS_TRANSFORMS;
  transforms.forEach((t, i) => {
    if (!RESHAPE_TRANSFORMS.includes(t.name)) {
      throw new Error(`PREPROCESS_TRANSFORMS[${i}] uses the reshape transform ${pyRepr(t.name)}, not ported yet ` +
        `(ported: ${listRepr(RESHAPE_TRANSFORMS)})`);
    }
    if (!ENCODINGS.includes(t.categorical_name)) {
      throw new Error(`PREPROCESS_TRANSFORMS[${i}] uses the categorical encoding ${pyRepr(t.categorical_name)}, not ported yet ` +
        `(ported: ${listRepr(ENCODINGS)})`);
    }
    if (nFeatures > t.max_features_per_estimator) {
      throw new Error(`the table has ${nFeatures} features, more than PREPROCESS_TRANSFORMS[${i}]'s max_features_per_estimator ` +
        `${t.max_features_per_estimator}; feature subsampling is not ported yet`);
    }
  });
  return transforms;
}

function refuseInfinite(x, name, F) {
  for (let i = 0; i < x.length; i++) {
    if (x[i] === Infinity || x[i] === -Infinity) {
      throw new Error(`${name} has an infinite value ${x[i] > 0 ? "inf" : "-inf"} at row ${Math.floor(i / F)}, column ${i % F}; ` +
        "TabPFN refuses ±inf cells (its PASSTHROUGH_INF is off)");
    }
  }
}

/** The package's member count: an explicit count as given, "auto" the inference config's N_ESTIMATORS or 8. */
export function nMembers(requested, cfg) {
  if (requested !== null && requested !== undefined) return Math.trunc(requested);
  const configured = cfg.N_ESTIMATORS ?? "auto";
  return configured === "auto" ? DEFAULT_N_ESTIMATORS : Math.trunc(configured);
}

/**
 * predictor.clean_rows: refuse what is not ported, infer the modalities, clean both row
 * sets. `x`/`xTest` row-major (Float32Array or Float64Array), F columns.
 */
export function cleanRows(cfg, { xTrain, xTest, n, m, F, categoricalIndices = null }) {
  refuseInfinite(xTrain, "X_train", F);
  refuseInfinite(xTest, "X_test", F);
  const transforms = refuseUnported(cfg, F);
  const train = matrix(n, F, Float64Array.from(xTrain));
  const modality = modalities(train, categoricalIndices, {
    minSamples: cfg.MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE,
    maxUniqueForCategory: cfg.MAX_UNIQUE_FOR_CATEGORICAL_FEATURES,
    minUniqueForNumerical: cfg.MIN_UNIQUE_FOR_NUMERICAL_FEATURES,
  });
  const [fit, cleaned] = fitClean(train, modality);
  return { modality, train: cleaned, test: clean(fit, matrix(m, F, Float64Array.from(xTest))), transforms };
}

/** The soft clip's σ for a classifier or a regressor ("auto": the inference config's default). */
export function outlierStd(cfg, classification) {
  const value = cfg.OUTLIER_REMOVAL_STD;
  if (value !== "auto") return value;
  return cfg[`_${classification ? "CLASSIFICATION" : "REGRESSION"}_DEFAULT_OUTLIER_REMOVAL_STD`];
}

/** Member i's model input (Float32Array, training then test rows) and its width (predictor.member_input). */
export async function memberInput(cfg, classification, rows, members, i) {
  const t = rows.transforms[members.configIndex[i]];
  const [fit, train] = await fitMember(rows.train, rows.modality, t.name, t.categorical_name, members.pipelineSeeds[i], {
    appendOriginalSetting: t.append_original, maxFeaturesPerEstimator: t.max_features_per_estimator,
    globalTransformerName: t.global_transformer_name, addFingerprint: Boolean(cfg.FINGERPRINT_FEATURE),
    shuffle: true, shiftMethod: cfg.FEATURE_SHIFT_METHOD, shift: members.featureShifts[i],
  });
  const test = await transformMember(fit, rows.test);
  return { x: modelInput(fit, train, test, outlierStd(cfg, classification)), cols: train.cols };
}

/**
 * The package's logits_to_probabilities then predict_proba's row normalisation, on
 * members × M × C float32 logits: Float64Array (M × C).
 */
export function probabilities(logits, [members, M, C], temperature, averageBeforeSoftmax = false, classCounts = null) {
  const t = Math.fround(temperature);
  const z = temperature !== 1 ? logits.map((v) => v / t) : Float32Array.from(logits);
  let p;
  if (averageBeforeSoftmax) {
    const mean = new Float32Array(M * C);
    for (let i = 0; i < members; i++) for (let k = 0; k < M * C; k++) mean[k] = Math.fround(mean[k] + z[i * M * C + k]);
    p = softmax32(mean.map((v) => v / members), M, C);
  } else {
    const s = softmax32(z, members * M, C);
    p = new Float32Array(M * C);
    for (let i = 0; i < members; i++) for (let k = 0; k < M * C; k++) p[k] = Math.fround(p[k] + s[i * M * C + k]);
    p = p.map((v) => v / members);
  }
  if (classCounts) {
    const total = classCounts.reduce((a, b) => a + b, 0);
    const share = classCounts.map((c) => Math.fround(c / total));
    p = p.map((v, k) => v / share[k % C]);
    const q = new Float32Array(M * C);
    for (let r = 0; r < M; r++) {
      let s = 0;
      for (let k = 0; k < C; k++) s = Math.fround(s + p[r * C + k]);
      for (let k = 0; k < C; k++) q[r * C + k] = p[r * C + k] / s;
    }
    p = q;
  }
  const out = new Float64Array(M * C);
  for (let r = 0; r < M; r++) {
    let s = 0;
    for (let k = 0; k < C; k++) s += p[r * C + k];
    for (let k = 0; k < C; k++) out[r * C + k] = p[r * C + k] / s;
  }
  return out;
}

function temperatureOf(model, cfg) {
  if (model.softmax_temperature !== null && model.softmax_temperature !== undefined) return Number(model.softmax_temperature);
  return Number(cfg.SOFTMAX_TEMPERATURE ?? DEFAULT_SOFTMAX_TEMPERATURE);
}

/** Every member's raw model output, one member's GPU buffers at a time; prep (CPU) time goes to `embed`. */
async function runMembers(member, count, prepare, { timer, batchRows, onMember }) {
  const outputs = [];
  for (let i = 0; i < count; i++) {
    const t0 = now();
    const { xTrain, yTrain, xTest } = await prepare(i);
    timer.add("embed", now() - t0);
    const context = await member.fitContext(xTrain, yTrain, { timer });
    const { output } = await member.queryBatches(context, xTest, { batchRows, timer });
    outputs.push(output);
    onMember?.(i + 1, count);
  }
  return outputs;
}

function splitInput(x, n, cols) {
  return { xTrain: x.subarray(0, n * cols), xTest: x.subarray(n * cols) };
}

async function classify(member, model, d, rows, cfg, run) {
  const C = d.C;
  const count = nMembers(model.n_estimators, cfg);
  const members = drawMembers(count, rows.transforms.length, model.random_state ?? 0,
    { nClasses: C, classShiftMethod: cfg.CLASS_SHIFT_METHOD ?? null });
  const y = Array.from(d.yTrain, Math.trunc);
  const perms = members.classPerms ?? Array.from({ length: count }, () => Array.from({ length: C }, (_, k) => k));
  const outputs = await runMembers(member, count, async (i) => {
    const { x, cols } = await memberInput(cfg, true, rows, members, i);
    return { ...splitInput(x, d.n, cols), yTrain: Float32Array.from(y, (v) => perms[i][v]) };
  }, run);
  const t1 = now();
  const width = member.width();
  const logits = new Float32Array(count * d.m * C);
  outputs.forEach((out, i) => {
    for (let r = 0; r < d.m; r++) for (let k = 0; k < C; k++) logits[(i * d.m + r) * C + k] = out[r * width + perms[i][k]];
  });
  let counts = null;
  if (model.balance_probabilities) {
    counts = new Array(C).fill(0);
    for (const v of y) counts[v] += 1;
  }
  const proba = probabilities(logits, [count, d.m, C], temperatureOf(model, cfg), Boolean(model.average_before_softmax), counts);
  return { result: { output: Float32Array.from(proba) }, headStart: t1, members: count };
}

async function regress(member, model, d, rows, cfg, run) {
  const targets = cfg.REGRESSION_Y_PREPROCESS_TRANSFORMS;
  const count = nMembers(model.n_estimators, cfg);
  const members = drawMembers(count, rows.transforms.length, model.random_state ?? 0, { nTargetTransforms: targets.length });
  const fits = [];
  const outputs = await runMembers(member, count, async (i) => {
    const [fit, yMember] = fitTarget(d.yTrain, targets[members.targetIndex[i]]);
    fits.push(fit);
    const { x, cols } = await memberInput(cfg, false, rows, members, i);
    return { ...splitInput(x, d.n, cols), yTrain: yMember };
  }, run);
  const t1 = now();
  const borders = model.weights.borders ?? model.weights.criterion?.get("borders") ?? model.weights.tensors.get("regression_borders");
  const repair = cfg.FIX_NAN_BORDERS_AFTER_TARGET_TRANSFORM ?? true;
  const probs = outputs.map((z, i) => memberProbabilities(z, d.m, fits[i], borders, temperatureOf(model, cfg), Boolean(repair)));
  const logp = aggregate(probs);
  const mean = decode(logp, d.m, fits[0], borders, "mean");
  const [low, high] = decode(logp, d.m, fits[0], borders, "quantiles", [...GAUSSIAN_SIGMA_LEVELS]);
  const spread = Float64Array.from(low, (v, r) => (high[r] - v) / 2);
  return { result: { output: Float32Array.from(mean), spread }, headStart: t1, members: count };
}

/** predict_regression's refusals and its constant target: y_train[0] everywhere, spread 0, no model call. */
function constantTarget(model, d) {
  if (model.average_before_softmax || model.balance_probabilities) {
    throw new Error("average_before_softmax and balance_probabilities are classifier settings; TabPFN regression " +
      "averages the members' distributions");
  }
  const y = d.yTrain;
  if (!y.length || !y.every((v) => v === y[0])) return null;
  return { output: new Float32Array(d.m).fill(y[0]), spread: new Float64Array(d.m) };
}

/**
 * `tabpfn` on the bridge: `model` checked (registry params: n_estimators, softmax_temperature,
 * random_state, average_before_softmax, balance_probabilities; `batchRows` the query batch),
 * its weights read (loadTabpfnWeights), `d` validated (Bridge.predict; categoricalIndices
 * the table's declared categorical columns). Option: `onMember(done, total)` after each
 * member. Resolves to {output, spread (regression), timings (with layerNames), members}.
 */
export async function runTabpfn(engine, model, d, { onMember } = {}) {
  const weights = model.weights;
  if (!weights) throw new Error(NO_WEIGHTS);
  const where = `checkpoint ${pyRepr(weights.name ?? "<bytes>")}`;
  checkTabpfnTask(weights.config, d.task, where);
  const cfg = weights.inferenceConfig;
  if (!cfg) throw new TypeError("TabPFN weights need their inference config (loadTabpfnWeights reads it)");
  const t0 = now();
  const constant = d.task === "regression" ? constantTarget(model, d) : null;
  if (d.task !== "regression") checkClasses(weights.config, cfg, d.C);
  const rows = constant ? null : cleanRows(cfg, d);
  const prepMs = now() - t0;
  const member = await TabPFNMember.create(engine, weights, { cacheKey: "m0" });
  const timer = member.timer();
  timer.add("embed", prepMs);
  const run = { timer, batchRows: model.batchRows, onMember };
  let out;
  if (constant) out = { result: constant, headStart: now(), members: 0 };
  else out = d.task === "regression" ? await regress(member, model, d, rows, cfg, run) : await classify(member, model, d, rows, cfg, run);
  timer.add("head", now() - out.headStart);
  const timings = await timer.finish();
  timings.layerNames = member.layerNames();
  return { ...out.result, timings, members: out.members };
}
