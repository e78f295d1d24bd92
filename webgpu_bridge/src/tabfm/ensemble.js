// Google TabFM's ensemble around the raw model, as tabfm 1.0.1's wrappers build it on their
// default path: the JavaScript twin of pkg/arenalite/models/tabfm/ensemble.py (docs/models.md,
// "Google TabFM (tabfm)", "Preprocessing and ensemble").
//
//   const settings = settingsFrom({ n_estimators: 8 });             // the wrappers' options
//   const plan = fitMembers(x, y, "multiclass", nCategorical, settings, maxClasses);
//   const inputs = memberInputs(plan, xTest);  // inputs.memberX(i), yTrain, d, catMask
//   // … the raw model once per member …
//   const proba = aggregateProba(outputs, plan, settings);   // nTest × C float32
//   const pred = aggregateRegression(outputs, plan);          // nTest float32
//
// The draws: one random.Random(random_state) (../pyrandom.js) gives, in order, the column
// subsamples when subsampling, the class offsets, then a shuffle of the members'
// (permutation, offset) pairs; without subsampling the permutations are the shared
// Shuffler's (../wrapper_ensemble.js). Member i takes method norm_methods[i % 2]; the
// members run grouped by method, "none" first. Matrices are {rows, cols, data} row-major.
import { pyValueRepr } from "../py_json.js";
import { reprFloat, reprString } from "../py_repr.js";
import { PyRandom } from "../pyrandom.js";
import { shufflePatterns, softmax } from "../wrapper_ensemble.js";
import { fitPipeline, scaleTargets, transform, uniqueFilter } from "./preprocessing.js";

export const TASKS = Object.freeze(["binary", "multiclass", "regression"]);
export const DEFAULT_NORM_METHODS = Object.freeze(["none", "power"]);
export const SOFTMAX_TEMPERATURE = 0.9;
export const MAX_NUM_FEATURES = 500;
/** The wrappers' options this port follows, with the package's defaults. */
export const PORTED_OPTIONS = Object.freeze({
  n_estimators: 32, norm_methods: null, feat_shuffle_method: "random", class_shift: true, outlier_threshold: 4.0,
  max_num_features: 500, softmax_temperature: 0.9, average_logits: true, random_state: 42,
});
export const IGNORED_OPTIONS = Object.freeze(["use_amp", "batch_size", "verbose", "num_folds_for_cv", "nnls_beta",
  "calibration_lambda", "min_rows_for_single_val_split"]);
export const UNPORTED_OPTIONS = Object.freeze({
  norm_methods: "the 'quantile', 'quantile_rtdl' and 'robust' normalisations",
  feat_shuffle_method: "feature shuffles other than 'random' and 'none'",
  permute_categorical: "the per-member permutation of categorical values",
  max_num_rows: "the per-member row subsample",
  n_feature_crosses: "the feature crosses of the 'ensemble' preset",
  n_svd_features: "the SVD features of the 'ensemble' preset",
  total_svd_pool: "the SVD features of the 'ensemble' preset",
  enable_nnls: "the NNLS member weights of the 'ensemble' preset",
  binary_calibration_method: "the Platt calibration of the 'ensemble' preset",
  multiclass_calibration_method: "the vector calibration of the 'ensemble' preset",
  cat_encoder_mode: "categorical codes in 'frequency' or 'alphabetical' order",
  ensemble: "the 'ensemble' preset (TabFMClassifier.ensemble / TabFMRegressor.ensemble)",
});
const DEFAULT_PATH = Object.freeze({
  permute_categorical: false, max_num_rows: null, n_feature_crosses: 0, n_svd_features: 0, total_svd_pool: null,
  enable_nnls: false, binary_calibration_method: null, multiclass_calibration_method: null,
  cat_encoder_mode: "appearance", ensemble: false,
});
const f32 = Math.fround;
const tupleRepr = (items) => `(${items.map(reprString).join(", ")})`;

function checkNumber(name, value, integer, low) {
  const ok = typeof value === "number" && (!integer || Number.isInteger(value));
  if (!ok || !Number.isFinite(value) || value < low || (!integer && value <= 0)) {
    const kind = integer ? "an integer" : "a positive finite number";
    throw new Error(`tabfm option ${reprString(name)} must be ${kind}${integer ? ` ≥ ${low}` : ""}, got ${pyValueRepr(value)}`);
  }
}

/**
 * The settings ({nEstimators, normMethods, featShuffleMethod, classShift, outlierThreshold,
 * maxNumFeatures, softmaxTemperature, averageLogits, randomState}) of the wrappers' keyword
 * arguments (snake_case, as ensemble.py's settings_from): a ported option is checked, an
 * ignored one passes, an unported one off the default path and an unknown name are refused.
 */
