// The shared RMSNorm and SwiGLU operators (src/operators.js, kernels/rms_norm.wgsl and
// swiglu.wgsl) on dawn.node under Vulkan SwiftShader (a child process, as gpu_node.test.js:
// the loader reads VK_ICD_FILENAMES / LD_LIBRARY_PATH at start-up), against float64
// references computed here: RMSNorm over a model width with a weight into an offset, over
// head-dim rows in place (the q/k norms), without a weight, over one wide row, added onto a
// residual stream; SwiGLU with
// separate operands, with both halves of one product and a strided output, and past exp's
// range.
import assert from "node:assert/strict";
import { reportTest } from "./swiftshader.js";

const gpuTest = reportTest("tabfm_gpu_ops_run.mjs", { timeout: 300000 });

/** RMSNorm in float64: x / sqrt(mean(x²) + eps) · g per row of D. */
function rmsNorm64(x, xOff, rows, D, g, eps = 1e-6) {
  const out = new Float64Array(rows * D);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let d = 0; d < D; d++) s += x[xOff + r * D + d] ** 2;
    const inv = 1 / Math.sqrt(s / D + eps);
    for (let d = 0; d < D; d++) out[r * D + d] = x[xOff + r * D + d] * inv * (g ? g[d] : 1);
  }
  return out;
}

/** Largest |got - ref| / max(1, |ref|) (relative past 1, absolute below). */
function maxError(got, ref) {
  assert.equal(got.length, ref.length);
  let m = 0;
  for (let i = 0; i < ref.length; i++) m = Math.max(m, Math.abs(got[i] - ref[i]) / Math.max(1, Math.abs(ref[i])));
  return m;
}

gpuTest("RMSNorm: weighted into an offset, head-dim rows in place, no weight, one wide row, onto a residual", (r) => {
  const cases = r.cases.filter((c) => c.kind === "rmsNorm");
  assert.deepEqual(cases.map((c) => c.name), ["width_weight", "head_dim_in_place", "no_weight", "wide_row", "accumulate"]);
  for (const c of cases) {
    const ref = rmsNorm64(c.x, c.xOff, c.rows, c.D, c.g).map((v, i) => v + (c.base ? c.base[i] : 0));
    const err = maxError(c.got, ref);
    console.log(`rmsNorm ${c.name} (${c.rows} rows of ${c.D}): max error ${err.toExponential(2)}`);
    assert.ok(err < 2e-6, `${c.name}: ${err}`);
  }
});

gpuTest("SwiGLU: separate operands, one packed product with a strided output, past exp's range", (r) => {
  const cases = r.cases.filter((c) => c.kind === "swiglu");
  assert.deepEqual(cases.map((c) => c.name), ["separate", "packed_strided", "extreme"]);
  for (const c of cases) {
    const ref = c.gate.map((g, i) => (g / (1 + Math.exp(-g))) * c.up[i]);
    const err = maxError(c.got, ref);
    console.log(`swiglu ${c.name} (${c.gate.length} values): max error ${err.toExponential(2)}`);
    assert.ok(err < 2e-6, `${c.name}: ${err}`);
  }
  const extreme = cases[2];
  extreme.got.forEach((v) => assert.ok(Number.isFinite(v), `not finite: ${extreme.got}`));
});
