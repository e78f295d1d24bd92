// Rows of the results table (docs/ARCHITECTURE.md), with exactly its snake_case keys.

export const RESULT_COLUMNS = ["model", "dataset", "task", "metric", "score", "error",
  "split_id", "repeat", "fold", "seed", "n_train", "n_test", "runner", "device", "embed_ms",
  "layers_ms", "head_ms", "total_ms", "rows_per_s", "gpu_embed_ms", "gpu_layers_ms", "gpu_head_ms",
  "gpu_total_ms", "layer_times_ms", "gpu_layer_times_ms"];

/** Per-layer times in one CSV field: the ms of each layer in order, joined by ";" (runner.py's layer_times). */
export function layerTimes(layers) {
  return layers.map((v) => String(Number(v.toPrecision(6)))).join(";");
}

/**
 * One results-table row for a model on one split, from its score and stage timings; the
 * gpu_* columns are the GPU timestamps' stage times, null (an empty CSV field) without them.
 * layer_times_ms / gpu_layer_times_ms (the last columns) hold each layer's ms, ";"-joined.
 */
export function resultRow({ model, dataset, task, scored, split, nFolds, device, timings }) {
  const layers = timings.layers.reduce((a, b) => a + b, 0);
  const gpu = timings.gpu ?? null;
  const nTest = split.test.length;
  return {
    model, dataset, task,
    metric: scored.metric, score: scored.score, error: scored.error,
    split_id: split.id, repeat: split.repeat, fold: split.fold,
    seed: split.repeat * nFolds + split.fold,
    n_train: split.train.length, n_test: nTest,
    runner: "webgpu", device,
    embed_ms: timings.embed, layers_ms: layers, head_ms: timings.head, total_ms: timings.total,
    rows_per_s: timings.total > 0 ? nTest / (timings.total / 1000) : Infinity,
    gpu_embed_ms: gpu ? gpu.embed : null, gpu_layers_ms: gpu ? gpu.layers.reduce((a, b) => a + b, 0) : null,
    gpu_head_ms: gpu ? gpu.head : null, gpu_total_ms: gpu ? gpu.total : null,
    layer_times_ms: layerTimes(timings.layers), gpu_layer_times_ms: gpu ? layerTimes(gpu.layers) : null,
  };
}