export function settingsFrom(options = {}) {
  const values = { ...PORTED_OPTIONS };
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || IGNORED_OPTIONS.includes(key)) continue;
    if (Object.hasOwn(DEFAULT_PATH, key)) {
      if (value !== DEFAULT_PATH[key]) {
        throw new Error(`tabfm option ${key}=${pyValueRepr(value)} is not ported to arenalite (${UNPORTED_OPTIONS[key]}); ` +
          `arenalite runs the wrappers' default path, ${key}=${pyValueRepr(DEFAULT_PATH[key])}`);
      }
      continue;
    }
    if (!Object.hasOwn(PORTED_OPTIONS, key)) {
      const known = [...Object.keys(PORTED_OPTIONS), ...IGNORED_OPTIONS, ...Object.keys(DEFAULT_PATH)].sort();
      throw new Error(`unknown tabfm option ${reprString(key)}; the wrappers' options are [${known.map(reprString).join(", ")}]`);
    }
    values[key] = value;
  }
  let methods = values.norm_methods?.length ? values.norm_methods : DEFAULT_NORM_METHODS;
  methods = typeof methods === "string" ? [methods] : [...methods];
  if (methods.some((m) => m !== "none" && m !== "power")) {
    throw new Error(`tabfm option norm_methods=${pyValueRepr(values.norm_methods)} is not ported to arenalite ` +
      `(${UNPORTED_OPTIONS.norm_methods}); it runs 'none' and 'power'`);
  }
  if (values.feat_shuffle_method !== "random" && values.feat_shuffle_method !== "none") {
    throw new Error(`tabfm option feat_shuffle_method=${pyValueRepr(values.feat_shuffle_method)} is not a method of the ` +
      "package's FeatureShuffler ('random', 'none')");
  }
  checkNumber("n_estimators", values.n_estimators, true, 1);
  checkNumber("outlier_threshold", values.outlier_threshold, false, 0);
  checkNumber("softmax_temperature", values.softmax_temperature, false, 0);
  if (values.max_num_features !== null) checkNumber("max_num_features", values.max_num_features, true, 1);
  if (values.random_state !== null) checkNumber("random_state", values.random_state, true, 0);
  for (const key of ["class_shift", "average_logits"]) {
    if (typeof values[key] !== "boolean") {
      throw new Error(`tabfm option ${reprString(key)} must be true or false, got ${pyValueRepr(values[key])}`);
    }
  }
  return {
    nEstimators: values.n_estimators, normMethods: methods, featShuffleMethod: values.feat_shuffle_method,
    classShift: values.class_shift, outlierThreshold: values.outlier_threshold, maxNumFeatures: values.max_num_features,
    softmaxTemperature: values.softmax_temperature, averageLogits: values.average_logits, randomState: values.random_state,
  };
}

const range = (n) => Array.from({ length: n }, (_, i) => i);

/** [method, feature pattern, class offset] per member, in the order the model runs them. */
export function drawMembers(nFeatures, nClasses, settings) {
  const { nEstimators: nEst, randomState: seed } = settings;
  const rng = new PyRandom(seed);
  const nCols = settings.maxNumFeatures === null ? nFeatures : Math.min(nFeatures, settings.maxNumFeatures);
  let patterns;
  if (nCols < nFeatures) {
    patterns = [];
    for (let i = 0; i < nEst; i++) {
      const cols = rng.sample(range(nFeatures), nCols);
      patterns.push(rng.sample(cols, cols.length));
    }
  } else {
    patterns = shufflePatterns(nFeatures, settings.featShuffleMethod, nEst, seed);
    if (patterns.length < nEst) {
      const cycles = Math.ceil(nEst / patterns.length);
      patterns = Array.from({ length: cycles }, () => patterns).flat().slice(0, nEst);
    }
  }
  let offsets;
  if (settings.classShift && nEst > 1 && nClasses > 1) {
    const base = rng.sample(range(nClasses), nClasses);
    offsets = Array.from({ length: Math.ceil(nEst / base.length) }, () => base).flat().slice(0, nEst);
  } else {
    offsets = new Array(nEst).fill(0);
  }
  const pairs = patterns.map((p, i) => [p, offsets[i]]);
  rng.shuffle(pairs);
  const methods = settings.normMethods;
  const assigned = pairs.map(([pattern, offset], i) => [methods[i % methods.length], pattern, offset]);
  return methods.flatMap((method) => assigned.filter(([m]) => m === method));
}

/** The package's refusal of more classes than the checkpoint's max_classes. */
export function checkClasses(nClasses, maxClasses) {
  if (nClasses > maxClasses) {
    throw new Error(`The number of classes (${nClasses}) exceeds the maximum number of classes (${maxClasses}) ` +
      "supported by the model.");
  }
}

