// numpy_random.js and make_splits.js on constants taken from numpy 2.4 and arenalite.splits
// (tests/test_split_maker_js.py compares whole files with Python's on every kind of split).
import assert from "node:assert/strict";
import { test } from "node:test";
import { PCG64, SeedSequence, defaultRng, entropyWords } from "../src/numpy_random.js";
import {
  datetime64Str, datetimeRepr, formatFixed, formatGeneral, gapValue, makeSplits, nRepeatsFor,
  pyRepr, pythonFloat, randomTestRows, timedeltaRepr, toJson, uniqueCodes,
} from "../src/make_splits.js";

test("SeedSequence: entropy words, pool and generate_state as numpy's", () => {
  assert.deepEqual(entropyWords(0), [0]);
  assert.deepEqual(entropyWords(2 ** 40 + 3), [3, 256]);
  assert.deepEqual(entropyWords(2n ** 64n + 3n), [3, 0, 1]);
  // np.random.SeedSequence(4267).generate_state(8, np.uint32)
  assert.deepEqual(Array.from(new SeedSequence(4267).generateState32(8)),
    [2938006524, 2964562453, 3549788856, 3123120580, 2512376621, 4130673923, 2642721097, 3005705412]);
  assert.deepEqual(Array.from(new SeedSequence(2 ** 40 + 3).pool),
    [2907267167, 3980074586, 1877032172, 1126316378]);
  assert.deepEqual(new SeedSequence(42).generateState64(4),
    [11465652750463011511n, 15382171918060459190n, 9018504550953525431n, 3703499796004394495n]);
});

test("PCG64: the seeded state and the first draws as numpy's", () => {
  // np.random.default_rng(s).bit_generator.state["state"]
  const states = {
    0: [0x1aa1b5345996452d09585eb7a69561e3n, 0x418ddadb3af71a82588133bc447873a9n],
    42: [0xcea44f6798798f2aacbc7c9d68860ac8n, 0xfa505436c9a8416e66caf2e28d25abffn],
    4267: [0xb3848a1cf3939a5e1b8a81f290a979can, 0xec6a2a072b7fa65b664ed9893b097293n],
  };
  for (const [seed, [state, inc]] of Object.entries(states)) {
    assert.deepEqual(new PCG64(Number(seed)).state.state, { state, inc }, seed);
  }
  // bit_generator.random_raw(3)
  assert.deepEqual(new PCG64(4267).randomRaw(3), [0xb0f557e4a5f48b80n, 0x7c46aa2455f968c3n, 0xba0f3744fd763be9n]);
  const g = new PCG64(4267);
  assert.deepEqual([g.nextUint32(), g.nextUint32(), g.nextUint32()], [0xa5f48b80, 0xb0f557e4, 0x55f968c3]);
  assert.equal(g.state.has_uint32, 1);
  assert.equal(g.nextUint64(), 0xba0f3744fd763be9n);  // a 64-bit draw leaves the buffer alone
  assert.equal(g.nextUint32(), 0x7c46aa24);
});

test("Generator.permutation as numpy's, successive draws sharing one generator", () => {
  assert.deepEqual(Array.from(defaultRng(4267).permutation(10)), [7, 5, 2, 9, 6, 1, 8, 3, 4, 0]);
  assert.deepEqual(Array.from(defaultRng(42).permutation(20)),
    [15, 9, 14, 7, 12, 10, 6, 19, 3, 0, 16, 5, 11, 18, 2, 4, 17, 1, 13, 8]);
  const rng = defaultRng(7);
  assert.deepEqual(Array.from(rng.permutation(6)), [5, 2, 0, 4, 1, 3]);
  assert.deepEqual(Array.from(rng.permutation(7)), [4, 6, 5, 0, 1, 3, 2]);
  assert.deepEqual(Array.from(rng.permutation(300).subarray(0, 10)), [99, 219, 0, 41, 49, 109, 201, 182, 196, 177]);
  assert.deepEqual(Array.from(defaultRng(1).permutation(0)), []);
  const big = defaultRng(42).permutation(1_200_000);
  assert.deepEqual([big[0], big[1], big[1_199_999]], [558325, 71635, 129997]);
});

