// The persisted split JSON of arenalite.splits (schema "arenalite.splits", version 1),
// consumed unchanged: parsed and checked, never regenerated. `kind` tells the splits
// apart: "iid", "holdout", "grouped", "temporal" (SPEC §6) and the gate protocol's
// "kfold" (repeated k-fold) and "random" (repeated random splits with `test_fraction`).

export const SPLIT_KINDS = ["iid", "holdout", "grouped", "temporal", "kfold", "random"];
// kinds whose test folds hold every row exactly once per repeat
const PARTITION_KINDS = ["iid", "grouped", "kfold"];

/** Test rows of a "random" split, as arenalite.splits.random_test_rows computes them. */
export function randomTestRows(nRows, testFraction) {
  return Math.floor(testFraction * nRows + 0.5);
}

function checkFit(s, { nRows, task, dataset }) {
  if (nRows !== undefined && s.n_rows !== nRows) {
    throw new Error(`splits for ${s.n_rows} rows do not fit dataset '${dataset ?? s.dataset}' ` +
      `with ${nRows} rows`);
  }
  if (task !== undefined && s.task !== task) {
    throw new Error(`splits are for task '${s.task}' but the dataset's task is '${task}'`);
  }
  if (dataset != null && s.dataset != null && s.dataset !== dataset) {
    throw new Error(`splits are for dataset '${s.dataset}', not '${dataset}'`);
  }
}

function checkKind(s) {
  if (!SPLIT_KINDS.includes(s.kind)) {
    throw new Error(`splits.kind must be one of ${SPLIT_KINDS.join(", ")}, got ${JSON.stringify(s.kind)}`);
  }
  for (const key of ["n_repeats", "n_folds"]) {
    if (!Number.isInteger(s[key]) || s[key] < 1) {
      throw new Error(`splits.${key} must be a positive integer, got ${JSON.stringify(s[key])}`);
    }
  }
  if (s.kind === "kfold" && s.n_folds < 2) {
    throw new Error(`splits.n_folds of a kfold split must be at least 2, got ${s.n_folds}`);
  }
  if (s.kind !== "random") {
    if ("test_fraction" in s) throw new Error(`splits.test_fraction is only for kind 'random', not '${s.kind}'`);
    return;
  }
  if (s.n_folds !== 1) throw new Error(`splits.n_folds of a random split must be 1, got ${s.n_folds}`);
  const f = s.test_fraction;
  if (typeof f !== "number" || !(f > 0 && f < 1)) {
    throw new Error(`splits.test_fraction must be a number strictly between 0 and 1, got ${JSON.stringify(f)}`);
  }
  const t = randomTestRows(s.n_rows, f);
  if (t < 1 || t >= s.n_rows) {
    throw new Error(`splits.test_fraction=${f} puts ${t} of ${s.n_rows} rows in the test part`);
  }
}

function checkIndices(s, sp) {
  const inTrain = new Uint8Array(s.n_rows);
  for (const part of ["train", "test"]) {
    const idx = sp[part];
    if (!Array.isArray(idx) || idx.length === 0) {
      throw new Error(`split '${sp.id}': ${part} must be a non-empty list of row indices`);
    }
    for (const i of idx) {
      if (!Number.isInteger(i) || i < 0 || i >= s.n_rows) {
        throw new Error(`split '${sp.id}': ${part} index ${i} is not a row number in ` +
          `[0, ${s.n_rows})`);
      }
      if (part === "train") inTrain[i] = 1;
      else if (inTrain[i]) throw new Error(`split '${sp.id}': row ${i} is in both train and test`);
    }
  }
}

function checkEntry(s, sp, seen) {
  if (typeof sp.id !== "string" || seen.has(sp.id)) {
    throw new Error(`split id ${JSON.stringify(sp.id)} is missing or duplicated`);
  }
  seen.add(sp.id);
  for (const [key, count] of [["repeat", s.n_repeats], ["fold", s.n_folds]]) {
    if (!Number.isInteger(sp[key]) || sp[key] < 0) {
      throw new Error(`split '${sp.id}': ${key} must be a non-negative integer, got ${sp[key]}`);
    }
    if (sp[key] >= count) {
      throw new Error(`split '${sp.id}': ${key} ${sp[key]} is not below splits.n_${key}s = ${count}`);
    }
  }
  if (sp.id !== `r${sp.repeat}-f${sp.fold}`) {
    throw new Error(`split '${sp.id}': id must be 'r${sp.repeat}-f${sp.fold}'`);
  }
  checkIndices(s, sp);
  const used = sp.train.length + sp.test.length;
  if (s.kind !== "temporal" && used !== s.n_rows) {
    throw new Error(`split '${sp.id}': train and test together hold ${used} rows, expected all ` +
      `${s.n_rows} for a ${s.kind} split`);
  }
  if (s.kind === "random" && sp.test.length !== randomTestRows(s.n_rows, s.test_fraction)) {
    throw new Error(`split '${sp.id}': test holds ${sp.test.length} rows, but splits.test_fraction=` +
      `${s.test_fraction} of ${s.n_rows} rows gives ${randomTestRows(s.n_rows, s.test_fraction)}`);
  }
}

function checkPartitions(s) {
  for (let r = 0; r < s.n_repeats; r++) {
    const count = new Uint32Array(s.n_rows);
    for (const sp of s.splits) if (sp.repeat === r) for (const i of sp.test) count[i]++;
    const row = count.findIndex((c) => c !== 1);
    if (row >= 0) {
      throw new Error(`repeat ${r} puts row ${row} in ${count[row]} test folds ` +
        "(each row must be tested exactly once per repeat)");
    }
  }
}

/** Parse (if a string) and check a persisted split object; returns it unchanged. */
export function parseSplits(splits, { nRows, task, dataset } = {}) {
  const s = typeof splits === "string" ? JSON.parse(splits) : splits;
  if (!s || typeof s !== "object") throw new TypeError("splits must be the split JSON object");
  if (s.schema !== "arenalite.splits") {
    throw new Error(`splits.schema must be 'arenalite.splits', got ${JSON.stringify(s.schema)}`);
  }
  if (s.version !== 1) throw new Error(`unsupported splits version ${s.version} (expected 1)`);
  if (!Number.isInteger(s.n_rows) || s.n_rows < 1) {
    throw new Error(`splits.n_rows must be a positive integer, got ${s.n_rows}`);
  }
  checkFit(s, { nRows, task, dataset });
  checkKind(s);
  if (!Array.isArray(s.splits) || s.splits.length === 0) {
    throw new Error("splits.splits must be a non-empty list");
  }
  if (s.splits.length !== s.n_repeats * s.n_folds) {
    throw new Error(`splits.splits must hold n_repeats × n_folds = ${s.n_repeats * s.n_folds} ` +
      `entries, got ${s.splits.length}`);
  }
  const seen = new Set();
  for (const sp of s.splits) checkEntry(s, sp, seen);
  if (PARTITION_KINDS.includes(s.kind)) checkPartitions(s);
  return s;
}
