// make_splits' options: Python's defaults for what is not given, the checks of the options in
// make_splits' order (refusals word for word), and the file's excluded_columns.
import { reprFloat } from "../py_repr.js";
import { isZeroGap } from "./gap.js";
import { classCodes, column, intParam } from "./inputs.js";
import { CHOSEN_KINDS, GROUP_LABELS, N_FOLDS, TASKS, TASKS_REPR } from "./protocol.js";
import { pyRepr } from "./py_values.js";

const orNull = (v) => (v === undefined ? null : v);

/** The options of makeSplits with Python's defaults: null / undefined are None, except for
 * timeKind, leakageColumns, gap and warnRowOrder, where they mean "not given". */
export function optionsOf(options) {
  const o = { ...options };
  for (const key of ["y", "groups", "time", "dataset", "groupColumn", "timeColumn", "nRepeats", "kind",
    "nFolds", "testFraction", "groupLabels", "targetColumn"]) o[key] = orNull(o[key]);
  o.timeKind ??= "numeric";
  o.leakageColumns ??= [];
  o.gap ??= 0;
  o.warnRowOrder ??= false;
  return o;
}

/** `_check_kind`: kind is None or a chosen kind, and the options that go with it. */
function checkKind(kind, groups, time, nFolds, testFraction) {
  if (kind !== null && !CHOSEN_KINDS.includes(kind)) {
    throw new Error("kind must be None (SPEC §6's rule: iid, holdout, grouped or temporal by the " +
      `inputs), 'kfold' or 'random', got ${pyRepr(kind)}`);
  }
  if (kind !== null && (groups !== null || time !== null)) {
    throw new Error(`kind=${pyRepr(kind)} splits rows, not groups or time periods: give ` +
      "groups/time without kind, or kind without groups/time");
  }
  if (nFolds !== null && kind !== "kfold") {
    throw new Error("n_folds is chosen only with kind='kfold' (SPEC §6's rule uses " +
      `${N_FOLDS} folds), got n_folds=${pyRepr(nFolds)} with kind=${pyRepr(kind)}`);
  }
  if (testFraction !== null && kind !== "random") {
    const shown = typeof testFraction === "number" ? reprFloat(testFraction) : pyRepr(testFraction);
    throw new Error("test_fraction is chosen only with kind='random', got " +
      `test_fraction=${shown} with kind=${pyRepr(kind)}`);
  }
}

/** `_check_options`: gap, group_labels, target_column and warn_row_order. */
function checkOptions({ groups, time, y, gap, groupLabels, targetColumn, warnRowOrder }) {
  if (time === null && !isZeroGap(gap)) {
    throw new Error(`gap applies to temporal splits (give time=...), got gap=${pyRepr(gap)} ` +
      "without time");
  }
  if (groupLabels !== null && !GROUP_LABELS.includes(groupLabels)) {
    throw new Error("group_labels must be None, 'per_sample' or 'per_group', " +
      `got ${pyRepr(groupLabels)}`);
  }
  if (groupLabels !== null && groups === null) {
    throw new Error(`group_labels=${pyRepr(groupLabels)} applies to grouped splits (give ` +
      "groups=...)");
  }
  if (groupLabels === "per_group" && y === null) {
    throw new Error("group_labels='per_group' needs y, to check one target value per group and " +
      "to stratify the groups");
  }
  if (targetColumn !== null && typeof targetColumn !== "string") {
    throw new TypeError(`target_column must be a string or None, got ${pyRepr(targetColumn)}`);
  }
  if (typeof warnRowOrder !== "boolean") {
    throw new TypeError(`warn_row_order must be True or False, got ${pyRepr(warnRowOrder)}`);
  }
}

/** make_splits' checks of its options, in its order; the class codes of y (or null). */
export function checkInputs(o) {
  o.nRows = intParam(o.nRows, "n_rows", N_FOLDS);
  if (!TASKS.includes(o.task)) throw new Error(`task must be one of ${TASKS_REPR}, got ${pyRepr(o.task)}`);
  if (o.dataset !== null && typeof o.dataset !== "string") {
    throw new TypeError(`dataset must be a string or None, got ${pyRepr(o.dataset)}`);
  }
  if (o.groups !== null && o.time !== null) {
    throw new Error("give either groups (grouped folds) or time (temporal folds), not both");
  }
  checkKind(o.kind, o.groups, o.time, o.nFolds, o.testFraction);
  checkOptions(o);
  if (o.nRepeats !== null) o.nRepeats = intParam(o.nRepeats, "n_repeats", 1);
  const classification = o.task !== "regression";
  if (o.y !== null) {
    column(o.y, "y", o.nRows);
    return classification ? classCodes(o.y, o.task) : null;
  }
  if (classification && o.groups === null && o.time === null) {
    throw new Error(`y is needed to stratify the folds of a ${o.task} task`);
  }
  return null;
}

/** `_excluded_columns`: the group and time columns and the leakage columns, once each. */
export function excludedColumns(groupColumn, timeColumn, leakageColumns) {
  const out = [];
  for (const col of [groupColumn, timeColumn, ...(leakageColumns ?? [])]) {
    if (col === null || col === undefined) continue;
    if (typeof col !== "string") throw new TypeError(`excluded column names must be strings, got ${pyRepr(col)}`);
    if (!out.includes(col)) out.push(col);
  }
  return out;
}
