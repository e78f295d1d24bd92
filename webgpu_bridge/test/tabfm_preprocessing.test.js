// Google TabFM's preprocessing and ensemble in JavaScript (src/tabfm/preprocessing.js,
// ensemble.js) against what the tabfm package itself did on the cases of
// tests/data/tabfm/wrappers/ (scripts/make_tabfm_wrapper_fixtures.py: cases.json holds each
// table, its targets and options and the wrappers' predictions; <case>.npz the
// TransformToNumerical output, the unique filter, the members' draws, the fitted pipelines'
// outputs, the model's inputs per member and the members' raw outputs): the numeric table
// and the draws exactly, the pipelines to float64 round-off, the member inputs to float32
// round-off, and the aggregation of the package's raw outputs to its predictions.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { fileURLToPath } from "node:url";

import { parseNpy } from "./npz.js";
import {
  aggregateProba, aggregateRegression, checkClasses, drawMembers, fitMembers, memberInputs, settingsFrom,
} from "../src/tabfm/ensemble.js";
import { columnKinds, numericTable, scaleTargets, uniqueFilter } from "../src/tabfm/preprocessing.js";
import { caseTable, rowsOf } from "./tabfm_cases.js";

const DIR = fileURLToPath(new URL("../../tests/data/tabfm/wrappers/", import.meta.url));
const CASES = JSON.parse(readFileSync(`${DIR}cases.json`, "utf8"));
const MAX_CLASSES = CASES.config.max_classes;

const utf32 = (bytes) => Array.from({ length: bytes.length / 4 }, (_, c) => bytes.readUInt32LE(4 * c))
  .filter(Boolean).map((cp) => String.fromCodePoint(cp)).join("");

/** Every array of an .npz file; '<U' string arrays as arrays of strings. */
function readNpz(path) {
  const buf = readFileSync(path);
  let end = buf.length - 22;
  while (buf.readUInt32LE(end) !== 0x06054b50) end--;
  let at = buf.readUInt32LE(end + 16);
  const out = new Map();
  for (let i = 0; i < buf.readUInt16LE(end + 10); i++) {
    const [method, size, nameLen] = [buf.readUInt16LE(at + 10), buf.readUInt32LE(at + 20), buf.readUInt16LE(at + 28)];
    const name = buf.toString("utf8", at + 46, at + 46 + nameLen).replace(/\.npy$/, "");
    const local = buf.readUInt32LE(at + 42);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const file = method === 8 ? inflateRawSync(buf.subarray(start, start + size)) : buf.subarray(start, start + size);
    const header = file.toString("latin1", 10, 10 + file.readUInt16LE(8));
    const text = /'descr':\s*'<U(\d+)'/.exec(header);
    if (text) {
      const width = Number(text[1]);
      const body = file.subarray(10 + file.readUInt16LE(8));
      const strings = [];
      for (let k = 0; k < body.length; k += 4 * width) strings.push(utf32(body.subarray(k, k + 4 * width)));
      out.set(name, { shape: [strings.length], data: strings });
    } else if (/'fortran_order':\s*True, /.test(header)) {  // column-major: read as C order, then transpose
      const c = parseNpy(Buffer.from(file.toString("latin1").replace(/('fortran_order':\s*)True, /, "$1False,"), "latin1"), name);
      const [rows, cols] = c.shape;
      const data = new c.data.constructor(c.data.length);
      for (let r = 0; r < rows; r++) for (let j = 0; j < cols; j++) data[r * cols + j] = c.data[j * rows + r];
      out.set(name, { ...c, data });
    } else {
      out.set(name, parseNpy(file, name));
    }
    at += 46 + nameLen + buf.readUInt16LE(at + 30) + buf.readUInt16LE(at + 32);
  }
  return out;
}

const asNumbers = (a) => Array.from(a.data, Number);

function maxDiff(a, b, relative = false) {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]) / (relative ? Math.max(1, Math.abs(b[i])) : 1);
    worst = Math.max(worst, Number.isNaN(d) ? Infinity : d);
  }
  return worst;
}

