// The tables of tests/data/tabfm/wrappers/cases.json as the bridge takes them (shared by the
// Google TabFM preprocessing and predictor tests): a DataFrame's columns as the table
// columns of src/encoding.js, and a case's numeric table (its arrays, or TransformToNumerical
// of its frame, src/tabfm/preprocessing.js).
import { numericTable } from "../src/tabfm/preprocessing.js";

/** A frame's columns (cases.json: dtype, train and test cells, null missing) as table columns with their pandas dtype. */
export function frameFeatures(frame) {
  return Object.entries(frame).map(([name, { dtype, train, test }]) => {
    const cells = [...train, ...test];
    if (["float64", "int64", "Int64"].includes(dtype)) {
      return { name, kind: "numeric", values: Float64Array.from(cells, (v) => (v === null ? NaN : v)) };
    }
    const categories = [...new Set(cells.filter((v) => v !== null))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return { name, kind: "categorical", dtype, categories,
      codes: Int32Array.from(cells, (v) => (v === null ? -1 : categories.indexOf(v))) };
  });
}

const rowsOf = (list) => ({ rows: list.length, cols: list[0].length, data: Float64Array.from(list.flat()) });

/** A case's numeric table: {train, test ({rows, cols, data}), nCategorical}. */
export function caseTable(spec) {
  if (spec.kind === "array") return { train: rowsOf(spec.x_train), test: rowsOf(spec.x_test), nCategorical: 0 };
  const n = spec.y_train.length;
  const features = frameFeatures(spec.frame);
  const first = features[0];
  const total = first.kind === "numeric" ? first.values.length : first.codes.length;
  const trainRows = Array.from({ length: n }, (_, i) => i);
  const testRows = Array.from({ length: total - n }, (_, i) => n + i);
  const t = numericTable(features, trainRows, testRows);
  return {
    train: { rows: n, cols: t.nFeatures, data: t.xTrain }, test: { rows: total - n, cols: t.nFeatures, data: t.xTest },
    nCategorical: t.nCategorical,
  };
}

export { rowsOf };
