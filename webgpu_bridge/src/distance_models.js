// knn and attention (docs/models.md) on the GPU: distances on standardized features,
// then top-k + vote (knn) or softmax over all context rows (attention).
import { columnStats, gpuLabels, standardize, storeBatch, targetStats } from "./data.js";
import { batchRows, now, workgroups } from "./engine.js";
import { modelEntry } from "./models.js";
import { StageTimer } from "./timing.js";

/** Distances held per query batch: 32 Mi floats (128 MiB), within the adapter's limit. */
const MAX_DIST_VALUES = 1 << 25;
/** Largest k the top-k kernel (kernels/knn.wgsl) keeps per query row (the registry's max_webgpu). */
export const KNN_MAX_K = modelEntry("knn").params.k.max_webgpu;

/**
 * The context's one buffer (n rows × F features, float32) within the adapter's binding
 * limit, or one message naming it (the query rows are batched; the context is not).
 */
export function checkContextFits(limits, name, n, F) {
  const limit = Math.min(limits.maxStorageBufferBindingSize ?? Infinity, limits.maxBufferSize ?? Infinity);
  const bytes = n * F * 4;
  if (bytes > limit) {
    throw new Error(`${name} on WebGPU: the context of ${n} rows × ${F} features needs ${bytes} ` +
      `bytes in one buffer, past this adapter's limit of ${limit} bytes ` +
      "(maxStorageBufferBindingSize); use fewer training rows");
  }
}

/** Run knn or attention (model checked by the Bridge) on validated data `d`; resolves to {output, timings}. */
export async function runDistanceModel(engine, model, d) {
  const { n, m, F, C, task } = d;
  const isKnn = model.name === "knn";
  checkContextFits(engine.device.limits, model.name, n, F);
  const k = isKnn ? Math.min(model.k, n) : 0;
  const invT = isKnn ? 0 : 1 / (model.temperature ?? F);
  const distValues = Math.min(MAX_DIST_VALUES, Math.floor(Math.min(
    engine.device.limits.maxStorageBufferBindingSize ?? Infinity, engine.device.limits.maxBufferSize ?? Infinity) / 4));
  const fits = Math.max(1, Math.floor(distValues / n));  // a batch's distances in one buffer
  const B = Math.min(batchRows(model, fits, m), fits);
  const [pDist, pTop, pVote] = await Promise.all([
    engine.pipeline("knn", "distances"), engine.pipeline("knn", "topk"),
    engine.pipeline("labels", isKnn ? "knn_vote" : "softmax_vote")]);

  const timer = new StageTimer(engine, 1);
  let t0 = now();
  const stats = columnStats(d.xTrain, n, F);
  const tstats = task === "regression" ? targetStats(d.yTrain) : null;
  const xc = engine.upload("dm.ctx.x", standardize(d.xTrain, n, F, stats));
  const y = engine.upload("dm.ctx.y", gpuLabels(d.yTrain, task, tstats));
  const xqAll = standardize(d.xTest, m, F, stats);
  await engine.device.queue.onSubmittedWorkDone();
  timer.add("embed", now() - t0);

  const width = C || 1;
  const output = new Float32Array(m * width);
  const dist = engine.buffer("dm.dist", B * n * 4);
  const idx = engine.buffer("dm.idx", B * Math.max(k, 1) * 4);
  const out = engine.buffer("dm.out", B * width * 4);
  for (let start = 0; start < m; start += B) {
    const rows = Math.min(B, m - start);
    t0 = now();
    const xq = engine.upload("dm.q.x", xqAll.subarray(start * F, (start + rows) * F));
    await engine.device.queue.onSubmittedWorkDone();
    timer.add("embed", now() - t0);

    const params = engine.uniform([["u32", rows], ["u32", n], ["u32", F], ["u32", k]]);
    await timer.stage(0, (pass) => {
      engine.dispatch(pass, pDist, { 0: params, 1: xq, 2: xc, 3: dist },
        [workgroups(n, 16), workgroups(rows, 16), 1]);
      if (isKnn) engine.dispatch(pass, pTop, { 0: params, 3: dist, 4: idx }, [workgroups(rows, 64), 1, 1]);
    });

    const vote = engine.uniform([["u32", rows], ["u32", n], ["u32", k], ["u32", C],
      ["f32", invT]]);
    await timer.stage("head", (pass) => {
      const bind = isKnn ? { 0: vote, 1: y, 2: idx, 4: out } : { 0: vote, 1: y, 3: dist, 4: out };
      engine.dispatch(pass, pVote, bind, [workgroups(rows, 64), 1, 1]);
    });
    await timer.settle();
    t0 = now();
    const part = await engine.read(out, rows * width);
    storeBatch(output, part, start, rows, width, tstats);
    timer.add("head", now() - t0);
    timer.batch();
  }
  const timings = await timer.finish();
  return { output, timings };
}
