// The Google TabFM checkpoint reader in JavaScript (src/tabfm/checkpoint.js) against Python's
// (pkg/arenalite/models/tabfm/checkpoint.py): tests/data/tabfm/js/checkpoints.json, written
// by scripts/make_tabfm_js_fixtures.py, holds Python's config and tensors (names in order,
// shapes, sums) of each good checkpoint, and Python's message for each bad one, made by
// mutating tests/data/tabfm/small/classification's two files; the same mutations are
// applied here to the same bytes and the messages must be equal, word for word.

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, symlinkSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

import { PyJsonFloat } from "../src/py_json.js";
import {
  V1_0_0, checkConfig, expectedShapes, loadTabfmWeights, readFolderBytes, readTabfmCheckpoint,
  resolveTabfm, tabfmWeightsFor,
} from "../src/tabfm/checkpoint.js";

const DATA = fileURLToPath(new URL("../../tests/data/tabfm/", import.meta.url));
const FIXTURE = JSON.parse(readFileSync(`${DATA}js/checkpoints.json`, "utf8"));
const SMALL = `${DATA}small/classification/`;
const bytes = (path) => new Uint8Array(readFileSync(path));

function plain(config) {
  return JSON.parse(JSON.stringify(config, (k, v) => (v instanceof PyJsonFloat ? v.value : v)));
}

function sameCheckpoint(w, want, label) {
  assert.deepEqual(plain(w.config), want.config, label);
  assert.deepEqual([...w.tensors.keys()], want.tensors.map((t) => t[0]), label);
  for (const [name, shape, sum] of want.tensors) {
    assert.deepEqual(w.shapes.get(name), shape, `${label} ${name}`);
    const data = w.tensors.get(name);
    assert.ok(data instanceof Float32Array, name);
    assert.equal(data.length, shape.reduce((a, b) => a * b, 1), name);
    let s = 0;
    for (const v of data) s += v;
    assert.ok(Math.abs(s - sum) <= 1e-9 * Math.max(1, Math.abs(sum)) * data.length, `${label} ${name}: ${s} vs ${sum}`);
  }
}

// --- mutations, as scripts/make_tabfm_js_fixtures.py's apply() ------------------------------

const utf8 = (text) => new TextEncoder().encode(text);
const hex = (h) => Uint8Array.from(h.match(/../g).map((b) => parseInt(b, 16)));

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

function lengthBytes(n) {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n), true);
  return b;
}

function split(data) {
  const n = Number(new DataView(data.buffer, data.byteOffset, 8).getBigUint64(0, true));
  return [JSON.parse(new TextDecoder().decode(data.subarray(8, 8 + n))), data.slice(8 + n)];
}

function withHeader(header, body) {
  let text = JSON.stringify(header);
  text += " ".repeat((8 - (text.length % 8)) % 8);
  return concat(lengthBytes(text.length), utf8(text), body);
}

function headerOp(kind, arg, out) {
  let [header, body] = split(out);
  if (kind === "header_set") {
    const [name, key, value] = arg;
    header[name][key] = value;
  } else if (kind === "header_rename") {
    header = Object.fromEntries(Object.entries(header).map(([k, v]) => [k === arg[0] ? arg[1] : k, v]));
  } else if (kind === "header_metadata") {
    header.__metadata__ = arg;
  } else if (kind === "overlap") {
    const spans = Object.entries(header).filter(([k]) => k !== "__metadata__")
      .map(([k, v]) => [v.data_offsets, k]).sort((a, b) => a[0][0] - b[0][0] || a[0][1] - b[0][1]);
    const [[begin, end], second] = spans[1];
    header[second].data_offsets = [begin - 4, end - 4];
  } else {
    const begin = header[arg].data_offsets[0];
    body = body.slice();
    new DataView(body.buffer).setFloat32(begin, NaN, true);
  }
  return withHeader(header, body);
}

