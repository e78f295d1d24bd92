// The TabICL checkpoint reader in JavaScript (src/tabicl/checkpoint.js) against the committed
// fixtures of tests/data/tabicl/ and the cases of tests/test_tabicl_checkpoint.py: the same
// tensors bit for bit as Python's reader (checkpoint_reference.json, written by
// scripts/make_tabicl_js_reference.py), the same shapes, the same files refused by name.

import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

import { CONFIG_DEFAULTS, checkConfig, expectedShapes, readCheckpoint } from "../src/tabicl/checkpoint.js";
import { ZipArchive } from "../src/checkpoint/zip.js";
import {
  Float, OrderedDict, concat, glob, handBuilt, parameter, pkl, raw, tensor, tuple,
  writeCheckpoint, writeSafetensors, writeZip,
} from "./tabicl_helpers.js";

const DATA = fileURLToPath(new URL("../../tests/data/tabicl/", import.meta.url));
const REFERENCE = JSON.parse(readFileSync(`${DATA}checkpoint_reference.json`, "utf8"));
const bytesOf = (name) => new Uint8Array(readFileSync(DATA + name));
const read = (name) => readCheckpoint(bytesOf(name), { name });
const digest = (data) => createHash("sha256").update(new Uint8Array(data.buffer, data.byteOffset, data.byteLength)).digest("hex").slice(0, 16);
const sameTensors = (a, b) => {
  assert.deepEqual([...a.keys()], [...b.keys()]);
  for (const [k, v] of a) assert.deepEqual(new Uint32Array(v.buffer), new Uint32Array(b.get(k).buffer), k);
};
const withShapes = (c) => new Map([...c.tensors].map(([k, data]) => [k, { data, shape: c.shapes.get(k) }]));

/** The Error readCheckpoint rejects `bytes` with; its message names `name` and each culprit. */
async function refused(bytes, name, ...culprits) {
  let error = null;
  try {
    await readCheckpoint(bytes, { name });
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof Error, `${name} was read`);
  assert.ok(error.message.includes(name), error.message);
  for (const culprit of culprits) assert.ok(error.message.includes(culprit), `${culprit} not in: ${error.message}`);
  return error.message;
}

// --- reading the fixtures -----------------------------------------------------------------

for (const [name, want] of Object.entries(REFERENCE)) {
  test(`${name}.ckpt reads bit for bit as Python's reader does`, async () => {
    const c = await read(`${name}.ckpt`);
    assert.equal(c.format, "ckpt");
    assert.deepEqual(Object.keys(c.config), Object.keys(CONFIG_DEFAULTS));
    assert.deepEqual(c.config, want.config);
    const shapes = expectedShapes(c.config);
    assert.deepEqual([...c.tensors.keys()], [...shapes.keys()]);
    assert.deepEqual([...c.shapes], [...shapes]);
    for (const [tensorName, data] of c.tensors) {
      assert.ok(data instanceof Float32Array);
      assert.equal(data.length, shapes.get(tensorName).reduce((a, b) => a * b, 1));
    }
    assert.deepEqual([...c.tensors.values()].map(digest), want.sha256_16);
  });
}

test("the RoPE frequencies decode to their formula", async () => {
  for (const name of ["classifier_small", "regressor_small", "classifier_wide"]) {
    const c = await read(`${name}.ckpt`);
    const d = Math.floor(c.config.embed_dim / c.config.row_nhead);
    const freqs = c.tensors.get("row_interactor.tf_row.rope.freqs");
    freqs.forEach((f, i) => assert.ok(Math.abs(f - 1 / c.config.row_rope_base ** ((2 * i) / d)) <= 1e-6 * f, name));
  }
});

test("dtypes and strided views widen to tiny's float32 exactly", async () => {
  const tiny = await read("tiny.ckpt");
  for (const variant of ["tiny_bf16", "tiny_f64", "tiny_views"]) sameTensors((await read(`${variant}.ckpt`)).tensors, tiny.tensors);
});

