// What the loader sees, as text: the JavaScript twin of datasets/table.py `describe`
// (`arenalite describe`), line for line, given the table and the splits made for it.

import { formatGeneral, padRight, repr, reprList, thousands } from "../py_repr.js";

export const HOLDOUT_TEST_ROWS = 250000;
export const HOLDOUT_SEED = 42;
export const HOLDOUT_MIN_ROWS = 1000000;

function ruleOf(table, persisted) {
  const rules = {
    iid: table.classes ? "IID 3-fold, stratified" : "IID 3-fold",
    holdout: `one ${thousands(HOLDOUT_TEST_ROWS)}-row holdout (seed ${HOLDOUT_SEED}), from ` +
      `${thousands(HOLDOUT_MIN_ROWS)} rows`,
    grouped: `grouped 3-fold by ${repr(table.groupColumn)}`,
    temporal: `temporal, expanding window on ${repr(table.timeColumn)}`,
  };
  return rules[persisted.kind] ?? persisted.kind;
}

/** `arenalite describe`'s text for `table` (table.js) and its splits (make_splits.js). */
export function describeTable(table, persisted) {
  const names = table.features.map((f) => f.name);
  const lines = [`table ${repr(table.name)}: ${table.nRows} rows, ${names.length} feature ` +
    `column(s), target ${repr(table.target)}, task ${table.task}`];
  if (table.classes) {
    const counts = new Array(table.classes.length).fill(0);
    for (const c of table.y) counts[c]++;
    lines.push("classes: " + table.classes.map((c, i) =>
      `${i} = ${repr(c, table.classesAreInt)} (${counts[i]} rows)`).join(", "));
  } else {
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of table.y) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    lines.push(`target range: ${formatGeneral(lo, 6)} … ${formatGeneral(hi, 6)}`);
  }
  const width = Math.max(...names.map((c) => [...c].length));
  lines.push("columns:");
  for (const c of names) {
    lines.push(`  ${padRight(c, width)}  ${padRight(table.kinds[c], 11)}  missing ${table.missing[c]}`);
  }
  lines.push(`excluded columns: ${table.excludedColumns.length ? reprList(table.excludedColumns) : "none"}`);
  lines.push(`splits: ${ruleOf(table, persisted)}: ${persisted.n_repeats} repeat(s) × ` +
    `${persisted.n_folds} fold(s) = ${persisted.splits.length} splits`);
  return lines.join("\n");
}
