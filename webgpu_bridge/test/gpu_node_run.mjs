// One GPU run in Node through the `webgpu` package (dawn.node): each model on each task,
// compared with the float64 reference. Spawned by gpu_node.test.js with the Vulkan
// SwiftShader environment; prints one JSON line and exits non-zero on failure.
import { create, globals } from "webgpu";
import { Bridge, MATMUL_TILE } from "../src/index.js";
import { loadWeights } from "../src/weights.js";
import { SMALL_CONFIG, makeData, makeWeights, rng } from "./fixtures.js";
import { REFERENCES } from "./reference.js";

Object.assign(globalThis, globals);

/** The tiled matmul kernel alone on shapes that are not multiples of its 32 x 32 tile. */
async function matmulChecks(engine) {
  const pipeline = await engine.pipeline("matmul");
  const checks = [];
  for (const [M, K, N, acc] of [[1, 1, 1, 0], [5, 33, 7, 1], [70, 17, 129, 0], [33, 80, 1, 1], [64, 64, 64, 0]]) {
    const r = rng(M * 1000 + K * 10 + N);
    const [a, w, b, o] = [M * K, K * N, N, M * N].map((n) => Float32Array.from({ length: n }, () => r() - 0.5));
    const bind = { 0: engine.uniform("t.mm", [["u32", M], ["u32", K], ["u32", N], ["u32", acc]]),
      1: engine.upload("t.a", a), 2: engine.upload("t.w", w), 3: engine.upload("t.b", b), 4: engine.upload("t.o", o) };
    await engine.stage((pass) => engine.dispatch(pass, pipeline, bind,
      [Math.ceil(N / MATMUL_TILE.cols), Math.ceil(M / MATMUL_TILE.rows), 1]));
    const got = await engine.read(bind[4], M * N);
    let maxDiff = 0;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let ref = b[j] + (acc ? o[i * N + j] : 0);
        for (let k = 0; k < K; k++) ref += a[i * K + k] * w[k * N + j];
        maxDiff = Math.max(maxDiff, Math.abs(got[i * N + j] - ref));
      }
    }
    checks.push({ shape: [M, K, N, acc], maxDiff });
  }
  return checks;
}
const keepAlive = setInterval(() => {}, 1000);
const bridge = await Bridge.create({ gpu: create([]) });
const weights = await loadWeights(await makeWeights(SMALL_CONFIG));
const report = { adapter: bridge.adapterInfo, runs: [] };
for (const task of ["binary", "multiclass", "regression"]) {
  const d = makeData(task, { seed: task.length });
  for (const model of [{ name: "knn", k: 5 }, { name: "attention" },
    { name: "icl_transformer", weights, batchRows: 10 }]) {
    const { output, timings } = await bridge.predict(model, d);
    const ref = REFERENCES[model.name](model, d);
    let maxDiff = 0;
    for (let i = 0; i < ref.length; i++) maxDiff = Math.max(maxDiff, Math.abs(output[i] - ref[i]));
    report.runs.push({ task, model: model.name, n: ref.length, outLen: output.length, maxDiff, timings });
  }
}
report.matmul = await matmulChecks(bridge.engine);
report.stats = bridge.stats;
bridge.destroy();
console.log(JSON.stringify(report));
clearInterval(keepAlive);
process.exit(0);