test("a trainer checkpoint's optimizer storages are never read", async () => {
  const original = ZipArchive.prototype.read;
  const names = [];
  ZipArchive.prototype.read = function (name) { names.push(name); return original.call(this, name); };
  try {
    const c = await read("classifier_small.ckpt");
    assert.equal(names.filter((n) => n.includes("/data/")).length, c.tensors.size);
    const all = new ZipArchive(bytesOf("classifier_small.ckpt")).names.filter((n) => n.includes("/data/"));
    assert.ok(all.length > c.tensors.size + 100);
  } finally {
    ZipArchive.prototype.read = original;
  }
});

test("the safetensors layout (written by Python) reads like its checkpoint", async () => {
  const tiny = await read("tiny.ckpt");
  const st = await read("tiny.safetensors");
  assert.equal(st.format, "safetensors");
  assert.deepEqual(st.config, tiny.config);
  assert.deepEqual(Object.keys(st.config), Object.keys(CONFIG_DEFAULTS));
  sameTensors(st.tensors, tiny.tensors);
});

test("a big-endian archive and DEFLATE records read the same", async () => {
  const tiny = await read("tiny.ckpt");
  const archive = new ZipArchive(bytesOf("tiny.ckpt"));
  const records = [];
  for (const name of archive.names) {
    let data = await archive.read(name);
    if (name.endsWith("/byteorder")) data = new TextEncoder().encode("big");
    else if (name.includes("/data/")) data = Uint8Array.from(data).map((_, i, a) => a[i - (i % 4) + 3 - (i % 4)]);
    records.push([name, data]);
  }
  sameTensors((await readCheckpoint(await writeZip(records), { name: "big.ckpt" })).tensors, tiny.tensors);
  const stored = [];
  for (const name of archive.names) stored.push([name, await archive.read(name)]);
  const deflated = await writeZip(stored, { deflate: true });
  sameTensors((await readCheckpoint(deflated, { name: "deflated.ckpt" })).tensors, tiny.tensors);
  const entry = new ZipArchive(deflated).entries.get("tiny/data.pkl");
  for (const at of [40, 200]) {  // a damaged DEFLATE stream: refused as corrupt, whichever check trips
    const broken = Uint8Array.from(deflated);
    broken[entry.headerOffset + 30 + "tiny/data.pkl".length + at] ^= 0x5a;
    await refused(broken, "broken.ckpt", "truncated or corrupt");
  }
});

test("hand-built checkpoints (extras, parameters, non-finite values) read like torch's", async () => {
  const tiny = await read("tiny.ckpt");
  const extra = { curr_step: 3, optimizer_state: { state: {}, param_groups: [{ lr: new Float(1e-3), betas: tuple(0.9, 0.95), params: [0, 1] }] } };
  const c = await readCheckpoint(await handBuilt(tiny.config, withShapes(tiny), { extra }), { name: "hand.ckpt" });
  assert.deepEqual(c.config, tiny.config);
  sameTensors(c.tensors, tiny.tensors);
  sameTensors((await readCheckpoint(await handBuilt(tiny.config, withShapes(tiny), { parameters: true }), { name: "p.ckpt" })).tensors, tiny.tensors);
  const tensors = withShapes(tiny);
  const cls = Float32Array.from(tensors.get("row_interactor.cls_tokens").data);
  cls.set([NaN, Infinity, -Infinity]);
  tensors.set("row_interactor.cls_tokens", { data: cls, shape: tensors.get("row_interactor.cls_tokens").shape });
  const got = (await readCheckpoint(await handBuilt(tiny.config, tensors), { name: "nan.ckpt" })).tensors.get("row_interactor.cls_tokens");
  assert.deepEqual(new Uint32Array(got.buffer), new Uint32Array(cls.buffer));
});

// --- expectedShapes -----------------------------------------------------------------------

