// TabPFN v3's ensemble draws, per-member CPU pipeline and regression aggregation in
// JavaScript (src/tabpfn/{ensemble,preprocessing,regression}.js) against arenalite's numpy
// pipeline: tests/data/tabpfn/js/preprocessing.json (scripts/make_tabpfn_js_preprocessing_fixtures.py)
// holds, per table (the package fixtures' inputs and hostile tables with NaN, ±inf,
// text-coded categorical, constant and all-NaN columns), the members' draws, the cleaned
// rows, each member's rows and model input, and the regression targets and aggregation.
// Draws and cleaning must be equal; rows and model inputs equal to round-off (float32's for
// the model input); the row fingerprint (a SHA-256 of float rows) is counted where it flips.

import { after, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { drawMembers } from "../src/tabpfn/ensemble.js";
import {
  around12, clean, fingerprint, fitClean, fitMember, interp, matrix, modalities, modelInput, nanQuantiles, symmetricEigen, transformMember,
} from "../src/tabpfn/preprocessing.js";
import { fitTarget, memberBorders, predictFromLogits } from "../src/tabpfn/regression.js";

const FIXTURE = fileURLToPath(new URL("../../tests/data/tabpfn/js/preprocessing.json", import.meta.url));
const CASES = JSON.parse(readFileSync(FIXTURE, "utf8"));
const num = (v) => (v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : v);
const f64 = (a) => Float64Array.from(a, num);
export const figures = {};

/** Largest |a − b| / max(1, |b|) over cells (NaN and ±inf must match exactly); skips columns in `skip`. */
function maxError(a, b, cols, skip = new Set(), what = "") {
  assert.equal(a.length, b.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    if (skip.has(i % cols)) continue;
    const [x, y] = [a[i], b[i]];
    if (Number.isNaN(y) || !Number.isFinite(y)) {
      assert.ok(Object.is(x, y) || (Number.isNaN(x) && Number.isNaN(y)), `${what}: cell ${i} is ${x}, Python's ${y}`);
      continue;
    }
    worst = Math.max(worst, Math.abs(x - y) / Math.max(1, Math.abs(y)));
  }
  return worst;
}

function column(data, rows, cols, j) {
  return Float64Array.from({ length: rows }, (_, r) => data[r * cols + j]);
}

function checkDraws(c, yTrain) {
  const cfg = c.inference_config;
  const members = drawMembers(c.n_estimators, cfg.PREPROCESS_TRANSFORMS.length, c.random_state, c.task === "classification"
    ? { nClasses: Math.max(...yTrain) + 1, classShiftMethod: cfg.CLASS_SHIFT_METHOD }
    : { nTargetTransforms: cfg.REGRESSION_Y_PREPROCESS_TRANSFORMS.length });
  assert.deepEqual(members.featureShifts, c.members.feature_shifts);
  assert.deepEqual(members.configIndex, c.members.config_index);
  assert.deepEqual(members.classPerms, c.members.class_perms);
  assert.deepEqual(members.targetIndex, c.members.target_index);
  assert.deepEqual(members.pipelineSeeds, c.members.pipeline_seeds);
  return members;
}

function checkClean(c) {
  const [n, m, F] = c.shape;
  const cfg = c.inference_config;
  const xTrain = matrix(n, F, f64(c.x_train));
  const modality = modalities(xTrain, c.categorical_indices, {
    minSamples: cfg.MIN_NUMBER_SAMPLES_FOR_CATEGORICAL_INFERENCE,
    maxUniqueForCategory: cfg.MAX_UNIQUE_FOR_CATEGORICAL_FEATURES,
    minUniqueForNumerical: cfg.MIN_UNIQUE_FOR_NUMERICAL_FEATURES,
  });
  assert.deepEqual(modality, c.modality);
  const [cleanFit, train] = fitClean(xTrain, modality);
  const test = clean(cleanFit, matrix(m, F, f64(c.x_test)));
  assert.equal(maxError(train.data, f64(c.clean_train), F, undefined, "clean_train"), 0);
  assert.equal(maxError(test.data, f64(c.clean_test), F, undefined, "clean_test"), 0);
  return { modality, train, test };
}

function countFlips(fig, got, ref, rows, cols, fp) {
  const a = column(got.data, rows, cols, fp);
  const b = column(ref, rows, cols, fp);
  fig.fingerprints += rows;
  for (let r = 0; r < rows; r++) if (a[r] !== b[r]) fig.flips += 1;
}

function checkTarget(c, members, i, yTrain) {
  const want = c.member[i];
  const [tfit, y] = fitTarget(yTrain, c.inference_config.REGRESSION_Y_PREPROCESS_TRANSFORMS[members.targetIndex[i]]);
  for (const [k, key] of [["mean", "mean"], ["std", "std"], ["lmbda", "lmbda"], ["scalerMean", "scaler_mean"], ["scalerScale", "scaler_scale"]]) {
    // λ is a bounded Brent search to xtol 1.48e-8: the last bits of log1p/expm1 move it that much
    assert.ok(Math.abs(tfit[k] - want.target[key]) <= 1e-7 * Math.max(1, Math.abs(want.target[key])), `member ${i} target ${key}: ${tfit[k]} vs ${want.target[key]}`);
  }
  assert.ok(maxError(y, Float32Array.from(want.target.y, num), 1, undefined, "y") <= 1e-6);
  const [frm, mask] = memberBorders(tfit, Float32Array.from(c.regression.borders));
  assert.ok(maxError(frm, Float32Array.from(want.borders, num), 1, undefined, "borders") <= 1e-6);
  assert.deepEqual(mask, want.mask);
  return tfit;
}

async function checkMember(c, members, i, { modality, train, test }, fig) {
  const [n, m] = c.shape;
  const cfg = c.inference_config;
  const want = c.member[i];
  const t = cfg.PREPROCESS_TRANSFORMS[members.configIndex[i]];
  const [fit, memberTrain] = await fitMember(train, modality, t.name, t.categorical_name, members.pipelineSeeds[i], {
    appendOriginalSetting: t.append_original, maxFeaturesPerEstimator: t.max_features_per_estimator,
    globalTransformerName: t.global_transformer_name, addFingerprint: Boolean(cfg.FINGERPRINT_FEATURE),
    shuffle: true, shiftMethod: cfg.FEATURE_SHIFT_METHOD, shift: members.featureShifts[i],
  });
  const memberTest = await transformMember(fit, test);
  const cols = want.cols;
  assert.equal(memberTrain.cols, cols, `member ${i}: columns`);
  const fp = want.fingerprint_column;
  const skip = new Set(fp === null ? [] : [fp]);
  fig.rows = Math.max(fig.rows, maxError(memberTrain.data, f64(want.train), cols, skip, `member ${i} train`),
    maxError(memberTest.data, f64(want.test), cols, skip, `member ${i} test`));
  if (fp !== null) {
    countFlips(fig, memberTrain, f64(want.train), n, cols, fp);
    countFlips(fig, memberTest, f64(want.test), m, cols, fp);
  }
  const x = modelInput(fit, memberTrain, memberTest, c.outlier_std);
  const wantX = Float32Array.from(want.model_input, num);
  fig.model = Math.max(fig.model, maxError(x, wantX, cols, skip, `member ${i} model input`));
  // the model input from Python's own member rows (the fingerprint column included): the soft clip alone
  const own = modelInput(fit, matrix(n, cols, f64(want.train)), matrix(m, cols, f64(want.test)), c.outlier_std);
  fig.input = Math.max(fig.input, maxError(own, wantX, cols, new Set(), `member ${i} soft clip`));
}

function checkRegression(c, fits) {
  const r = c.regression;
  const logits = c.member.map((one) => Float32Array.from(one.logits, num));
  const main = predictFromLogits(logits, c.shape[1], fits, Float32Array.from(r.borders), r.temperature, "main");
  let worst = 0;
  for (const key of ["mean", "median", "mode"]) worst = Math.max(worst, maxError(main[key], f64(r[key]), 1, undefined, key));
  main.quantiles.forEach((q, k) => { worst = Math.max(worst, maxError(q, f64(r.quantiles[k]), 1, undefined, `quantile ${k}`)); });
  // float32 softmax, cumsum and products over the buckets as the package's (BLAS sums in another order)
  assert.ok(worst <= 1e-4, `regression outputs differ by ${worst}`);
  return worst;
}

for (const [name, c] of Object.entries(CASES)) {
  test(`${name}: draws, cleaning, member pipelines and model inputs equal Python's`, async () => {
    const yTrain = f64(c.y_train);
    const members = checkDraws(c, yTrain);
    const rows = checkClean(c);
    const fig = { rows: 0, input: 0, model: 0, flips: 0, fingerprints: 0 };
    const fits = [];
    for (let i = 0; i < c.n_estimators; i++) {
      await checkMember(c, members, i, rows, fig);
      if (c.task === "regression") fits.push(checkTarget(c, members, i, yTrain));
    }
    assert.ok(fig.rows <= 1e-6, `member rows differ by ${fig.rows}`);
    assert.ok(fig.input <= 1e-6, `soft clip differs by ${fig.input}`);
    assert.ok(fig.model <= 1e-6, `model inputs differ by ${fig.model}`);
    if (c.task === "regression") fig.regression = checkRegression(c, fits);
    figures[name] = fig;
  });
}

test("numpy's percentile, interp, around and the Jacobi eigenvectors", () => {
  assert.deepEqual(nanQuantiles([3, NaN, 1, 2], [0, 0.25, 0.5, 1]), [1, 1.5, 2, 3]);
  assert.ok(Number.isNaN(nanQuantiles([NaN], [0.5])[0]));
  assert.equal(interp(2, [1, 2, 2, 3], [0, 1, 2, 3]), 2);
  assert.equal(interp(2.5, [1, 2, 2, 3], [0, 1, 2, 3]), 2.5);
  assert.equal(interp(0, [1, 2], [5, 6]), 5);
  assert.ok(Object.is(around12(-1e-17), -0));
  assert.equal(around12(0.1234567890125), 0.123456789012);
  const { values, vectors } = symmetricEigen([2, 1, 1, 2], 2);
  assert.ok(Math.abs(values[0] - 3) < 1e-12 && Math.abs(values[1] - 1) < 1e-12);
  assert.ok(Math.abs(Math.abs(vectors[0][0]) - Math.SQRT1_2) < 1e-12);
});

test("the fingerprint: Web Crypto's SHA-256 of the rounded rows, a repeated row rehashed", async () => {
  const x = matrix(3, 2, Float64Array.from([1, 2, 1, 2, NaN, NaN]));
  const train = await fingerprint(x, 6, false);
  const test = await fingerprint(x, 6, true);
  assert.equal(train[0], test[0]);
  assert.equal(test[1], test[0]);
  assert.notEqual(train[1], train[0]);
  for (const v of [...train, ...test]) assert.ok(v >= 0 && v <= 1);
});

// TABPFN_FIGURES=1 prints the parity figures the tests above gathered (not a test itself).
after(() => {
  if (process.env.TABPFN_FIGURES) console.log(JSON.stringify(figures, null, 1));
});
