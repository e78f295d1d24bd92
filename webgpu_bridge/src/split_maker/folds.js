// What every kind of split is built from: one split entry, the train/test lists of fold
// assignments (`_fold_lists`), and the stratified iid fold assignment (`_iid_folds`).
import { defaultRng } from "../numpy_random.js";
import { IID_SEED } from "./protocol.js";

/** The first `length` values of a typed array, as an Array. */
export function toArray(typed, length) {
  return Array.from(typed.subarray(0, length));
}

/** `_split`: one entry; train and test ascending. */
export function split(repeat, fold, train, test) {
  return { id: `r${repeat}-f${fold}`, repeat, fold, train, test };
}

/** `_fold_lists`: per fold, the rows of that fold (test) and the others (train), ascending. */
export function foldLists(fold, nFolds, repeat) {
  const n = fold.length;
  const out = [];
  const test = new Int32Array(n);
  const train = new Int32Array(n);
  for (let f = 0; f < nFolds; f++) {
    let nTest = 0;
    let nTrain = 0;
    for (let i = 0; i < n; i++) {
      if (fold[i] === f) test[nTest++] = i;
      else train[nTrain++] = i;
    }
    if (!nTest) {
      throw new Error(`fold ${f} of repeat ${repeat} has no test rows: group sizes are too uneven ` +
        `for ${nFolds} folds`);
    }
    out.push(split(repeat, f, toArray(train, nTrain), toArray(test, nTest)));
  }
  return out;
}

/** `_stratified`: `order` stably sorted by class code (a counting sort; unchanged for null). */
export function stratified(order, codes) {
  if (codes === null) return order;
  let nClasses = 0;
  for (let i = 0; i < codes.length; i++) if (codes[i] >= nClasses) nClasses = codes[i] + 1;
  const start = new Int32Array(nClasses + 1);
  for (let j = 0; j < order.length; j++) start[codes[order[j]] + 1]++;
  for (let c = 0; c < nClasses; c++) start[c + 1] += start[c];
  const out = new Int32Array(order.length);
  for (let j = 0; j < order.length; j++) {
    const row = order[j];
    out[start[codes[row]]++] = row;
  }
  return out;
}

/** `_iid_folds`: per repeat, position j of the (stratified) permutation goes to fold j % nFolds. */
export function iidFolds(n, codes, nRepeats, nFolds) {
  const rng = defaultRng(IID_SEED);
  const folds = [];
  for (let r = 0; r < nRepeats; r++) {
    const order = stratified(rng.permutation(n), codes);
    const fold = new Int32Array(n);
    for (let j = 0; j < n; j++) fold[order[j]] = j % nFolds;
    folds.push(fold);
  }
  return folds;
}
