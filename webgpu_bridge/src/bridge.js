// Bridge: one WebGPU device, its pipelines and buffers, and predict() for the three
// in-context models of docs/models.md (SPEC §8 API contract).
import { validateData } from "./data.js";
import { runDistanceModel } from "./distance_models.js";
import { Engine, now } from "./engine.js";
import { findGpu, requestDevice } from "./gpu.js";
import { runTransformer } from "./transformer.js";
import { MODELS, modelLabel } from "./models.js";
import { loadWeights } from "./weights.js";

export class Bridge {
  /**
   * Acquire an adapter and device. Options: `gpu` (a GPU object, e.g. the `webgpu`
   * package's create([]) in Node; default navigator.gpu), `powerPreference`, and
   * `defaultWeights` (manifest URL/path used when a transformer model has weights: null).
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

  async _loadWeights(source) {
    const src = source ?? this.defaultWeights;
    if (src === null || src === undefined) {
      throw new Error("icl_transformer: weights is null and the Bridge has no defaultWeights " +
        "(pass Bridge.create({defaultWeights: URL}) or model.weights)");
    }
    if (typeof src === "object" && !(src instanceof URL)) return loadWeights(src);
    const key = String(src);
    if (!this._weights.has(key)) {
      const loading = loadWeights(src);
      this._weights.set(key, loading);
      loading.catch(() => this._weights.delete(key));
    }
    return this._weights.get(key);
  }

  async _run(model, d) {
    if (this.lost) throw new Error(`the WebGPU device was lost: ${this.lost.message}`);
    if (model.name === "icl_transformer") {
      return runTransformer(this.engine, model, d, await this._loadWeights(model.weights));
    }
    return runDistanceModel(this.engine, model, d);
  }

  /**
   * Predict with `model` ({name: "knn"|"attention"|"icl_transformer", ...params}) on
   * `data` ({xTrain, yTrain, xTest, nFeatures, task, nClasses}). Resolves to
   * {output: Float32Array, timings: {embed, layers, head, total, batches[, warmup]}}.
   * With {warmup: true} an untimed pass runs first (pipeline compilation, allocation);
   * its wall time is reported as timings.warmup and appended to bridge.warmups.
   */
  async predict(model, data, { warmup = false } = {}) {
    if (!model || typeof model !== "object" || !MODELS.includes(model.name)) {
      throw new RangeError(`model.name must be one of ${MODELS.join(", ")}, got ` +
        `${JSON.stringify(model?.name ?? model)}`);
    }
    const d = validateData(data);
    let warm = null;
    if (warmup) {
      const t0 = now();
      await this._run(model, d);
      warm = now() - t0;
      this.warmups.push({ model: modelLabel(model), n_train: d.n, n_test: d.m, warmup_ms: warm });
    }
    const result = await this._run(model, d);
    if (warm !== null) result.timings.warmup = warm;
    return result;
  }

  destroy() {
    this.engine.destroy();
    this.device.destroy();
  }
}
