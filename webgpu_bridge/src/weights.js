// The in-context transformer's weights file: NAME.json manifest + NAME.bin little-endian
// float32 blob (docs/models.md, "Weights file format"), read in a page, a worker or Node.
import { readBytes, readText, resolveBeside } from "./io.js";

const CONFIG_KEYS = ["d_in", "d_model", "n_heads", "n_layers", "d_mlp", "max_classes", "ln_eps"];

/** Expected tensor shapes for a config, in manifest order. */
export function expectedShapes(config) {
  const { d_in: di, d_model: d, d_mlp: dm, max_classes: mc, n_layers: L } = config;
  const shapes = new Map([
    ["embed.w", [di, d]], ["embed.b", [d]], ["label.w", [mc, d]], ["label.reg", [d]],
  ]);
  for (let l = 0; l < L; l++) {
    const p = `layers.${l}.`;
    shapes.set(`${p}ln1.g`, [d]).set(`${p}ln1.b`, [d]);
    for (const w of ["wq", "wk", "wv", "wo"]) shapes.set(`${p}attn.${w}`, [d, d]);
    for (const b of ["bq", "bk", "bv", "bo"]) shapes.set(`${p}attn.${b}`, [d]);
    shapes.set(`${p}ln2.g`, [d]).set(`${p}ln2.b`, [d]);
    shapes.set(`${p}mlp.w1`, [d, dm]).set(`${p}mlp.b1`, [dm]);
    shapes.set(`${p}mlp.w2`, [dm, d]).set(`${p}mlp.b2`, [d]);
  }
  shapes.set("head.ln.g", [d]).set("head.ln.b", [d]);
  shapes.set("head.cls.w", [d, mc]).set("head.cls.b", [mc]);
  shapes.set("head.reg.w", [d]).set("head.reg.b", [1]);
  return shapes;
}

function checkConfig(config) {
  if (!config || typeof config !== "object") throw new Error("weights manifest has no 'config'");
  for (const key of CONFIG_KEYS) {
    const v = config[key];
    const ok = key === "ln_eps" ? Number.isFinite(v) && v > 0 : Number.isInteger(v) && v > 0;
    if (!ok) throw new Error(`weights config '${key}' must be a positive number, got ${v}`);
  }
  if (config.d_model % config.n_heads !== 0) {
    throw new Error(`weights config: d_model = ${config.d_model} is not divisible by ` +
      `n_heads = ${config.n_heads}`);
  }
  if (config.d_model / config.n_heads > 64) {
    throw new Error(`weights config: head dim ${config.d_model / config.n_heads} exceeds 64, ` +
      "the attention kernel's limit");
  }
}

/** Lower-case hex SHA-256 of an ArrayBuffer (WebCrypto: pages, workers and Node 20). */
export async function sha256Hex(buffer) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", buffer);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Check a manifest against its blob and return {config, tensors: Map(name -> Float32Array),
 * sha256}. Every tensor of the format must be present with its exact shape and inside
 * the blob; a sha256 mismatch is an error.
 */
export async function parseWeights(manifest, blob) {
  if (!manifest || manifest.format !== "arenalite-weights") {
    throw new Error(`not an arenalite weights manifest (format = ${manifest?.format})`);
  }
  if (manifest.version !== 1) {
    throw new Error(`unsupported weights format version ${manifest.version} (expected 1)`);
  }
  if (manifest.model !== "icl_transformer") {
    throw new Error(`weights are for model '${manifest.model}', expected 'icl_transformer'`);
  }
  const config = manifest.config;
  checkConfig(config);
  if (!(blob instanceof ArrayBuffer)) throw new TypeError("weights blob must be an ArrayBuffer");
  const sha256 = await sha256Hex(blob);
  if (manifest.blob_sha256 && manifest.blob_sha256.toLowerCase() !== sha256) {
    throw new Error(`weights blob sha256 ${sha256} does not match the manifest's ` +
      `${manifest.blob_sha256}`);
  }
  const listed = new Map((manifest.tensors ?? []).map((t) => [t.name, t]));
  const view = new DataView(blob);
  const tensors = new Map();
  for (const [name, shape] of expectedShapes(config)) {
    const entry = listed.get(name);
    if (!entry) throw new Error(`weights manifest lacks tensor '${name}'`);
    if (JSON.stringify(entry.shape) !== JSON.stringify(shape)) {
      throw new Error(`tensor '${name}' has shape ${JSON.stringify(entry.shape)}, ` +
        `expected ${JSON.stringify(shape)}`);
    }
    const size = shape.reduce((a, b) => a * b, 1);
    const { offset } = entry;
    if (!Number.isInteger(offset) || offset < 0 || offset % 4 !== 0 ||
        offset + 4 * size > blob.byteLength) {
      throw new Error(`tensor '${name}' offset ${offset} (+${4 * size} bytes) is not a ` +
        `multiple of 4 inside the ${blob.byteLength}-byte blob`);
    }
    const data = new Float32Array(size);
    for (let i = 0; i < size; i++) data[i] = view.getFloat32(offset + 4 * i, true);
    tensors.set(name, data);
  }
  return { config: { ...config }, tensors, sha256 };
}

/**
 * Load weights from a manifest URL/path (the blob is read beside it), or from
 * {manifest, blob} already in memory. Returns parseWeights' object.
 */
export async function loadWeights(source) {
  if (source && typeof source === "object" && !(source instanceof URL)) {
    if (source.tensors instanceof Map) return source;
    return parseWeights(source.manifest, source.blob);
  }
  if (typeof source !== "string" && !(source instanceof URL)) {
    throw new TypeError("weights must be a manifest URL/path or {manifest, blob}");
  }
  const manifest = JSON.parse(await readText(source));
  if (typeof manifest.blob !== "string") throw new Error(`weights manifest ${source} names no blob`);
  const blob = await readBytes(resolveBeside(source, manifest.blob));
  return parseWeights(manifest, blob);
}