function apply(ops, config, weights) {
  let cfg = utf8(config);
  let out = weights;
  for (const op of ops) {
    const [[kind, arg]] = Object.entries(op);
    if (kind === "truncate" || kind === "truncate_to") {
      out = out.slice(0, arg);
    } else if (kind === "header_length") {
      const n = Number(new DataView(out.buffer, out.byteOffset, 8).getBigUint64(0, true));
      out = concat(lengthBytes(arg === "file" ? out.length : n + arg), out.subarray(8));
    } else if (["header_set", "header_rename", "header_metadata", "nan", "overlap"].includes(kind)) {
      out = headerOp(kind, arg, out);
    } else if (kind === "header_text" || kind === "header_bytes_hex") {
      const text = kind === "header_text" ? utf8(arg) : hex(arg);
      out = concat(lengthBytes(text.length), text, split(out)[1]);
    } else if (kind === "config") {
      cfg = utf8(JSON.stringify({ ...JSON.parse(new TextDecoder().decode(cfg)), ...arg }, null, 2));
    } else if (kind === "config_text") {
      cfg = utf8(arg);
    } else if (kind === "config_bytes_hex") {
      cfg = hex(arg);
    } else if (kind === "drop_weights") {
      out = null;
    } else {
      throw new Error(`unknown op ${kind}`);
    }
  }
  return [cfg, out];
}

// --- the tests ----------------------------------------------------------------------------

test("good checkpoints read as Python reads them (config, tensor order, shapes, values)", async () => {
  for (const [name, want] of Object.entries(FIXTURE.good)) {
    const w = await readTabfmCheckpoint(`${DATA}${want.path}`, want.task);
    sameCheckpoint(w, want, name);
    const loaded = await loadTabfmWeights(`${DATA}${want.path}`, { task: want.task ?? (want.config.is_classifier ? "classification" : "regression") });
    sameCheckpoint(loaded, want, `${name} (load)`);
  }
});

test("a page's picked files: the folder's two, a parent's four (task later), or the converted file", async () => {
  const file = (path, name) => ({ bytes: bytes(path), name });
  const two = [file(`${SMALL}config.json`, "config.json"), file(`${SMALL}model.safetensors`, "model.safetensors")];
  sameCheckpoint(await loadTabfmWeights({ files: two }), FIXTURE.good.small_classification, "two files");
  const four = ["classification", "regression"].flatMap((t) => ["config.json", "model.safetensors"]
    .map((f) => ({ bytes: bytes(`${DATA}small/${t}/${f}`), name: f, webkitRelativePath: `small/${t}/${f}` })));
  const deferred = await loadTabfmWeights({ files: four });
  assert.equal(typeof deferred.forTask, "function");
  sameCheckpoint(await tabfmWeightsFor(deferred, "regression"), FIXTURE.good.small_parent_regression, "four files");
  sameCheckpoint(await tabfmWeightsFor(deferred, "binary"), FIXTURE.good.small_classification, "four files, binary");
  const converted = await loadTabfmWeights(file(`${DATA}js/converted.safetensors`, "converted.safetensors"));
  sameCheckpoint(converted, FIXTURE.good.converted, "converted bytes");
  await assert.rejects(loadTabfmWeights({ files: two }, { task: "regression" }),
    { message: "Google TabFM weights 'model.safetensors': a classification checkpoint, asked for regression" });
});

