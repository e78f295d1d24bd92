// A table's categorical and missing cells as numbers (src/encoding.js): the same float64
// numbers as Python's arenalite.models.encoding (tabicl_encoding, common_encoding), bit for
// bit, on frames Python generates at test time (text with missing cells, test-only levels,
// more than 10 levels, a bool column, a forced-categorical integer column, a number column
// missing in every context row; skipped without the repository's Python), each model's
// encoding from the registry, and runSplits encoding per split and model.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { ENCODINGS, MAX_ONE_HOT_LEVELS, checkFeatures, encodeFeatures, featuresFromJson, modelEncoding,
  pairwiseSum } from "../src/encoding.js";
import { MODELS } from "../src/models.js";
import { runSplits } from "../src/runner.js";
import { PYTHON } from "./reference.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Frames as read_table keeps them (and one plain DataFrame), their payload as the Node runner
// sends it (arenalite.browser.dataset_payload), and Python's two encodings of shuffled rows.
const FRAMES = `
import json, sys
import numpy as np, pandas as pd
from arenalite import browser
from arenalite.datasets import Dataset, table
from arenalite.models import encoding
from arenalite.models.tabfm.predictor import encode as tabfm_encode

def nulls(a):
    return [None if v != v else v for v in a.ravel().tolist()]

def table_frame(seed, rows):
    rng = np.random.default_rng(seed)
    n_train = int(rows * 0.6)
    text = rng.choice(["b", "B", "a", "\\u00e9", "10", "9", "\\u4e2d"], rows).astype(object)
    text[rng.random(rows) < 0.15] = None
    text[n_train] = "only-in-test"
    wide = np.array([f"w{v}" for v in rng.integers(0, 14, rows)], dtype=object)
    wide[rng.random(rows) < 0.1] = None
    number = np.round(rng.normal(size=rows) * 100, 3)
    number[rng.random(rows) < 0.2] = np.nan
    context_missing = rng.normal(size=rows)
    context_missing[:n_train] = np.nan
    frame = pd.DataFrame({"text": text, "number": number, "flag": rng.random(rows) < 0.4,
                          "code": rng.choice([3, 1, 20, 2], rows), "wide": wide,
                          "context_missing": context_missing,
                          "two": rng.choice(["y", "x"], rows),
                          "target": np.arange(rows) % 2})
    t = table.read_table(frame, target="target", categorical=["code"], name=f"t{seed}")
    return table.to_dataset(t), n_train

def plain_frame(seed, rows):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "cat": pd.Categorical(rng.choice(["z", "a", "m"], rows), categories=["z", "m", "a"]),
        "nullable": pd.array(rng.choice([True, False, None], rows), dtype="boolean"),
        "count": rng.integers(-5, 5, rows),
        "name": pd.Series(rng.choice(["p", "q", None], rows), dtype=object)})
    return Dataset(f"plain{seed}", frame, np.arange(rows) % 2, "binary", 2,
                   tuple(frame.columns)), rows // 2

cases = []
for make, seed, rows in [(table_frame, 0, 12), (table_frame, 1, 40), (table_frame, 2, 600),
                         (plain_frame, 3, 30)]:
    ds, n_train = make(seed, rows)
    rng = np.random.default_rng(seed + 100)
    train = rng.permutation(n_train)
    test = n_train + rng.permutation(rows - n_train)
    case = {"payload": browser.dataset_payload(ds), "train": train.tolist(), "test": test.tolist()}
    for name in ("tabicl", "common"):
        fn = encoding.ENCODINGS[name]
        a, b = fn(ds.X.iloc[train], ds.X.iloc[test])
        case[name] = {"xTrain": a.ravel().tolist(), "xTest": b.ravel().tolist(), "F": a.shape[1]}
    if make is table_frame:  # tabpfn's and tabfm's tables: every categorical a category
        keep = [c for c in ds.X.columns if c != "flag"]  # tabpfn refuses True/False
        t = encoding.tabpfn_table(ds.X[keep].iloc[train], ds.X[keep].iloc[test])
        a, b, cat = tabfm_encode(ds.X.iloc[train], ds.X.iloc[test])
        for name, (a, b, cat, drop) in {"tabpfn": (t.train, t.test, t.categorical_indices,
                                                    ["flag"]),
                                        "tabfm": (a, b, cat, [])}.items():
            case[name] = {"xTrain": nulls(a), "xTest": nulls(b), "F": a.shape[1], "cat": cat,
                          "drop": drop}
    cases.append(case)
json.dump(cases, sys.stdout)
`;