/** Un-shifted member outputs as the model returned them: out[i][..., c] = raw[i][..., (c − offset_i) mod C]. */
function shiftBack(raw, offsets) {
  const [M, R, C] = raw.shape;
  const out = new Float32Array(raw.data.length);
  for (let k = 0; k < M * R * C; k++) {
    const [i, c] = [Math.floor(k / (R * C)), k % C];
    out[k] = raw.data[k - c + ((c - offsets[i] + C) % C)];
  }
  return out;
}

const numeric = caseTable;

const figures = {};

for (const [name, spec] of Object.entries(CASES.cases)) {
  test(`case ${name}: numeric table, draws, pipelines, member inputs and aggregation as the package's`, () => {
    const z = readNpz(`${DIR}${name}.npz`);
    const table = numeric(spec);
    assert.equal(table.nCategorical, Number(z.get("n_categorical").data[0]), "n_categorical");
    assert.deepEqual(asNumbers(table.train), asNumbers(z.get("numeric_train")), "TransformToNumerical (train)");
    assert.deepEqual(asNumbers(table.test), asNumbers(z.get("numeric_test")), "TransformToNumerical (test)");

    const settings = settingsFrom(spec.options);
    const plan = fitMembers(table.train, spec.y_train, spec.task, table.nCategorical, settings,
      spec.task === "regression" ? null : MAX_CLASSES);
    assert.deepEqual(plan.features, Array.from(z.get("features_kept").data, Boolean), "unique filter");
    const patterns = z.get("patterns");
    const width = patterns.shape[1];
    assert.deepEqual(plan.patterns.map((p) => p.map(Number)),
      Array.from({ length: patterns.shape[0] }, (_, i) => Array.from(patterns.data.subarray(i * width, (i + 1) * width), Number)),
      "feature patterns");
    assert.deepEqual(plan.offsets, Array.from(z.get("offsets").data, Number), "class offsets");
    assert.deepEqual(plan.methods, z.get("methods").data, "methods");

    let pipe = 0;
    for (const method of ["none", "power"]) {
      const fit = plan.pipelines.get(method);
      if (!fit) continue;
      const inputs = memberInputs(plan, table.test);
      const rows = inputs.rows.get(method);
      pipe = Math.max(pipe, maxDiff(fit.xTrain.data, z.get(`pipeline_${method}_train`).data, true));
      const test64 = z.get(`pipeline_${method}_test`).data;
      const F = fit.xTrain.cols;
      pipe = Math.max(pipe, maxDiff(rows.subarray(plan.nTrain * F), Float32Array.from(test64), true));
    }
    assert.ok(pipe <= 1e-6, `pipelines differ by ${pipe}`);

    const inputs = memberInputs(plan, table.test);
    const xs = z.get("xs");
    const [M, R, W] = xs.shape;
    assert.equal(inputs.nMembers, M);
    assert.equal(inputs.width, W);
    let xDiff = 0;
    for (let i = 0; i < M; i++) {
      xDiff = Math.max(xDiff, maxDiff(inputs.memberX(i), xs.data.subarray(i * R * W, (i + 1) * R * W), true));
    }
    assert.ok(xDiff <= 2e-6, `member inputs differ by ${xDiff}`);
    assert.deepEqual(Array.from(inputs.yTrain), Array.from(z.get("ys").data, (v) => Math.fround(Number(v))), "targets");
    assert.deepEqual(inputs.d, Array.from(z.get("ds").data, Number), "d");
    assert.deepEqual(inputs.catMask.flat(), Array.from(z.get("cat_masks").data, Boolean), "categorical masks");

    // raw: the package's member outputs un-shifted; shifted back to what the model returned first
    const raw = z.get("raw");
    const want = z.get("output").data;
    let aggDiff;
    if (spec.task === "regression") {
      const out = aggregateRegression({ data: raw.data, shape: [...raw.shape, 1] }, plan);
      const y = spec.y_train;
      const mean = y.reduce((a, b) => a + b, 0) / y.length;
      const std = Math.sqrt(y.reduce((a, b) => a + (b - mean) ** 2, 0) / y.length);
      aggDiff = maxDiff(out, want) / std;
    } else {
      aggDiff = maxDiff(aggregateProba({ data: shiftBack(raw, plan.offsets), shape: raw.shape }, plan, settings), want);
    }
    assert.ok(aggDiff <= 1e-6, `aggregation differs by ${aggDiff}${spec.task === "regression" ? " (× std y)" : ""}`);
    figures[name] = { pipelines: pipe, inputs: xDiff, aggregation: aggDiff };
  });
}

