"""Our WebGPU engine beside ONNX Runtime Web on the same model, inputs and browser.

``python bench/bench_webgpu_peer.py [--runs 20] [--shapes all|small]`` serves the bridge, the
shipped ``tabular_fm`` weights, ``bench/peer/tabular_fm_binary.onnx`` (the same weights,
exported by ``scripts/export_tfm_onnx.py``) and ORT-Web's files (the npm dev dependency
``onnxruntime-web`` in webgpu_bridge/node_modules) on 127.0.0.1, cross-origin isolated so
ORT's wasm may use threads, and opens one headless Chromium with ``--enable-unsafe-webgpu``
(every non-local request aborted). For each shape (context + query rows × features, binary
task) it times, after two warm-up calls (``--warmups``), ``runs`` calls of:

(``--large-runs``, default 5, after ``--large-warmups``, default 2, at 1024 + 256 rows,
where one call takes minutes on a software adapter)

* **ours**: ``Bridge.predict({name: "tabular_fm"})`` (standardization, upload, context pass
  with its KV cache, query batch, read-back);
* **ORT webgpu** and **ORT wasm**: the same standardization in JavaScript, then
  ``InferenceSession.run`` with the WebGPU or the wasm execution provider (outputs read),

and prints the median wall time (``performance.now()``) of each, their ratio and the largest
|probability difference| from ours. The table also goes to ``bench/out/peer.md``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser_harness import chromium, playwright_session, serving  # noqa: E402

ORT_DIST = ROOT / "webgpu_bridge" / "node_modules" / "onnxruntime-web" / "dist"
ONNX = ROOT / "bench" / "peer" / "tabular_fm_binary.onnx"
SHAPES = [(128, 48, 4), (128, 48, 30), (128, 48, 64), (1024, 256, 30)]

PAGE = """<!doctype html><meta charset="utf-8"><title>peer benchmark</title>
<script type="module">
import { Bridge } from "/bridge/index.js";
import * as ort from "/ort/ort.webgpu.min.mjs";
ort.env.wasm.wasmPaths = "/ort/";
ort.env.wasm.numThreads = navigator.hardwareConcurrency;
window.ort = ort;
window.bridge = await Bridge.create({defaultWeights: "/weights/"});
const median = (a) => { const s = [...a].sort((x, y) => x - y); const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
function inputs(d) {
  const {n, m, F} = d;
  const mean = new Float64Array(F), sd = new Float64Array(F);
  const x = d.xTrain;
  for (let i = 0; i < n * F; i++) mean[i % F] += x[i] / n;
  for (let i = 0; i < n * F; i++) sd[i % F] += (x[i] - mean[i % F]) ** 2 / n;
  for (let f = 0; f < F; f++) { sd[f] = Math.sqrt(sd[f]); if (sd[f] < 1e-12) sd[f] = 1; }
  const z = (x, rows) => { const o = new Float32Array(rows * F);
    for (let i = 0; i < rows * F; i++) {
      o[i] = Math.min(10, Math.max(-10, (x[i] - mean[i % F]) / sd[i % F]));
    }
    return o; };
  return { x_ctx: new ort.Tensor("float32", z(d.xTrain, n), [1, n, F]),
    y_ctx: new ort.Tensor("int64", BigInt64Array.from(d.yTrain, (v) => BigInt(v)), [1, n]),
    x_q: new ort.Tensor("float32", z(d.xTest, m), [1, m, F]) };
}
async function timeIt(label, call, runs, warmups) {
  for (let w = 0; w < warmups; w++) await call();
  const times = []; let out;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    out = await call();
    times.push(performance.now() - t0);
    console.log(`${label}: run ${r + 1}/${runs} ${times[r].toFixed(1)} ms`);
  }
  return { median: median(times), out };
}
window.runShape = async ({n, m, F, xTrain, yTrain, xTest, runs, warmups}) => {
  const d = {xTrain: Float32Array.from(xTrain), yTrain: Float32Array.from(yTrain),
    xTest: Float32Array.from(xTest), nFeatures: F, task: "binary", nClasses: 2, n, m, F};
  const model = {name: "tabular_fm", weights: null, batchRows: m};
  const ours = await timeIt("ours", async () => (await window.bridge.predict(model, d)).output,
    runs, warmups);
  const result = {ours: ours.median};
  for (const ep of ["webgpu", "wasm"]) {
    const session = await ort.InferenceSession.create("/peer/tabular_fm_binary.onnx",
      {executionProviders: [ep]});
    const t = await timeIt(`ORT ${ep}`, async () => (await session.run(inputs(d))).proba.getData(),
      runs, warmups);
    let diff = 0;
    for (let i = 0; i < ours.out.length; i++) {
      diff = Math.max(diff, Math.abs(ours.out[i] - t.out[i]));
    }
    result[ep] = t.median; result[ep + "_diff"] = diff;
    await session.release();
  }
  return result;
};
window.peerReady = true;
</script>"""


class Handler(http.server.SimpleHTTPRequestHandler):
    """Mounted folders, correct module types, cross-origin isolation, no logging."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript", ".wgsl": "text/plain",
                      ".wasm": "application/wasm"}

    def __init__(self, *args, mounts, **kwargs):
        self.mounts = mounts
        super().__init__(*args, **kwargs)

    def translate_path(self, path: str) -> str:
        clean = path.split("?")[0]
        for prefix, folder in self.mounts.items():
            if clean.startswith(prefix):
                return str(folder / clean[len(prefix):])
        return "/nonexistent"

    def end_headers(self) -> None:
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format, *args) -> None:
        pass


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--large-runs", type=int, default=5,
                    help="timed runs at 1024 + 256 rows (default 5: on a software adapter "
                         "one call takes seconds)")
    ap.add_argument("--warmups", type=int, default=2, help="untimed calls before the runs")
    ap.add_argument("--large-warmups", type=int, default=2,
                    help="untimed calls before the runs at 1024 + 256 rows")
    ap.add_argument("--shapes", choices=["all", "small"], default="all")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first SKIP shapes")
    args = ap.parse_args(argv)
    for need in (ORT_DIST, ONNX):
        if not need.exists():
            sys.exit(f"bench_webgpu_peer: {need} is missing (npm ci in webgpu_bridge; "
                     "scripts/export_tfm_onnx.py for the .onnx)")
    shapes = (SHAPES if args.shapes == "all" else SHAPES[:2])[args.skip:]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "index.html").write_text(PAGE)
        (Path(tmp) / ONNX.name).write_bytes(ONNX.read_bytes())
        mounts = {"/bridge/": ROOT / "webgpu_bridge" / "src",
                  "/weights/": ROOT / "pkg" / "arenalite" / "models" / "weights",
                  "/ort/": ORT_DIST, "/peer/": Path(tmp)}
        handler = functools.partial(Handler, mounts=mounts)
        with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url, \
                playwright_session() as pw, chromium(pw, url) as browser:
            page = browser.context.new_page()
            page.set_default_timeout(0)
            page.on("console", lambda msg: print(f"  {msg.text}", flush=True))
            page.goto(url + "/peer/index.html")
            page.wait_for_function("window.peerReady === true")
            adapter = page.evaluate("() => window.bridge.adapterInfo.label")
            for n, m, f in shapes:
                rng = np.random.default_rng(n + m + f)
                x_train = rng.normal(size=(n, f)).astype(np.float32)
                y = (x_train[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
                x_test = rng.normal(size=(m, f)).astype(np.float32)
                large = n >= 1024
                runs = args.large_runs if large else args.runs
                warmups = args.large_warmups if large else args.warmups
                res = page.evaluate("(a) => window.runShape(a)", {
                    "n": n, "m": m, "F": f, "xTrain": x_train.ravel().tolist(),
                    "yTrain": y.tolist(), "xTest": x_test.ravel().tolist(),
                    "runs": runs, "warmups": warmups})
                rows.append({"shape": f"{n} + {m} rows × {f}", "runs": runs,
                             "warmups": warmups, **res})
                print(json.dumps(rows[-1]), flush=True)
    lines = [f"Adapter: {adapter}; median wall ms of the timed runs after the warm-up calls.",
             "",
             "| shape | warm-ups + runs | ours (WebGPU) | ORT-Web webgpu | ORT-Web wasm "
             "| ours / ORT webgpu | max diff webgpu | max diff wasm |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['shape']} | {r['warmups']} + {r['runs']} | {r['ours']:.1f} "
                     f"| {r['webgpu']:.1f} | {r['wasm']:.1f} "
                     f"| {r['ours'] / r['webgpu']:.2f} | {r['webgpu_diff']:.1e} "
                     f"| {r['wasm_diff']:.1e} |")
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "peer.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
