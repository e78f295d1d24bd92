// WGSL sources live in src/kernels/*.wgsl, one kernel per operator, shared by every model;
// each is read next to this module once, with kernels/math.wgsl (exact and tanh GELU, an
// accurate exp, a saturating tanh) in front (WGSL has no include), and cached.
import { readText } from "./io.js";

export const KERNELS = ["linear", "layer_norm", "attention", "knn", "labels", "head", "embed",
  "fm_embed", "fm_head", "rope", "copy", "tabicl_cells", "tabicl_target", "rms_norm", "swiglu",
  "tabpfn_cells", "tabpfn_decoder",
  "tabfm_cells", "tabfm_target", "tabfm_attention_wide"];

/** Outputs one workgroup of kernels/linear.wgsl computes: its dispatch is ceil(N / cols) × ceil(M / rows). */
export const LINEAR_TILE = { rows: 32, cols: 64 };

const cache = new Map();
const read = (file) => readText(new URL(`./kernels/${file}.wgsl`, import.meta.url));

/** The WGSL source of a kernel file with math.wgsl in front, read once per page/worker/process. */
export function loadKernel(name) {
  if (!KERNELS.includes(name)) throw new Error(`unknown kernel '${name}'`);
  if (!cache.has(name)) {
    cache.set(name, Promise.all([read("math"), read(name)]).then((parts) => parts.join("\n")));
  }
  return cache.get(name);
}
