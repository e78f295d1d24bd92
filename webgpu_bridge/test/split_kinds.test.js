// The gate protocol's split kinds ("kfold", "random") as arenalite.splits writes them:
// parseSplits reads and validates them, runSplits runs on them. The two JSON files are
// written by `arenalite.splits.save` (tests/test_splits.py checks they still match).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { runSplits } from "../src/runner.js";
import { SPLIT_KINDS, parseSplits, randomTestRows } from "../src/splits.js";

const read = (kind) => readFileSync(new URL(`./split_kinds.${kind}.json`, import.meta.url), "utf8");
const KFOLD = read("kfold");
const RANDOM = read("random");
const Y = [0, 1, 1, 0, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 1, 0, 1];
// a file of a kind that existed before kfold / random, as arenalite wrote it then
const IID = '{"schema":"arenalite.splits","version":1,"dataset":"toy","n_rows":8,"task":"binary",' +
  '"kind":"iid","seed":4267,"n_repeats":2,"n_folds":3,"excluded_columns":["id"],"splits":[' +
  '{"id":"r0-f0","repeat":0,"fold":0,"train":[1,2,4,6,7],"test":[0,3,5]},' +
  '{"id":"r0-f1","repeat":0,"fold":1,"train":[0,1,3,5,6],"test":[2,4,7]},' +
  '{"id":"r0-f2","repeat":0,"fold":2,"train":[0,2,3,4,5,7],"test":[1,6]},' +
  '{"id":"r1-f0","repeat":1,"fold":0,"train":[0,1,3,5,7],"test":[2,4,6]},' +
  '{"id":"r1-f1","repeat":1,"fold":1,"train":[0,2,4,6,7],"test":[1,3,5]},' +
  '{"id":"r1-f2","repeat":1,"fold":2,"train":[1,2,3,4,5,6],"test":[0,7]}]}';

test("parseSplits reads kfold and random files unchanged, and files of the older kinds", () => {
  assert.deepEqual(SPLIT_KINDS, ["iid", "holdout", "grouped", "temporal", "kfold", "random"]);
  const kfold = parseSplits(KFOLD, { nRows: 20, task: "binary", dataset: "toy" });
  assert.deepEqual(kfold, JSON.parse(KFOLD));
  assert.equal(kfold.kind, "kfold");
  assert.equal(kfold.splits.length, 10);
  for (let r = 0; r < 2; r++) {
    const tested = kfold.splits.filter((s) => s.repeat === r).flatMap((s) => s.test);
    assert.deepEqual(tested.sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i));
  }
  const random = parseSplits(RANDOM, { nRows: 20, task: "binary" });
  assert.equal(random.test_fraction, 0.3);
  assert.deepEqual(random.splits.map((s) => [s.id, s.test.length, s.train.length]),
    [["r0-f0", 6, 14], ["r1-f0", 6, 14], ["r2-f0", 6, 14]]);
  assert.equal(randomTestRows(20, 0.3), 6);
  assert.deepEqual(parseSplits(IID), JSON.parse(IID));
});

const mutated = (text, mutate) => {
  const s = JSON.parse(text);
  mutate(s);
  return s;
};

test("parseSplits rejects bad kfold / random files naming the field", () => {
  const cases = [
    [KFOLD, (s) => { s.kind = "bootstrap"; }, /splits.kind must be one of .*, got "bootstrap"/],
    [KFOLD, (s) => { delete s.kind; }, /splits.kind must be one of/],
    [KFOLD, (s) => { s.n_folds = 1; s.n_repeats = 10; }, /n_folds of a kfold split must be at least 2, got 1/],
    [KFOLD, (s) => { s.n_repeats = 3; }, /n_repeats × n_folds = 15 entries, got 10/],
    [KFOLD, (s) => { s.test_fraction = 0.3; }, /test_fraction is only for kind 'random', not 'kfold'/],
    [KFOLD, (s) => { s.splits[1].fold = 7; }, /split 'r0-f1': fold 7 is not below splits.n_folds = 5/],
    [KFOLD, (s) => { s.splits[1].id = "r0-f9"; }, /split 'r0-f9': id must be 'r0-f1'/],
    [KFOLD, (s) => {
      const row = s.splits[0].test[0];
      s.splits[1].train = s.splits[1].train.filter((i) => i !== row);
      s.splits[1].test.push(row);
    }, /repeat 0 puts row \d+ in 2 test folds/],
    [RANDOM, (s) => { delete s.test_fraction; }, /splits.test_fraction must be a number .*, got undefined/],
    [RANDOM, (s) => { s.test_fraction = "0.3"; }, /splits.test_fraction must be a number/],
    [RANDOM, (s) => { s.test_fraction = 1; }, /strictly between 0 and 1, got 1/],
    [RANDOM, (s) => { s.test_fraction = 0.01; }, /splits.test_fraction=0.01 puts 0 of 20 rows/],
    [RANDOM, (s) => { s.n_folds = 2; }, /n_folds of a random split must be 1, got 2/],
    [RANDOM, (s) => { s.test_fraction = 0.4; }, /split 'r0-f0': test holds 6 rows, but splits.test_fraction=0.4 of 20 rows gives 8/],
    [RANDOM, (s) => { s.splits[2].train.pop(); }, /split 'r2-f0': train and test together hold 19 rows, expected all 20/],
  ];
  for (const [text, mutate, message] of cases) {
    assert.throws(() => parseSplits(mutated(text, mutate)), message);
  }
});

// A stand-in for the GPU bridge: the positive-class probability is the row's one feature.
const fakeBridge = {
  adapterInfo: { description: "fake adapter" },
  async predict(_model, data) {
    const n = data.xTest.length;
    const output = new Float32Array(2 * n);
    data.xTest.forEach((p, i) => { output[2 * i] = 1 - p; output[2 * i + 1] = p; });
    return { output, timings: { embed: 0.1, layers: [0.2], head: 0.1, total: 0.5 } };
  },
};

test("runSplits runs on every split of a kfold and a random file", async () => {
  const x = Float32Array.from(Y, (y, i) => (y ? 0.6 : 0.4) + ((i * 7) % 5) / 20);
  const dataset = { name: "toy", task: "binary", y: Y, x, nFeatures: 1, nClasses: 2 };
  for (const [text, nFolds] of [[KFOLD, 5], [RANDOM, 1]]) {
    const s = JSON.parse(text);
    const rows = await runSplits(fakeBridge, dataset, text, [{ name: "knn" }], { warmup: false });
    assert.deepEqual(rows.map((r) => r.split_id), s.splits.map((sp) => sp.id));
    assert.deepEqual(rows.map((r) => r.seed), s.splits.map((sp) => sp.repeat * nFolds + sp.fold));
    assert.deepEqual(rows.map((r) => r.n_test), s.splits.map((sp) => sp.test.length));
    for (const r of rows) assert.ok(r.score > 0.5 && r.score <= 1, `${r.split_id}: AUC ${r.score}`);
    // arenalite.browser's typed payload (from Pyodide): x a Float32Array, y a Float64Array
    const typed = { ...dataset, y: Float64Array.from(Y) };
    const again = await runSplits(fakeBridge, typed, text, [{ name: "knn" }], { warmup: false });
    assert.deepEqual(again.map((r) => [r.split_id, r.score, r.n_test]),
      rows.map((r) => [r.split_id, r.score, r.n_test]));
  }
});
