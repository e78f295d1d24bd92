// TabICL's preprocessing and ensemble in JavaScript (src/tabicl/preprocessing.js, ensemble.js,
// pyrandom.js) against the package's own member inputs and aggregated outputs (the fixtures
// tests/data/tabicl/preprocessing_*.npz of scripts/make_tabicl_preprocessing_fixtures.py) and
// the cases of tests/test_tabicl_preprocessing.py: within 1e-6, as the Python reference.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

import {
  OUTPUT_TYPES, aggregateProba, aggregateRegression, defaultAlphaLevels, drawMembers, fitMembers, latinSquare,
  memberInputs, modelBatches, predictRegression, quantileSummary, scaleTargets, shufflePatterns, softmax,
} from "../src/tabicl/ensemble.js";
import { parseNpy, parseNpz } from "../src/tabicl/npy.js";
import { fitPipeline, imputeMeans, keptFeatures, impute, transform, yeoJohnson, yeoJohnsonLambda } from "../src/tabicl/preprocessing.js";
import { PyRandom } from "../src/tabicl/pyrandom.js";

const DATA = fileURLToPath(new URL("../../tests/data/tabicl/", import.meta.url));
const CASES = readdirSync(DATA).filter((f) => /^preprocessing_.*\.npz$/.test(f)).map((f) => f.slice(14, -4)).sort();
const TAIL_ALPHAS = [0.0002, 0.0007, 0.05, 0.5, 0.9993, 0.9999];
const TOL = 1e-6;
const TORCH_LEVELS = parseNpy(readFileSync(`${DATA}preprocessing_alpha_levels.npy`)).data;
const OPTION_NAMES = { n_estimators: "nEstimators", random_state: "randomState", norm_methods: "normMethods" };

