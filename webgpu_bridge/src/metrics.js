// Per-split scores of the results table (docs/ARCHITECTURE.md): roc_auc for binary
// (error 1 - AUC), log_loss for multiclass, rmse for regression. Computed in float64,
// the way arenalite.runner scores (docs/models.md, "Scores").

/** Probabilities clipped to [eps, 1 - eps] for the log loss, eps = float64's (as numpy's). */
const LOG_LOSS_EPS = Number.EPSILON;
/** Positive-class probabilities this close to their sorted neighbour tie in the ROC AUC. */
export const TIE_TOLERANCE = 1e-5;

/**
 * `score` with each run of sorted values whose consecutive gaps are <= `tol` replaced by
 * the run's smallest value (arenalite.runner.merge_near_ties): near-ties become ties.
 */
export function mergeNearTies(score, tol = TIE_TOLERANCE) {
  const order = Array.from(score, (_, i) => i).sort((a, b) => score[a] - score[b] || a - b);
  const out = new Float64Array(score.length);
  let start = 0;
  order.forEach((i, r) => {
    if (r > 0 && score[i] - score[order[r - 1]] > tol) start = r;
    out[i] = score[order[start]];
  });
  return out;
}

/** ROC AUC in the Mann-Whitney form, ties counted 1/2 (average ranks). */
export function rocAuc(y, score) {
  const n = y.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => score[a] - score[b]);
  let nPos = 0;
  let rankSum = 0;
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && score[order[j + 1]] === score[order[i]]) j++;
    const avgRank = (i + j) / 2 + 1;
    for (let t = i; t <= j; t++) {
      if (y[order[t]] === 1) { nPos++; rankSum += avgRank; }
    }
    i = j + 1;
  }
  const nNeg = n - nPos;
  if (nPos === 0 || nNeg === 0) {
    throw new RangeError(`ROC AUC needs both classes in the test rows (positives ${nPos}, ` +
      `negatives ${nNeg})`);
  }
  return (rankSum - (nPos * (nPos + 1)) / 2) / (nPos * nNeg);
}

/** Mean negative log-probability of the true class; probabilities clipped to [eps, 1 - eps]. */
export function logLoss(y, probs, C) {
  let s = 0;
  for (let i = 0; i < y.length; i++) {
    const p = Math.min(Math.max(probs[i * C + y[i]], LOG_LOSS_EPS), 1 - LOG_LOSS_EPS);
    s -= Math.log(p);
  }
  return s / y.length;
}

/** Root mean squared error. */
export function rmse(y, pred) {
  let s = 0;
  for (let i = 0; i < y.length; i++) s += (y[i] - pred[i]) ** 2;
  return Math.sqrt(s / y.length);
}

/** The task's metric on a model output: {metric, score, error}; binary AUC with near-ties merged. */
export function taskScore(task, y, output, C) {
  if (task === "binary") {
    const p1 = new Float64Array(y.length);
    for (let i = 0; i < y.length; i++) p1[i] = output[i * 2 + 1];
    const auc = rocAuc(y, mergeNearTies(p1));
    return { metric: "roc_auc", score: auc, error: 1 - auc };
  }
  if (task === "multiclass") {
    const ll = logLoss(y, output, C);
    return { metric: "log_loss", score: ll, error: ll };
  }
  if (task === "regression") {
    const e = rmse(y, output);
    return { metric: "rmse", score: e, error: e };
  }
  throw new RangeError(`unknown task '${task}'`);
}
