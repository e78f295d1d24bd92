// icl_transformer (docs/models.md) on the GPU. The context pass runs once per call and
// leaves each layer's context keys/values in GPU buffers (the KV cache); query rows then
// run in batches that attend to those cached keys/values only.
import { columnStats, gpuLabels, standardize, storeBatch, targetStats } from "./data.js";
import { batchRows, now, workgroups } from "./engine.js";

const weightBuffers = new WeakMap();

/** GPU buffers of a weights object, uploaded once per engine and weights. */
function uploadWeights(engine, weights) {
  let perEngine = weightBuffers.get(weights);
  if (!perEngine) weightBuffers.set(weights, (perEngine = new WeakMap()));
  let buffers = perEngine.get(engine);
  if (!buffers) {
    buffers = new Map();
    for (const [name, data] of weights.tensors) {
      buffers.set(name, engine.upload(`w:${weights.sha256}:${name}`, data));
    }
    perEngine.set(engine, buffers);
  }
  return buffers;
}

export async function runTransformer(engine, model, d, weights) {
  const cfg = weights.config;
  const { n, m, F, C, task } = d;
  if (F > cfg.d_in) {
    throw new RangeError(`icl_transformer: ${F} features exceed the weights' d_in = ${cfg.d_in}`);
  }
  if (C > cfg.max_classes) {
    throw new RangeError(`icl_transformer: ${C} classes exceed the weights' max_classes = ` +
      `${cfg.max_classes}`);
  }
  const D = cfg.d_model;
  const H = cfg.n_heads;
  const dh = D / H;
  const L = cfg.n_layers;
  const B = batchRows(model, 1024, m);
  const W = uploadWeights(engine, weights);
  const w = (name) => W.get(name);
  const [pMat, pGelu, pLn, pAttn, pHead, pLabel] = await Promise.all(
    ["matmul", "gelu_mlp", "layer_norm", "attention", "head", "embed"].map((k) => engine.pipeline(k)));

  const matmul = (pass, role, a, M, K, N, wt, bias, out, accumulate = 0) => {
    const u = engine.uniform(role, [["u32", M], ["u32", K], ["u32", N], ["u32", accumulate]]);
    engine.dispatch(pass, pMat, { 0: u, 1: a, 2: wt, 3: bias, 4: out },
      [workgroups(N, 16), workgroups(M, 16), 1]);
  };
  const layerNorm = (pass, role, x, rows, g, b, out) => {
    const u = engine.uniform(role, [["u32", rows], ["u32", D], ["f32", cfg.ln_eps]]);
    engine.dispatch(pass, pLn, { 0: u, 1: x, 2: g, 3: b, 4: out }, [workgroups(rows, 64), 1, 1]);
  };
  // One layer on `rows` rows of the residual stream h (prefix "ctx" or "q"). The context
  // pass writes layer l's K/V cache; its last layer stops there (that output is never
  // read). Query batches read the cache.
  const layer = (pass, pre, l, rows, bufs, context) => {
    const p = `layers.${l}.`;
    const kv = kvCache[l];
    layerNorm(pass, `${pre}.${l}.ln1`, bufs.h, rows, w(`${p}ln1.g`), w(`${p}ln1.b`), bufs.a);
    if (context) {
      matmul(pass, `${pre}.${l}.k`, bufs.a, rows, D, D, w(`${p}attn.wk`), w(`${p}attn.bk`), kv.k);
      matmul(pass, `${pre}.${l}.v`, bufs.a, rows, D, D, w(`${p}attn.wv`), w(`${p}attn.bv`), kv.v);
      if (l === L - 1) return;
    }
    matmul(pass, `${pre}.${l}.q`, bufs.a, rows, D, D, w(`${p}attn.wq`), w(`${p}attn.bq`), bufs.q);
    const ua = engine.uniform(`${pre}.${l}.attn`, [["u32", rows], ["u32", n], ["u32", D],
      ["u32", H], ["u32", dh], ["f32", 1 / Math.sqrt(dh)]]);
    engine.dispatch(pass, pAttn, { 0: ua, 1: bufs.q, 2: kv.k, 3: kv.v, 4: bufs.o },
      [workgroups(rows * H, 64), 1, 1]);
    matmul(pass, `${pre}.${l}.o`, bufs.o, rows, D, D, w(`${p}attn.wo`), w(`${p}attn.bo`), bufs.h, 1);
    layerNorm(pass, `${pre}.${l}.ln2`, bufs.h, rows, w(`${p}ln2.g`), w(`${p}ln2.b`), bufs.a);
    const ug = engine.uniform(`${pre}.${l}.mlp1`, [["u32", rows], ["u32", D], ["u32", cfg.d_mlp]]);
    engine.dispatch(pass, pGelu, { 0: ug, 1: bufs.a, 2: w(`${p}mlp.w1`), 3: w(`${p}mlp.b1`), 4: bufs.mid },
      [workgroups(cfg.d_mlp, 16), workgroups(rows, 16), 1]);
    matmul(pass, `${pre}.${l}.mlp2`, bufs.mid, rows, cfg.d_mlp, D, w(`${p}mlp.w2`), w(`${p}mlp.b2`),
      bufs.h, 1);
  };
  const streams = (pre, rows) => ({
    x: engine.buffer(`${pre}.x`, rows * cfg.d_in * 4),
    h: engine.buffer(`${pre}.h`, rows * D * 4),
    a: engine.buffer(`${pre}.a`, rows * D * 4),
    q: engine.buffer(`${pre}.q`, rows * D * 4),
    o: engine.buffer(`${pre}.o`, rows * D * 4),
    mid: engine.buffer(`${pre}.mid`, rows * cfg.d_mlp * 4),
  });

  const timings = { embed: 0, layers: new Array(L).fill(0), head: 0, total: 0, batches: 0 };
  // Context pass: embed (+ label embedding), then every layer; layer l's K/V are cached.
  let t0 = now();
  const stats = columnStats(d.xTrain, n, F);
  const tstats = task === "regression" ? targetStats(d.yTrain) : null;
  const ctx = streams("ctx", n);
  engine.device.queue.writeBuffer(ctx.x, 0, standardize(d.xTrain, n, F, stats, cfg.d_in));
  const y = engine.upload("ctx.y", gpuLabels(d.yTrain, task, tstats));
  const xqAll = standardize(d.xTest, m, F, stats, cfg.d_in);
  const kvCache = Array.from({ length: L }, (_, l) => ({
    k: engine.buffer(`kv.${l}.k`, n * D * 4), v: engine.buffer(`kv.${l}.v`, n * D * 4),
  }));
  timings.embed += now() - t0;
  timings.embed += await engine.stage((pass) => {
    matmul(pass, "ctx.embed", ctx.x, n, cfg.d_in, D, w("embed.w"), w("embed.b"), ctx.h);
    const ul = engine.uniform("ctx.label", [["u32", n], ["u32", D], ["u32", tstats ? 1 : 0]]);
    engine.dispatch(pass, pLabel, { 0: ul, 1: y, 2: w("label.w"), 3: w("label.reg"), 4: ctx.h },
      [workgroups(n * D, 64), 1, 1]);
  });
  for (let l = 0; l < L; l++) {
    timings.layers[l] += await engine.stage((pass) => layer(pass, "ctx", l, n, ctx, true));
  }
  engine.stats.contextPasses = (engine.stats.contextPasses ?? 0) + 1;

  // Query batches: attend to the cached context keys/values; head on the last stream.
  const qs = streams("q", B);
  const width = C || 1;
  const logits = engine.buffer("q.logits", B * cfg.max_classes * 4);
  const out = engine.buffer("q.out", B * width * 4);
  const output = new Float32Array(m * width);
  for (let start = 0; start < m; start += B) {
    const rows = Math.min(B, m - start);
    timings.embed += await engine.stage((pass) => {
      engine.device.queue.writeBuffer(qs.x, 0, xqAll.subarray(start * cfg.d_in, (start + rows) * cfg.d_in));
      matmul(pass, "q.embed", qs.x, rows, cfg.d_in, D, w("embed.w"), w("embed.b"), qs.h);
    });
    for (let l = 0; l < L; l++) {
      timings.layers[l] += await engine.stage((pass) => layer(pass, "q", l, rows, qs, false));
    }
    t0 = now();
    await engine.stage((pass) => {
      layerNorm(pass, "q.head.ln", qs.h, rows, w("head.ln.g"), w("head.ln.b"), qs.a);
      if (tstats) {
        matmul(pass, "q.head.reg", qs.a, rows, D, 1, w("head.reg.w"), w("head.reg.b"), out);
      } else {
        matmul(pass, "q.head.cls", qs.a, rows, D, cfg.max_classes, w("head.cls.w"), w("head.cls.b"), logits);
        const uh = engine.uniform("q.head.softmax", [["u32", rows], ["u32", cfg.max_classes], ["u32", C]]);
        engine.dispatch(pass, pHead, { 0: uh, 1: logits, 2: out }, [workgroups(rows, 64), 1, 1]);
      }
    });
    const part = await engine.read(out, rows * width);
    storeBatch(output, part, start, rows, width, tstats);
    timings.head += now() - t0;
    timings.batches++;
  }
  timings.total = timings.embed + timings.layers.reduce((a, b) => a + b, 0) + timings.head;
  return { output, timings };
}