const maxDiff = (a, b) => {
  assert.equal(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
};

/** A fixture's arrays, its plan, and the package's member order mapped to ours (groups in first-use order). */
async function load(name) {
  const d = await parseNpz(readFileSync(`${DATA}preprocessing_${name}.npz`), name);
  const options = JSON.parse(d.get("options").data[0]);
  const task = options.task;
  delete options.task;
  const plan = fitMembers(d.get("X_train"), d.get("y_train").data, task,
    Object.fromEntries(Object.entries(options).map(([k, v]) => [OPTION_NAMES[k] ?? k, v])));
  const groups = [...new Set(plan.methods)];
  const methods = d.get("methods").data;
  const order = methods.map((_, i) => i).sort((i, j) => groups.indexOf(methods[i]) - groups.indexOf(methods[j]) || i - j);
  return { d, plan, order, task };
}

/** Rows `order` of the first axis of {data, shape}. */
function take({ data, shape }, order) {
  const size = data.length / shape[0];
  const parts = order.flatMap((i) => Array.from(data.slice(i * size, (i + 1) * size)));
  const out = ArrayBuffer.isView(data) ? data.constructor.from(parts) : parts;
  return { data: out, shape: [order.length, ...shape.slice(1)] };
}

const rows = ({ data, shape }) => Array.from({ length: shape[0] }, (_, i) => Array.from(data.slice(i * shape[1], (i + 1) * shape[1])));

test("the fixtures are present", () => {
  for (const name of ["binary", "multiclass3", "many13", "regression", "nan_constant", "one_feature",
    "two_features_regression", "skew_outliers", "multiclass3_seed0"]) assert.ok(CASES.includes(name), name);
});

for (const name of CASES) {
  test(`member inputs equal the package's: ${name}`, async (t) => {
    const { d, plan, order } = await load(name);
    const inputs = memberInputs(plan, d.get("X_test"));
    assert.deepEqual(plan.methods, order.map((i) => d.get("methods").data[i]));
    assert.deepEqual(plan.featurePerms, rows(take(d.get("feature_perms"), order)));
    if (plan.classPerms) assert.deepEqual(plan.classPerms, rows(take(d.get("class_perms"), order)));
    const wantX = take(d.get("member_x"), order);
    assert.deepEqual([inputs.nMembers, inputs.nRows, inputs.nFeatures], wantX.shape);
    assert.ok(inputs.x instanceof Float32Array && inputs.yTrain instanceof Float32Array);
    const dx = maxDiff(inputs.x, wantX.data);
    const dy = maxDiff(inputs.yTrain, take(d.get("member_y"), order).data);
    const dl = d.has("lambdas") ? maxDiff(plan.pipelines.get("power").power.lambdas, d.get("lambdas").data) : 0;
    t.diagnostic(`max |x − package| ${dx}, |y − package| ${dy}, |λ − package| ${dl}`);
    assert.ok(dx <= TOL && dy <= TOL, `${dx} ${dy}`);
    assert.ok(dl <= 1e-6, String(dl));  // λ: the likelihood is flat at its optimum, and numpy's log1p/expm1 (SVML) differ from JavaScript's in the last bit
  });
}

for (const name of CASES.filter((c) => !c.includes("regression"))) {
  test(`predict_proba equals the package's: ${name}`, async (t) => {
    const { d, plan, order } = await load(name);
    const proba = aggregateProba(take(d.get("outputs"), order), plan);
    assert.ok(proba instanceof Float32Array);
    const diff = maxDiff(proba, d.get("proba").data);
    t.diagnostic(`max |proba − package| ${diff}`);
    assert.ok(diff <= TOL, String(diff));
    const labels = d.get("y_train").data;
    assert.deepEqual(plan.classes, [...new Set(labels)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

for (const name of CASES.filter((c) => c.includes("regression"))) {
  test(`regression outputs equal the package's: ${name}`, async (t) => {
    const { d, plan, order } = await load(name);
    const raw = take(d.get("outputs"), order);
    const worst = {};
    for (const kind of OUTPUT_TYPES) {
      const want = d.get(`pred_${kind}`);
      const scale = Math.max(1, ...Array.from(want.data, Math.abs));
      for (const alphaLevels of [null, TORCH_LEVELS]) {
        const got = predictRegression(raw, plan, kind, { alphaLevels });
        assert.deepEqual(got.shape, want.shape);
        const diff = maxDiff(got.data, want.data) / scale;
        worst[kind] = Math.max(worst[kind] ?? 0, diff);
        assert.ok(diff <= TOL, `${kind} ${diff}`);
      }
    }
    const tails = predictRegression(raw, plan, "quantiles", { alphas: TAIL_ALPHAS, alphaLevels: TORCH_LEVELS });
    const want = d.get("tails_quantiles");
    worst.tails = maxDiff(tails.data, want.data) / Math.max(1, ...Array.from(want.data, Math.abs));
    assert.ok(worst.tails <= TOL, String(worst.tails));
    t.diagnostic(`max relative difference per output type ${JSON.stringify(worst)}`);
    const both = predictRegression(raw, plan, ["mean", "median"]);
    assert.deepEqual(Object.keys(both), ["mean", "median"]);
  });
}

test("the default alpha levels are within an ulp of torch's", () => {
  const ours = defaultAlphaLevels();
  assert.equal(ours.length, 999);
  assert.ok(maxDiff(ours, TORCH_LEVELS) <= 6e-8);
});

// --- the RNG draws ----------------------------------------------------------------------------

test("PyRandom is Python's random.Random bit for bit", () => {
  // test/tabicl_pyrandom.json: CPython 3.11's draws, per seed in (0, 42, -5, 2**40 + 3, 2**70 + 12345):
  //   r = random.Random(seed); u32 = [r.getrandbits(32) ×5]; random = [r.random() ×3];
  //   bits = [r.getrandbits(k) for k in (1, 7, 31, 33, 53)]; shuffle = r.shuffle(list(range(10)));
  //   sample_pool = r.sample(range(20), 5); sample_set = r.sample(list(range(100)), 10);
  //   sample_big = r.sample(list(range(9)), 9); choice = [r.choice("abcdefg") ×6];
  //   randbelow = [r._randbelow(n) for n in (1, 2, 3, 1000, 2**31 + 1)];
  //   after700 = a fresh Random(seed)'s getrandbits(32) after 700 random() calls
  const reference = JSON.parse(readFileSync(new URL("./tabicl_pyrandom.json", import.meta.url), "utf8"));
  for (const [seed, want] of Object.entries(reference)) {
    const r = new PyRandom(BigInt(seed));
    const range = (n) => [...Array(n).keys()];
    const got = {
      u32: range(5).map(() => r.getrandbits(32)), random: range(3).map(() => r.random()),
      bits: [1, 7, 31, 33, 53].map((k) => r.getrandbits(k)), shuffle: r.shuffle(range(10)),
      sample_pool: r.sample(range(20), 5), sample_set: r.sample(range(100), 10), sample_big: r.sample(range(9), 9),
      choice: range(6).map(() => r.choice("abcdefg")), randbelow: [1, 2, 3, 1000, 2 ** 31 + 1].map((n) => r.randbelow(n)),
    };
    const again = new PyRandom(BigInt(seed));
    for (let i = 0; i < 700; i++) again.random();
    got.after700 = again.getrandbits(32);
    assert.deepEqual(got, want, seed);
  }
});

test("Latin squares are Latin, shuffle patterns and member grouping are the package's", () => {
  for (const n of [1, 2, 3, 5, 8, 13]) {
    const square = latinSquare(n, new PyRandom(42));
    assert.equal(square.length, n);
    const full = [...Array(n).keys()].join();
    for (let i = 0; i < n; i++) {
      assert.equal([...square[i]].sort((a, b) => a - b).join(), full);
      assert.equal(square.map((row) => row[i]).sort((a, b) => a - b).join(), full);
    }
  }
  assert.deepEqual(shufflePatterns(4, "shift", 8, 42), [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1], [1, 2, 3, 0]]);
  assert.deepEqual(shufflePatterns(4, "none", 8, 42), [[0, 1, 2, 3]]);
  assert.deepEqual(shufflePatterns(4, "latin", 1, 42), [[0, 1, 2, 3]]);
  const rnd = shufflePatterns(4, "random", 5, 42);
  assert.equal(new Set(rnd.map(String)).size, 5);
  assert.equal(shufflePatterns(9, "random", 3, 42).length, 3);
  // docs/tabicl_preprocessing.md §4: 4 features, 2 classes
  assert.deepEqual(shufflePatterns(4, "latin", 8, 42), [[3, 2, 1, 0], [0, 1, 2, 3], [2, 0, 3, 1], [1, 3, 0, 2]]);
  const members = drawMembers(4, 2, 8, ["none", "power"], "latin", "shift", 42);
  assert.deepEqual(members.slice(0, 4).map(([, f, c]) => [f, c]),
    [[[0, 1, 2, 3], [1, 0]], [[2, 0, 3, 1], [0, 1]], [[1, 3, 0, 2], [0, 1]], [[1, 3, 0, 2], [1, 0]]]);
  assert.deepEqual(drawMembers(1, 2, 8, ["none", "power"], "latin", "shift", 42).map(([m]) => m), ["none", "none", "power", "power"]);
  assert.deepEqual(drawMembers(5, null, 8, ["power", "none"], "latin", "shift", 42).map(([m]) => m), [...Array(4).fill("power"), ...Array(4).fill("none")]);
  assert.deepEqual(drawMembers(5, 3, 3, ["none", "power"], "latin", "shift", 42).map(([m]) => m), ["none", "none", "power"]);
});

// --- properties ---------------------------------------------------------------------------

function smallPlan(nClasses = 3, options = {}) {
  const r = new PyRandom(7);
  const x = Array.from({ length: 30 }, () => Array.from({ length: 4 }, () => r.random() * 4 - 2));
  const xTest = Array.from({ length: 5 }, () => Array.from({ length: 4 }, () => r.random() * 4 - 2));
  return { plan: fitMembers(x, Array.from({ length: 30 }, (_, i) => i % nClasses), "multiclass", options), xTest };
}

test("un-shifting inverts the class shift; rows sum to one; labels are shifted", () => {
  const { plan, xTest } = smallPlan(4);
  const r = new PyRandom(1);
  const truth = Float32Array.from({ length: 6 * 4 }, () => r.random() * 6 - 3);
  const shown = new Float32Array(plan.nMembers * 6 * 4);
  plan.classPerms.forEach((perm, i) => {
    for (let row = 0; row < 6; row++) for (let c = 0; c < 4; c++) shown[(i * 6 + row) * 4 + perm[c]] = truth[row * 4 + c];
  });
  const proba = aggregateProba({ data: shown, shape: [plan.nMembers, 6, 4] }, plan);
  assert.ok(maxDiff(proba, softmax(truth, 4, 0.9)) <= 1e-6);
  for (let row = 0; row < 6; row++) assert.ok(Math.abs(proba.slice(row * 4, row * 4 + 4).reduce((a, b) => a + b) - 1) <= 1e-6);
  const probs = aggregateProba({ data: softmax(shown, 4), shape: [plan.nMembers, 6, 4] }, plan, { averageLogits: false });
  assert.ok(probs.every((p) => p >= 0));
  const inputs = memberInputs(plan, xTest);
  plan.classPerms.forEach((perm, i) => {
    for (let k = 0; k < plan.nTrain; k++) assert.equal(inputs.yTrain[i * plan.nTrain + k], perm[plan.yTrain[k]]);
  });
  assert.equal(modelBatches(plan).flat().length, plan.nMembers);
  assert.deepEqual(modelBatches({ methods: Array(10).fill("none") }, 4), [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]);
});

test("Yeo-Johnson λ and transform, imputation, constant columns, the overflow fallback", () => {
  assert.equal(yeoJohnsonLambda(new Float64Array(5)), 1.0);
  const x = Float64Array.from([0.5, 1.5, 3, 8, 20, 0.1, 2.2]);
  const lambda = yeoJohnsonLambda(x);
  assert.ok(lambda > -2 && lambda < 2);
  assert.deepEqual(Array.from(yeoJohnson(x, 1)).map((v) => +v.toFixed(12)), Array.from(x));
  const m = { rows: 4, cols: 4, data: Float64Array.from([1, 5, NaN, 2, 3, 5, NaN, NaN, NaN, 5, NaN, 2, 2, 5, NaN, 2]) };
  const means = imputeMeans(m);
  assert.deepEqual(Array.from(means), [2, 5, 0, 2]);
  assert.deepEqual(keptFeatures(impute(m, means)), [true, false, false, false]);
  const plan = fitMembers([[1, 5, NaN, 2], [3, 5, NaN, NaN], [NaN, 5, NaN, 2], [2, 5, NaN, 2]], [0, 1, 0, 1], "binary");
  const inputs = memberInputs(plan, [[NaN, 0, 0, 0]]);
  assert.equal(inputs.nFeatures, 1);
  assert.ok(inputs.x.every(Number.isFinite));
  const r = new PyRandom(4);
  const train = { rows: 20, cols: 2, data: Float64Array.from({ length: 40 }, () => r.random() * 2 - 1) };
  const fit = fitPipeline(train, "power");
  const big = { ...fit, power: { ...fit.power, lambdas: Float64Array.of(200, 1) } };
  assert.ok(transform(big, { rows: 2, cols: 2, data: Float64Array.of(1e3, 0, 0, 0) }).data.every(Number.isFinite));
});

test("regression targets and summaries", () => {
  const { scaled, mean, scale } = scaleTargets([3, 3, 3]);
  assert.deepEqual([mean, scale, Array.from(scaled)], [3, 1, [0, 0, 0]]);
  const plan = fitMembers([[0], [1], [2], [3], [4], [5]], [1, 2, 3, 4, 5, 6], "regression");
  assert.equal(plan.classPerms, null);
  assert.ok(Math.abs(plan.yTrain.reduce((a, b) => a + b) / 6) < 1e-6);
  const zeros = { data: new Float32Array(plan.nMembers * 2), shape: [plan.nMembers, 2] };
  assert.ok(aggregateRegression(zeros, plan).data.every((v) => Math.abs(v - 3.5) < 1e-6));
  const levels = defaultAlphaLevels(9);
  const q = { data: Float32Array.of(0.3, 0.1, 0.2, 0.4, 0.5, 0.6, 0.7, 0.9, 0.8), shape: [1, 9] };
  assert.deepEqual(Array.from(quantileSummary(q, "raw_quantiles", { alphaLevels: levels }).data), Array.from(q.data).sort());
  assert.ok(Math.abs(quantileSummary(q, "median", { alphaLevels: levels }).data[0] - 0.5) < 1e-6);
  const grid = Array.from({ length: 50 }, (_, i) => 0.001 + (0.998 * i) / 49);
  const values = quantileSummary(q, "quantiles", { alphas: grid, alphaLevels: levels }).data;
  for (let i = 1; i < values.length; i++) assert.ok(values[i] >= values[i - 1]);
  const atKnots = quantileSummary(q, "quantiles", { alphas: levels, alphaLevels: levels }).data;
  assert.ok(maxDiff(atKnots, Float32Array.from(q.data).sort()) < 1e-6);
});

// --- bad inputs -----------------------------------------------------------------------------

test("bad fit and predict inputs are named", () => {
  const cases = [
    [[[1], [2]], [0, NaN], "binary", {}, /y_train/], [[[1], [2]], [0, Infinity], "regression", {}, /y_train/],
    [[[1], [2]], [0, 1e39], "regression", {}, /float32/], [[1, 2], [0, 1], "binary", {}, /2-dimensional/],
    [[[1], [2]], [0, 1, 1], "binary", {}, /3 values/], [[[1], [Infinity]], [0, 1], "binary", {}, /X_train/],
    [[["a"], ["b"]], [0, 1], "binary", {}, /X_train/], [[[1], [2]], [0, 1], "ranking", {}, /task/],
    [[[1], [2], [3]], [0, 1, 2], "binary", {}, /exactly 2/], [[[1], [2]], [1, 1], "binary", {}, /single class/],
    [[[1], [2]], [0.5, 1], "binary", {}, /non-integer/], [[[1], [2]], [0, 1], "binary", { nEstimators: 0 }, /n_estimators/],
    [[[1], [2]], [0, 1], "binary", { nEstimators: true }, /n_estimators/],
    [[[1], [2]], [0, 1], "binary", { normMethods: ["quantile"] }, /norm_methods/],
    [[[1], [2]], [0, 1], "binary", { featShuffleMethod: "x" }, /feat_shuffle_method/],
    [[[1], [2]], [0, 1], "binary", { outlierThreshold: -1 }, /outlier_threshold/],
    [[[1], [2]], [0, 1], "binary", { randomState: 1.5 }, /random_state/],
  ];
  for (const [x, y, task, options, words] of cases) assert.throws(() => fitMembers(x, y, task, options), words);
  const x = Array.from({ length: 24 }, (_, i) => [i]);
  const y = x.map((_, i) => i % 12);
  const plan = fitMembers(x, y, "multiclass");
  assert.ok(plan.manyClasses && plan.classPerms[0].length === 12);
  assert.throws(() => fitMembers(x, y, "multiclass", { supportManyClasses: false }), /support_many_classes/);
  const { plan: small, xTest } = smallPlan(3);
  const zeros = (m, c) => ({ data: new Float32Array(m * 5 * c), shape: [m, 5, c] });
  assert.throws(() => memberInputs(small, xTest.map((r) => r.slice(0, 3))), /X_test has 3 feature columns/);
  assert.throws(() => aggregateProba(zeros(2, 3), small), /members/);
  assert.throws(() => aggregateProba(zeros(small.nMembers, 4), small), /classes/);
  assert.throws(() => aggregateProba({ data: new Float32Array(small.nMembers * 15).fill(NaN), shape: [small.nMembers, 5, 3] }, small), /non-finite/);
  assert.throws(() => aggregateProba(zeros(small.nMembers, 3), small, { softmaxTemperature: 0 }), /softmax_temperature/);
  assert.throws(() => aggregateRegression({ data: new Float32Array(small.nMembers * 5), shape: [small.nMembers, 5] }, small), /regression plan/);
  const reg = fitMembers(xTest, [0, 1, 2, 3, 4], "regression");
  assert.throws(() => aggregateProba(zeros(reg.nMembers, 3), reg), /classification plan/);
  assert.throws(() => predictRegression({ data: new Float32Array(reg.nMembers * 18), shape: [reg.nMembers, 2, 9] }, reg, "mode"), /output_type/);
});
