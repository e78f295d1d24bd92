// The RMSNorm and SwiGLU operators (src/operators.js) on dawn.node, spawned by
// tabfm_gpu_ops.test.js with the Vulkan SwiftShader environment: seeded inputs, the GPU's
// outputs written as JSON to argv[2] with the inputs, for the test's float64 reference.
import { writeFileSync } from "node:fs";
import { create, globals } from "webgpu";
import { Bridge } from "../src/index.js";
import { Operators } from "../src/operators.js";

Object.assign(globalThis, globals);

/** Deterministic float32 values in [-scale, scale) (a linear congruential generator). */
function values(n, seed, scale) {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return Math.fround((s / 2 ** 32 * 2 - 1) * scale);
  });
}

const bridge = await Bridge.create({ gpu: create([]) });
const engine = bridge.engine;
const ops = await Operators.create(engine, []);
const up = (name, a) => engine.upload(`tabfm.test.${name}`, a);
const report = { adapter: bridge.adapterInfo ?? null, cases: [] };

// RMSNorm: model width with a weight, into an offset of a bigger buffer; head dim rows
// (q/k norm) in place; no weight; one row of a large width.
const rmsCases = [
  { name: "width_weight", rows: 37, D: 24, weighted: true, xOff: 24 * 3, outOff: 24 * 5, scale: 3 },
  { name: "head_dim_in_place", rows: 70, D: 8, weighted: true, inPlace: true, xOff: 16, outOff: 16, scale: 50 },
  { name: "no_weight", rows: 130, D: 16, weighted: false, xOff: 0, outOff: 0, scale: 1e-3 },
  { name: "wide_row", rows: 1, D: 1000, weighted: true, xOff: 0, outOff: 0, scale: 2 },
  { name: "accumulate", rows: 33, D: 12, weighted: true, accumulate: true, xOff: 12, outOff: 24, scale: 4 },
];
for (const [i, c] of rmsCases.entries()) {
  const x = values(c.xOff + c.rows * c.D, 11 + i, c.scale);
  const g = c.weighted ? values(c.D, 101 + i, 1.5) : null;
  const xb = up(`rms.x.${i}`, x);
  const base = c.accumulate ? values(c.outOff + c.rows * c.D, 201 + i, 5) : null;
  const out = c.inPlace ? xb : base ? up(`rms.base.${i}`, base)
    : engine.buffer(`tabfm.test.rms.out.${i}`, (c.outOff + c.rows * c.D) * 4);
  await engine.stage((pass) => ops.rmsNorm(pass, { x: xb, xOff: c.xOff, rows: c.rows, D: c.D, eps: 1e-6,
    g: g ? up(`rms.g.${i}`, g) : null, out, outOff: c.outOff, accumulate: Boolean(c.accumulate) }));
  const got = await engine.read(out, c.outOff + c.rows * c.D);
  report.cases.push({ kind: "rmsNorm", ...c, x: Array.from(x), g: g && Array.from(g),
    base: base && Array.from(base.subarray(c.outOff)), got: Array.from(got.subarray(c.outOff)) });
}

// SwiGLU: separate gate and up; the two halves of one [rows x 2N] product into a strided
// out; arguments past exp's range (silu saturates to v or -0).
const rows = 9;
const N = 21;
const gate = values(rows * N, 7, 12);
const upv = values(rows * N, 8, 4);
const out1 = engine.buffer("tabfm.test.swiglu.out1", rows * N * 4);
const both = Float32Array.from({ length: rows * 2 * N }, (_, k) => {
  const r = Math.floor(k / (2 * N));
  const c = k % (2 * N);
  return c < N ? gate[r * N + c] : upv[r * N + c - N];
});
const packed = up("swiglu.both", both);
const out2 = engine.buffer("tabfm.test.swiglu.out2", (5 + rows * (N + 3)) * 4);
const extreme = Float32Array.of(-200, -100, -88, -87.5, -30, -1e-30, 0, 1e-30, 30, 88, 100, 200);
const ones = new Float32Array(extreme.length).fill(1);
const out3 = engine.buffer("tabfm.test.swiglu.out3", extreme.length * 4);
await engine.stage((pass) => {
  ops.swiglu(pass, { rows, N, gate: up("swiglu.gate", gate), up: up("swiglu.up", upv), out: out1 });
  ops.swiglu(pass, { rows, N, gate: packed, gateStride: 2 * N, up: packed, upOff: N, upStride: 2 * N, out: out2,
    outOff: 5, outStride: N + 3 });
  ops.swiglu(pass, { rows: 1, N: extreme.length, gate: up("swiglu.extreme", extreme), up: up("swiglu.ones", ones),
    out: out3 });
});
const strided = await engine.read(out2, 5 + rows * (N + 3));
const unstrided = new Float32Array(rows * N);
for (let r = 0; r < rows; r++) unstrided.set(strided.subarray(5 + r * (N + 3), 5 + r * (N + 3) + N), r * N);
report.cases.push({ kind: "swiglu", name: "separate", gate: Array.from(gate), up: Array.from(upv),
  got: Array.from(await engine.read(out1, rows * N)) });
report.cases.push({ kind: "swiglu", name: "packed_strided", gate: Array.from(gate), up: Array.from(upv),
  got: Array.from(unstrided) });
report.cases.push({ kind: "swiglu", name: "extreme", gate: Array.from(extreme), up: Array.from(ones),
  got: Array.from(await engine.read(out3, extreme.length)) });

writeFileSync(process.argv[2], JSON.stringify(report));