let cases = null;
function pythonCases() {
  if (cases) return cases;
  const run = spawnSync(PYTHON, ["-c", FRAMES], { cwd: ROOT, encoding: "utf8", timeout: 120000 });
  assert.equal(run.status, 0, `the Python frames failed:\n${run.stderr}`);
  cases = JSON.parse(run.stdout);
  return cases;
}

/** The largest |a - b| (Infinity when the lengths differ or only one of a pair is NaN). */
function maxDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let most = 0;
  for (let i = 0; i < a.length; i++) {
    if (Number.isNaN(a[i]) && Number.isNaN(b[i])) continue;
    most = Math.max(most, Number.isNaN(a[i]) || Number.isNaN(b[i]) ? Infinity : Math.abs(a[i] - b[i]));
  }
  return most;
}

test("both encodings equal Python's bit for bit on generated frames", (t) => {
  if (!PYTHON) return t.skip("no repository Python (.venv-pins/bin/python or $ARENALITE_PYTHON)");
  for (const c of pythonCases()) {
    const features = checkFeatures(featuresFromJson(c.payload.features), c.payload.y.length, c.payload.name);
    for (const name of ENCODINGS) {
      const want = c[name];
      if (!want) continue;  // tabpfn, tabfm: tables only (a plain frame's object column is no category)
      const kept = features.filter((f) => !(want.drop ?? []).includes(f.name));
      const got = encodeFeatures(name, kept, c.train, c.test);
      assert.equal(got.nFeatures, want.F, `${c.payload.name} ${name}`);
      assert.equal(got.featureNames.length, want.F);
      assert.equal(maxDiff(got.xTrain, want.xTrain.map((v) => v ?? NaN)), 0, `${c.payload.name} ${name} train`);
      assert.equal(maxDiff(got.xTest, want.xTest.map((v) => v ?? NaN)), 0, `${c.payload.name} ${name} test`);
      if (want.cat) assert.deepEqual(got.categoricalIndices, want.cat, `${c.payload.name} ${name}`);
    }
  }
});

test("the generated frames hold every case the encodings distinguish", (t) => {
  if (!PYTHON) return t.skip("no repository Python (.venv-pins/bin/python or $ARENALITE_PYTHON)");
  const [, , big, plain] = pythonCases();
  const column = (c, name) => c.payload.features.find((f) => f.name === name);
  assert.deepEqual(column(big, "text").categories, ["10", "9", "B", "a", "b", "only-in-test", "é", "中"]);
  assert.deepEqual(column(big, "flag").categories, [false, true]);
  assert.deepEqual(column(big, "code").categories, [1, 2, 3, 20]);
  assert.equal(column(big, "wide").categories.length, 14);
  assert.ok(column(big, "number").values.includes(null));
  assert.ok(big.train.every((r) => column(big, "context_missing").values[r] === null));
  assert.deepEqual(column(plain, "cat").categories, ["a", "m", "z"]);  // sorted for Python's order
  assert.deepEqual(column(plain, "nullable").categories, [false, true]);
  assert.equal(column(plain, "count").kind, "numeric");
  const common = encodeFeatures("common", featuresFromJson(big.payload.features), big.train, big.test);
  // text one-hot (7 context levels, the test-only one left out), number, flag (2), code (4),
  // wide codes (14 levels > 10), context_missing (imputed 0), two (2)
  assert.equal(common.nFeatures, 7 + 1 + 2 + 4 + 1 + 1 + 2);
  assert.ok(common.featureNames.includes("text=中") && !common.featureNames.includes("text=only-in-test"));
});

const toy = () => [
  { name: "colour", kind: "categorical", codes: Int32Array.of(0, 2, -1, 1, 3, 0), categories: ["blue", "green", "red", "teal"] },
  { name: "size", kind: "numeric", values: Float64Array.of(1, NaN, 4, 7, NaN, 2) },
];

test("common: one-hot over the context levels, unknown and missing all zeros, numbers mean-imputed", () => {
  const got = encodeFeatures("common", toy(), [0, 1, 2, 3], [4, 5, 1]);
  assert.deepEqual(got.featureNames, ["colour=blue", "colour=green", "colour=red", "size"]);
  assert.deepEqual(Array.from(got.xTrain), [1, 0, 0, 1, 0, 0, 1, 4, 0, 0, 0, 4, 0, 1, 0, 7]);
  // teal is unknown to the context: all zeros; size's context mean (1 + 4 + 7) / 3 = 4
  assert.deepEqual(Array.from(got.xTest), [0, 0, 0, 4, 1, 0, 0, 2, 0, 0, 1, 4]);
});