const numberRepr = (v) => (Number.isInteger(v) ? String(v) : reprFloat(v));

function labels(y, task, maxClasses) {
  const classes = [...new Set(y)].sort((a, b) => a - b);
  if (classes.length < 2) {
    throw new Error(`y_train has a single class ${numberRepr(classes[0])}; classification needs at least 2`);
  }
  if (task === "binary" && classes.length !== 2) {
    throw new Error(`task 'binary' needs exactly 2 classes, y_train has ${classes.length}`);
  }
  if (maxClasses !== null) checkClasses(classes.length, maxClasses);
  const rank = new Map(classes.map((c, i) => [c, i]));
  return { classes, ranks: Int32Array.from(y, (v) => rank.get(v)) };
}

function firstNonFinite(m, name) {
  const at = m.data.findIndex((v) => !Number.isFinite(v));
  if (at >= 0) {
    throw new Error(`${name} has a non-finite value ${reprFloat(m.data[at])} in row ${Math.floor(at / m.cols)}, ` +
      `column ${at % m.cols}; the package refuses NaN and infinity in an array`);
  }
}

function selectColumns(m, keep) {
  const index = keep.flatMap((k, j) => (k ? [j] : []));
  const data = new Float64Array(m.rows * index.length);
  for (let r = 0; r < m.rows; r++) {
    for (let c = 0; c < index.length; c++) data[r * index.length + c] = m.data[r * m.cols + index[c]];
  }
  return { rows: m.rows, cols: index.length, data };
}

/**
 * What TabFMClassifier.fit / TabFMRegressor.fit prepare: the plan {task, nFeaturesIn,
 * nCategorical, features, categorical, pipelines (Map method → fit), methods, patterns,
 * offsets, classes, yTrain, yMean, yScale, nMembers, nTrain, nClasses}. `x`: the numeric
 * table {rows, cols, data} (float64, no NaN), its first `nCategorical` columns categorical
 * codes; `y`: class labels (ranked among the sorted distinct labels) or real targets.
 */
export function fitMembers(x, y, task, nCategorical = 0, settings = settingsFrom(), maxClasses = null) {
  if (!TASKS.includes(task)) throw new Error(`task must be one of ${tupleRepr(TASKS)}, got ${pyValueRepr(task)}`);
  if (!(x.rows > 0 && x.cols > 0) || x.data.length !== x.rows * x.cols) {
    throw new Error(`X_train must be a 2-D table with columns, got shape (${x.rows}, ${x.cols})`);
  }
  const m = { rows: x.rows, cols: x.cols, data: Float64Array.from(x.data) };
  firstNonFinite(m, "X_train");
  const values = Array.from(y, Number);
  if (values.length !== m.rows) throw new Error(`y_train has ${values.length} values but X_train has ${m.rows} rows`);
  let classes = null;
  let targets;
  let yMean = null;
  let yScale = null;
  if (task === "regression") {
    ({ scaled: targets, mean: yMean, scale: yScale } = scaleTargets(values));
  } else {
    ({ classes, ranks: targets } = labels(values, task, maxClasses));
  }
  const features = uniqueFilter(m);
  if (!features.some(Boolean)) {
    throw new Error("every column of X_train holds a single value in the context rows; the package's unique-feature " +
      "filter leaves the model no feature");
  }
  const kept = selectColumns(m, features);
  const categorical = features.flatMap((k, j) => (k ? [j < nCategorical] : []));
  const members = drawMembers(kept.cols, classes ? classes.length : 0, settings);
  const methods = members.map(([method]) => method);
  const pipelines = new Map([...new Set(methods)].map((method) => [method, fitPipeline(kept, method, settings.outlierThreshold)]));
  return {
    task, nFeaturesIn: m.cols, nCategorical, features, categorical, pipelines, methods,
    patterns: members.map(([, p]) => p), offsets: members.map(([, , o]) => o), classes, yTrain: targets, yMean, yScale,
    nMembers: members.length, nTrain: m.rows, nClasses: classes ? classes.length : 0,
  };
}

/**
 * Per member (plan order) the model's inputs: memberX(i) (Float32Array, (nTrain + nTest) ×
 * width: train rows then test rows, member column j = kept column patterns[i][j], zero
 * columns past its own), yTrain (Float32Array members × nTrain: (label + offset) mod C, or
 * the scaled target), d (active columns per member), catMask (per member, width booleans).
 */