test("Python's text: repr, format specs with ties to even, timedelta and datetime", () => {
  assert.deepEqual([formatFixed(0.125, 2), formatFixed(0.375, 2), formatFixed(2.25, 1), formatFixed(2.35, 1),
    formatFixed(-0.125, 2, true), formatFixed(0.001, 2, true)], ["0.12", "0.38", "2.2", "2.4", "-0.12", "+0.00"]);
  assert.deepEqual([12345.5, 0.000123456, 1.5e-5, 2.5e20, 1234.5, 99995].map((x) => formatGeneral(x, 4)),
    ["1.235e+04", "0.0001235", "1.5e-05", "2.5e+20", "1234", "1e+05"]);
  assert.equal(timedeltaRepr(-1), "datetime.timedelta(days=-1, seconds=86399, microseconds=999999)");
  assert.equal(timedeltaRepr(2 * 86_400_000_000 + 7), "datetime.timedelta(days=2, microseconds=7)");
  assert.equal(timedeltaRepr(0), "datetime.timedelta(0)");
  assert.equal(datetimeRepr(Date.UTC(2020, 0, 1) * 1000 + 250), "datetime.datetime(2020, 1, 1, 0, 0, 0, 250)");
  assert.equal(datetimeRepr(Date.UTC(2021, 2, 4, 5, 6, 7) * 1000), "datetime.datetime(2021, 3, 4, 5, 6, 7)");
  assert.equal(datetime64Str(Date.UTC(2020, 1, 3, 4, 5, 6) * 1000 + 7), "2020-02-03T04:05:06.000007");
  assert.deepEqual([pyRepr(null), pyRepr(true), pyRepr(3), pyRepr(2.5), pyRepr("it's"), pyRepr([1, "a"])],
    ["None", "True", "3", "2.5", `"it's"`, "[1, 'a']"]);
  assert.deepEqual(["1_000", " 7 ", ".5", "5.", "-inf", "1e3", "1__0", "7D"].map(pythonFloat),
    [1000, 7, 0.5, 5, -Infinity, 1000, null, null]);
  assert.deepEqual(["7", "2.5", "7D", "36h", "1500ns"].map((g) => pyRepr(gapValue(g))),
    ["7", "2.5", "datetime.timedelta(days=7)", "datetime.timedelta(days=1, seconds=43200)",
      "datetime.timedelta(microseconds=2)"]);
});

test("protocol numbers and np.unique's order", () => {
  assert.deepEqual([749, 750, 3749, 3750, 374_999, 375_000].map((n) => nRepeatsFor(Math.floor(2 * n / 3))),
    [20, 10, 10, 3, 3, 1]);
  assert.equal(randomTestRows(20, 0.3), 6);
  const u = uniqueCodes(["b", "é", "a", "B", "b"]);
  assert.deepEqual([u.values, Array.from(u.codes), Array.from(u.counts)],
    [["B", "a", "b", "é"], [2, 3, 1, 0, 2], [1, 1, 2, 1]]);
  assert.deepEqual(uniqueCodes([10, -1.5, 2, 10]).values, [-1.5, 2, 10]);
});

test("makeSplits + toJson write arenalite's file, the fingerprint after excluded_columns", () => {
  const made = makeSplits({ nRows: 8, task: "binary", y: [0, 1, 1, 0, 1, 0, 0, 0], dataset: "toy",
    leakageColumns: ["id"], nRepeats: 2 });
  assert.equal(toJson(made), '{"schema":"arenalite.splits","version":1,"dataset":"toy","n_rows":8,' +
    '"task":"binary","kind":"iid","seed":4267,"n_repeats":2,"n_folds":3,"excluded_columns":["id"],' +
    '"splits":[{"id":"r0-f0","repeat":0,"fold":0,"train":[0,2,4,6,7],"test":[1,3,5]},' +
    '{"id":"r0-f1","repeat":0,"fold":1,"train":[1,2,3,5,6],"test":[0,4,7]},' +
    '{"id":"r0-f2","repeat":0,"fold":2,"train":[0,1,3,4,5,7],"test":[2,6]},' +
    '{"id":"r1-f0","repeat":1,"fold":0,"train":[1,2,3,5,7],"test":[0,4,6]},' +
    '{"id":"r1-f1","repeat":1,"fold":1,"train":[0,1,4,5,6],"test":[2,3,7]},' +
    '{"id":"r1-f2","repeat":1,"fold":2,"train":[0,2,3,4,6,7],"test":[1,5]}]}\n');
  const random = makeSplits({ nRows: 6, task: "regression", dataset: "d", leakageColumns: ["z"],
    nRepeats: 1, kind: "random", testFraction: 0.5 });
  const withPrint = { ...random, fingerprint: { n_rows: 6, columns: ["a", "z"], target: "t", target_sha256: "00" } };
  assert.equal(toJson(withPrint), '{"schema":"arenalite.splits","version":1,"dataset":"d","n_rows":6,' +
    '"task":"regression","kind":"random","seed":4267,"n_repeats":1,"n_folds":1,"test_fraction":0.5,' +
    '"excluded_columns":["z"],"fingerprint":{"n_rows":6,"columns":["a","z"],"target":"t",' +
    '"target_sha256":"00"},"splits":[{"id":"r0-f0","repeat":0,"fold":0,"train":[2,4,5],"test":[0,1,3]}]}\n');
  assert.ok(Array.isArray(made.splits[0].train));
});