test("tabicl: codes of the context levels, categorical columns first", () => {
  const features = [toy()[1], toy()[0]];
  const got = encodeFeatures("tabicl", features, [0, 1, 2, 3], [4, 5]);
  assert.deepEqual(got.featureNames, ["colour", "size"]);
  assert.deepEqual(Array.from(got.xTrain), [0, 1, 2, 4, -1, 4, 1, 7]);
  assert.deepEqual(Array.from(got.xTest), [-1, 4, 0, 2]);
});

test("more than MAX_ONE_HOT_LEVELS context levels: one column of codes; an empty column is refused", () => {
  const K = MAX_ONE_HOT_LEVELS + 1;
  const wide = { name: "w", kind: "categorical", codes: Int32Array.from({ length: K + 1 }, (_, i) => i % K),
    categories: Array.from({ length: K }, (_, i) => `v${String(i).padStart(2, "0")}`) };
  const got = encodeFeatures("common", [wide], Array.from({ length: K }, (_, i) => i), [K]);
  assert.equal(got.nFeatures, 1);
  assert.deepEqual(Array.from(got.xTest), [0]);
  const tenOnly = encodeFeatures("common", [wide], Array.from({ length: K - 1 }, (_, i) => i), [K - 1]);
  assert.equal(tenOnly.nFeatures, MAX_ONE_HOT_LEVELS);
  assert.deepEqual(Array.from(tenOnly.xTest), new Array(MAX_ONE_HOT_LEVELS).fill(0));
  const empty = { name: "e", kind: "categorical", codes: Int32Array.of(-1, 0), categories: ["a"] };
  assert.throws(() => encodeFeatures("common", [empty], [0], [1]), /no column is left after encoding: 'e'/);
  assert.deepEqual(Array.from(encodeFeatures("tabicl", [empty], [0], [1]).xTest), [-1]);
  assert.throws(() => encodeFeatures("onehot", [empty], [0], [1]), /unknown encoding "onehot"/);
});

test("every registry model names its encoding", () => {
  for (const name of MODELS) assert.ok(ENCODINGS.includes(modelEncoding(name)), name);
  assert.equal(modelEncoding("tabicl"), "tabicl");
  assert.equal(modelEncoding("knn"), "common");
  assert.throws(() => modelEncoding("svm"), /unknown model name 'svm'/);
});