export function memberInputs(plan, xTest) {
  if (xTest.cols !== plan.nFeaturesIn || xTest.data.length !== xTest.rows * xTest.cols) {
    throw new Error(`X_test has ${xTest.cols} feature columns but X_train had ${plan.nFeaturesIn}`);
  }
  const x = { rows: xTest.rows, cols: xTest.cols, data: Float64Array.from(xTest.data) };
  firstNonFinite(x, "X_test");
  const kept = selectColumns(x, plan.features);
  const F = kept.cols;
  const nRows = plan.nTrain + kept.rows;
  const rows = new Map();
  for (const [method, fit] of plan.pipelines) {
    const out = new Float32Array(nRows * F);
    out.set(fit.xTrain.data);
    out.set(transform(fit, kept).data, plan.nTrain * F);
    rows.set(method, out);
  }
  const M = plan.nMembers;
  const width = Math.max(...plan.patterns.map((p) => p.length));
  const yTrain = new Float32Array(M * plan.nTrain);
  for (let i = 0; i < M; i++) {
    for (let r = 0; r < plan.nTrain; r++) {
      yTrain[i * plan.nTrain + r] = plan.classes ? (plan.yTrain[r] + plan.offsets[i]) % plan.nClasses : plan.yTrain[r];
    }
  }
  const catMask = plan.patterns.map((p) => Array.from({ length: width }, (_, j) => (j < p.length ? plan.categorical[p[j]] : false)));
  const memberX = (i) => {
    const src = rows.get(plan.methods[i]);
    const p = plan.patterns[i];
    const out = new Float32Array(nRows * width);
    for (let r = 0; r < nRows; r++) for (let j = 0; j < p.length; j++) out[r * width + j] = src[r * F + p[j]];
    return out;
  };
  return {
    rows, memberX, yTrain, d: plan.patterns.map((p) => p.length), catMask, width, nTrain: plan.nTrain, nTest: kept.rows,
    nRows, nMembers: M, methods: plan.methods,
  };
}

function outputsOf(outputs, plan) {
  const { data, shape } = outputs;
  if (shape.length !== 3 || shape[0] !== plan.nMembers || data.length !== shape[0] * shape[1] * shape[2]) {
    throw new Error(`outputs must be members × rows × outputs with ${plan.nMembers} members, got shape (${shape.join(", ")})`);
  }
  const at = data.findIndex((v) => !Number.isFinite(v));
  if (at >= 0) {
    const [, R, W] = shape;
    throw new Error(`outputs has a non-finite value ${reprFloat(data[at])} at (${Math.floor(at / (R * W))}, ` +
      `${Math.floor(at / W) % R}, ${at % W})`);
  }
  return Float32Array.from(data);
}

/**
 * predict_proba (Float32Array, nTest × C) from the members' logits ({data, shape: members ×
 * nTest × max_classes}, plan order): the first C logits un-shifted, then the softmax at
 * softmaxTemperature of their float32 mean (averageLogits), or the mean of each member's.
 */
export function aggregateProba(outputs, plan, { softmaxTemperature = SOFTMAX_TEMPERATURE, averageLogits = true } = {}) {
  if (!plan.classes) throw new Error("aggregate_proba needs a classification plan; this one is regression");
  const data = outputsOf(outputs, plan);
  const [M, R, W] = outputs.shape;
  const C = plan.nClasses;
  if (W < C) {
    throw new Error(`The model returned ${W} value(s) per row, but the ensemble was fit on ${C} classes`);
  }
  const logits = new Float32Array(M * R * C);
  for (let i = 0; i < M; i++) {
    for (let r = 0; r < R; r++) {
      for (let c = 0; c < C; c++) logits[(i * R + r) * C + c] = data[(i * R + r) * W + ((c + plan.offsets[i]) % C)];
    }
  }
  const mean = (src) => {
    const out = new Float32Array(R * C);
    for (let i = 0; i < M; i++) for (let k = 0; k < R * C; k++) out[k] = f32(out[k] + src[i * R * C + k]);
    return out.map((v) => f32(v / M));
  };
  return averageLogits ? softmax(mean(logits), C, softmaxTemperature) : mean(softmax(logits, C, softmaxTemperature));
}

/**
 * predict (Float32Array, nTest) from the members' scaled predictions ({data, shape: members
 * × nTest × 1}): their float32 mean, then × yScale and + yMean, each rounded to float32.
 */
export function aggregateRegression(outputs, plan) {
  if (plan.yScale === null) throw new Error("aggregate_regression needs a regression plan; this one classifies");
  const data = outputsOf(outputs, plan);
  const [M, R, W] = outputs.shape;
  if (W !== 1) {
    throw new Error(`The model returned ${W} values per row, but regression expects a single output (a classification checkpoint?)`);
  }
  const out = new Float32Array(R);
  for (let i = 0; i < M; i++) for (let r = 0; r < R; r++) out[r] = f32(out[r] + data[i * R + r]);
  return out.map((v) => f32(f32(f32(v / M) * plan.yScale) + plan.yMean));
}
