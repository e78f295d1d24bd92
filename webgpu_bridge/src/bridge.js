// Bridge: one WebGPU device, its pipelines and buffers, and predict() for the in-context
// models of the registry (models.js, docs/models.md; SPEC §8 API contract).
import { validateData } from "./data.js";
import { runDistanceModel } from "./distance_models.js";
import { Engine, now } from "./engine.js";
import { findGpu, requestDevice } from "./gpu.js";
import { resolveBeside } from "./io.js";
import { checkLimits, checkModel, checkTask, modelEntry, modelLabel } from "./models.js";
import { loadTabfmWeights } from "./tabfm/checkpoint.js";
import { NO_WEIGHTS as TABFM_NO_WEIGHTS, runTabfm } from "./tabfm/predictor.js";
import { loadTabiclWeights } from "./tabicl/model.js";
import { loadTabpfnWeights } from "./tabpfn/checkpoint.js";
import { NO_WEIGHTS as TABPFN_NO_WEIGHTS, runTabpfn } from "./tabpfn/predictor.js";
import { NO_WEIGHTS as TABICL_NO_WEIGHTS, runTabicl } from "./tabicl/predictor.js";
import { loadFmWeights, runTabularFM } from "./tabular_fm.js";
import { runTransformer } from "./transformer.js";
import { loadWeights } from "./weights.js";

/**
 * Model name → its GPU implementation, one per registry entry (a node test checks it):
 * `run(engine, model, data) → {output, timings}` gets the model checked, defaults filled
 * and each weights parameter loaded by `loadWeights(URL | path | {manifest, blob})`; the
 * data validated, its task and fixed limits checked; `options.onMember(done, total)` is
 * called after each ensemble member by models that have members (tabicl). `noWeights`:
 * the message for a weights parameter left null that has no default file. `describe`:
 * what loaded weights are, in a few words (the page shows it under a picked checkpoint).
 */
export const IMPLEMENTATIONS = {
  knn: { run: runDistanceModel },
  attention: { run: runDistanceModel },
  icl_transformer: { run: runTransformer, loadWeights },
  tabular_fm: { run: runTabularFM, loadWeights: loadFmWeights },
  tabicl: { run: runTabicl, loadWeights: loadTabiclWeights, noWeights: TABICL_NO_WEIGHTS,
    describe: describeTabicl },
  tabpfn: { run: runTabpfn, loadWeights: loadTabpfnWeights, noWeights: TABPFN_NO_WEIGHTS,
    describe: describeTabpfn },
  // a table's leading categorical columns (its encoding, tabfm's numericTable) are d.nCategorical
  tabfm: { run: (engine, model, d, options) => runTabfm(engine, model,
    { ...d, nCategorical: d.categoricalIndices?.length ?? 0 }, options),
  loadWeights: loadTabfmWeights, noWeights: TABFM_NO_WEIGHTS, describe: describeTabfm },
};

/** The number of weights in loaded weights ({tensors: Map(name → Float32Array)}); null before they are read. */
export function parameterCount(weights) {
  if (!(weights?.tensors instanceof Map)) return null;
  let n = 0;
  for (const t of weights.tensors.values()) n += t.length;
  return n;
}

function describeTabpfn({ config: c }) {
  const kind = c.max_num_classes > 0 ? `classifier (max_num_classes ${c.max_num_classes})`
    : `regressor (${c.num_buckets} buckets)`;
  return `TabPFN v3 ${kind}, embed_dim ${c.embed_dim}, ${c.feat_agg_num_blocks} row blocks + ` +
    `${c.nlayers} ICL layers`;
}

function describeTabfm(w) {
  if (!w.config) return "Google TabFM checkpoint folders (the task picks classification/ or regression/)";
  const c = w.config;
  const kind = c.is_classifier ? `classifier (max_classes ${c.max_classes})` : "regressor";
  return `Google TabFM ${kind}, embed_dim ${c.embed_dim}, two column stages of ${c.col_num_blocks} ` +
    `and two row stages of ${c.row_num_blocks} blocks, ${c.icl_num_blocks} ICL blocks`;
}

function describeTabicl({ config: c }) {
  const kind = c.max_classes > 0 ? `classifier (max_classes ${c.max_classes})` : "regressor";
  return `TabICL ${kind}, embed_dim ${c.embed_dim}, ${c.row_num_blocks} row blocks + ` +
    `${c.icl_num_blocks} ICL layers`;
}

