// Pure helpers of the WebGPU timing page (page/summary.js): CSV text, summaries, split choice.
import assert from "node:assert/strict";
import { test } from "node:test";
import { csvText, firstSplits, formatNumber, meanAndSe, repeatsFor, spread, summarize } from "../page/summary.js";
import { RESULT_COLUMNS } from "../src/index.js";

const row = (over) => ({
  model: "knn", dataset: "wine", task: "multiclass", metric: "log_loss", score: 0.5, error: 0.5,
  split_id: "r0-f0", repeat: 0, fold: 0, seed: 0, n_train: 118, n_test: 60, runner: "webgpu",
  device: "google swiftshader", embed_ms: 1, layers_ms: 2, head_ms: 3, total_ms: 6, rows_per_s: 10000,
  gpu_embed_ms: 0.5, gpu_layers_ms: 1.5, gpu_head_ms: null, gpu_total_ms: 2, layer_times_ms: "0.5;1.5",
  gpu_layer_times_ms: "0.25;1.25", ...over,
});

test("csvText writes the runner's columns in order, quoting text that needs it", () => {
  const text = csvText([row({ device: 'GPU "X", rev 2', rows_per_s: Infinity, score: 1e-7 })], RESULT_COLUMNS);
  const [header, line, end] = text.split("\n");
  assert.equal(header, RESULT_COLUMNS.join(","));
  assert.equal(end, "");
  assert.match(line, /^knn,wine,multiclass,log_loss,1e-7,0\.5,r0-f0,0,0,0,118,60,webgpu,"GPU ""X"", rev 2",1,2,3,6,inf,0\.5,1\.5,,2,0\.5;1\.5,0\.25;1\.25$/);
  assert.throws(() => csvText([{ model: "knn" }], RESULT_COLUMNS), /result row 0 lacks column\(s\) dataset/);
});

test("spread and meanAndSe: median with range, mean with sqrt(var/K)", () => {
  assert.deepEqual(spread([3, 1, 2]), { median: 2, min: 1, max: 3 });
  assert.deepEqual(spread([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4 });
  const { mean, se } = meanAndSe([1, 2, 3]);
  assert.equal(mean, 2);
  assert.ok(Math.abs(se - Math.sqrt(1 / 3)) < 1e-15);
  assert.deepEqual(meanAndSe([0.7]), { mean: 0.7, se: null });
  assert.throws(() => spread([]), /at least one value/);
});

test("summarize groups by model × dataset in first-seen order with warm-ups apart", () => {
  const rows = [row({ total_ms: 6 }), row({ model: "attention" }), row({ split_id: "r0-f1", fold: 1, total_ms: 8, rows_per_s: 5 })];
  const warm = new Map([["knn\u0000wine", 42]]);
  const [knn, attention] = summarize(rows, warm);
  assert.equal(knn.model, "knn");
  assert.equal(knn.nSplits, 2);
  assert.deepEqual(knn.total, { median: 7, min: 6, max: 8 });
  assert.equal(knn.warmupMs, 42);
  assert.deepEqual(knn.gpuTotal, { median: 2, min: 2, max: 2 });
  assert.equal(summarize([row({ gpu_total_ms: null })])[0].gpuTotal, null);
  assert.equal(attention.warmupMs, null);
});

test("firstSplits keeps whole repeats, so both runners accept the file", () => {
  const file = { n_repeats: 3, n_folds: 3, splits: [0, 1, 2].flatMap((r) => [0, 1, 2].map((f) => ({ repeat: r, fold: f }))) };
  assert.equal(firstSplits(file, 3).splits.length, 3);
  assert.equal(firstSplits(file, 4).n_repeats, 2);
  assert.equal(firstSplits(file, 4).splits.length, 6);
  assert.equal(firstSplits(file, 100).splits.length, 9);
  assert.equal(repeatsFor(1, 3, 20), 1);
});

test("formatNumber: about three significant digits, thousands separators, a plain 0", () => {
  assert.equal(formatNumber(0), "0");
  assert.equal(formatNumber(0.01234), "0.012");
  assert.equal(formatNumber(1.5), "1.50");
  assert.equal(formatNumber(10.94), "10.9");
  assert.equal(formatNumber(4568.2), "4,568");
  assert.equal(formatNumber(-2.5), "-2.50");
  assert.equal(formatNumber(null), "–");
  assert.equal(formatNumber(Infinity), "∞");
});