test("checkFeatures names the column at fault", () => {
  const check = (f) => () => checkFeatures([f], 2, "dataset 't'");
  assert.throws(check({ name: "a", kind: "numeric", values: [1] }), /column 'a' has 1 cells, y has 2/);
  assert.throws(check({ name: "a", kind: "numeric", values: [1, Infinity] }), /'a' has an infinite value Infinity in row 1/);
  assert.throws(check({ name: "a", kind: "categorical", codes: [0, 1], categories: ["x"] }), /row 1 has code 1, not -1/);
  assert.throws(check({ name: "a", kind: "text", codes: [0, 1] }), /must be \{kind: "numeric"/);
  const a = { name: "a", kind: "numeric", values: [1, null] };
  assert.throws(() => checkFeatures([a, a], 2), /column name 'a' appears twice/);
  assert.ok(Number.isNaN(checkFeatures([a], 2)[0].values[1]));
});

test("pairwiseSum is numpy's summation order", () => {
  // 1e16 + 1 + ... loses the ones a left-to-right sum adds one by one; numpy's blocks keep some
  const a = Float64Array.from({ length: 300 }, (_, i) => (i % 37 === 0 ? 1e16 : 1 + i / 7));
  let naive = 0;
  for (const v of a) naive += v;
  assert.notEqual(pairwiseSum(a, 0, a.length), naive);
  assert.equal(pairwiseSum(Float64Array.of(1, 2, 3), 0, 3), 6);
});

test("a 100k-row table encodes in typed arrays, quickly", () => {
  const n = 100000;
  const features = [
    { name: "c", kind: "categorical", codes: Int32Array.from({ length: n }, (_, i) => (i % 11) - 1), categories: Array.from({ length: 10 }, (_, i) => `k${i}`) },
    { name: "x", kind: "numeric", values: Float64Array.from({ length: n }, (_, i) => (i % 13 ? i / n : NaN)) },
  ];
  const train = Int32Array.from({ length: 70000 }, (_, i) => i);
  const testRows = Int32Array.from({ length: 30000 }, (_, i) => 70000 + i);
  const t0 = performance.now();
  const got = encodeFeatures("common", checkFeatures(features, n), train, testRows);
  const ms = performance.now() - t0;
  assert.equal(got.nFeatures, 11);
  assert.equal(got.xTrain.length, 70000 * 11);
  assert.ok(ms < 2000, `${ms} ms`);
});

// A stand-in for the GPU bridge that records what each model was given.
function recordingBridge() {
  const seen = [];
  return {
    seen, adapterInfo: { description: "fake adapter" },
    async predict(model, data) {
      seen.push({ model: model.name, ...data });
      const m = data.xTest.length / data.nFeatures;
      const output = Float32Array.from({ length: 2 * m }, (_, i) => (i % 2 ? 0.7 : 0.3));
      return { output, timings: { embed: 0.1, layers: [0.2], head: 0.1, total: 0.5 } };
    },
  };
}

test("runSplits encodes a table per split and model, without the excluded columns", async () => {
  const splits = JSON.parse(readFileSync(new URL("./split_kinds.kfold.json", import.meta.url), "utf8"));
  splits.excluded_columns = ["leak"];
  const n = splits.n_rows;
  const y = Float64Array.of(0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1);  // both classes per test fold
  const features = [
    { name: "leak", kind: "numeric", values: Float64Array.from(y) },
    { name: "colour", kind: "categorical", codes: Int32Array.from({ length: n }, (_, i) => (i % 5) - 1), categories: ["a", "b", "c", "d"] },
    { name: "size", kind: "numeric", values: Float64Array.from({ length: n }, (_, i) => (i % 3 ? i : NaN)) },
  ];
  const bridge = recordingBridge();
  const rows = await runSplits(bridge, { name: "toy", task: "binary", y, nClasses: 2, features }, splits,
    [{ name: "knn" }, { name: "tabicl", weights: "x.ckpt" }], { warmup: false });
  assert.equal(rows.length, 2 * splits.splits.length);
  const kept = features.slice(1);
  bridge.seen.forEach((d, k) => {
    const split = splits.splits[k % splits.splits.length];
    const want = encodeFeatures(d.model === "knn" ? "common" : "tabicl", kept, split.train, split.test);
    assert.equal(d.nFeatures, want.nFeatures);
    assert.deepEqual(Array.from(d.xTrain), Array.from(want.xTrain));
    assert.deepEqual(Array.from(d.xTest), Array.from(want.xTest));
    assert.ok(d.xTrain instanceof Float64Array);
  });
  assert.equal(bridge.seen[0].nFeatures, 5);  // knn: colour's 4 one-hot columns and size
  assert.equal(bridge.seen.at(-1).nFeatures, 2);  // tabicl: colour's codes, size
});

test("tabpfn and tabfm tables: their refusals, worded as Python's", () => {
  const flag = { name: "flag", kind: "categorical", codes: Int32Array.of(0, 1, 0), categories: [false, true] };
  assert.throws(() => encodeFeatures("tabpfn", [flag], [0, 1], [2]), { message:
    "column 'flag' holds True/False in a category column, which the tabpfn package refuses; give it dtype bool or 'boolean'" });
  const many = { name: "t", kind: "categorical", codes: Int32Array.from({ length: 32 }, (_, i) => i),
    categories: Array.from({ length: 32 }, (_, i) => `v${String(i).padStart(2, "0")}`) };
  assert.throws(() => encodeFeatures("tabpfn", [many], Array.from({ length: 31 }, (_, i) => i), [31]),
    /column 't' has 31 distinct values \(a missing cell counted\); tabpfn takes at most 30/);
  const empty = { name: "e", kind: "numeric", values: Float64Array.of(NaN, NaN, 1) };
  assert.throws(() => encodeFeatures("tabfm", [empty], [0, 1], [2]),
    { message: "Google TabFM takes no column of X_train: every number column is missing in all context rows" });
  // tabpfn keeps NaN; a column constant over the context carries its value to the test rows
  const got = encodeFeatures("tabpfn", [empty, toy()[1]], [0, 1, 3], [2, 4]);
  assert.deepEqual(Array.from(got.xTrain), [NaN, 1, NaN, NaN, NaN, 7]);
  assert.deepEqual(Array.from(got.xTest), [NaN, 4, NaN, NaN]);
  assert.deepEqual(got.categoricalIndices, []);
  assert.equal(modelEncoding("tabicl"), "tabicl");
});