test("expectedShapes of the full-size v2 models and of every architecture switch", () => {
  for (const kind of ["classifier", "regressor"]) {
    const config = JSON.parse(readFileSync(`${DATA}v2_${kind}_config.json`, "utf8"));
    const want = JSON.parse(readFileSync(`${DATA}v2_${kind}_shapes.json`, "utf8"));
    const got = expectedShapes(config);
    assert.deepEqual([...got], Object.entries(want));
    const params = [...got.values()].reduce((n, s) => n + s.reduce((a, b) => a * b, 1), 0);
    assert.ok(params > 27e6 && params < 29e6);
  }
  const cases = JSON.parse(readFileSync(`${DATA}shape_cases.json`, "utf8"));
  assert.ok(cases.length > 20);
  for (const { config, shapes } of cases) assert.deepEqual([...expectedShapes(config)], Object.entries(shapes), JSON.stringify(config));
  assert.deepEqual([...expectedShapes({})], [...expectedShapes({ ...CONFIG_DEFAULTS })]);
  assert.deepEqual(checkConfig({ embed_dim: 64 }), { ...CONFIG_DEFAULTS, embed_dim: 64 });
});

test("bad configs are named", () => {
  const cases = [
    [{ flash: true }, "'flash'"], [{ embed_dim: 0 }, "'embed_dim'"], [{ col_nhead: 5 }, "col_nhead=5"],
    [{ icl_nhead: 7 }, "icl_nhead=7"], [{ embed_dim: 16, row_nhead: 8 }, "width 2"],
    [{ max_classes: -1 }, "'max_classes'"], [{ max_classes: 0, num_quantiles: 0 }, "'num_quantiles'"],
    [{ col_ssmax: "fancy" }, "'col_ssmax'"], [{ col_feature_group: "full" }, "'col_feature_group'"],
    [{ col_feature_group: 1 }, "'col_feature_group'"], [{ norm_first: 1 }, "'norm_first'"],
    [{ activation: "swish" }, "'activation'"], [{ dropout: 2 }, "'dropout'"], [{ row_rope_base: -1 }, "'row_rope_base'"],
    [{ embed_dim: 12.5 }, "'embed_dim'"],
  ];
  for (const [change, culprit] of cases) {
    assert.throws(() => expectedShapes({ ...CONFIG_DEFAULTS, ...change }), (e) => e.message.startsWith("TabICL config") && e.message.includes(culprit));
  }
  assert.throws(() => checkConfig({ embed_dim: 12 }, "TabICL config", new Set(["embed_dim"])), /'embed_dim' must be a positive integer, got 12\.0/);
  assert.throws(() => checkConfig([["embed_dim", 8]]), /must be a dict, got list/);
});

// --- refusals -----------------------------------------------------------------------------

test("truncated checkpoints and safetensors are refused", async () => {
  for (const file of ["tiny.ckpt", "tiny.safetensors"]) {
    const data = bytesOf(file);
    for (const fraction of [0.0001, 0.1, 0.5, 0.9, 0.999]) {
      for (const cut of new Set([Math.max(1, Math.floor(data.length * fraction)), data.length - 1])) {
        await refused(data.slice(0, cut), `cut-${file}`);
      }
    }
  }
});

test("corrupt bytes fail the CRC", async () => {
  const data = bytesOf("tiny.ckpt");
  const entry = new ZipArchive(data).entries.get("tiny/data/3");
  const view = new DataView(data.buffer, data.byteOffset);
  const at = entry.headerOffset + 30 + view.getUint16(entry.headerOffset + 26, true) + view.getUint16(entry.headerOffset + 28, true);
  data[at + 5] ^= 0xff;
  await refused(data, "flip.ckpt", "corrupt", "CRC");
});

test("what is not a checkpoint is named so", async () => {
  const enc = new TextEncoder();
  for (const [content, culprit] of [[new Uint8Array(0), "neither"], [enc.encode("hello, world\n".repeat(10)), "neither"],
    [enc.encode('{"config": {}}'), "neither"], [Uint8Array.of(0x80, 2, 0x7d, 0x71, 0, 0x2e), "legacy"]]) {
    await refused(content, "x.ckpt", culprit);
  }
  await refused(await writeZip([["notes.txt", "hi"]]), "plain.zip", "data.pkl");
  await assert.rejects(readCheckpoint("not bytes"), TypeError);
});

