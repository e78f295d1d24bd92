// Grouped splits (no entity in both train and test): groups permuted and cut by rows
// (`_grouped`), or with group_labels='per_group' stratified by each group's one target.
import { reprString } from "../py_repr.js";
import { defaultRng } from "../numpy_random.js";
import { foldLists, iidFolds } from "./folds.js";
import { column, groupShow, yShow } from "./inputs.js";
import { IID_SEED, N_FOLDS, effectiveTrainingRows, nRepeatsFor } from "./protocol.js";
import { uniqueCodes } from "./unique.js";

/** `_group_codes`: codes of the sorted distinct group ids, at least nFolds of them. */
function groupCodes(groups, nFolds) {
  const unique = uniqueCodes(groups);
  if (unique.values.length < nFolds) {
    throw new Error(`groups must hold at least ${nFolds} distinct ids, got ${unique.values.length}`);
  }
  return unique;
}

/** `_grouped`: permuted groups in cumulative row order, cut into nFolds row parts. */
function grouped({ codes, counts }, nRepeats, nFolds) {
  const nRows = codes.length;
  const nGroups = counts.length;
  const rng = defaultRng(IID_SEED);
  const splits = [];
  const groupFold = new Int32Array(nGroups);
  for (let r = 0; r < nRepeats; r++) {
    const perm = rng.permutation(nGroups);
    let start = 0;
    for (let p = 0; p < nGroups; p++) {
      groupFold[perm[p]] = Math.floor(start * nFolds / nRows);
      start += counts[perm[p]];
    }
    splits.push(...foldLists(codes.map((g) => groupFold[g]), nFolds, r));
  }
  return splits;
}

/** `_per_group_codes`: each group's target code; refused when a group has two targets. */
function perGroupCodes(groups, unique, y, task, name, target) {
  const { codes } = unique;
  const yCodes = uniqueCodes(y).codes;
  const first = new Int32Array(unique.values.length).fill(-1);
  for (let i = 0; i < codes.length; i++) if (first[codes[i]] < 0) first[codes[i]] = i;
  for (let row = 0; row < codes.length; row++) {
    const other = first[codes[row]];
    if (yCodes[row] === yCodes[other]) continue;
    const show = yShow(task);
    throw new Error(`group_labels='per_group' needs one target value per group, but group ` +
      `${groupShow(groups)(groups[row])} (column ${reprString(name)}) has ${target} = ` +
      `${show(y[other])} at row ${other} but ${show(y[row])} at row ${row}; use ` +
      "group_labels='per_sample'");
  }
  return first.map((row) => yCodes[row]);
}

function groupedPerGroup(codes, nGroups, classes, nRepeats, nFolds) {
  return iidFolds(nGroups, classes, nRepeats, nFolds)
    .flatMap((groupFold, r) => foldLists(codes.map((g) => groupFold[g]), nFolds, r));
}

/** `_check_groups`: no group in both train and test. */
function checkGroups(groups, { codes, counts }, where, train, test) {
  const inTrain = new Uint8Array(counts.length);
  for (const i of train) inTrain[codes[i]] = 1;
  for (const row of test) {
    if (inTrain[codes[row]]) {
      throw new Error(`${where}: group ${groupShow(groups)(groups[row])} (row ${row}) is in both ` +
        "train and test");
    }
  }
}

/** The grouped split that make_splits makes for `o` (groups given, no kind). */
export function groupedSplits(o) {
  const ids = column(o.groups, "groups", o.nRows);
  const unique = groupCodes(ids, N_FOLDS);
  let repeats;
  let splits;
  if (o.groupLabels === "per_group") {
    const target = o.targetColumn === null ? "y" : `column ${reprString(o.targetColumn)}`;
    const byGroup = perGroupCodes(ids, unique, o.y, o.task, o.groupColumn || "groups", target);
    repeats = o.nRepeats ?? nRepeatsFor(effectiveTrainingRows(byGroup.length, N_FOLDS));
    splits = groupedPerGroup(unique.codes, byGroup.length, o.task !== "regression" ? byGroup : null,
      repeats, N_FOLDS);
  } else {
    repeats = o.nRepeats ?? nRepeatsFor(effectiveTrainingRows(o.nRows, N_FOLDS));
    splits = grouped(unique, repeats, N_FOLDS);
  }
  for (const entry of splits) checkGroups(ids, unique, `make_splits: split '${entry.id}'`, entry.train, entry.test);
  return { kind: "grouped", seed: IID_SEED, repeats, folds: N_FOLDS, splits };
}
