// Pure logic of the bridge (no GPU): split parsing, result rows and metrics, weights
// loading, data validation and preprocessing, model labels.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import {
  KERNELS, RESULT_COLUMNS, columnStats, datasetMatrix, describeAdapter, loadKernel, loadWeights,
  logLoss, mergeNearTies, modelLabel, parseSplits, parseWeights, resultRow, rmse, rocAuc, standardize,
  taskScore, validateData,
} from "../src/index.js";
import { SMALL_CONFIG, makeData, makeWeights } from "./fixtures.js";

const SPLITS = {
  schema: "arenalite.splits", version: 1, dataset: "toy", n_rows: 6, task: "binary",
  kind: "iid", seed: 4267, n_repeats: 1, n_folds: 2, excluded_columns: [],
  splits: [
    { id: "r0-f0", repeat: 0, fold: 0, train: [0, 1, 2], test: [3, 4, 5] },
    { id: "r0-f1", repeat: 0, fold: 1, train: [3, 4, 5], test: [0, 1, 2] },
  ],
};
const clone = (o) => JSON.parse(JSON.stringify(o));

test("parseSplits accepts the persisted JSON unchanged, object or string", () => {
  assert.deepEqual(parseSplits(SPLITS), SPLITS);
  assert.deepEqual(parseSplits(JSON.stringify(SPLITS), { nRows: 6, task: "binary", dataset: "toy" }), SPLITS);
});

test("parseSplits rejects bad split files with messages naming the problem", () => {
  const cases = [
    [(s) => { s.schema = "other"; }, /schema must be 'arenalite.splits'/],
    [(s) => { s.version = 2; }, /unsupported splits version 2/],
    [(s) => { s.splits[0].test.push(6); }, /split 'r0-f0': test index 6 is not a row number in \[0, 6\)/],
    [(s) => { s.splits[0].train.push(1.5); }, /train index 1.5/],
    [(s) => { s.splits[1].test.push(4); }, /split 'r0-f1': row 4 is in both train and test/],
    [(s) => { s.splits[1].id = "r0-f0"; }, /split id "r0-f0" is missing or duplicated/],
    [(s) => { s.splits = []; }, /non-empty list/],
    [(s) => { s.splits[0].fold = -1; }, /fold must be a non-negative integer, got -1/],
  ];
  for (const [mutate, message] of cases) {
    const s = clone(SPLITS);
    mutate(s);
    assert.throws(() => parseSplits(s), message);
  }
  assert.throws(() => parseSplits(SPLITS, { nRows: 7 }), /6 rows do not fit dataset 'toy' with 7 rows/);
  assert.throws(() => parseSplits(SPLITS, { task: "regression" }), /task 'binary'.*'regression'/);
  assert.throws(() => parseSplits(SPLITS, { dataset: "iris" }), /for dataset 'toy', not 'iris'/);
  const unnamed = { ...SPLITS, dataset: null };
  assert.deepEqual(parseSplits(unnamed, { nRows: 6, task: "binary", dataset: "iris" }), unnamed);
});