export class Bridge {
  /**
   * Acquire an adapter and device. Options: `gpu` (a GPU object, e.g. the `webgpu`
   * package's create([]) in Node; default navigator.gpu), `powerPreference`, and
   * `defaultWeights` (the URL/path of the default weights folder, ending in "/", or of a
   * manifest in it: a weights parameter left null loads the registry's `file` from there).
   * Throws an Error saying why when WebGPU or an adapter is missing.
   */
  static async create({ gpu, powerPreference, defaultWeights } = {}) {
    const found = findGpu(gpu);
    const { adapter, device, adapterInfo } = await requestDevice(found, { powerPreference });
    return new Bridge(found, adapter, device, adapterInfo, defaultWeights);
  }

  constructor(gpu, adapter, device, adapterInfo, defaultWeights) {
    // Held so that the GPU object lives as long as the bridge (dawn.node frees its
    // instance when the object is collected).
    this.gpu = gpu;
    this.adapter = adapter;
    this.device = device;
    this.adapterInfo = adapterInfo;
    this.defaultWeights = defaultWeights ?? null;
    this.engine = new Engine(device);
    this.warmups = [];
    this.lost = null;
    device.lost?.then((info) => { this.lost = info; });
    this._weights = new Map();
  }

  /** Counters that show reuse: pipelines/buffers created, submits, context passes. */
  get stats() {
    return { ...this.engine.stats };
  }

  /** Weights for parameter `key` of `name`: `source`, else the registry's default file. */
  async _loadWeights(name, key, source) {
    let src = source;
    if (src === null && !modelEntry(name).params[key].file) {
      throw new Error(IMPLEMENTATIONS[name].noWeights ?? `${name}: ${key} is null and has no default file`);
    }
    if (src === null) {
      if (this.defaultWeights === null) {
        throw new Error(`${name}: ${key} is null and the Bridge has no defaultWeights ` +
          `(pass Bridge.create({defaultWeights: URL}) or model.${key})`);
      }
      src = resolveBeside(this.defaultWeights, modelEntry(name).params[key].file);
    }
    const load = IMPLEMENTATIONS[name].loadWeights;
    if (typeof src === "object" && !(src instanceof URL)) return load(src);
    const url = `${name}:${src}`;
    if (!this._weights.has(url)) {
      const loading = load(src);
      this._weights.set(url, loading);
      loading.catch(() => this._weights.delete(url));
    }
    return this._weights.get(url);
  }

  async _run(model, d, options = {}) {
    if (this.lost) throw new Error(`the WebGPU device was lost: ${this.lost.message}`);
    const loaded = { ...model };
    for (const [key, spec] of Object.entries(modelEntry(model.name).params)) {
      if (spec.type === "weights") loaded[key] = await this._loadWeights(model.name, key, model[key]);
    }
    return IMPLEMENTATIONS[model.name].run(this.engine, loaded, d, options);
  }

  /**
   * Predict with `model` ({name, ...params} of a registry model, optional label and
   * batchRows; unknown keys are an error) on
   * `data` ({xTrain, yTrain, xTest, nFeatures, task, nClasses}). Resolves to
   * {output: Float32Array, timings: {embed, layers, head, total, batches, gpu[, warmup]}}
   * (gpu: the same stages from GPU timestamps, null without timestamp-query).
   * With {warmup: true} an untimed pass runs first (pipeline compilation, allocation);
   * its wall time is reported as timings.warmup and appended to bridge.warmups.
   * `onMember(done, total)`: after each ensemble member of the timed pass (tabicl).
   */
  async predict(model, data, { warmup = false, onMember } = {}) {
    const checked = checkModel(model);
    const d = validateData(data, { allowNan: modelEntry(checked.name).missing_cells === true });
    checkTask(checked.name, d.task);
    checkLimits(checked.name, { features: d.F, classes: d.C || null, context_rows: d.n });
    let warm = null;
    if (warmup) {
      const t0 = now();
      await this._run(checked, d);
      warm = now() - t0;
      this.warmups.push({ model: modelLabel(model), n_train: d.n, n_test: d.m, warmup_ms: warm });
    }
    const result = await this._run(checked, d, { onMember });
    if (warm !== null) result.timings.warmup = warm;
    return result;
  }

  destroy() {
    this.engine.destroy();
    this.device.destroy();
  }
}
