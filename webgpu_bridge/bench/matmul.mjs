// GFLOP/s of the bridge's linear kernel (src/kernels/linear.wgsl, input-major weights) under dawn.node, on the
// transformer's shapes and a few square ones: the median of --repeats timed dispatches
// after one warm-up, by GPU timestamps when the adapter offers them, else wall time.
//
//   node bench/matmul.mjs [--repeats 7] [--kernel FILE --tile ROWSxCOLS]
//
// --kernel times another WGSL file with the same bindings and the old 4-field uniform
// (M, K, N, accumulate: e.g. matmul.wgsl from git) whose workgroups cover --tile outputs; prints one JSON line per shape.
// bench/bench_webgpu_matmul.py sets up Vulkan (SwiftShader) and prints the table.
import { readFile } from "node:fs/promises";
import { create, globals } from "webgpu";
import { Bridge, LINEAR_TILE } from "../src/index.js";
import { StageTimer } from "../src/timing.js";

Object.assign(globalThis, globals);
const SHAPES = [[1024, 32, 80], [1024, 80, 80], [1024, 80, 64], [1024, 64, 80], [256, 256, 256],
  [512, 512, 512], [1024, 1024, 1024]];

function options(argv) {
  const get = (flag, fallback) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : fallback);
  const [rows, cols] = get("--tile", `${LINEAR_TILE.rows}x${LINEAR_TILE.cols}`).split("x").map(Number);
  return { repeats: Number(get("--repeats", "7")), kernel: get("--kernel", null), rows, cols };
}

async function pipelineOf(bridge, kernel) {
  if (!kernel) return bridge.engine.pipeline("linear");
  const module = bridge.device.createShaderModule({ code: await readFile(kernel, "utf8") });
  return bridge.device.createComputePipelineAsync({ layout: "auto", compute: { module, entryPoint: "main" } });
}

async function timeShape(engine, pipeline, [M, K, N], opt) {
  const random = (n) => Float32Array.from({ length: n }, (_, i) => ((i * 2654435761) % 1000) / 1000 - 0.5);
  // linear.wgsl: flags bias (1) + input-major weights (16), dense strides
  const fields = opt.kernel ? [M, K, N, 0] : [M, K, N, 17, K, 0, 0, 0, N, 0];
  const bind = { 0: engine.uniform(fields.map((v) => ["u32", v])),
    1: engine.upload("bench.a", random(M * K)), 2: engine.upload("bench.w", random(K * N)),
    3: engine.upload("bench.b", random(N)), 4: engine.buffer("bench.out", M * N * 4) };
  const groups = [Math.ceil(N / opt.cols), Math.ceil(M / opt.rows), 1];
  const ms = [];
  for (let r = 0; r <= opt.repeats; r++) {
    const timer = new StageTimer(engine, 1);
    await timer.stage(0, (pass) => engine.dispatch(pass, pipeline, bind, groups));
    const t = await timer.finish();
    if (r > 0) ms.push(t.gpu ? t.gpu.layers[0] : t.layers[0]);
  }
  ms.sort((a, b) => a - b);
  const median = ms[ms.length >> 1];
  return { M, K, N, ms: median, gflops: (2 * M * K * N) / (median * 1e6), clock: engine.timestamps ? "gpu" : "wall" };
}

const keepAlive = setInterval(() => {}, 1000);
const opt = options(process.argv.slice(2));
const bridge = await Bridge.create({ gpu: create([]) });
const pipeline = await pipelineOf(bridge, opt.kernel);
for (const shape of SHAPES) {
  const result = await timeShape(bridge.engine, pipeline, shape, opt);
  console.log(JSON.stringify({ adapter: bridge.adapterInfo.description, kernel: opt.kernel ?? "src/kernels/linear.wgsl", ...result }));
}
bridge.destroy();
clearInterval(keepAlive);
process.exit(0);