test("rocAuc is the Mann-Whitney AUC with ties counted 1/2", () => {
  assert.equal(rocAuc([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), 0.75);
  assert.equal(rocAuc([0, 1], [0.5, 0.5]), 0.5);
  assert.equal(rocAuc([1, 0, 1, 0], [0.9, 0.1, 0.9, 0.9]), 0.75);
  assert.throws(() => rocAuc([1, 1], [0.2, 0.3]), /both classes.*negatives 0/);
});

test("mergeNearTies turns runs of near-equal scores into ties, as the Python runner does", () => {
  assert.deepEqual(Array.from(mergeNearTies([0.5, 0.2, 0.5 + 4e-6, 0.5 + 8e-6, 0.51])),
    [0.5, 0.2, 0.5, 0.5, 0.51]);
  assert.deepEqual(Array.from(mergeNearTies([0.3, 0.3 + 2e-5])), [0.3, 0.3 + 2e-5]);
  // a near-tie scored as one tie: 1/2 per positive-negative pair inside it
  const y = [0, 1, 0, 1];
  const near = [0.7, 0.7 + 1e-7, 0.7 - 1e-7, 0.9];
  assert.equal(taskScore("binary", y, near.flatMap((p) => [1 - p, p]), 2).score, rocAuc(y, [0.7, 0.7, 0.7, 0.9]));
});

test("logLoss, rmse and taskScore give the results-table metric per task", () => {
  const probs = Float32Array.from([0.25, 0.75, 0.5, 0.5]);
  assert.ok(Math.abs(logLoss([1, 0], probs, 2) - (-(Math.log(0.75) + Math.log(0.5)) / 2)) < 1e-7);
  assert.ok(Math.abs(logLoss([0], [0, 1], 2) + Math.log(Number.EPSILON)) < 1e-9);
  assert.equal(rmse([1, 2, 3], [1, 2, 5]), Math.sqrt(4 / 3));
  const b = taskScore("binary", [0, 1], probs, 2);
  assert.deepEqual([b.metric, b.score, b.error], ["roc_auc", 0, 1]);
  assert.equal(taskScore("multiclass", [1, 0], probs, 2).metric, "log_loss");
  const r = taskScore("regression", [1, 3], [1, 1], 0);
  assert.deepEqual([r.metric, r.score, r.error], ["rmse", Math.sqrt(2), Math.sqrt(2)]);
});

test("resultRow has exactly the results-table keys, in order, with derived values", () => {
  const row = resultRow({
    model: "knn", dataset: "toy", task: "binary", scored: { metric: "roc_auc", score: 0.9, error: 0.1 },
    split: SPLITS.splits[1], nFolds: 2, device: "SwiftShader",
    timings: { embed: 1, layers: [2, 3], head: 4, total: 10 },
  });
  assert.deepEqual(Object.keys(row), RESULT_COLUMNS);
  assert.equal(row.seed, 1);
  assert.equal(row.layers_ms, 5);
  assert.equal(row.runner, "webgpu");
  assert.equal(row.rows_per_s, 300);
  assert.deepEqual([row.n_train, row.n_test, row.split_id], [3, 3, "r0-f1"]);
});

test("modelLabel follows arenalite.models.model_label", () => {
  assert.equal(modelLabel({ name: "knn", k: 5 }), "knn");
  assert.equal(modelLabel({ name: "knn", k: 3 }), "knn(k=3)");
  assert.equal(modelLabel({ name: "attention", temperature: 2.5 }), "attention(temperature=2.5)");
  assert.equal(modelLabel({ name: "icl_transformer", weights: null }), "icl_transformer");
  assert.equal(modelLabel({ name: "knn", label: "nn" }), "nn");
  assert.throws(() => modelLabel({ name: "svm" }), /unknown model name 'svm'; known models are \['knn', /);
});

test("datasetMatrix drops the split file's excluded columns and checks lengths", () => {
  const ds = { name: "toy", y: [0, 1], columns: { a: [1, 2], g: [7, 7], b: [3, 4] } };
  assert.deepEqual(Array.from(datasetMatrix(ds, ["g"]).x), [1, 3, 2, 4]);
  const rowMajor = { name: "toy", y: [0, 1], x: [1, 7, 3, 2, 7, 4], nFeatures: 3, featureNames: ["a", "g", "b"] };
  assert.deepEqual(Array.from(datasetMatrix(rowMajor, ["g"]).x), [1, 3, 2, 4]);
  assert.throws(() => datasetMatrix({ ...rowMajor, featureNames: undefined }, ["g"]), /no featureNames/);
  assert.throws(() => datasetMatrix({ name: "toy", y: [0, 1], columns: { a: [1] } }), /column 'a' has 1 values, y has 2/);
});

test("datasetMatrix takes x as a Float32Array (the Pyodide payload) as it takes a list", () => {
  const values = [0.1, 7, 1 / 3, 2.5, 7, -1e-8];
  const list = { name: "toy", y: [0, 1], x: values, nFeatures: 3, featureNames: ["a", "g", "b"] };
  const typed = { ...list, x: Float32Array.from(values), y: Float64Array.from([0, 1]) };
  const fromList = datasetMatrix(list);
  const fromTyped = datasetMatrix(typed);
  assert.ok(fromTyped.x instanceof Float32Array);
  assert.equal(fromTyped.x, typed.x, "a Float32Array is used without a copy");
  assert.deepEqual(Array.from(fromTyped.x), Array.from(fromList.x));
  assert.deepEqual([fromTyped.F, fromTyped.nRows], [3, 2]);
  assert.deepEqual(Array.from(datasetMatrix(typed, ["g"]).x), Array.from(datasetMatrix(list, ["g"]).x));
  assert.throws(() => datasetMatrix({ ...typed, x: typed.x.subarray(1) }), /x has 5 values, expected 2 rows x nFeatures = 3/);
});

test("validateData rejects bad input with messages naming the field, value and row", () => {
  const d = makeData("multiclass", { n: 6, m: 2, F: 2 });
  assert.equal(validateData(d).C, 3);
  const bad = [
    [{ task: "ranking" }, /data.task must be one of binary, multiclass, regression, got "ranking"/],
    [{ nFeatures: 0 }, /nFeatures must be a positive integer, got 0/],
    [{ xTest: new Float32Array(3) }, /xTest has 3 values, not a multiple of nFeatures = 2/],
    [{ yTrain: new Float32Array(5) }, /yTrain has 5 values but xTrain has 6 rows/],
    [{ xTrain: Float32Array.from(d.xTrain).fill(NaN, 3, 4) }, /xTrain has a non-finite value NaN at row 1, column 1/],
    [{ yTrain: Float32Array.from([0, 1, 2, 0.5, 1, 0]) }, /class indices 0..C-1, got 0.5 at row 3/],
    [{ nClasses: 2 }, /yTrain has class 2 but nClasses = 2/],
    [{ xTrain: "abc" }, /xTrain must be a Float32Array/],
  ];
  for (const [patch, message] of bad) assert.throws(() => validateData({ ...d, ...patch }), message);
});

test("standardize uses context means and population stds; constant columns use 1", () => {
  const x = Float64Array.from([1, 5, 3, 5]);
  const s = columnStats(x, 2, 2);
  assert.deepEqual(Array.from(s.mean), [2, 5]);
  assert.deepEqual(Array.from(s.std), [1, 1]);
  assert.deepEqual(Array.from(standardize(x, 2, 2, s, 3)), [-1, 0, 0, 1, 0, 0]);
});

test("weights round-trip from {manifest, blob} and from files beside each other", async () => {
  const { manifest, blob } = await makeWeights(SMALL_CONFIG);
  const w = await parseWeights(manifest, blob);
  assert.deepEqual(w.config, SMALL_CONFIG);
  assert.equal(w.tensors.get("layers.1.mlp.w1").length, 16 * 32);
  const dir = mkdtempSync(join(tmpdir(), "weights-"));
  writeFileSync(join(dir, "test.json"), JSON.stringify(manifest));
  writeFileSync(join(dir, "test.bin"), new Uint8Array(blob));
  const fromFile = await loadWeights(join(dir, "test.json"));
  assert.deepEqual(fromFile.tensors.get("head.reg.b"), w.tensors.get("head.reg.b"));
  assert.equal(fromFile.sha256, manifest.blob_sha256);
});

test("weights with missing/misshapen tensors, bad offsets or a wrong sha256 are rejected", async () => {
  const { manifest, blob } = await makeWeights(SMALL_CONFIG);
  const bad = [
    [(m) => { m.tensors = m.tensors.filter((t) => t.name !== "label.reg"); }, /lacks tensor 'label.reg'/],
    [(m) => { m.tensors[0].shape = [8, 15]; }, /'embed.w' has shape \[8,15\], expected \[8,16\]/],
    [(m) => { m.tensors[1].offset = 2; }, /'embed.b' offset 2/],
    [(m) => { m.tensors.at(-1).offset = blob.byteLength; }, /'head.reg.b' offset/],
    [(m) => { m.blob_sha256 = "00"; }, /sha256 .* does not match/],
    [(m) => { m.format = "npz"; }, /not an arenalite weights manifest/],
    [(m) => { m.config.n_heads = 3; }, /not divisible by n_heads = 3/],
    [(m) => { delete m.config.ln_eps; }, /'ln_eps' must be a positive number/],
  ];
  for (const [mutate, message] of bad) {
    const m = clone(manifest);
    mutate(m);
    await assert.rejects(parseWeights(m, blob), message);
  }
});

test("describeAdapter records vendor, architecture, description and the fallback flag", () => {
  const info = describeAdapter({ info: { vendor: "google", architecture: "swiftshader", description: "", isFallbackAdapter: true } });
  assert.equal(info.description, "google swiftshader");
  assert.equal(info.isFallbackAdapter, true);
  assert.equal(info.label, "WebGPU: google swiftshader (fallback)");
});

test("every WGSL kernel file is readable beside the module", async () => {
  for (const name of KERNELS) {
    assert.match(await loadKernel(name), /@compute/);
  }
});

// WebGPU's guaranteed minimums (every adapter offers at least these): so no kernel needs
// a device with raised limits.
const MIN_LIMITS = { invocations: 256, sizeX: 256, sizeY: 256, storageBytes: 16384 };
const BYTES = { f32: 4, u32: 4, i32: 4, "vec2<f32>": 8, "vec4<f32>": 16 };

test("every kernel stays within WebGPU's minimum workgroup limits", async () => {
  for (const name of KERNELS) {
    const src = await loadKernel(name);
    for (const [, x, y = "1", z = "1"] of src.matchAll(/@workgroup_size\((\d+)(?:,\s*(\d+))?(?:,\s*(\d+))?\)/g)) {
      const [sx, sy, sz] = [x, y, z].map(Number);
      assert.ok(sx * sy * sz <= MIN_LIMITS.invocations && sx <= MIN_LIMITS.sizeX && sy <= MIN_LIMITS.sizeY,
        `${name}: workgroup ${sx} x ${sy} x ${sz}`);
    }
    let storage = 0;
    for (const [, type, count] of src.matchAll(/var<workgroup>\s+\w+\s*:\s*array<([\w<>]+),\s*(\d+)>/g)) {
      assert.ok(type in BYTES, `${name}: workgroup array of ${type}`);
      storage += BYTES[type] * Number(count);
    }
    assert.ok(storage <= MIN_LIMITS.storageBytes, `${name}: ${storage} bytes of workgroup storage`);
  }
  const attention = await loadKernel("attention");
  assert.match(attention, /var<workgroup> tile_k: array<f32, 1024>/);
});

test("the device layer does not import the orchestration layer", async () => {
  const { readFile } = await import("node:fs/promises");
  const imports = (name) => readFile(new URL(`../src/${name}`, import.meta.url), "utf8")
    .then((text) => [...text.matchAll(/from "\.\/([\w.]+)"/g)].map((m) => m[1]));
  for (const device of ["bridge.js", "engine.js", "transformer.js", "distance_models.js", "gpu.js"]) {
    const bad = (await imports(device)).filter((m) => ["runner.js", "results.js", "metrics.js", "splits.js"].includes(m));
    assert.deepEqual(bad, [], `${device} imports ${bad}`);
  }
});

test("a knn/attention context past the adapter's buffer limit is one message naming it", async () => {
  const { checkContextFits } = await import("../src/distance_models.js");
  const limits = { maxStorageBufferBindingSize: 134217728, maxBufferSize: 268435456 };
  assert.doesNotThrow(() => checkContextFits(limits, "knn", 750000, 20));
  assert.throws(() => checkContextFits(limits, "knn", 2000000, 20), {
    message: "knn on WebGPU: the context of 2000000 rows × 20 features needs 160000000 bytes in " +
      "one buffer, past this adapter's limit of 134217728 bytes (maxStorageBufferBindingSize); " +
      "use fewer training rows",
  });
});
