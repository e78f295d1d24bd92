// Pure helpers of the WebGPU timing page (no DOM, no GPU; tested in Node): the results
// table as CSV text in the Python runner's columns, and per model × dataset summaries.

/** A CSV field: numbers as JavaScript prints them (inf for ±Infinity), text quoted when needed. */
function csvField(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") {
    if (Number.isNaN(value)) return "nan";
    return Number.isFinite(value) ? String(value) : (value > 0 ? "inf" : "-inf");
  }
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The results table as CSV text: a header of `columns`, then one line per row. */
export function csvText(rows, columns) {
  const lines = [columns.join(",")];
  for (const [i, row] of rows.entries()) {
    const missing = columns.filter((c) => !(c in row));
    if (missing.length) throw new Error(`result row ${i} lacks column(s) ${missing.join(", ")}`);
    lines.push(columns.map((c) => csvField(row[c])).join(","));
  }
  return lines.join("\n") + "\n";
}

/** Median, minimum and maximum of a non-empty list of numbers. */
export function spread(values) {
  if (!values.length) throw new RangeError("spread() needs at least one value");
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1] };
}

/** Mean of the scores and its standard error sqrt(var_(K−1) / K) (SPEC §6); se is null for K = 1. */
export function meanAndSe(values) {
  const K = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / K;
  if (K < 2) return { mean, se: null };
  const variance = values.reduce((a, v) => a + (v - mean) ** 2, 0) / (K - 1);
  return { mean, se: Math.sqrt(variance / K) };
}

/**
 * One summary per (model, dataset), in the order the rows first name them: the score's
 * mean and standard error over splits, each stage's ms as {median, min, max} (gpuTotal:
 * the GPU-timestamp total, null when a row has none), and the median rows/s. `warmups` maps "model\u0000dataset" to the warm-up pass in ms.
 */
export function summarize(rows, warmups = new Map()) {
  const groups = new Map();
  for (const row of rows) {
    const key = `${row.model}\u0000${row.dataset}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(row);
  }
  return [...groups.entries()].map(([key, group]) => ({
    model: group[0].model, dataset: group[0].dataset, task: group[0].task,
    metric: group[0].metric, nSplits: group.length,
    score: meanAndSe(group.map((r) => r.score)),
    embed: spread(group.map((r) => r.embed_ms)),
    layers: spread(group.map((r) => r.layers_ms)),
    head: spread(group.map((r) => r.head_ms)),
    total: spread(group.map((r) => r.total_ms)),
    gpuTotal: group.every((r) => typeof r.gpu_total_ms === "number")
      ? spread(group.map((r) => r.gpu_total_ms)) : null,
    rowsPerS: spread(group.map((r) => r.rows_per_s)).median,
    warmupMs: warmups.get(key) ?? null,
  }));
}

/** A number with about three significant digits and thousands separators. */
export function formatNumber(value) {
  if (value === null || value === undefined || Number.isNaN(value)) return "–";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "−∞";
  if (value === 0) return "0";  // an axis's origin reads 0, not 0.000
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : Math.abs(value) >= 1 ? 2 : 3;
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Whole repeats that hold at least `nSplits` splits (each has `nFolds`), at most `nRepeats`. */
export function repeatsFor(nSplits, nFolds, nRepeats) {
  return Math.min(nRepeats, Math.max(1, Math.ceil(nSplits / nFolds)));
}

/**
 * The first whole repeats of a persisted split file holding at least `nSplits` splits,
 * as a split file itself (n_repeats cut; still valid for both runners, which check that
 * every repeat's test folds cover each row once).
 */
export function firstSplits(file, nSplits) {
  const repeats = repeatsFor(nSplits, file.n_folds, file.n_repeats);
  return { ...file, n_repeats: repeats, splits: file.splits.filter((s) => s.repeat < repeats) };
}
