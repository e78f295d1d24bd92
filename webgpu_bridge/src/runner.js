// The browser runner: every model on every persisted split of a dataset, returning rows
// of the results table (runner "webgpu", device = the adapter description).
import { parseSplits } from "./splits.js";
import { taskScore } from "./metrics.js";
import { resultRow } from "./results.js";
import { modelLabel } from "./models.js";
import { checkFeatures, encodeFeatures, modelEncoding } from "./encoding.js";

/**
 * Features of a dataset as a row-major Float32Array, leaving out the split file's
 * excluded (leakage) columns. `dataset` is {name, task, y, nClasses?} plus either
 * `columns` ({name: typed array}) or `x` (row-major: an array of numbers, cast to float32,
 * or a Float32Array, used without a copy) with `nFeatures` [and `featureNames`].
 */
export function datasetMatrix(dataset, excluded = []) {
  const y = dataset.y;
  if (!y || typeof y.length !== "number") throw new TypeError(`dataset '${dataset.name}' has no y`);
  const nRows = y.length;
  let names;
  let cols;
  if (dataset.columns) {
    names = Object.keys(dataset.columns).filter((c) => !excluded.includes(c));
    cols = names.map((c) => dataset.columns[c]);
    cols.forEach((col, j) => {
      if (col.length !== nRows) {
        throw new RangeError(`dataset '${dataset.name}': column '${names[j]}' has ${col.length} ` +
          `values, y has ${nRows}`);
      }
    });
  } else if (dataset.x) {
    const F = dataset.nFeatures;
    if (!Number.isInteger(F) || dataset.x.length !== nRows * F) {
      throw new RangeError(`dataset '${dataset.name}': x has ${dataset.x.length} values, ` +
        `expected ${nRows} rows x nFeatures = ${F}`);
    }
    const all = dataset.featureNames ?? null;
    const drop = all ? excluded.filter((c) => all.includes(c)) : [];
    if (!all && excluded.length) {
      throw new Error(`dataset '${dataset.name}': the splits exclude ${excluded.join(", ")} ` +
        "but the dataset has no featureNames to find them");
    }
    // A Float32Array (arenalite.browser's typed payload, from Pyodide) is used as it is.
    const x = dataset.x instanceof Float32Array ? dataset.x : Float32Array.from(dataset.x);
    if (!drop.length) return { x, F, nRows };
    names = all.filter((c) => !drop.includes(c));
    cols = names.map((c) => {
      const j = all.indexOf(c);
      return Float32Array.from({ length: nRows }, (_, i) => dataset.x[i * F + j]);
    });
  } else {
    throw new TypeError(`dataset '${dataset.name}' needs 'columns' or 'x'`);
  }
  const F = cols.length;
  const x = new Float32Array(nRows * F);
  for (let j = 0; j < F; j++) for (let i = 0; i < nRows; i++) x[i * F + j] = cols[j][i];
  return { x, F, nRows };
}

function gather(x, F, rows) {
  const out = new Float32Array(rows.length * F);
  rows.forEach((r, i) => out.set(x.subarray(r * F, (r + 1) * F), i * F));
  return out;
}

/**
 * A table's typed columns (`dataset.features`, the format of encoding.js) checked against
 * its rows, leaving out the split file's excluded (leakage) columns.
 */
export function datasetFeatures(dataset, excluded = []) {
  const y = dataset.y;
  if (!y || typeof y.length !== "number") throw new TypeError(`dataset '${dataset.name}' has no y`);
  if (!Array.isArray(dataset.features)) {
    throw new TypeError(`dataset '${dataset.name}': features must be an array of columns`);
  }
  const kept = dataset.features.filter((f) => !excluded.includes(f?.name));
  if (!kept.length) throw new RangeError(`dataset '${dataset.name}': the splits exclude every feature column`);
  return checkFeatures(kept, y.length, `dataset '${dataset.name}'`);
}

/**
 * The split's {xTrain, xTest, nFeatures[, categoricalIndices]} for `model`: a table's
 * columns encoded as the model's registry entry says (float64, fitted on the split's train
 * rows; the columns its encoding declares categorical, tabpfn and tabfm), else the rows of
 * the float32 matrix.
 */
function splitFeatures(matrix, model, split) {
  if (matrix.features) {
    const { xTrain, xTest, nFeatures, categoricalIndices } = encodeFeatures(modelEncoding(model.name),
      matrix.features, split.train, split.test);
    return { xTrain, xTest, nFeatures, ...(categoricalIndices ? { categoricalIndices } : {}) };
  }
  const { x, F } = matrix;
  return { xTrain: gather(x, F, split.train), xTest: gather(x, F, split.test), nFeatures: F };
}

/**
 * Run every model on every split; resolves to result rows (RESULT_COLUMNS keys).
 * `dataset` is {name, task, y, nClasses?} with `features` (a table's typed columns, encoded
 * per split and model: encoding.js) or the float matrix of datasetMatrix (`columns` or `x`).
 * Each model gets one warm-up pass on the first split first (recorded in bridge.warmups,
 * not in the rows). options.onProgress(done, total) is called after each split, and
 * options.onTimings(row, timings) with the split's full stage timings (per layer; the row
 * keeps their sum and, in layer_times_ms, each), and options.onMember(split, done, members)
 * after each ensemble member of a timed split (tabicl; `split` counts the splits done before).
 */
export async function runSplits(bridge, dataset, splits, models, { onProgress, onTimings, onMember, warmup = true } = {}) {
  const { task, name } = dataset;
  const sp = parseSplits(splits, { nRows: dataset.y?.length, task, dataset: name });
  const excluded = sp.excluded_columns ?? [];
  // a table's typed columns are encoded per split and model; a float matrix is used as it is
  const matrix = dataset.features ? { features: datasetFeatures(dataset, excluded) }
    : datasetMatrix(dataset, excluded);
  const y = Float64Array.from(dataset.y);
  const C = task === "regression" ? 0 : (dataset.nClasses ?? y.reduce((a, b) => Math.max(a, b), 0) + 1);
  const labels = models.map(modelLabel);
  const dup = labels.filter((l, i) => labels.indexOf(l) !== i);
  if (dup.length) throw new Error(`models have duplicate labels ${dup.join(", ")}; give them distinct 'label' keys`);
  const rows = [];
  const total = models.length * sp.splits.length;
  for (const [mi, model] of models.entries()) {
    let first = warmup;
    for (const split of sp.splits) {
      const data = {
        ...splitFeatures(matrix, model, split), yTrain: Float32Array.from(split.train, (i) => y[i]),
        task, nClasses: C || undefined,
      };
      const done = rows.length;
      const { output, timings } = await bridge.predict(model, data, { warmup: first,
        onMember: onMember && ((k, n) => onMember(done, k, n)) });
      first = false;
      const yTest = Float64Array.from(split.test, (i) => y[i]);
      rows.push(resultRow({
        model: labels[mi], dataset: name, task,
        scored: taskScore(task, yTest, output, C), split, nFolds: sp.n_folds,
        device: bridge.adapterInfo.description, timings,
      }));
      onTimings?.(rows.at(-1), timings);
      onProgress?.(rows.length, total);
    }
  }
  return rows;
}
