// Temporal splits: an expanding window over time-ordered blocks, less the training rows
// within `gap` of each test block (`_temporal`), checked as `_check_time` checks them.
import { split } from "./folds.js";
import { checkedGap } from "./gap.js";
import { searchLeft, stableArgsort } from "./numpy_sort.js";
import { N_FOLDS } from "./protocol.js";
import { showTime, strTime, timeValues } from "./time_column.js";

/** The rows whose sorted position (`position`: row → position) is in [from, to), ascending. */
function rowsAt(position, from, to) {
  const out = new Int32Array(Math.max(0, to - from));
  let k = 0;
  for (let row = 0; row < position.length; row++) {
    const p = position[row];
    if (p >= from && p < to) out[k++] = row;
  }
  return Array.from(out);
}

/** The block bounds of `_temporal`: cuts at k n / (nFolds+1), each moved back to its run's start. */
function temporalBounds(sorted, nFolds) {
  const n = sorted.length;
  const bounds = [0];
  for (let k = 1; k <= nFolds; k++) bounds.push(searchLeft(sorted, sorted[Math.floor(k * n / (nFolds + 1))]));
  bounds.push(n);
  if (bounds.some((b, k) => k > 0 && b - bounds[k - 1] <= 0)) {
    let distinct = n ? 1 : 0;
    for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) distinct++;
    throw new Error(`time has too few distinct values (${distinct}) to cut ${n} rows into ` +
      `${nFolds + 1} ordered blocks`);
  }
  return bounds;
}

/** `_temporal`: an expanding window over time-ordered blocks, less the rows within `gap`. */
function temporal(time, nFolds, gap, name) {
  const t = time.values;
  const order = stableArgsort(t);
  const sorted = new Float64Array(t.length);
  const position = new Int32Array(t.length);
  for (let p = 0; p < t.length; p++) {
    sorted[p] = t[order[p]];
    position[order[p]] = p;
  }
  const bounds = temporalBounds(sorted, nFolds);
  const splits = [];
  for (let k = 0; k < nFolds; k++) {
    let nTrain = bounds[k + 1];
    if (gap !== null) {
      const start = sorted[nTrain];
      if (!(start - sorted[0] > gap.value)) {
        throw new Error(`gap=${gap.shown} leaves fold ${k} no training rows: its test block starts ` +
          `at row ${order[nTrain]} (${name} ${showTime(time, start)}) and no row is more than the ` +
          "gap before it");
      }
      nTrain = searchLeft(sorted.subarray(0, nTrain), start - gap.value);
    }
    splits.push(split(0, k, rowsAt(position, 0, nTrain), rowsAt(position, bounds[k + 1], bounds[k + 2])));
  }
  return splits;
}

/** `_check_time`: the latest training time is before the earliest test time, by more than gap. */
function checkTime(time, where, train, test, gap) {
  const t = time.values;
  if (!train.length) throw new Error("zero-size array to reduction operation maximum which has no identity");
  let row = train[0];
  for (const i of train) if (t[i] > t[row]) row = i;
  let earliest = Infinity;
  for (const i of test) if (t[i] < earliest) earliest = t[i];
  const latest = t[row];
  if (gap === null && !(latest < earliest)) {
    throw new Error(`${where}: training row ${row} at time ${strTime(time, latest)} is not before ` +
      `the earliest test time ${strTime(time, earliest)}`);
  }
  if (gap !== null && !(earliest - latest > gap.value)) {
    throw new Error(`${where}: training row ${row} at time ${strTime(time, latest)} is not more than ` +
      `gap=${gap.shown} before the earliest test time ${strTime(time, earliest)}`);
  }
}

/** The temporal split that make_splits makes for `o` (time given, no kind). */
export function temporalSplits(o) {
  if (o.nRepeats !== null && o.nRepeats !== 1) {
    throw new Error(`temporal splits have exactly one repeat, got n_repeats=${o.nRepeats}`);
  }
  const time = timeValues(o.time, o.nRows, o.timeKind);
  const gap = checkedGap(o.gap, time);
  const splits = temporal(time, N_FOLDS, gap, o.timeColumn || "time");
  for (const entry of splits) checkTime(time, `make_splits: split '${entry.id}'`, entry.train, entry.test, gap);
  return { kind: "temporal", seed: null, repeats: 1, folds: N_FOLDS, splits };
}