const FOREIGN = [
  [glob("os", "system"), "'os.system'"], [glob("posix", "system"), "'posix.system'"],
  [glob("__builtin__", "eval"), "'builtins.eval'"], [glob("builtins", "exec"), "'builtins.exec'"],
  [glob("subprocess", "Popen"), "'subprocess.Popen'"], [glob("torch", "load"), "'torch.load'"],
  [glob("torch._utils", "_rebuild_qtensor"), "'torch._utils._rebuild_qtensor'"],
  [glob("numpy.core.multiarray", "_reconstruct"), "'numpy.core.multiarray._reconstruct'"],
  [raw(pkl("os"), pkl("system"), Uint8Array.of(0x93)), "'os.system'"],  // protocol 4's STACK_GLOBAL
];

test("a foreign class is refused by name", async () => {
  for (const [callable, culprit] of FOREIGN) {
    const payload = raw(callable, "(", pkl("touch /tmp/ran"), "tR");
    const message = await refused(await writeCheckpoint(pkl({ config: payload, state_dict: {} })), "evil.ckpt",
      culprit, "never contains", "refusing to load it");
    assert.ok(message.startsWith("checkpoint 'evil.ckpt'"), message);
  }
  await refused(await writeCheckpoint(pkl({ config: raw("(", pkl("touch /tmp/ran"), "ios\nsystem\n") })), "inst.ckpt", "'os.system'");
  await assert.rejects(readCheckpoint(await writeCheckpoint(pkl(glob("os", "system"))), { name: "x.ckpt" }),
    { message: "checkpoint 'x.ckpt': data.pkl refers to class 'os.system', which a TabICL checkpoint never contains; refusing to load it" });
});

test("the bad torch checkpoints are refused by name", async () => {
  for (const [name, culprits] of [
    ["bad_extra_tensor", ["unexpected tensors", "'icl_predictor.extra.weight'"]],
    ["bad_missing_tensor", ["missing tensors", "'row_interactor.cls_tokens'"]],
    ["bad_shape", ["'icl_predictor.decoder.2.weight'", "[4, 16]", "expected [3, 16]"]],
    ["bad_dtype", ["'row_interactor.cls_tokens'", "LongStorage"]],
    ["bad_config_key", ["unknown config keys", "'use_magic'"]],
    ["bad_no_state_dict", ["'state_dict'"]],
  ]) {
    await refused(bytesOf(`${name}.ckpt`), `${name}.ckpt`, ...culprits);
  }
  await assert.rejects(read("bad_missing_tensor.ckpt"), { message: /^checkpoint 'bad_missing_tensor.ckpt': missing tensors \['row_interactor.cls_tokens'\]/ });
});

test("bad safetensors are refused by name", async () => {
  const tiny = await read("tiny.safetensors");
  const tensors = withShapes(tiny);
  const metadata = { format: "arenalite.tabicl", version: "1", config: JSON.stringify(tiny.config) };
  const rewrite = (t = tensors, meta = {}) => writeSafetensors(t, { ...metadata, ...meta });
  const without = new Map(tensors);
  without.delete("icl_predictor.ln.bias");
  await refused(rewrite(new Map([...tensors, ["icl_predictor.extra", { data: [1, 1], shape: [2] }]])), "b.safetensors", "'icl_predictor.extra'");
  await refused(rewrite(without), "b.safetensors", "missing tensors", "'icl_predictor.ln.bias'");
  await refused(rewrite(new Map([...tensors, ["icl_predictor.ln.bias", { data: new Array(7).fill(1), shape: [7] }]])),
    "b.safetensors", "'icl_predictor.ln.bias'", "[7]", "expected [8]");
  await refused(rewrite(tensors, { format: "arenalite-weights" }), "b.safetensors", "'format'");
  await refused(rewrite(tensors, { version: "2" }), "b.safetensors", "'version'");
  await refused(rewrite(tensors, { config: "{not json" }), "b.safetensors", "'config'", "not JSON");
  await refused(rewrite(tensors, { config: JSON.stringify({ ...tiny.config, shiny: 1 }) }), "b.safetensors", "'shiny'");
  await refused(rewrite(tensors, { config: JSON.stringify({ ...tiny.config, embed_dim: 8 }).replace('"embed_dim":8', '"embed_dim":8.0') }),
    "b.safetensors", "'embed_dim'", "8.0");
  await refused(writeSafetensors(tensors), "other.safetensors", "'format'");
});

