// Validation and CPU preprocessing shared by the three models (docs/models.md):
// standardize with context means and population stds (float64), then cast to float32.

export const TASKS = ["binary", "multiclass", "regression"];

function asFloatArray(values, name) {
  if (values instanceof Float32Array || values instanceof Float64Array) return values;
  if (ArrayBuffer.isView(values) || Array.isArray(values)) return Float64Array.from(values);
  throw new TypeError(`data.${name} must be a Float32Array (or an array of numbers), ` +
    `got ${values === null ? "null" : typeof values}`);
}

function checkFinite(values, name, width = 1, allowNan = false) {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i]) && !(allowNan && Number.isNaN(values[i]))) {
      const where = width > 1 ? `row ${Math.floor(i / width)}, column ${i % width}` : `row ${i}`;
      throw new RangeError(`data.${name} has ${allowNan ? "an infinite" : "a non-finite"} value ` +
        `${values[i]} at ${where}${allowNan ? " (NaN is allowed: the model takes missing cells)" : ""}`);
    }
  }
}

/** `data.categoricalIndices` checked (distinct column indices < F, ascending), or undefined when absent. */
function checkCategorical(indices, F) {
  if (indices === undefined || indices === null) return undefined;
  if (!Array.isArray(indices) || indices.some((j, i) => !Number.isInteger(j) || j < 0 || j >= F ||
    (i > 0 && j <= indices[i - 1]))) {
    throw new RangeError(`data.categoricalIndices must be ascending distinct column indices 0..${F - 1}, ` +
      `got ${JSON.stringify(indices)}`);
  }
  return indices;
}

/**
 * Check the `data` argument of Bridge.predict and return it with derived sizes.
 * `allowNan`: NaN feature cells pass (a model that takes missing cells, the registry's
 * `missing_cells`); ±inf never does. `data.categoricalIndices` (optional: the columns a
 * table's encoding declares categorical, arenalite.models.encoding.encode_table) is kept.
 */
export function validateData(data, { allowNan = false } = {}) {
  if (data === null || typeof data !== "object") {
    throw new TypeError("data must be an object {xTrain, yTrain, xTest, nFeatures, task, nClasses}");
  }
  const { nFeatures: F, task } = data;
  if (!TASKS.includes(task)) {
    throw new RangeError(`data.task must be one of ${TASKS.join(", ")}, got ${JSON.stringify(task)}`);
  }
  if (!Number.isInteger(F) || F < 1) {
    throw new RangeError(`data.nFeatures must be a positive integer, got ${F}`);
  }
  const xTrain = asFloatArray(data.xTrain, "xTrain");
  const yTrain = asFloatArray(data.yTrain, "yTrain");
  const xTest = asFloatArray(data.xTest, "xTest");
  for (const [name, x] of [["xTrain", xTrain], ["xTest", xTest]]) {
    if (x.length % F !== 0) {
      throw new RangeError(`data.${name} has ${x.length} values, not a multiple of nFeatures = ${F}`);
    }
  }
  const n = xTrain.length / F;
  const m = xTest.length / F;
  if (n < 1) throw new RangeError("data.xTrain has no rows: the context must not be empty");
  if (yTrain.length !== n) {
    throw new RangeError(`data.yTrain has ${yTrain.length} values but xTrain has ${n} rows`);
  }
  checkFinite(xTrain, "xTrain", F, allowNan);
  checkFinite(xTest, "xTest", F, allowNan);
  const categoricalIndices = checkCategorical(data.categoricalIndices, F);
  checkFinite(yTrain, "yTrain");
  let C = 0;
  if (task !== "regression") {
    let ymax = 0;
    for (let i = 0; i < n; i++) {
      const y = yTrain[i];
      if (!Number.isInteger(y) || y < 0) {
        throw new RangeError(`data.yTrain must hold class indices 0..C-1, got ${y} at row ${i}`);
      }
      ymax = Math.max(ymax, y);
    }
    C = data.nClasses ?? ymax + 1;
    if (!Number.isInteger(C) || C < 2) {
      throw new RangeError(`data.nClasses must be an integer >= 2, got ${data.nClasses}`);
    }
    if (ymax >= C) {
      throw new RangeError(`data.yTrain has class ${ymax} but nClasses = ${C}`);
    }
    if (task === "binary" && C !== 2) {
      throw new RangeError(`task 'binary' needs nClasses = 2, got ${C}`);
    }
  }
  return { xTrain, yTrain, xTest, F, n, m, C, task, ...(categoricalIndices ? { categoricalIndices } : {}) };
}

/** Context column means and population stds (a std below 1e-12 becomes 1), in float64. */
export function columnStats(x, n, F) {
  const mean = new Float64Array(F);
  const std = new Float64Array(F);
  for (let i = 0; i < n; i++) for (let f = 0; f < F; f++) mean[f] += x[i * F + f];
  for (let f = 0; f < F; f++) mean[f] /= n;
  for (let i = 0; i < n; i++) {
    for (let f = 0; f < F; f++) {
      const d = x[i * F + f] - mean[f];
      std[f] += d * d;
    }
  }
  for (let f = 0; f < F; f++) {
    const s = Math.sqrt(std[f] / n);
    std[f] = s < 1e-12 ? 1 : s;
  }
  return { mean, std };
}

/**
 * Standardize rows of x (rows x F) with the given stats into float32, zero-padding each
 * row to `width` columns (the transformer's d_in; width = F for the distance models).
 */
export function standardize(x, rows, F, stats, width = F) {
  const out = new Float32Array(rows * width);
  for (let i = 0; i < rows; i++) {
    for (let f = 0; f < F; f++) {
      out[i * width + f] = (x[i * F + f] - stats.mean[f]) / stats.std[f];
    }
  }
  return out;
}

/** Mean and population std of a regression target (std below 1e-12 becomes 1). */
export function targetStats(y) {
  const n = y.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += y[i];
  mean /= n;
  let v = 0;
  for (let i = 0; i < n; i++) v += (y[i] - mean) ** 2;
  const std = Math.sqrt(v / n);
  return { mean, std: std < 1e-12 ? 1 : std };
}

/** Labels for the GPU: class indices as float32, or the standardized target. */
export function gpuLabels(y, task, tstats) {
  if (task !== "regression") return Float32Array.from(y);
  const out = new Float32Array(y.length);
  for (let i = 0; i < y.length; i++) out[i] = (y[i] - tstats.mean) / tstats.std;
  return out;
}

/** Write one query batch's GPU output into the full output: regression predictions are
 * mapped back from the standardized target (``tstats``), probabilities copied as they are. */
export function storeBatch(output, part, start, rows, width, tstats) {
  if (tstats) {
    for (let i = 0; i < rows; i++) output[start + i] = part[i] * tstats.std + tstats.mean;
  } else {
    output.set(part, start * width);
  }
}