test("bad options are refused with arenalite's words", () => {
  const y = [0, 1, 0, 1, 0, 1];
  const cases = [
    [{ nRows: 2.5, task: "binary", y }, TypeError, "n_rows must be an integer, got 2.5"],
    [{ nRows: 6, task: "rank", y }, Error, "task must be one of ('binary', 'multiclass', 'regression'), got 'rank'"],
    [{ nRows: 6, task: "binary", y, nFolds: 4 }, Error, "n_folds is chosen only with kind='kfold' (SPEC " +
      "§6's rule uses 3 folds), got n_folds=4 with kind=None"],
    [{ nRows: 6, task: "binary", y, gap: "7D" }, Error, "gap applies to temporal splits (give " +
      "time=...), got gap=datetime.timedelta(days=7) without time"],
    [{ nRows: 6, task: "binary", y, gap: "7X" }, TypeError, "--gap must be a number or a duration such " +
      "as 7D or 12h, got '7X'"],
    [{ nRows: 6, task: "binary", y: [0, 1, NaN, 1, 0, 1] }, Error, "y has a missing or non-finite " +
      "value (nan) at row 2"],
    [{ nRows: 6, task: "binary" }, Error, "y is needed to stratify the folds of a binary task"],
    [{ nRows: 6, task: "binary", y, time: [1, 2, 3, 4, 5, 6], timeKind: "datetime", gap: 7 }, TypeError,
      "gap for a datetime64[us] time column must be a timedelta (e.g. numpy.timedelta64(7, 'D')), got 7"],
    [{ nRows: 6, task: "binary", y, kind: "random", testFraction: 0.05 }, Error,
      "test_fraction=0.05 puts 0 of 6 rows in the test part; both parts need at least one row"],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => makeSplits(options), (err) => err instanceof type && err.message === message, message);
  }
});

test("the row-order warning is returned in `warnings`, not printed", () => {
  const y = Array.from({ length: 200 }, (_, i) => (i < 100 ? 0 : 1));
  const warnings = [];
  makeSplits({ nRows: 200, task: "binary", y, warnRowOrder: true, targetColumn: "label", warnings });
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /^row order leaks the target: column 'label' follows the row order \(Spearman rho=/);
});

test("the page's input: null for absent columns and options, typed columns", () => {
  const n = 30;
  const y = Float64Array.from({ length: n }, (_, i) => i % 3);
  const page = makeSplits({ nRows: n, task: "multiclass", y, groups: null, time: null, timeKind: null,
    dataset: "t", groupColumn: null, timeColumn: null, targetColumn: "y", leakageColumns: [],
    warnRowOrder: true, gap: undefined, warnings: [] });
  const plain = makeSplits({ nRows: n, task: "multiclass", y: Array.from(y), dataset: "t" });
  assert.equal(toJson(page), toJson(plain));
  const time = Float64Array.from({ length: n }, (_, i) => Date.UTC(2024, 0, 1 + i));
  const temporal = makeSplits({ nRows: n, task: "multiclass", y, time, timeKind: "datetime", gap: "2D" });
  assert.deepEqual(temporal.splits.map((s) => [s.train.length, s.test.length]), [[5, 8], [13, 7], [20, 8]]);
});
