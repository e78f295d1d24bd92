// SPEC §6's protocol in numbers: the file's schema, the kinds and their seeds, fold and repeat
// counts, the holdout and row-order bounds, and the rules that size repeats and test parts.

export const SCHEMA = "arenalite.splits";
export const VERSION = 1;
export const TASKS = ["binary", "multiclass", "regression"];
export const TASKS_REPR = "('binary', 'multiclass', 'regression')";
export const KINDS = ["iid", "holdout", "grouped", "temporal", "kfold", "random"];
export const CHOSEN_KINDS = ["kfold", "random"];
export const N_FOLDS = 3;
export const IID_SEED = 4267;
export const HOLDOUT_SEED = 42;
export const HOLDOUT_MIN_ROWS = 1_000_000;
export const HOLDOUT_TEST_ROWS = 250_000;
export const REPEAT_RULE = [[500, 20], [2_500, 10], [250_000, 3]];
export const KFOLD_FOLDS = 5;
export const KFOLD_REPEATS = 2;
export const RANDOM_REPEATS = 10;
export const RANDOM_TEST_FRACTION = 0.3;
export const GROUP_LABELS = ["per_sample", "per_group"];
export const ROW_ORDER_MIN_ROWS = 50;
export const ROW_ORDER_MIN_RHO = 0.15;
export const ROW_ORDER_Z = 3.29;
export const ROW_ORDER_KINDS = ["iid", "holdout", "kfold", "random"];

/** Rows in one training part of an `nFolds`-fold split: nRows*(nFolds-1)//nFolds. */
export function effectiveTrainingRows(nRows, nFolds = N_FOLDS) {
  return Math.floor(nRows * (nFolds - 1) / nFolds);
}

/** Test rows of a `random` split: floor(testFraction * nRows + 1/2). */
export function randomTestRows(nRows, testFraction) {
  return Math.floor(testFraction * nRows + 0.5);
}

/** Repeats of the 3-fold split for `nTrain` effective training rows (SPEC §6). */
export function nRepeatsFor(nTrain) {
  for (const [bound, repeats] of REPEAT_RULE) if (nTrain < bound) return repeats;
  return 1;
}
