// The model registry (src/registry.json, the file arenalite.models reads): every model is
// reachable from the bridge, its reference and the page's form, and an unknown parameter
// gets the same message in each (tests/test_model_registry.py compares it with Python's).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { modelFromInputs, paramInput } from "../page/model_form.js";
import { IMPLEMENTATIONS, MODELS, REGISTRY, checkLimits, checkModel, checkTask } from "../src/index.js";
import { ENCODINGS, modelEncoding } from "../src/encoding.js";
import { REFERENCES } from "./reference.js";

const PYTHON = new URL("../../pkg/arenalite/models/registry.json", import.meta.url);

test("the bridge reads the registry file of arenalite.models", () => {
  const all = JSON.parse(readFileSync(PYTHON, "utf8")).models;
  assert.deepEqual(REGISTRY, all.filter((e) => (e.runners ?? ["webgpu"]).includes("webgpu")));
  // every model runs here since the bridge ports of tabpfn and tabfm (issue 44)
  assert.deepEqual(MODELS, ["knn", "attention", "icl_transformer", "tabular_fm", "tabicl", "tabpfn", "tabfm"]);
  assert.deepEqual(all.filter((e) => !MODELS.includes(e.name)), []);
});

test("tabicl: its checkpoint is the user's (no default file), its defaults from the registry", () => {
  assert.deepEqual(checkModel({ name: "tabicl" }), { name: "tabicl", weights: null, n_estimators: 8,
    softmax_temperature: 0.9, outlier_threshold: 4, random_state: 42 });
  assert.equal(REGISTRY.find((e) => e.name === "tabicl").params.weights.file, undefined);
});

test("every registry model has a GPU implementation, a reference and a page form", () => {
  assert.deepEqual(Object.keys(IMPLEMENTATIONS).sort(), [...MODELS].sort());
  assert.deepEqual(Object.keys(REFERENCES).sort(), [...MODELS].sort());
  for (const entry of REGISTRY) {
    const texts = Object.fromEntries(Object.keys(entry.params).map((k) => [k, ""]));
    for (const key of Object.keys(entry.params)) {
      const attrs = paramInput(entry, key);
      if (attrs?.type === "checkbox") texts[key] = String(attrs.checked !== undefined);
      else if (attrs?.value !== undefined) texts[key] = attrs.value;
    }
    const model = modelFromInputs(entry, texts, 7, checkModel);
    assert.equal(model.name, entry.name);
    assert.equal(model.batchRows, 7);
    for (const [key, spec] of Object.entries(entry.params)) assert.equal(model[key], spec.default, key);
  }
});

/** The unknown-parameter message, as every runner words it. */
const unknownMessage = (name, params) =>
  `model '${name}' has unknown parameters ['zz']; it takes [${params.sort().map((p) => `'${p}'`).join(", ")}]`;

test("an unknown parameter is rejected with one message, by the bridge and the page", () => {
  for (const entry of REGISTRY) {
    const expected = unknownMessage(entry.name, Object.keys(entry.params));
    assert.throws(() => checkModel({ name: entry.name, zz: 1 }), { message: expected });
    assert.throws(() => modelFromInputs(entry, { zz: "1" }, 1, checkModel), { message: expected });
  }
});

test("parameters are checked against the registry's types and bounds", () => {
  assert.deepEqual(checkModel({ name: "knn" }), { name: "knn", k: 5 });
  assert.throws(() => checkModel({ name: "knn", k: 0 }), { message: "knn parameter 'k' must be an integer ≥ 1, got 0" });
  assert.throws(() => checkModel({ name: "knn", k: 2.5 }), /must be an integer ≥ 1, got 2.5/);
  assert.throws(() => checkModel({ name: "knn", k: 65 }), /'k' = 65 exceeds 64, the WebGPU kernels' limit/);
  assert.throws(() => checkModel({ name: "attention", temperature: 0 }),
    { message: "attention parameter 'temperature' must be a finite number > 0 or null, got 0" });
  assert.throws(() => checkModel({ name: "icl_transformer", weights: 3 }), /'weights' must be a URL/);
  assert.throws(() => checkModel("knn"), /model must be an object/);
  assert.throws(() => modelFromInputs(REGISTRY[0], { k: "abc" }, 1, checkModel), /got NaN/);
  assert.equal(paramInput(REGISTRY[0], "k").max, "64");
  assert.equal(paramInput(REGISTRY[2], "weights"), null);
});

test("tasks and limits come from the registry", () => {
  assert.doesNotThrow(() => checkTask("knn", "regression"));
  assert.throws(() => checkLimits("icl_transformer", { features: 33 }, { d_in: 32 }),
    { message: "icl_transformer takes at most 32 features (the weights' d_in), got 33" });
  assert.doesNotThrow(() => checkLimits("icl_transformer", { features: 33 }));
});

test("the registry's Python-side keys leave the bridge's entries usable", () => {
  // reference/context/convert name Python functions, spread/missing_cells are flags, and the
  // top-level encodings list the shared encodings (tests/test_model_registry.py checks them);
  // a model the bridge runs must take an encoding that src/encoding.js implements.
  const file = JSON.parse(readFileSync(PYTHON, "utf8"));
  assert.ok(file.encodings.includes("tabicl") && file.encodings.includes("common"));
  for (const entry of REGISTRY) {
    assert.ok(ENCODINGS.includes(modelEncoding(entry.name)), entry.name);
    assert.match(entry.reference, /^arenalite(\.\w+)*:\w+$/);
    for (const key of ["spread", "missing_cells"]) assert.ok([undefined, true, false].includes(entry[key]));
    assert.deepEqual(checkModel({ name: entry.name }).name, entry.name);
  }
});

test("a boolean parameter is a checkbox whose state is the value", () => {
  const entry = { name: "m", params: { on: { type: "boolean", default: true, help: "h" },
    off: { type: "boolean", default: false } } };
  assert.deepEqual(paramInput(entry, "on"), { type: "checkbox", id: "m-on", checked: "", "aria-describedby": "m-on-help" });
  assert.deepEqual(paramInput(entry, "off"), { type: "checkbox", id: "m-off" });
  const same = (model) => model;
  assert.deepEqual(modelFromInputs(entry, { on: "false", off: "true" }, 3, same),
    { name: "m", on: false, off: true, batchRows: 3 });
});

test("a checkpoint parameter says what the page's file input takes", () => {
  // every weights parameter without a default file: the picker's accept list and the words
  // the page shows until a file is picked (the page reads it with the model's loadWeights)
  const all = JSON.parse(readFileSync(PYTHON, "utf8")).models;
  const picks = all.flatMap((e) => Object.entries(e.params)
    .filter(([, p]) => p.type === "weights" && !p.file).map(([, p]) => [e.name, p]));
  assert.deepEqual(picks.map(([n]) => n), ["tabicl", "tabpfn", "tabfm"]);
  for (const [name, spec] of picks) {
    assert.match(spec.accept, /^(\.\w+)(,\.\w+)*$/, name);
    assert.match(spec.pick, /checkpoint: pick /, name);
  }
  assert.equal(picks.find(([n]) => n === "tabfm")[1].multiple, true);
  for (const name of MODELS.filter((n) => picks.some(([p]) => p === n))) {
    assert.equal(typeof IMPLEMENTATIONS[name].loadWeights, "function", name);
    assert.equal(typeof IMPLEMENTATIONS[name].describe, "function", name);
  }
});
