// Deterministic test data and random weights for the node tests.
import { expectedShapes, sha256Hex } from "../src/weights.js";

/** A small seeded PRNG (mulberry32) returning floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Synthetic data for a task: n context rows, m query rows, F features. */
export function makeData(task, { n = 60, m = 25, F = 5, C = 3, seed = 1 } = {}) {
  const r = rng(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
  const x = (rows) => Float32Array.from({ length: rows * F }, () => gauss() * 3 + 1);
  const xTrain = x(n);
  const nClasses = task === "binary" ? 2 : task === "multiclass" ? C : undefined;
  const yTrain = Float32Array.from({ length: n }, (_, i) => {
    const s = xTrain[i * F] + 0.5 * xTrain[i * F + 1];
    if (task === "regression") return Math.fround(150 + 40 * s + 5 * gauss());
    return nClasses === 2 ? (s > 1.5 ? 1 : 0) : Math.min(nClasses - 1, Math.max(0, Math.floor((s + 4) / 4)));
  });
  return { xTrain, yTrain, xTest: x(m), nFeatures: F, task, nClasses,
    n, m, F, C: nClasses ?? 0 };
}

/** Random weights in the arenalite-weights format: {manifest, blob}. */
export async function makeWeights(config, seed = 7) {
  const r = rng(seed);
  const tensors = [];
  let offset = 0;
  const chunks = [];
  for (const [name, shape] of expectedShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const fanIn = shape.length === 2 ? shape[0] : 1;
    const isGain = name.endsWith(".g");
    const data = Float32Array.from({ length: size }, () => (isGain ? 1 + 0.1 * (r() - 0.5)
      : (r() - 0.5) * 2 / Math.sqrt(fanIn)));
    tensors.push({ name, shape, offset });
    chunks.push(data);
    offset += size * 4;
  }
  const bytes = new Uint8Array(offset);
  let at = 0;
  for (const c of chunks) {
    bytes.set(new Uint8Array(c.buffer), at);
    at += c.byteLength;
  }
  const blob = bytes.buffer;
  const manifest = { format: "arenalite-weights", version: 1, model: "icl_transformer", config,
    blob: "test.bin", blob_sha256: await sha256Hex(blob), tensors };
  return { manifest, blob };
}

export const SMALL_CONFIG = { d_in: 8, d_model: 16, n_heads: 4, n_layers: 2, d_mlp: 32,
  max_classes: 4, ln_eps: 1e-5 };
