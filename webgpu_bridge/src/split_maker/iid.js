// Splits of rows, not groups or times: SPEC §6's iid folds and holdout by the row count, and
// the chosen kinds kfold and random (`_iid`, `_random`, `_chosen`).
import { defaultRng } from "../numpy_random.js";
import { foldLists, iidFolds, split, stratified, toArray } from "./folds.js";
import { intParam, testRows } from "./inputs.js";
import {
  HOLDOUT_MIN_ROWS, HOLDOUT_SEED, HOLDOUT_TEST_ROWS, IID_SEED, KFOLD_FOLDS, KFOLD_REPEATS, N_FOLDS,
  RANDOM_REPEATS, RANDOM_TEST_FRACTION, effectiveTrainingRows, nRepeatsFor,
} from "./protocol.js";

function iid(nRows, codes, nRepeats, nFolds) {
  return iidFolds(nRows, codes, nRepeats, nFolds).flatMap((fold, r) => foldLists(fold, nFolds, r));
}

/** `_random`: positions j with floor((j+1)T/n) > floor(jT/n) of the (stratified) permutation test. */
function random(nRows, codes, nRepeats, nTest, seed) {
  const rng = defaultRng(seed);
  const atTest = new Uint8Array(nRows);
  let acc = 0;
  for (let j = 0; j < nRows; j++) {
    acc += nTest;
    if (acc >= nRows) {
      acc -= nRows;
      atTest[j] = 1;
    }
  }
  const splits = [];
  const isTest = new Uint8Array(nRows);
  const train = new Int32Array(nRows);
  const test = new Int32Array(nRows);
  for (let r = 0; r < nRepeats; r++) {
    const order = stratified(rng.permutation(nRows), codes);
    for (let j = 0; j < nRows; j++) isTest[order[j]] = atTest[j];
    let a = 0;
    let b = 0;
    for (let i = 0; i < nRows; i++) {
      if (isTest[i]) test[b++] = i;
      else train[a++] = i;
    }
    splits.push(split(r, 0, toArray(train, a), toArray(test, b)));
  }
  return splits;
}

/** `_chosen`: [nFolds, nRepeats, splits, extra header keys] of a kfold or random split. */
function chosen(kind, nRows, codes, nRepeats, nFolds, testFraction) {
  if (kind === "kfold") {
    const folds = intParam(nFolds ?? KFOLD_FOLDS, "n_folds", 2);
    if (folds > nRows) throw new Error(`n_folds=${folds} needs at least ${folds} rows, got n_rows=${nRows}`);
    const repeats = nRepeats ?? KFOLD_REPEATS;
    return [folds, repeats, iid(nRows, codes, repeats, folds), {}];
  }
  const fraction = testFraction ?? RANDOM_TEST_FRACTION;
  const nTest = testRows(fraction, nRows, "test_fraction");
  const repeats = nRepeats ?? RANDOM_REPEATS;
  return [1, repeats, random(nRows, codes, repeats, nTest, IID_SEED), { test_fraction: fraction }];
}

/** The split of rows that make_splits makes for `o` (kind given, or none and no groups/time). */
export function rowSplits(o, codes) {
  if (o.kind !== null) {
    const [folds, repeats, splits, extra] = chosen(o.kind, o.nRows, codes, o.nRepeats, o.nFolds, o.testFraction);
    return { kind: o.kind, seed: IID_SEED, repeats, folds, splits, extra };
  }
  if (o.nRows >= HOLDOUT_MIN_ROWS) {
    if (o.nRepeats !== null && o.nRepeats !== 1) {
      throw new Error(`the holdout split has exactly one repeat, got n_repeats=${o.nRepeats}`);
    }
    const splits = random(o.nRows, codes, 1, HOLDOUT_TEST_ROWS, HOLDOUT_SEED);
    return { kind: "holdout", seed: HOLDOUT_SEED, repeats: 1, folds: 1, splits };
  }
  const repeats = o.nRepeats ?? nRepeatsFor(effectiveTrainingRows(o.nRows, N_FOLDS));
  return { kind: "iid", seed: IID_SEED, repeats, folds: N_FOLDS, splits: iid(o.nRows, codes, repeats, N_FOLDS) };
}
