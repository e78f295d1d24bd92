// The TabPFN v3 checkpoint reader in JavaScript (src/tabpfn/checkpoint.js) against Python's
// (pkg/arenalite/models/tabpfn/checkpoint.py): tests/data/tabpfn/js/checkpoint_reference.json
// (scripts/make_tabpfn_js_checkpoint_fixtures.py) holds what Python read from each committed
// fixture, and Python's exact message for each bad file of tests/data/tabpfn/js/bad/ and
// each truncation; here every read must give the same tensors bit for bit and every refusal
// the same message, word for word.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";

import { ZipArchive } from "../src/checkpoint/zip.js";
import {
  CONFIG_DEFAULTS, INFERENCE_DEFAULTS, V2_5_INFERENCE_CONFIG, checkConfig, expectedShapes, loadTabpfnWeights, readCheckpoint,
} from "../src/tabpfn/checkpoint.js";

const DATA = fileURLToPath(new URL("../../tests/data/tabpfn/", import.meta.url));
const JS = `${DATA}js/`;
const REFERENCE = JSON.parse(readFileSync(`${JS}checkpoint_reference.json`, "utf8"));
const digest = (a) => createHash("sha256").update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)).digest("hex").slice(0, 16);

/** The reference's summary of a read checkpoint (as the script's summary()). */
function summary(c) {
  const list = (m) => [...m].map(([n, a]) => [n, c.shapes.get(n) ?? [a.length], digest(a)]);
  return {
    config: c.config, inference_config: c.inferenceConfig, inference_config_source: c.inferenceConfigSource,
    description: c.description, task: c.task,
    tensors: list(c.tensors), criterion: [...c.criterion].map(([n, a]) => [n, [a.length], digest(a)]),
    borders: c.borders === null ? null : digest(c.borders),
  };
}

async function message(bytes, name) {
  try {
    await readCheckpoint(bytes, { name });
  } catch (error) {
    return error.message;
  }
  return null;
}

for (const [name, want] of Object.entries(REFERENCE.good)) {
  test(`${name} reads as Python's reader reads it (tensors bit for bit)`, async () => {
    const path = name.endsWith(".ckpt") || name.includes("package") ? DATA + name : JS + name;
    const c = await loadTabpfnWeights(path);
    assert.equal(c.name, path);
    assert.deepEqual(Object.keys(c.config), Object.keys(CONFIG_DEFAULTS));
    assert.deepEqual(Object.keys(c.inferenceConfig), Object.keys(INFERENCE_DEFAULTS));
    assert.deepEqual(summary(c), want);
    for (const [tensor, data] of c.tensors) {
      assert.ok(data instanceof Float32Array);
      assert.equal(data.length, c.shapes.get(tensor).reduce((a, b) => a * b, 1));
    }
  });
}

test("every bad file is refused with Python's message, word for word (or read as Python reads it)", async () => {
  for (const [name, want] of Object.entries(REFERENCE.bad)) {
    const bytes = new Uint8Array(readFileSync(`${JS}bad/${name}`));
    if (want.read) {
      assert.deepEqual(summary(await readCheckpoint(bytes, { name })), want.read, name);
    } else {
      assert.equal(await message(bytes, name), want.message, name);
    }
  }
});

test("truncated files are refused with Python's message", async () => {
  for (const { file, bytes, name, message: want } of REFERENCE.truncated) {
    const data = new Uint8Array(readFileSync(DATA + file)).subarray(0, bytes);
    assert.equal(await message(data, name), want, name);
  }
});

test("other generations are refused before any tensor is read", async () => {
  const original = ZipArchive.prototype.read;
  const read = [];
  ZipArchive.prototype.read = function (name) { read.push(name); return original.call(this, name); };
  try {
    for (const [name, generation] of [["v2_5_classifier.ckpt", "v2.5"], ["v2_6_classifier.ckpt", "v2.6"]]) {
      await assert.rejects(loadTabpfnWeights(DATA + name), { message: new RegExp(`TabPFN ${generation.replace(".", "\\.")} checkpoints are not supported yet`) });
    }
  } finally {
    ZipArchive.prototype.read = original;
  }
  assert.ok(read.length > 0 && !read.some((n) => n.includes("/data/")), read.join());
  await assert.rejects(loadTabpfnWeights(`${DATA}v3_5.safetensors`), { message: /TabPFN v3\.5 checkpoints are not supported yet \(architecture_name 'tabpfn_v3_5'\)/ });
});

test("a missing path and a folder are named as Python names them", async () => {
  const dir = mkdtempSync(join(tmpdir(), "tabpfn-"));
  try {
    await assert.rejects(loadTabpfnWeights(join(dir, "nope.ckpt")), { message: `checkpoint '${join(dir, "nope.ckpt")}' does not exist` });
    await assert.rejects(loadTabpfnWeights(dir), { message: `checkpoint '${dir}' is a directory, not a file` });
  } finally {
    rmSync(dir, { recursive: true });
  }
  await assert.rejects(loadTabpfnWeights(42), TypeError);
});

test("bytes, {bytes, name} and a read checkpoint are taken too", async () => {
  const bytes = readFileSync(`${DATA}classifier_small.ckpt`);
  const a = await loadTabpfnWeights(new Uint8Array(bytes));
  const b = await loadTabpfnWeights({ bytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), name: "c.ckpt" });
  assert.equal(a.name, "<bytes>");
  assert.equal(b.name, "c.ckpt");
  assert.match(b.description, /^TabPFN v3 classifier from c\.ckpt \(10 classes/);
  assert.match(a.description, /^TabPFN v3 classifier \(10 classes/);
  assert.deepEqual([...a.tensors.keys()], [...b.tensors.keys()]);
  assert.equal(await loadTabpfnWeights(b), b);
  await assert.rejects(loadTabpfnWeights({ config: {}, tensors: new Map() }), TypeError);
});

test("expectedShapes equals the package's get_architecture (shapes.json.gz)", () => {
  const cases = JSON.parse(gunzipSync(readFileSync(`${DATA}shapes.json.gz`)).toString("utf8"));
  assert.ok(cases.length >= 30);
  for (const { config, shapes } of cases) {
    assert.deepEqual([...expectedShapes(config)], Object.entries(shapes), JSON.stringify(config));
  }
});

test("checkConfig fills the defaults in order and takes integral floats as ints", () => {
  const c = checkConfig({ num_buckets: 5000, embed_dim: 64 });
  assert.deepEqual(Object.keys(c), Object.keys(CONFIG_DEFAULTS));
  assert.equal(c.embed_dim, 64);
  assert.equal(c.nlayers, 24);
  assert.throws(() => checkConfig([["embed_dim", 8]]), { message: "TabPFN v3 config: the config must be a dict, got list" });
  assert.throws(() => checkConfig({ max_num_classes: 10, icl_num_heads: 7 }),
    { message: "TabPFN v3 config: icl_num_heads=7 does not divide embed_dim × feat_agg_num_cls_tokens = 512" });
  assert.deepEqual(V2_5_INFERENCE_CONFIG.regression.PREPROCESS_TRANSFORMS.map((t) => t.name), ["quantile_uni_coarse", "squashing_scaler_default"]);
});
