// The persisted split JSON of arenalite.splits (schema "arenalite.splits", version 1),
// consumed unchanged: parsed and checked, never regenerated.

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
  if (!Array.isArray(s.splits) || s.splits.length === 0) {
    throw new Error("splits.splits must be a non-empty list");
  }
  const seen = new Set();
  for (const sp of s.splits) {
    if (typeof sp.id !== "string" || seen.has(sp.id)) {
      throw new Error(`split id ${JSON.stringify(sp.id)} is missing or duplicated`);
    }
    seen.add(sp.id);
    for (const key of ["repeat", "fold"]) {
      if (!Number.isInteger(sp[key]) || sp[key] < 0) {
        throw new Error(`split '${sp.id}': ${key} must be a non-negative integer, got ${sp[key]}`);
      }
    }
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
        else if (inTrain[i]) {
          throw new Error(`split '${sp.id}': row ${i} is in both train and test`);
        }
      }
    }
  }
  return s;
}
