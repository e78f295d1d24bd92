// The model registry (registry.json, the same file as arenalite.models reads: one entry
// per model with its parameters, defaults, bounds, tasks and limits), and the checks and
// results-table labels built from it, shared by the device layer (bridge.js), the
// orchestration layer (runner.js) and the timing page. Messages match Python's.
// A JSON module (part of the module graph, so importing the bridge stays synchronous
// after loading: a Web Worker that sets onmessage after its imports gets every message).
import registry from "./registry.json" with { type: "json" };

/** The registry file's entries the bridge runs (`runners` holds "webgpu", or is absent), in its order. */
export const REGISTRY = registry.models.filter((e) => (e.runners ?? ["webgpu"]).includes("webgpu"));
export const MODELS = REGISTRY.map((e) => e.name);
/** Registry entries that run elsewhere only (the Python runner: their `runners`), by name. */
export const ELSEWHERE = Object.fromEntries(registry.models.filter((e) => !REGISTRY.includes(e))
  .map((e) => [e.name, e]));
/** Keys a model object may carry besides its parameters (batchRows: the bridge's query batch). */
export const COMMON_KEYS = ["name", "label", "batchRows"];
const LIMITS = { features: "features", classes: "classes", context_rows: "context rows" };

/** A list of names as both languages print it: ['a', 'b']. */
export const describe = (names) => `[${names.map((n) => `'${n}'`).join(", ")}]`;

/** The registry entry of `name`; throws a RangeError naming the known models. */
export function modelEntry(name) {
  const found = REGISTRY.find((e) => e.name === name);
  if (!found && Object.hasOwn(ELSEWHERE, name)) {
    throw new RangeError(`model '${name}' has no webgpu implementation yet; it runs in ` +
      `${describe(ELSEWHERE[name].runners)} (arenalite run --runner ${ELSEWHERE[name].runners[0]})`);
  }
  if (!found) {
    const shown = typeof name === "string" ? `'${name}'` : JSON.stringify(name ?? null);
    throw new RangeError(`unknown model name ${shown}; known models are ${describe(MODELS)}`);
  }
  return found;
}

function boundText(name, key, spec, value) {
  const kind = spec.type === "integer" ? "an integer" : "a finite number";
  const bounds = [spec.min !== undefined ? `≥ ${spec.min}` : "",
    spec.exclusive_min !== undefined ? `> ${spec.exclusive_min}` : "",
    spec.max !== undefined ? `≤ ${spec.max}` : ""].filter(Boolean).join(" and ");
  return `${name} parameter '${key}' must be ${kind}${bounds ? ` ${bounds}` : ""}` +
    `${spec.nullable ? " or null" : ""}, got ${typeof value === "number" ? value : JSON.stringify(value)}`;
}

function checkValue(name, key, spec, value) {
  if (value === null) {
    if (!spec.nullable) throw new RangeError(`${name} parameter '${key}' must not be null`);
    return;
  }
  if (spec.type === "weights") {
    if (typeof value !== "string" && typeof value !== "object") {
      throw new TypeError(`${name} parameter '${key}' must be a URL, a weights object or null, ` +
        `got ${typeof value}`);
    }
    return;
  }
  if (spec.type === "boolean") {
    if (typeof value !== "boolean") {
      throw new RangeError(`${name} parameter '${key}' must be true or false, got ${JSON.stringify(value)}`);
    }
    return;
  }
  const ok = (spec.type === "integer" ? Number.isInteger(value) : Number.isFinite(value)) &&
    !(value < (spec.min ?? -Infinity)) && !(value > (spec.max ?? Infinity)) &&
    value > (spec.exclusive_min ?? -Infinity);
  if (!ok) throw new RangeError(boundText(name, key, spec, value));
  if (value > (spec.max_webgpu ?? Infinity)) {
    throw new RangeError(`${name} parameter '${key}' = ${value} exceeds ${spec.max_webgpu}, ` +
      "the WebGPU kernels' limit");
  }
}

/** Check a model object against the registry; returns it with defaults filled in. */
export function checkModel(model) {
  if (model === null || typeof model !== "object" || Array.isArray(model)) {
    throw new TypeError(`model must be an object such as {name: "knn", k: 5}, got ${JSON.stringify(model)}`);
  }
  const entry = modelEntry(model.name);
  const params = Object.keys(entry.params);
  const extra = Object.keys(model).filter((k) => !params.includes(k) && !COMMON_KEYS.includes(k)).sort();
  if (extra.length) {
    throw new RangeError(`model '${entry.name}' has unknown parameters ${describe(extra)}; ` +
      `it takes ${describe([...params].sort())}`);
  }
  const out = { name: entry.name };
  for (const [key, spec] of Object.entries(entry.params)) out[key] = model[key] === undefined ? spec.default : model[key];
  for (const key of COMMON_KEYS.slice(1)) if (model[key] !== undefined) out[key] = model[key];
  for (const [key, spec] of Object.entries(entry.params)) checkValue(entry.name, key, spec, out[key]);
  return out;
}

/** Throws when model `name` does not support `task`. */
export function checkTask(name, task) {
  const { tasks } = modelEntry(name);
  if (!tasks.includes(task)) {
    throw new RangeError(`model '${name}' does not support task '${task}'; it supports ${describe(tasks)}`);
  }
}

/**
 * Throws when data sizes ({features, classes, context_rows}) exceed the model's limits;
 * limits {weights: KEY} read `config` (the weights' config) and are skipped without it.
 */
export function checkLimits(name, sizes, config = null) {
  for (const [key, limit] of Object.entries(modelEntry(name).limits)) {
    const n = sizes[key];
    if (n === undefined || n === null || (typeof limit === "object" && !config)) continue;
    const most = typeof limit === "object" ? config[limit.weights] : limit;
    const source = typeof limit === "object" ? `the weights' ${limit.weights}` : "its limit";
    if (n > most) throw new RangeError(`${name} takes at most ${most} ${LIMITS[key]} (${source}), got ${n}`);
  }
}

/**
 * A model's name in the results table, as arenalite.models.model_label gives it: its
 * `label`, else the name plus non-default parameters, e.g. "knn(k=3)". (A Python float
 * such as 2.0 prints as "2" here; pass `label` to pin the name across runners.)
 */
export function modelLabel(model) {
  if (model?.label !== undefined) {
    if (typeof model.label !== "string" || !model.label) {
      throw new TypeError(`model 'label' must be a non-empty string, got ${JSON.stringify(model.label)}`);
    }
    return model.label;
  }
  const { params } = modelEntry(model?.name);
  const changed = Object.entries(params)
    .filter(([k, spec]) => model[k] !== undefined && model[k] !== spec.default)
    .map(([k]) => `${k}=${typeof model[k] === "object" && model[k] !== null ? "<object>" : model[k]}`);
  return model.name + (changed.length ? `(${changed.join(", ")})` : "");
}
