// TabPFN v3's cells (pkg/arenalite/models/tabpfn/cells.py) on the GPU: the NaN/inf
// indicators, the imputation and standardisation with the context rows' statistics, the
// feature groups by circular shifts, x_embed and the context rows' target embedding, one
// dispatch per chunk of columns (kernels/tabpfn_cells.wgsl). The statistics (cells.py's
// fit_scaler, float64 sums as numpy's) are fitted here on the CPU: the cells' part of the
// member's context, uploaded once.

const EPS32 = 2 ** -23;

/**
 * cells.py's fit_scaler of the context rows x (N × F, row-major): per column [impute, mean,
 * std + eps] (float32 values), the imputation mean over finite cells (0 where none), mean
 * and standard deviation (N − 1; 0 or a single row: 1) of the imputed column, in float64
 * summed row by row as numpy's axis-0 sums.
 */
export function fitScaler(x, N, F) {
  const stats = new Float32Array(3 * F);
  for (let f = 0; f < F; f++) {
    let count = 0;
    let sum = 0;
    for (let r = 0; r < N; r++) {
      const v = x[r * F + f];
      if (Number.isFinite(v)) { count++; sum += v; }
    }
    const impute = Math.fround(count > 0 ? sum / count : 0);
    const col = new Float64Array(N);
    for (let r = 0; r < N; r++) {
      const v = x[r * F + f];
      col[r] = Number.isFinite(v) ? v : impute;
    }
    let total = 0;
    for (let r = 0; r < N; r++) total += col[r];
    const mean = N ? total / N : 0;
    let squares = 0;
    for (let r = 0; r < N; r++) squares += (col[r] - mean) ** 2;
    let std = Math.fround(Math.sqrt(squares / Math.max(N - 1, 1)));
    if (std === 0 || N === 1) std = 1;
    stats[3 * f] = impute;
    stats[3 * f + 1] = Math.fround(mean);
    stats[3 * f + 2] = Math.fround(std + EPS32);
  }
  return stats;
}

/** The cell embedding's tensors and settings, read from a checkpoint's config. */
export class CellStage {
  constructor(ops, config) {
    this.ops = ops;
    this.E = config.embed_dim;
    this.G = config.feature_group_size;
    this.indicators = Boolean(config.use_nan_indicators);
    this.classification = config.max_num_classes >= 2;
  }

  /**
   * Grouped cells of columns c0 … c0 + cols − 1 of `rows` raw rows (x: their float32 bits,
   * rows × F) → x_embed into out ((c − c0) · rows + r rows of E); with `y` (the context
   * rows' targets) plus their `col_y_encoder` embedding.
   */
  embed(pass, { x, rows, F, c0, cols, stats, y = null, out }) {
    const { ops, E } = this;
    const target = y === null ? 0 : this.classification ? 1 : 2;
    const ty = target === 1 ? ops.w("col_y_encoder.embedding.weight") : target === 2 ? ops.w("col_y_encoder.weight")
      : ops.zeros;
    const tb = target === 2 ? ops.w("col_y_encoder.bias") : ops.zeros;
    ops.run(pass, "tabpfn_cells", [["u32", rows], ["u32", F], ["u32", c0], ["u32", cols], ["u32", this.G],
      ["u32", this.indicators ? 1 : 0], ["u32", E], ["u32", target]],
    { 1: x, 2: stats, 3: ops.w("x_embed.weight"), 4: ops.w("x_embed.bias"), 5: y ?? ops.zeros, 6: ty, 7: tb, 8: out },
    rows * cols * E);
  }
}