test("figures", () => {
  console.log(JSON.stringify(figures));
});

test("refusals in Python's words", () => {
  assert.throws(() => settingsFrom({ ensemble: true }), {
    message: "tabfm option ensemble=True is not ported to arenalite (the 'ensemble' preset (TabFMClassifier.ensemble / " +
      "TabFMRegressor.ensemble)); arenalite runs the wrappers' default path, ensemble=False",
  });
  assert.throws(() => settingsFrom({ n_estimators: 0 }), { message: "tabfm option 'n_estimators' must be an integer ≥ 1, got 0" });
  assert.throws(() => settingsFrom({ norm_methods: ["robust"] }), { message: /norm_methods=\['robust'\] is not ported/ });
  assert.throws(() => settingsFrom({ nope: 1 }), { message: /^unknown tabfm option 'nope'; the wrappers' options are \['average_logits', / });
  assert.throws(() => checkClasses(11, 10), {
    message: "The number of classes (11) exceeds the maximum number of classes (10) supported by the model.",
  });
  const x = rowsOf([[1, 2], [1, 3], [1, 4]]);
  assert.throws(() => fitMembers(x, [0, 0, 0], "binary"), { message: "y_train has a single class 0; classification needs at least 2" });
  assert.throws(() => fitMembers(rowsOf([[1], [1]]), [0, 1], "binary"), {
    message: "every column of X_train holds a single value in the context rows; the package's unique-feature filter " +
      "leaves the model no feature",
  });
  assert.throws(() => fitMembers(rowsOf([[1, NaN], [2, 3]]), [0, 1], "binary"), {
    message: "X_train has a non-finite value nan in row 0, column 1; the package refuses NaN and infinity in an array",
  });
  assert.deepEqual(uniqueFilter(rowsOf([[1, 2]])), [true, true]);
  assert.deepEqual(scaleTargets([2, 2, 2]).scaled, Float64Array.from([0, 0, 0]));
  assert.equal(drawMembers(3, 2, settingsFrom({ n_estimators: 3 })).length, 3);
  const col = (dtype, categories, codes) => ({ name: "c", kind: "categorical", dtype, categories, codes: Int32Array.from(codes) });
  assert.deepEqual(columnKinds([col("object", ["1", "2"], [0, 1])], [0, 1]), ["categorical"]);
  assert.deepEqual(columnKinds([col("object", ["2021-01-01", "x"], [0, 0, 1])], [0, 1, 2]), ["datetime"]);
  assert.deepEqual(columnKinds([col("bool", [false, true], [0, 1])], [0, 1]), ["numeric"]);
  // arenalite's Table keeps text and bools as pandas `category` (no dtype given): categorical, never dates
  // (the codes are Python's: numeric_table of these two columns as pandas category gives them)
  const table = [col(undefined, ["2021-01-01", "2021-02-01"], [0, 1, 0]), col(undefined, [false, true], [1, 0, 1])];
  assert.deepEqual(columnKinds(table, [0, 1, 2]), ["categorical", "categorical"]);
  const t = numericTable(table, [0, 1, 2], [0, 1]);
  assert.deepEqual(Array.from(t.xTrain), [0, 0, -1, -1, 0, 0]);
  assert.equal(t.nCategorical, 2);
});
