// The row-order warning: Spearman rho of row position and the target (`row_order_correlation`)
// and the RowOrderWarning's text when the table looks sorted by it (`_warn_row_order`).
import { pairwiseSum } from "../numpy_sum.js";
import { formatFixed, formatGeneral } from "../py_repr.js";
import { column, yShow } from "./inputs.js";
import { ROW_ORDER_MIN_RHO, ROW_ORDER_MIN_ROWS, ROW_ORDER_Z, TASKS, TASKS_REPR } from "./protocol.js";
import { pyRepr } from "./py_values.js";
import { uniqueCodes } from "./unique.js";

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** `row_order_correlation`: Spearman rho of row position and the target, and its class. */
export function rowOrderCorrelation(y, task) {
  if (!TASKS.includes(task)) throw new Error(`task must be one of ${TASKS_REPR}, got ${pyRepr(task)}`);
  const arr = column(y, "y", y?.length ?? 0);
  const n = arr.length;
  const centred = new Float64Array(n);
  for (let i = 0; i < n; i++) centred[i] = i - (n - 1) / 2;
  const { values, codes, counts } = uniqueCodes(arr);
  if (values.length < 2) return [0.0, null];
  if (task === "regression") {
    const rankOf = new Float64Array(values.length);
    let cum = 0;
    for (let c = 0; c < values.length; c++) {
      cum += counts[c];
      rankOf[c] = cum - (counts[c] + 1) / 2;
    }
    const ranks = Float64Array.from(codes, (c) => rankOf[c]);
    const mean = pairwiseSum(ranks) / n;
    for (let i = 0; i < n; i++) ranks[i] -= mean;
    return [dot(centred, ranks) / Math.sqrt(dot(centred, centred) * dot(ranks, ranks)), null];
  }
  const offset = new Float64Array(values.length);
  for (let i = 0; i < n; i++) offset[codes[i]] += centred[i];
  let best = -1;
  let bestRho = 0;
  for (let c = 0; c < values.length; c++) {
    const share = counts[c] / n;
    const rho = share * (offset[c] / counts[c]) / Math.sqrt(share * (1 - share) * (n * n - 1) / 12);
    if (best < 0 || Math.abs(rho) > Math.abs(bestRho)) [best, bestRho] = [c, rho];
  }
  return [bestRho, values[best]];
}

/** `_warn_row_order`: the warning's text when |rho| passes both bounds, else null. */
export function rowOrderWarning(y, task, kind, name) {
  const n = y.length;
  if (n < ROW_ORDER_MIN_ROWS) return null;
  const [rho, label] = rowOrderCorrelation(y, task);
  const bound = Math.max(ROW_ORDER_MIN_RHO, ROW_ORDER_Z / Math.sqrt(n - 1));
  if (!(Math.abs(rho) > bound)) return null;
  let what;
  if (label === null && typeof y[0] !== "number") {
    what = `${name} follows the row order (Spearman rho=${formatFixed(rho, 2, true)})`;
  } else if (label === null) {
    const half = Math.floor(n / 2);
    const v = Float64Array.from(y);
    const mean = (lo, len) => formatGeneral(pairwiseSum(v, lo, len) / len, 4);
    what = `${name} follows the row order (Spearman rho=${formatFixed(rho, 2, true)}: mean ` +
      `${mean(0, half)} in rows 0..${half - 1}, ${mean(half, n - half)} in rows ${half}..${n - 1})`;
  } else {
    let sum = 0;
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (y[i] === label) {
        sum += i;
        count++;
      }
    }
    what = `${name} follows the row order (Spearman rho=${formatFixed(rho, 2, true)} for class ` +
      `${yShow(task)(label)}, whose rows average row ${formatFixed(sum / count, 1)} of 0..${n - 1})`;
  }
  return `row order leaks the target: ${what}; |rho| > ${formatFixed(bound, 2)} over ${n} rows, so ` +
    `the table looks sorted, not shuffled. The ${kind} split draws rows at random and stays valid, ` +
    "but sorted rows often mean time or collection order: if so, give the time column (time=, " +
    "time_column=, --time-column: temporal folds) or the entity column (groups=, group_column=, " +
    "--group-column).";
}
