// What the bridge hands a checkpoint model besides its rows: NaN cells where the registry
// says the model takes missing cells (tabpfn's missing_cells), and the columns a table's
// encoding declares categorical (tabpfn, tabfm), checked by validateData.
import assert from "node:assert/strict";
import { test } from "node:test";
import { validateData } from "../src/index.js";

const data = (over) => ({ xTrain: [1, NaN, 3, 4], yTrain: [0, 1], xTest: [5, 6], nFeatures: 2,
  task: "binary", ...over });

test("NaN cells pass only when allowed; infinities never", () => {
  assert.throws(() => validateData(data()), { message: "data.xTrain has a non-finite value NaN at row 0, column 1" });
  const d = validateData(data(), { allowNan: true });
  assert.ok(Number.isNaN(d.xTrain[1]));
  assert.throws(() => validateData(data({ xTest: [Infinity, 1] }), { allowNan: true }), {
    message: "data.xTest has an infinite value Infinity at row 0, column 0 (NaN is allowed: the model takes missing cells)" });
});

test("categoricalIndices are kept when given and checked", () => {
  const ok = { xTrain: [1, 2, 3, 4], yTrain: [0, 1], xTest: [5, 6], nFeatures: 2, task: "binary" };
  assert.equal(validateData(ok).categoricalIndices, undefined);
  assert.deepEqual(validateData({ ...ok, categoricalIndices: [1] }).categoricalIndices, [1]);
  assert.deepEqual(validateData({ ...ok, categoricalIndices: [] }).categoricalIndices, []);
  for (const bad of [[2], [1, 0], [0, 0], ["0"], 1]) {
    assert.throws(() => validateData({ ...ok, categoricalIndices: bad }),
      /data.categoricalIndices must be ascending distinct column indices 0..1/);
  }
});
