// WGSL sources live in src/kernels/*.wgsl; they are read next to this module once and cached.
import { readText } from "./io.js";

export const KERNELS = ["matmul", "gelu_mlp", "layer_norm", "attention", "knn", "labels",
  "head", "embed", "fm_embed", "fm_head"];

/** Outputs one workgroup of kernels/matmul.wgsl computes: its dispatch is ceil(N / cols) × ceil(M / rows). */
export const MATMUL_TILE = { rows: 32, cols: 32 };

const cache = new Map();

/** The WGSL source of a kernel file, read once per page/worker/process. */
export function loadKernel(name) {
  if (!KERNELS.includes(name)) throw new Error(`unknown kernel '${name}'`);
  if (!cache.has(name)) {
    cache.set(name, readText(new URL(`./kernels/${name}.wgsl`, import.meta.url)));
  }
  return cache.get(name);
}