test("storage problems are named", async () => {
  const tiny = await read("tiny.ckpt");
  const build = (edit) => handBuilt(tiny.config, withShapes(tiny), { edit });
  await refused(await build((n, f) => { if (n === "icl_predictor.ln.weight") f[2] = 1; }), "range.ckpt",
    "'icl_predictor.ln.weight'", "reaches element 8", "holds 8");
  await refused(await build((n, f) => { if (n === "row_interactor.cls_tokens") f[4] = [8, 2]; }), "stride.ckpt",
    "'row_interactor.cls_tokens'", "stride [8, 2]");
  await refused(await build((n, f) => { if (n === "icl_predictor.ln.weight") f[1] = 9; }), "numel.ckpt",
    "'icl_predictor.ln.weight'", "holds 32 bytes", "declares 9 elements");
  await refused(await build((n, f) => { if (n === "col_embedder.in_linear.bias") { f[0] = "0"; f[1] = 10 ** 6; } }), "shared.ckpt",
    "'col_embedder.in_linear.bias'", "storage '0'", "1000000 elements");
  const archive = new ZipArchive(await handBuilt(tiny.config, withShapes(tiny)));
  const records = [];
  for (const name of archive.names) if (name !== "archive/data/5") records.push([name, await archive.read(name)]);
  await refused(await writeZip(records), "gone.ckpt", "storage '5'", "archive/data/5");
});

test("malformed pickles are refused", async () => {
  const tiny = await read("tiny.ckpt");
  const config = tiny.config;
  const cases = [
    [pkl([1, 2]), "holds a list"],
    [pkl({ config }), "'state_dict'"],
    [pkl({ state_dict: {} }), "'config'"],
    [pkl({ config, state_dict: [1] }), "'state_dict' is a list"],
    [pkl({ config, state_dict: { "row_interactor.cls_tokens": new Float(3) } }), "'row_interactor.cls_tokens' is a float"],
    [pkl({ config, state_dict: { a: raw(glob("torch._utils", "_rebuild_tensor_v2"), pkl(tuple(1, 0, tuple(2), tuple(1))), "R") } }),
      "built on a int, not a saved storage"],
    [pkl({ x: raw("(", pkl("storage"), pkl("FloatStorage"), "tQ") }), "persistent id ('storage', 'FloatStorage')"],
    [pkl({ config, state_dict: { a: raw(tensor("0", 8, 0, [8], [1]), pkl({ offset: 5 }), "b") } }), "TensorRef record"],
    [pkl({ config, state_dict: { a: raw(tensor("0", 8, 0, [8], [1]), pkl(tuple(null, { offset: 5 })), "b") } }), "TensorRef record"],
    [pkl({ x: raw(glob("torch", "FloatStorage"), pkl({ name: "os" }), "b") }), "StorageType record"],
    [pkl({ config, state_dict: { a: parameter(raw(pkl(3))) } }), "parameter wrapping a int"],
    [pkl({ config, state_dict: { a: raw(glob("torch._utils", "_rebuild_tensor_v2"), "(", pkl("x"), "tR") } }), "built on a str"],
    [Uint8Array.of(0x80, 2, 0x7d, 0x28, 0x58, 1, 0, 0), "not a valid pickle"],
    [concat([pkl({ config }), new TextEncoder().encode("000")]), "not a valid pickle"],
    [pkl({ config: tuple(1), state_dict: new OrderedDict([]) }), "the config must be a dict, got tuple"],
  ];
  for (const [i, [data, culprit]] of cases.entries()) await refused(await writeCheckpoint(data), `m${i}.ckpt`, culprit);
  await refused(await writeCheckpoint(pkl({}), [], { byteorder: "middle" }), "order.ckpt", "'middle'");
});
