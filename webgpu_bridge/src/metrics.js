// Per-split scores of the results table (docs/ARCHITECTURE.md): roc_auc for binary
// (error 1 - AUC), log_loss for multiclass, rmse for regression. Computed in float64.

const LOG_LOSS_EPS = 1e-15;

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

/** Mean negative log-probability of the true class; probabilities clipped to [1e-15, 1]. */
export function logLoss(y, probs, C) {
  let s = 0;
  for (let i = 0; i < y.length; i++) {
    const p = Math.min(Math.max(probs[i * C + y[i]], LOG_LOSS_EPS), 1);
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

/** The task's metric on a model output: {metric, score, error}. */
export function taskScore(task, y, output, C) {
  if (task === "binary") {
    const p1 = new Float64Array(y.length);
    for (let i = 0; i < y.length; i++) p1[i] = output[i * 2 + 1];
    const auc = rocAuc(y, p1);
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