test("weights served over http: a converted file, a folder, a parent with the task", async () => {
  const server = createServer((req, res) => {
    try {
      res.end(readFileSync(`${DATA}${decodeURIComponent(req.url.slice(1))}`));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const root = `http://127.0.0.1:${server.address().port}/`;
  try {
    sameCheckpoint(await loadTabfmWeights(`${root}js/converted.safetensors`), FIXTURE.good.converted, "url file");
    sameCheckpoint(await loadTabfmWeights(`${root}small/classification/`, { task: "classification" }),
      FIXTURE.good.small_classification, "url folder");
    const deferred = await loadTabfmWeights(`${root}small`);
    sameCheckpoint(await tabfmWeightsFor(deferred, "regression"), FIXTURE.good.small_parent_regression, "url parent");
    await assert.rejects(loadTabfmWeights(`${root}nowhere`, { task: "regression" }), {
      message: `Google TabFM checkpoint folder '${root}nowhere' has no config.json (nor has its regression/ folder)`,
    });
  } finally {
    server.close();
  }
});

test("a folder path without a task is read when the task is known", async () => {
  const deferred = await loadTabfmWeights(`${DATA}small`);
  assert.equal(typeof deferred.forTask, "function");
  sameCheckpoint(await tabfmWeightsFor(deferred, "multiclass"), FIXTURE.good.small_classification, "parent");
  sameCheckpoint(await tabfmWeightsFor(deferred, "regression"), FIXTURE.good.small_parent_regression, "parent");
});

test("every bad file is refused with Python's message, word for word", () => {
  const config = readFileSync(`${SMALL}config.json`, "utf8");
  const weights = bytes(`${SMALL}model.safetensors`);
  assert.ok(Object.keys(FIXTURE.bad).length >= 30);
  for (const [name, { ops, message }] of Object.entries(FIXTURE.bad)) {
    const [cfg, out] = apply(ops, config, weights);
    assert.throws(() => readFolderBytes(cfg, out, "bad"), (error) => {
      assert.equal(error.message, message, name);
      return true;
    }, name);
  }
});

test("paths: resolve's refusals, load's task check and absolute paths, as Python's", async () => {
  const dir = mkdtempSync(`${tmpdir()}/tabfm-js-`);
  try {
    await assert.rejects(resolveTabfm(`${dir}/nowhere`), { message: `Google TabFM checkpoint '${dir}/nowhere' does not exist` });
    await assert.rejects(resolveTabfm(`${DATA}small/`), {
      message: `Google TabFM checkpoint folder '${DATA}small' holds both classification/ and regression/: say which ` +
        `task (or give '${DATA}small/classification' or '${DATA}small/regression')`,
    });
    await assert.rejects(resolveTabfm(`${DATA}small`, "ranking"), {
      message: `Google TabFM checkpoint '${DATA}small': task must be one of ['classification', 'regression'], got 'ranking'`,
    });
    mkdirSync(`${dir}/empty`);
    await assert.rejects(resolveTabfm(`${dir}/empty`), {
      message: `Google TabFM checkpoint folder '${dir}/empty' holds neither config.json and model.safetensors nor ` +
        "classification/ or regression/ folders",
    });
    mkdirSync(`${dir}/one/regression`, { recursive: true });
    await assert.rejects(resolveTabfm(`${dir}/one`, "classification"), {
      message: `Google TabFM checkpoint folder '${dir}/one' has no classification/ folder (it holds regression/)`,
    });
    assert.equal(await resolveTabfm(`${dir}/one`), `${dir}/one/regression`);
    await assert.rejects(loadTabfmWeights(SMALL, { task: "regression" }), {
      message: `Google TabFM checkpoint '${SMALL.slice(0, -1)}' is a classification checkpoint, asked for regression`,
    });
    // a linked weights file is read where it lies (Python's checkpoint cache resolves the path)
    mkdirSync(`${dir}/linked`);
    writeFileSync(`${dir}/linked/config.json`, "{}");
    symlinkSync(`${SMALL}model.safetensors`, `${dir}/linked/model.safetensors`);
    const w = await loadTabfmWeights(`${dir}/linked`, { task: "classification" });
    assert.equal(w.name, `${SMALL}model.safetensors`);
    mkdirSync(`${dir}/noweights`);
    writeFileSync(`${dir}/noweights/config.json`, "{}");
    await assert.rejects(loadTabfmWeights(`${dir}/noweights`, { task: "classification" }), {
      message: `Google TabFM checkpoint folder '${dir}/noweights' has no model.safetensors`,
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("config checks and expected shapes at v1.0.0", () => {
  const rest = Object.fromEntries(Object.entries(V1_0_0).filter(([k]) => k !== "is_classifier"));
  assert.equal(checkConfig({ ...rest, task: "regression" }).is_classifier, false);
  assert.throws(() => checkConfig({ ...V1_0_0, task: "regression" }), {
    message: "Google TabFM config: 'task' 'regression' contradicts 'is_classifier' True",
  });
  const shapes = expectedShapes(V1_0_0);
  assert.deepEqual(shapes.get("icl_predictor.decoder.layers.0.weight"), [4096, 2048]);
  assert.deepEqual(shapes.get("row_interactor.tf_row.rope.freqs"), [16]);
  assert.throws(() => checkConfig({ embed_dim: new PyJsonFloat(16) }), {
    message: "Google TabFM config: 'embed_dim' must be a positive integer, got 16.0",
  });
});
