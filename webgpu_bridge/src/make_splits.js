// SPEC §6's split maker in JavaScript, arenalite.splits `make_splits` + `to_json` rule for rule
// (the very bytes `arenalite splits` writes, its refusals word for word): the public entry,
// assembling split_maker/ (the algorithms: pkg/arenalite/splits.py's docstring).
import { reprString } from "./py_repr.js";
import { gapValue } from "./split_maker/gap.js";
import { groupedSplits } from "./split_maker/grouped.js";
import { rowSplits } from "./split_maker/iid.js";
import { toJson } from "./split_maker/json.js";
import { checkInputs, excludedColumns, optionsOf } from "./split_maker/options.js";
import { ROW_ORDER_KINDS, SCHEMA, VERSION } from "./split_maker/protocol.js";
import { rowOrderWarning } from "./split_maker/row_order.js";
import { temporalSplits } from "./split_maker/temporal.js";

export {
  CHOSEN_KINDS, GROUP_LABELS, HOLDOUT_MIN_ROWS, HOLDOUT_SEED, HOLDOUT_TEST_ROWS, IID_SEED, KFOLD_FOLDS,
  KFOLD_REPEATS, KINDS, N_FOLDS, RANDOM_REPEATS, RANDOM_TEST_FRACTION, REPEAT_RULE, ROW_ORDER_KINDS,
  ROW_ORDER_MIN_RHO, ROW_ORDER_MIN_ROWS, ROW_ORDER_Z, SCHEMA, TASKS, VERSION, effectiveTrainingRows,
  nRepeatsFor, randomTestRows,
} from "./split_maker/protocol.js";
export { datetime64Str, datetimeRepr, pyRepr, timedeltaRepr } from "./split_maker/py_values.js";
export { gapValue, pythonFloat, timedeltaNs } from "./split_maker/gap.js";
export { uniqueCodes } from "./split_maker/unique.js";
export { rowOrderCorrelation } from "./split_maker/row_order.js";
export { pyJson, toJson } from "./split_maker/json.js";
export { formatFixed, formatGeneral } from "./py_repr.js";

/**
 * arenalite.splits.make_splits: the persisted-split object (schema version 1) for a dataset
 * of `nRows` rows, keys in the file's order, train/test as ascending Arrays of row numbers.
 *
 * makeSplits({nRows, task, y, groups, time, timeKind = "numeric", dataset, groupColumn,
 *   timeColumn, leakageColumns = [], nRepeats, kind, nFolds, testFraction, gap = 0,
 *   groupLabels, targetColumn, warnRowOrder = false, warnings})
 *
 * Inputs (camelCase of the Python keywords):
 *   y       numbers (Array or typed array): class values for classification (shown in
 *           messages as Python ints, as the table loader's int64 codes are), values for
 *           regression (shown as floats); strings also work for classification.
 *   groups  entity ids, strings, numbers or booleans (np.unique's sorted order: numbers
 *           numerically, strings by code point); numbers in a Float32/64Array are shown
 *           as floats (5.0), elsewhere integral numbers as ints.
 *   time    numbers; timeKind "datetime": milliseconds since the epoch (UTC), as
 *           datetime64[us] (pandas 3's to_datetime); "int" / "float": an int64 / float64
 *           column; "numeric" (default): int when every value is an integer.
 *   gap     a number (the time column's units), or a string as `--gap` reads it: a number
 *           ("7", "2.5") or a pandas duration ("7D", "12h", "1 days 02:00:00") for dates.
 *
 * null / undefined stand for Python's None (for timeKind, leakageColumns, gap and warnRowOrder:
 * the default). With warnRowOrder, the RowOrderWarning's text is pushed onto the `warnings`
 * array (when one is given) instead of being printed. The file does not record `gap`.
 * TypeErrors of Python are thrown as TypeError, ValueErrors as Error, with the same text.
 */
export function makeSplits(options) {
  const o = optionsOf(options);
  o.gap = gapValue(o.gap);
  const codes = checkInputs(o);
  let made;
  if (o.kind !== null) made = rowSplits(o, codes);
  else if (o.time !== null) made = temporalSplits(o);
  else if (o.groups !== null) made = groupedSplits(o);
  else made = rowSplits(o, codes);
  if (o.warnRowOrder && o.y !== null && ROW_ORDER_KINDS.includes(made.kind)) {
    const name = o.targetColumn === null ? "y" : `column ${reprString(o.targetColumn)}`;
    const warning = rowOrderWarning(o.y, o.task, made.kind, name);
    if (warning !== null && Array.isArray(o.warnings)) o.warnings.push(warning);
  }
  const excluded = excludedColumns(o.groupColumn, o.timeColumn, o.leakageColumns);
  return {
    schema: SCHEMA, version: VERSION, dataset: o.dataset, n_rows: o.nRows, task: o.task,
    kind: made.kind, seed: made.seed, n_repeats: made.repeats, n_folds: made.folds,
    ...made.extra, excluded_columns: excluded, splits: made.splits,
  };
}

/** The page's name for toJson: the text of a downloaded split file. */
export const splitsJson = toJson;
