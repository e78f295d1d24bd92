// Cell embedding (pkg/arenalite/models/tabfm/cells.py, CellEmbedder) on the GPU: for a chunk
// of columns of some rows, column-major (token jj · rows + r), each cell's group of
// `feature_group_size` cells (columns j + 2^g − 1 mod d) as summed Fourier features
// (kernels/tabfm_cells.wgsl: numerical and categorical sums and their counts), then the two
// maps and their count-weighted biases as one product with the packed weight
// [in_linear | bias | in_linear_cat | bias_cat]; context rows add their target's embedding
// (a class's row of y_embedder_lookup, or the regression target's 1 → 6 → E MLP, tanh GELU).
import { groups64 } from "../operators.js";

/** cells.py's NaN cell value; ±inf become ±float32 max, as numpy's nan_to_num. */
export const NAN_CELL = -100;
const FLOAT32_MAX = 3.4028234663852886e38;

/** Cells as the model reads them: NaN → −100, ±inf → ±float32 max (cells.py's nan_to_num). */
export function cleanCells(x) {
  return Float32Array.from(x, (v) => (Number.isNaN(v) ? NAN_CELL : v === Infinity ? FLOAT32_MAX
    : v === -Infinity ? -FLOAT32_MAX : v));
}

export class CellStage {
  constructor(ops, config) {
    this.ops = ops;
    this.E = config.embed_dim;
    this.F = config.num_freq;
    this.G = config.feature_group_size;
    this.isClassifier = Boolean(config.is_classifier);
    this.maxClasses = config.max_classes;
    this.width = 4 * this.F + 2;  // floats of one token's features
    this.packed = {
      w: "cell_embedder.packed.weight",
      make: () => {
        const { E, F } = this;
        const [w, b, wc, bc] = ["in_linear.weight", "in_linear.bias", "in_linear_cat.weight", "in_linear_cat.bias"]
          .map((n) => ops.tensor(`cell_embedder.${n}`));
        const data = new Float32Array(E * this.width);
        for (let e = 0; e < E; e++) {
          const at = e * this.width;
          data.set(w.subarray(e * 2 * F, (e + 1) * 2 * F), at);
          data[at + 2 * F] = b[e];
          data.set(wc.subarray(e * 2 * F, (e + 1) * 2 * F), at + 2 * F + 1);
          data[at + 4 * F + 1] = bc[e];
        }
        return { data, rows: E };
      },
    };
  }

  /**
   * Columns j0 … j0 + cols − 1 of `rows` rows of x (rows × H, cleaned) into out
   * (cols · rows × E, column-major), through the features buffer `feat`.
   */
  embed(pass, { x, rows, H, d, j0, cols, cat, feat, out }) {
    const { ops, F, G } = this;
    ops.run(pass, "tabfm_cells", [["u32", rows], ["u32", H], ["u32", d], ["u32", j0], ["u32", cols], ["u32", F],
      ["u32", G]], { 1: x, 2: cat, 3: ops.w("cell_embedder.fourier_frequencies"),
      4: ops.w("cell_embedder.fourier_frequencies_cat"), 5: feat }, groups64(cols * rows * 2 * F));
    ops.linear(pass, { a: feat, M: cols * rows, w: this.packed.w, make: this.packed.make, out });
  }

  /** The regression target's embedding rows (N × E) into `out` (mid: N × 6 scratch); y an N-float buffer. */
  targetRows(pass, { y, N, mid, out }) {
    const p = "cell_embedder.y_embedder_lookup.layers";
    this.ops.linear(pass, { a: y, M: N, w: `${p}.0.weight`, b: `${p}.0.bias`, out: mid, act: "gelu_tanh" });
    this.ops.linear(pass, { a: mid, M: N, w: `${p}.1.weight`, b: `${p}.1.bias`, out });
  }

  /** Hidden width of the regression target's MLP. */
  get targetHidden() {
    return this.isClassifier ? 0 : this.ops.shape("cell_embedder.y_embedder_lookup.layers.0.weight")[0];
  }

  /** out (count rows of E, row t the context row t % N) += the target's embedding. */
  addTarget(pass, { out, count, N, y, rowsEmb = null }) {
    const { ops, E } = this;
    const table = this.isClassifier ? ops.w("cell_embedder.y_embedder_lookup.weight") : rowsEmb;
    ops.run(pass, "tabfm_target", [["u32", count], ["u32", N], ["u32", E], ["u32", this.isClassifier ? 1 : 2],
      ["u32", Math.max(1, this.maxClasses)]], { 1: y, 2: table, 3: out }, groups64(count * E));
  }
}
