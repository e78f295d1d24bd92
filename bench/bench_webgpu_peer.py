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

``--model tabicl`` runs TabICLv2 instead (one ensemble member's raw forward, random
full-size weights; the files come from ``scripts/export_tabicl_onnx.py`` under
``build/tabicl_peer/``): at 128 + 48 × 4 and 1,024 + 256 × 30 (3 classes) it times

* **ours**: ``TabICLMember.fitContext`` (uploads, column stage with its inducing-point KV
  cache, row stage, ICL context with its KV cache) + ``queryBatches`` (all query rows in one
  batch, read-back), with the per-layer wall times of its ``StageTimer``;
* **ORT webgpu** and **ORT wasm**: ``InferenceSession.run`` on the exported graph of the
  same weights (outputs read);
* **numpy**: ``arenalite.models.tabicl.forward`` (one member), timed in Python in the same
  run, before the browser opens, with its per-layer times;

and prints medians, ratios, the largest |logit difference| of each peer from ours (and
from numpy) and a per-layer table; also to ``bench/out/peer_tabicl.md``. ``--engines``
picks which of ours / webgpu / wasm run in the browser (e.g. only wasm at the large
shape, where one call of the WebGPU paths takes hours on a software adapter).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]

from browser_harness import chromium, playwright_session, serving  # noqa: E402

ORT_DIST = ROOT / "webgpu_bridge" / "node_modules" / "onnxruntime-web" / "dist"
ONNX = ROOT / "bench" / "peer" / "tabular_fm_binary.onnx"
SHAPES = [(128, 48, 4), (128, 48, 30), (128, 48, 64), (1024, 256, 30)]

# Shared by both models' pages: ORT-Web's module, the median, the timing loop.
PAGE_HEAD = """<!doctype html><meta charset="utf-8"><title>peer benchmark</title>
<script type="module">
import { Bridge } from "/bridge/index.js";
import * as ort from "/ort/ort.webgpu.min.mjs";
ort.env.wasm.wasmPaths = "/ort/";
ort.env.wasm.numThreads = navigator.hardwareConcurrency;
window.ort = ort;
const median = (a) => { const s = [...a].sort((x, y) => x - y); const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
async function timeIt(label, call, runs, warmups) {
  for (let w = 0; w < warmups; w++) {
    const t0 = performance.now();
    await call();
    console.log(`${label}: warm-up ${w + 1}/${warmups} ${(performance.now() - t0).toFixed(1)} ms`);
  }
  const times = [], outs = []; let out;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    out = await call();
    times.push(performance.now() - t0);
    outs.push(out);
    console.log(`${label}: run ${r + 1}/${runs} ${times[r].toFixed(1)} ms`);
  }
  return { median: median(times), times, out, outs };
}
"""

PAGE = PAGE_HEAD + """
window.bridge = await Bridge.create({defaultWeights: "/weights/"});
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
window.runShape = async ({n, m, F, xTrain, yTrain, xTest, runs, warmups}) => {
  const d = {xTrain: Float32Array.from(xTrain), yTrain: Float32Array.from(yTrain),
    xTest: Float32Array.from(xTest), nFeatures: F, task: "binary", nClasses: 2, n, m, F};
  const model = {name: "tabular_fm", weights: null, batchRows: m};
  const ours = await timeIt("ours", async () => (await window.bridge.predict(model, d)).output,
    runs, warmups);
  const result = {ours: ours.median};
  for (const ep of ["webgpu", "wasm"]) {
    const session = await ort.InferenceSession.create("/model/tabular_fm_binary.onnx",
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


CHROMIUM_ARGS: list[str] = []  # --chromium-arg: e.g. a real GPU's flags (bench/gpu_check.sh)


@contextmanager
def bench_page(html: str, mounts: dict[str, Path]) -> Iterator[tuple[object, str]]:
    """``html`` served as /peer/index.html with ``mounts`` (plus the bridge and ORT-Web's
    files), opened in one headless Chromium; yields (page, adapter label)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "index.html").write_text(html)
        mounts = {"/bridge/": ROOT / "webgpu_bridge" / "src", "/ort/": ORT_DIST,
                  "/peer/": Path(tmp), **mounts}
        handler = functools.partial(Handler, mounts=mounts)
        with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url, \
                playwright_session() as pw, \
                chromium(pw, url, extra_args=tuple(CHROMIUM_ARGS)) as browser:
            page = browser.context.new_page()
            page.set_default_timeout(0)
            page.on("console", lambda msg: print(f"  {msg.text}", flush=True))
            page.on("pageerror", lambda exc: print(f"  page error: {exc}", flush=True))
            page.goto(url + "/peer/index.html")
            page.wait_for_function("window.peerReady === true")
            yield page, page.evaluate("() => window.bridge.adapterInfo.label")


def write_table(name: str, lines: list[str]) -> None:
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / name).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def run_tabular_fm(args) -> int:
    for need in (ORT_DIST, ONNX):
        if not need.exists():
            sys.exit(f"bench_webgpu_peer: {need} is missing (npm ci in webgpu_bridge; "
                     "scripts/export_tfm_onnx.py for the .onnx)")
    shapes = (SHAPES if args.shapes == "all" else SHAPES[:2])[args.skip:]
    rows = []
    mounts = {"/weights/": ROOT / "pkg" / "arenalite" / "models" / "weights",
              "/model/": ONNX.parent}
    with bench_page(PAGE, mounts) as (page, adapter):
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
    write_table("peer.md", lines)
    return 0


# --- TabICLv2 (--model tabicl) ---------------------------------------------------------------

TABICL_DIR = ROOT / "build" / "tabicl_peer"
TABICL_WEIGHTS = TABICL_DIR / "tabicl_v2_random.safetensors"
TABICL_SHAPES = [(128, 48, 4), (512, 128, 16), (1024, 256, 30)]
ENGINE_NAMES = {"ours": "ours (WebGPU)", "base": "ours at baseline", "webgpu": "ORT-Web webgpu",
                "wasm": "ORT-Web wasm", "numpy": "numpy", "torch": "torch"}

TABICL_PAGE = PAGE_HEAD + """
import { TabICLMember } from "/bridge/tabicl/model.js";
import { StageTimer } from "/bridge/timing.js";
window.bridge = await Bridge.create();
const counted = { ours: { bridge: window.bridge, Member: TabICLMember, Timer: StageTimer } };
if (__BASELINE__) {
  const base = await import("/bridge_base/index.js");
  counted.base = { bridge: await base.Bridge.create(), Member: base.TabICLMember,
    Timer: (await import("/bridge_base/timing.js")).StageTimer };
}
// What one member's call costs, per stage: dispatches (the engine's dispatch), compute
// passes (beginComputePass), submits and bytes written to the GPU (queue.writeBuffer),
// counted the same way for today's engine and the baseline's.
let tally = null, bucket = "outside stages";
const bump = (key, by = 1) => {
  if (!tally) return;
  tally[bucket] ??= { dispatches: 0, passes: 0, submits: 0, bytes: 0 };
  tally[bucket][key] += by;
};
const beginPass = GPUCommandEncoder.prototype.beginComputePass;
GPUCommandEncoder.prototype.beginComputePass = function (...a) {
  bump("passes");
  return beginPass.apply(this, a);
};
for (const [name, c] of Object.entries(counted)) {
  const engine = c.bridge.engine, queue = engine.device.queue;
  const dispatch = engine.dispatch.bind(engine);
  engine.dispatch = (...a) => { bump("dispatches"); return dispatch(...a); };
  const write = queue.writeBuffer.bind(queue);
  queue.writeBuffer = (buffer, offset, data, dataOffset = 0, size) => {
    bump("bytes", size ?? (data.byteLength - dataOffset));
    return size === undefined ? write(buffer, offset, data, dataOffset)
      : write(buffer, offset, data, dataOffset, size);
  };
  const submit = queue.submit.bind(queue);
  queue.submit = (buffers) => { bump("submits"); return submit(buffers); };
  const stage = c.Timer.prototype.stage;
  c.Timer.prototype.stage = async function (which, record) {
    const before = bucket;
    bucket = which === "embed" ? "column" : which === "head" ? "head"
      : which < __ROW_BLOCKS__ ? "row" : "icl";
    try { return await stage.call(this, which, record); } finally { bucket = before; }
  };
  c.member = await c.Member.create(engine, "/tabicl/tabicl_v2_random.safetensors");
}
window.runShape = async ({n, m, h, file, x, y, runs, warmups, engines}) => {
  const xAll = Float32Array.from(x), yTrain = Float32Array.from(y);
  const xTrain = xAll.subarray(0, n * h), xTest = xAll.subarray(n * h);
  const result = {};
  for (const name of ["ours", "base"]) {
    if (!engines.includes(name)) continue;
    const { member } = counted[name];
    let counts = null;
    const call = async () => {
      tally = {};
      const timer = member.timer();
      const context = await member.fitContext(xTrain, yTrain, { timer });
      const { output } = await member.queryBatches(context, xTest, { batchRows: m, timer });
      const timings = await timer.finish();
      counts = tally;
      tally = null;
      return { output, timings };
    };
    const t = await timeIt(name, call, runs, warmups);
    result[name] = { times: t.times, out: Array.from(t.out.output),
      timings: t.outs.map((o) => o.timings), counts };
  }
  for (const ep of ["webgpu", "wasm"]) {
    if (!engines.includes(ep)) continue;
    const t0 = performance.now();
    const session = await ort.InferenceSession.create(`/tabicl/${file}`,
      { executionProviders: [ep] });
    console.log(`ORT ${ep}: session created in ${(performance.now() - t0).toFixed(0)} ms`);
    const feeds = () => ({ X: new ort.Tensor("float32", xAll, [1, n + m, h]),
      y_train: new ort.Tensor("float32", yTrain, [1, n]) });
    const t = await timeIt(`ORT ${ep}`, async () =>
      await (await session.run(feeds())).logits.getData(), runs, warmups);
    result[ep] = { times: t.times, out: Array.from(t.out) };
    await session.release();
  }
  return result;
};
window.peerReady = true;
</script>"""


def tabicl_stages(timings: list[dict], n_row: int) -> list[tuple[str, float]]:
    """Median ms per stage (embed, row blocks, ICL layers, head) over the timed runs."""
    layers = len(timings[0]["layers"])
    names = (["embed"] + [f"row block {i + 1}" for i in range(n_row)]
             + [f"ICL layer {i + 1}" for i in range(layers - n_row)] + ["head"])
    per_run = [[t["embed"], *t["layers"], t["head"]] for t in timings]
    return [(name, float(np.median([r[i] for r in per_run]))) for i, name in enumerate(names)]


def tabicl_rows(c: dict, n_row: int) -> tuple[str, list[str], list[str]]:
    """One shape's row of the speed table, its per-layer table and its counts table."""
    r = c["res"]
    med = {k: float(np.median(v["times"])) for k, v in r.items()}
    outs = {k: np.asarray(v["out"], dtype=np.float64).reshape(c["m"], -1) for k, v in r.items()}

    def fmt(k):
        return f"{med[k]:,.0f}" if k in med else "not run"

    def diff(a, b):
        return f"{np.abs(outs[a] - outs[b]).max():.1e}" if a in outs and b in outs else "—"

    def ratio(a, b):
        return f"{med[a] / med[b]:.2f}" if a in med and b in med else "—"

    ref = "ours" if "ours" in outs else "numpy"
    vs = " / ".join(diff(k, ref) if k != ref else "—" for k in ("base", "webgpu", "wasm", "numpy"))
    line = (f"| {c['n']} + {c['m']} × {c['h']} | {c['warmups']} + {c['runs']} "
            + "".join(f"| {fmt(k)} " for k in ENGINE_NAMES)
            + f"| {ratio('ours', 'base')} | {ratio('ours', 'webgpu')} | {vs} "
            f"| {np.abs(outs[ref] - c['torch']).max():.1e} |")
    stages = {k: dict(tabicl_stages(r[k]["timings"], n_row)) for k in ("ours", "base", "numpy")
              if k in r and "timings" in r[k]}
    order = list(next(iter(stages.values())))
    layers = ["", f"Per-layer median wall ms at {c['n']} + {c['m']} × {c['h']} "
              "(ours and the baseline: StageTimer; numpy: forward's timings):", "",
              "| stage | " + " | ".join(ENGINE_NAMES[k] for k in stages) + " |",
              "|---|" + "---:|" * len(stages)]
    layers += [f"| {s} | " + " | ".join(f"{stages[k][s]:,.1f}" for k in stages) + " |"
               for s in order]
    layers.append("| **sum of stages** | " + " | ".join(
        f"**{sum(stages[k].values()):,.1f}**" for k in stages) + " |")
    counts = ["", f"One member's call at {c['n']} + {c['m']} × {c['h']}: dispatches / compute "
              "passes / submits / bytes written to the GPU (uniform blocks included), per stage:",
              "", "| stage | " + " | ".join(ENGINE_NAMES[k] for k in ("ours", "base") if k in r)
              + " |", "|---|" + "---:|" * sum(k in r for k in ("ours", "base"))]
    buckets = ["outside stages", "column", "row", "icl", "head"]
    tallies = {k: r[k]["counts"] for k in ("ours", "base") if k in r}
    for b in buckets + ["total"]:
        cells = []
        for t in tallies.values():
            rows = list(t.values()) if b == "total" else [t.get(b, {})]
            got = {key: sum(x.get(key, 0) for x in rows) for key in
                   ("dispatches", "passes", "submits", "bytes")}
            cells.append(f"{got['dispatches']:,} / {got['passes']:,} / {got['submits']:,} / "
                         f"{got['bytes'] / 1024:,.1f} KiB")
        name = f"**{b}**" if b == "total" else b
        counts.append(f"| {name} | " + " | ".join(cells) + " |")
    return line, layers, counts + gflops_table(c, n_row)


def gflops_table(c: dict, n_row: int) -> list[str]:
    """Achieved GFLOP/s per stage (bench/tabicl_flops.py's count over the median stage ms:
    GPU timestamps for ours and the baseline where the adapter gave them, else wall)."""
    from tabicl_flops import tabicl_flops
    flops = tabicl_flops(c["config"], c["n"], c["m"], c["h"])
    r = c["res"]
    ms: dict[str, dict[str, float]] = {}
    for k in ("ours", "base", "numpy"):
        if k not in r or "timings" not in r[k]:
            continue
        runs = [t.get("gpu") or t for t in r[k]["timings"]] if k != "numpy" else r[k]["timings"]
        per = {"column": [t["embed"] for t in runs],
               "row": [sum(t["layers"][:n_row]) for t in runs],
               "icl+head": [sum(t["layers"][n_row:]) + t["head"] for t in runs]}
        ms[k] = {s: float(np.median(v)) for s, v in per.items()}
    if "torch" in r and "stages" in r["torch"]:
        ms["torch"] = r["torch"]["stages"]
    work = {"column": flops["column"], "row": flops["row"],
            "icl+head": flops["icl"] + flops["head"]}
    lines = ["", f"Achieved GFLOP/s per stage at {c['n']} + {c['m']} × {c['h']} (matrix products "
             "and attention, bench/tabicl_flops.py; ours: GPU timestamps where offered):", "",
             "| stage | GFLOP | " + " | ".join(ENGINE_NAMES[k] for k in ms) + " |",
             "|---|---:|" + "---:|" * len(ms)]
    for stage, f in work.items():
        lines.append(f"| {stage} | {f / 1e9:.2f} | " + " | ".join(
            f"{f / 1e6 / ms[k][stage]:.1f}" if ms[k][stage] > 0 else "—" for k in ms) + " |")
    return lines


def torch_run(args, weights: Path, npz: Path, runs: int, warmups: int) -> dict | None:
    """The package's torch forward on --torch-device in --torch-python (a subprocess)."""
    import subprocess
    got = subprocess.run([args.torch_python, str(ROOT / "bench" / "torch_tabicl_forward.py"),
                          str(weights), str(npz), "--device", args.torch_device,
                          "--runs", str(runs), "--warmups", str(warmups)],
                         capture_output=True, text=True, check=False)
    if got.returncode != 0:
        sys.exit(f"bench_webgpu_peer: torch on {args.torch_device} failed:\n{got.stderr}")
    res = json.loads(got.stdout.strip().splitlines()[-1])
    if "skipped" in res:
        print(f"  torch on {args.torch_device}: not run ({res['skipped']})", flush=True)
        return None
    print(f"  torch on {res['device']}: {res['times']} ms", flush=True)
    return res


@contextmanager
def baseline_bridge(rev: str | None) -> Iterator[dict[str, Path]]:
    """The mount of ``webgpu_bridge/src`` as it was at git revision ``rev`` (none: empty)."""
    if rev is None:
        yield {}
        return
    import subprocess
    import tarfile
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "base.tar"
        subprocess.run(["git", "archive", "-o", str(archive), rev, "webgpu_bridge/src"],
                       cwd=ROOT, check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        src = Path(tmp) / "webgpu_bridge" / "src"
        for link in [p for p in src.rglob("*") if p.is_symlink()]:  # registry.json: a link
            target = (Path("webgpu_bridge/src") / link.relative_to(src)).parent / os.readlink(link)
            link.unlink()
            link.write_bytes(subprocess.run(
                ["git", "show", f"{rev}:{os.path.normpath(target)}"], cwd=ROOT,
                capture_output=True, check=True).stdout)
        yield {"/bridge_base/": src}


def run_tabicl(args) -> int:
    sys.path.insert(0, str(ROOT / "pkg"))
    from arenalite.models.tabicl import forward, load

    shapes = [tuple(int(v) for v in s.split("x")) for s in args.tabicl_shapes.split(",")]
    shapes = (shapes if args.shapes == "all" else shapes[:1])[args.skip:]
    name = lambda n, m, h: f"tabicl_v2_{n}_{m}_{h}"  # noqa: E731 (export_tabicl_onnx.py's)
    engines = [e for e in args.engines.split(",") if e]
    if "base" in engines and not args.baseline:
        sys.exit("bench_webgpu_peer: the engine 'base' needs --baseline REV")
    if args.baseline and "base" not in engines:
        engines.append("base")
    needs = [TABICL_WEIGHTS] + [TABICL_DIR / f"{name(*s)}.npz" for s in shapes]
    if {"webgpu", "wasm"} & set(engines):
        needs += [ORT_DIST] + [TABICL_DIR / f"{name(*s)}.onnx" for s in shapes]
    for need in needs:
        if not need.exists():
            sys.exit(f"bench_webgpu_peer: {need} is missing (npm ci in webgpu_bridge; "
                     "/work/venv-tabicl/bin/python scripts/export_tabicl_onnx.py --shapes "
                     f"{' '.join('x'.join(map(str, s)) for s in shapes)} for the weights and "
                     "graphs)")
    model = load(TABICL_WEIGHTS)
    n_row = len(model.row.blocks)
    cases = []
    for n, m, h in shapes:  # numpy first, alone (the machine's cores are few)
        z = np.load(TABICL_DIR / f"{name(n, m, h)}.npz")
        x, y = z["x"], z["y"]
        large = n >= 1024
        runs = args.large_runs if large else args.runs
        warmups = args.large_warmups if large else args.warmups
        times, timings = [], []
        for i in range(warmups + runs):
            t0 = time.perf_counter()
            out, t = forward(model, x[:n], y, x[n:])
            ms = (time.perf_counter() - t0) * 1e3
            print(f"  numpy {n} + {m} x {h}: {'warm-up' if i < warmups else 'run'} "
                  f"{ms:.1f} ms", flush=True)
            if i >= warmups:
                times.append(ms)
                timings.append(t)
        res = {"numpy": {"times": times, "out": out, "timings": timings}}
        if args.torch_device:
            got = torch_run(args, TABICL_WEIGHTS, TABICL_DIR / f"{name(n, m, h)}.npz", runs,
                            warmups)
            if got:
                res["torch"] = got
        cases.append({"n": n, "m": m, "h": h, "x": x, "y": y, "runs": runs,
                      "warmups": warmups, "torch": z["torch"], "config": model.config,
                      "res": res})
    adapter = "(no browser run)"
    if engines:
        page_html = (TABICL_PAGE.replace("__BASELINE__", "true" if args.baseline else "false")
                     .replace("__ROW_BLOCKS__", str(n_row)))
        with baseline_bridge(args.baseline) as base_mount, \
                bench_page(page_html, {"/tabicl/": TABICL_DIR, **base_mount}) as (page, adapter):
            info = page.evaluate("() => window.bridge.adapterInfo")
            if args.require_hardware and (info["isFallbackAdapter"]
                                          or info["architecture"] == "swiftshader"):
                sys.exit(f"bench_webgpu_peer: Chromium found only a software adapter "
                         f"({adapter}); no GPU figures from it (check the GPU flags)")
            for c in cases:
                res = page.evaluate("(a) => window.runShape(a)", {
                    "n": c["n"], "m": c["m"], "h": c["h"],
                    "file": f"{name(c['n'], c['m'], c['h'])}.onnx",
                    "x": c["x"].ravel().tolist(), "y": c["y"].tolist(), "runs": c["runs"],
                    "warmups": c["warmups"], "engines": engines})
                c["res"].update(res)
                print(json.dumps({k: v["times"] for k, v in c["res"].items()}), flush=True)
    base = f" (`--baseline {args.baseline}`: the bridge's kernels at that commit)" \
        if args.baseline else ""
    lines = [f"Adapter: {adapter}; TabICLv2, random full-size weights, one member's raw "
             f"forward; median wall ms of the timed runs after the warm-up calls{base}; "
             "max diff = largest |logit difference| (3 classes).", "",
             "| shape | warm-ups + runs | " + " | ".join(ENGINE_NAMES.values())
             + " | ours / baseline | ours / ORT webgpu "
             "| max diff from ours: baseline / webgpu / wasm / numpy | ours vs torch |",
             "|---|---|" + "---:|" * (len(ENGINE_NAMES) + 2) + "---|---|"]
    per_layer, counts = [], []
    for c in cases:
        line, layers, tallies = tabicl_rows(c, n_row)
        lines.append(line)
        per_layer += layers
        counts += tallies if {"ours", "base"} & set(c["res"]) else []
    write_table("peer_tabicl.md", lines + per_layer + counts)
    return 0


# --- TabPFN v3 and Google TabFM (--model tabpfn | tabfm) --------------------------------------

CHECKPOINT_MODELS = {
    "tabpfn": {"title": "TabPFN v3 (the package's default classifier: embed 128, 24 ICL layers, "
                        "53.0 M parameters)",
               "dir": ROOT / "build" / "tabpfn_peer", "weights": "tabpfn_v3_random.safetensors",
               "prefix": "tabpfn_v3", "module": "tabpfn", "member": "TabPFNMember",
               "loader": "loadTabpfnWeights",
               "export": ".venv-bench/bin/python scripts/export_tabpfn_onnx.py",
               # the exported graph's inputs: X [n + m, 1, h], y_train [n, 1]
               "x_dims": "[n + m, 1, h]", "y_dims": "[n, 1]"},
    "tabfm": {"title": "Google TabFM (v1.0.0 widths: embed 256, ICL width 2,048; 2 of its 24 "
                       "ICL blocks, 162 M parameters: scripts/export_tabfm_onnx.py says why)",
              "dir": ROOT / "build" / "tabfm_peer", "weights": "tabfm_v1_random.safetensors",
              "prefix": "tabfm_v1", "module": "tabfm", "member": "TabFMMember",
              "loader": "loadTabfmWeights",
              "export": ".venv-tabfm/bin/python scripts/export_tabfm_onnx.py",
              "x_dims": "[1, n + m, h]", "y_dims": "[1, n]"},
}
CHECKPOINT_SHAPES = [(128, 48, 4), (512, 128, 16)]

CHECKPOINT_PAGE = PAGE_HEAD + """
import { __MEMBER__ } from "/bridge/__MODULE__/model.js";
import { __LOADER__ } from "/bridge/__MODULE__/checkpoint.js";
import { StageTimer } from "/bridge/timing.js";
window.bridge = await Bridge.create();
const engine = window.bridge.engine, queue = engine.device.queue;
const bytes = new Uint8Array(await (await fetch("/model/__WEIGHTS__")).arrayBuffer());
const member = await __MEMBER__.create(engine, await __LOADER__({ bytes, name: "__WEIGHTS__" }));
const names = member.layerNames();
// What one member's call costs, per stage (embed, each layer's name without its index,
// head): dispatches, compute passes, submits and bytes written to the GPU.
let tally = null, bucket = "outside stages";
const bump = (key, by = 1) => {
  if (!tally) return;
  tally[bucket] ??= { dispatches: 0, passes: 0, submits: 0, bytes: 0 };
  tally[bucket][key] += by;
};
const beginPass = GPUCommandEncoder.prototype.beginComputePass;
GPUCommandEncoder.prototype.beginComputePass = function (...a) {
  bump("passes");
  return beginPass.apply(this, a);
};
const dispatch = engine.dispatch.bind(engine);
engine.dispatch = (...a) => { bump("dispatches"); return dispatch(...a); };
const write = queue.writeBuffer.bind(queue);
queue.writeBuffer = (buffer, offset, data, dataOffset = 0, size) => {
  bump("bytes", size ?? (data.byteLength - dataOffset));
  return size === undefined ? write(buffer, offset, data, dataOffset)
    : write(buffer, offset, data, dataOffset, size);
};
const submit = queue.submit.bind(queue);
queue.submit = (buffers) => { bump("submits"); return submit(buffers); };
const stage = StageTimer.prototype.stage;
StageTimer.prototype.stage = async function (which, record) {
  const before = bucket;
  bucket = typeof which === "number" ? names[which].replace(/[ .]\\d+$/, "") : which;
  try { return await stage.call(this, which, record); } finally { bucket = before; }
};
window.runShape = async ({n, m, h, file, x, y, runs, warmups, engines}) => {
  const xAll = Float32Array.from(x), yTrain = Float32Array.from(y);
  const xTrain = xAll.subarray(0, n * h), xTest = xAll.subarray(n * h);
  const result = {};
  if (engines.includes("ours")) {
    let counts = null;
    const call = async () => {
      tally = {};
      const timer = member.timer();
      const context = await member.fitContext(xTrain, yTrain, { timer });
      const { output } = await member.queryBatches(context, xTest, { batchRows: m, timer });
      const timings = await timer.finish();
      counts = tally;
      tally = null;
      return { output, timings };
    };
    const t = await timeIt("ours", call, runs, warmups);
    result.ours = { times: t.times, out: Array.from(t.out.output), names,
      timings: t.outs.map((o) => o.timings), counts };
  }
  for (const ep of ["webgpu", "wasm"]) {
    if (!engines.includes(ep)) continue;
    const t0 = performance.now();
    let session;
    try {
      session = await ort.InferenceSession.create(`/model/${file}`, { executionProviders: [ep] });
    } catch (err) {  // a graph ORT-Web refuses: said in the table, no figure
      result[ep] = { error: String(err.message ?? err).split("\\n")[0] };
      continue;
    }
    console.log(`ORT ${ep}: session created in ${(performance.now() - t0).toFixed(0)} ms`);
    const feeds = () => ({ X: new ort.Tensor("float32", xAll, __X_DIMS__),
      y_train: new ort.Tensor("float32", yTrain, __Y_DIMS__) });
    const t = await timeIt(`ORT ${ep}`, async () =>
      await (await session.run(feeds())).logits.getData(), runs, warmups);
    result[ep] = { times: t.times, out: Array.from(t.out) };
    await session.release();
  }
  return result;
};
window.peerReady = true;
</script>"""


def checkpoint_numpy(name: str, spec: dict):
    """The numpy side: (model, one call → (logits, {stage: ms}))."""
    sys.path.insert(0, str(ROOT / "pkg"))
    if name == "tabfm":
        from arenalite.models.tabfm.model import forward, load
        model = load(spec["dir"] / spec["weights"])

        def call(x, y, n):
            out, t = forward(model, x[:n], y.astype(np.int64), x[n:])
            return out, {"cells": t["cells"], "column": sum(t["column"]), "row": sum(t["row"]),
                         "icl": sum(t["icl"]), "decoder": t["decoder"]}
        return model, call
    import bench_tabpfn
    from arenalite.models.tabpfn.model import forward, load
    model = load(spec["dir"] / spec["weights"])
    clock = bench_tabpfn.StageClock()
    bench_tabpfn.time_numpy_stages(clock)

    def call(x, y, n):
        clock.reset()
        out = forward(model, x[:n], y, x[n:])
        return out, {k: v * 1e3 for k, v in clock.seconds.items()}
    return model, call


def checkpoint_tables(name: str, c: dict) -> tuple[str, list[str], list[str]]:
    """One shape's row of the speed table, its per-stage table and its counts table."""
    refused = {k: v["error"] for k, v in c["res"].items() if "error" in v}
    r = {k: v for k, v in c["res"].items() if "error" not in v}
    med = {k: float(np.median(v["times"])) for k, v in r.items()}
    outs = {k: np.asarray(v["out"], dtype=np.float64).reshape(c["m"], -1) for k, v in r.items()}
    fmt = lambda k: (f"{med[k]:,.0f}" if k in med  # noqa: E731
                     else "refused" if k in refused else "not run")
    ratio = lambda a, b: f"{med[a] / med[b]:.2f}" if a in med and b in med else "—"  # noqa: E731
    ref = "ours" if "ours" in outs else "numpy"
    diffs = " / ".join(f"{np.abs(outs[k] - outs[ref]).max():.1e}" if k in outs and k != ref
                       else "—" for k in ("webgpu", "wasm", "numpy"))
    line = (f"| {c['n']} + {c['m']} × {c['h']} | {c['warmups']} + {c['runs']} "
            + "".join(f"| {fmt(k)} " for k in ("ours", "webgpu", "wasm", "numpy"))
            + f"| {ratio('ours', 'webgpu')} | {ratio('ours', 'numpy')} | {diffs} "
            f"| {np.abs(outs[ref] - c['torch']).max():.1e} |")
    stages = [f"ORT-Web {k} refused the graph at {c['n']} + {c['m']} × {c['h']}: {why}"
              for k, why in refused.items()]
    stages += ["", f"Per-stage median wall ms at {c['n']} + {c['m']} × {c['h']}:", ""]
    if "ours" in r:
        runs = r["ours"]["timings"]
        labels = ["embed", *r["ours"]["names"], "head"]
        per = [[t["embed"], *t["layers"], t["head"]] for t in runs]
        gpu = [[g["embed"], *g["layers"], g["head"]] for g in (t.get("gpu") for t in runs) if g]
        stages += ["| ours: stage | wall ms | GPU ms |", "|---|---:|---:|"]
        for i, label in enumerate(labels):
            g = f"{np.median([p[i] for p in gpu]):,.1f}" if gpu else "—"
            stages.append(f"| {label} | {np.median([p[i] for p in per]):,.1f} | {g} |")
        total = sum(np.median([p[i] for p in per]) for i in range(len(labels)))
        stages += [f"| **sum** | **{total:,.1f}** | |", ""]
    numpy_stages = r["numpy"]["stages"]
    stages += ["| numpy: stage | ms |", "|---|---:|"] + [
        f"| {k} | {np.median([s[k] for s in numpy_stages]):,.1f} |" for k in numpy_stages[0]]
    counts = []
    if "ours" in r:
        t = r["ours"]["counts"]
        counts = ["", f"One member's call at {c['n']} + {c['m']} × {c['h']} (ours): dispatches / "
                  "compute passes / submits / bytes written to the GPU, per stage:", "",
                  "| stage | dispatches | passes | submits | KiB written |",
                  "|---|---:|---:|---:|---:|"]
        for b in [*t, "total"]:
            rows = list(t.values()) if b == "total" else [t[b]]
            got = {k: sum(x.get(k, 0) for x in rows) for k in ("dispatches", "passes", "submits",
                                                               "bytes")}
            label = f"**{b}**" if b == "total" else b
            counts.append(f"| {label} | {got['dispatches']:,} | {got['passes']:,} | "
                          f"{got['submits']:,} | {got['bytes'] / 1024:,.1f} |")
    return line, stages, counts


def run_checkpoint(args) -> int:
    name = args.model
    spec = CHECKPOINT_MODELS[name]
    shapes = [tuple(int(v) for v in s.split("x")) for s in args.checkpoint_shapes.split(",")]
    shapes = (shapes if args.shapes == "all" else shapes[:1])[args.skip:]
    engines = [e for e in args.engines.split(",") if e and e != "base"]
    graph = lambda n, m, h: f"{spec['prefix']}_{n}_{m}_{h}"  # noqa: E731 (the export's names)
    needs = [spec["dir"] / spec["weights"]] + [spec["dir"] / f"{graph(*s)}.npz" for s in shapes]
    if {"webgpu", "wasm"} & set(engines):
        needs += [ORT_DIST] + [spec["dir"] / f"{graph(*s)}.onnx" for s in shapes]
    for need in needs:
        if not need.exists():
            sys.exit(f"bench_webgpu_peer: {need} is missing (npm ci in webgpu_bridge; "
                     f"{spec['export']} --shapes "
                     f"{' '.join('x'.join(map(str, s)) for s in shapes)} for the weights and "
                     "graphs)")
    _, numpy_call = checkpoint_numpy(name, spec)
    cases = []
    for n, m, h in shapes:  # numpy first, alone (the machine's cores are few)
        z = np.load(spec["dir"] / f"{graph(n, m, h)}.npz")
        x, y = z["x"], z["y"]
        times, stages = [], []
        for i in range(args.warmups + args.runs):
            t0 = time.perf_counter()
            out, st = numpy_call(x, y, n)
            ms = (time.perf_counter() - t0) * 1e3
            print(f"  numpy {n} + {m} x {h}: {'warm-up' if i < args.warmups else 'run'} "
                  f"{ms:.1f} ms", flush=True)
            if i >= args.warmups:
                times.append(ms)
                stages.append(st)
        cases.append({"n": n, "m": m, "h": h, "x": x, "y": y, "runs": args.runs,
                      "warmups": args.warmups, "torch": z["torch"].reshape(m, -1),
                      "res": {"numpy": {"times": times, "out": out, "stages": stages}}})
    adapter = "(no browser run)"
    if engines:
        html = CHECKPOINT_PAGE
        for key, value in {"__MEMBER__": spec["member"], "__MODULE__": spec["module"],
                           "__LOADER__": spec["loader"], "__WEIGHTS__": spec["weights"],
                           "__X_DIMS__": spec["x_dims"], "__Y_DIMS__": spec["y_dims"]}.items():
            html = html.replace(key, value)
        with bench_page(html, {"/model/": spec["dir"]}) as (page, adapter):
            info = page.evaluate("() => window.bridge.adapterInfo")
            if args.require_hardware and (info["isFallbackAdapter"]
                                          or info["architecture"] == "swiftshader"):
                sys.exit(f"bench_webgpu_peer: Chromium found only a software adapter "
                         f"({adapter}); no GPU figures from it (check the GPU flags)")
            for c in cases:
                res = page.evaluate("(a) => window.runShape(a)", {
                    "n": c["n"], "m": c["m"], "h": c["h"],
                    "file": f"{graph(c['n'], c['m'], c['h'])}.onnx",
                    "x": c["x"].ravel().tolist(), "y": c["y"].tolist(), "runs": c["runs"],
                    "warmups": c["warmups"], "engines": engines})
                c["res"].update(res)
                print(json.dumps({k: v.get("times", v.get("error"))
                                  for k, v in c["res"].items()}), flush=True)
    lines = [f"Adapter: {adapter}; {spec['title']}, random weights, one member's raw forward "
             "(float32); median wall ms of the timed runs after the warm-up calls; max diff = "
             "largest |logit difference| (10 logits, 3 classes in the targets).", "",
             "| shape | warm-ups + runs | ours (WebGPU) | ORT-Web webgpu | ORT-Web wasm | numpy "
             "| ours / ORT webgpu | ours / numpy | max diff from ours: webgpu / wasm / numpy "
             "| ours vs torch |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    details = []
    for c in cases:
        line, stages, counts = checkpoint_tables(name, c)
        lines.append(line)
        details += stages + counts
    write_table(f"peer_{name}.md", lines + details)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["tabular_fm", "tabicl", "tabpfn", "tabfm"],
                    default="tabular_fm")
    ap.add_argument("--runs", type=int, help="timed runs (default 20; tabicl 2)")
    ap.add_argument("--large-runs", type=int,
                    help="timed runs at 1024 + 256 rows (default 5; tabicl 2: on a software "
                         "adapter one call takes minutes)")
    ap.add_argument("--warmups", type=int, help="untimed calls before the runs (default 2; "
                    "tabicl 1)")
    ap.add_argument("--large-warmups", type=int,
                    help="untimed calls before the runs at 1024 + 256 rows (default 2; "
                         "tabicl 1)")
    ap.add_argument("--shapes", choices=["all", "small"], default="all")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first SKIP shapes")
    ap.add_argument("--engines", default="ours,webgpu,wasm",
                    help="tabicl: which of ours,base,webgpu,wasm run in the browser (comma "
                         "list; empty: numpy only; base: the bridge at --baseline)")
    ap.add_argument("--baseline", metavar="REV",
                    help="tabicl: also time the bridge's WebGPU code as it was at git "
                         "revision REV (the kernels before a change), in the same page")
    ap.add_argument("--tabicl-shapes",
                    default=",".join("x".join(map(str, s)) for s in TABICL_SHAPES),
                    help="tabicl: the shapes, NxMxH (context rows x query rows x features), "
                         "comma-separated; --shapes small keeps the first")
    ap.add_argument("--checkpoint-shapes",
                    default=",".join("x".join(map(str, s)) for s in CHECKPOINT_SHAPES),
                    help="tabpfn, tabfm: the shapes, NxMxH, comma-separated (graphs from "
                         "scripts/export_tabpfn_onnx.py / export_tabfm_onnx.py)")
    ap.add_argument("--torch-device", help="tabicl: also time the package's torch forward "
                    "on this device (cuda, cpu), in --torch-python")
    ap.add_argument("--torch-python", help="an interpreter with torch and the tabicl package")
    ap.add_argument("--require-hardware", action="store_true",
                    help="stop when Chromium's adapter is a software one (bench/gpu_check.sh)")
    ap.add_argument("--chromium-arg", action="append", default=[],
                    help="an extra Chromium flag (repeatable), e.g. for a real GPU adapter")
    args = ap.parse_args(argv)
    CHROMIUM_ARGS[:] = args.chromium_arg
    if args.torch_device and not args.torch_python:
        ap.error("--torch-device needs --torch-python (an interpreter with torch and tabicl)")
    defaults = ({"runs": 2, "large_runs": 2, "warmups": 1, "large_warmups": 1}
                if args.model in ("tabicl", "tabpfn", "tabfm") else
                {"runs": 20, "large_runs": 5, "warmups": 2, "large_warmups": 2})
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.model in CHECKPOINT_MODELS:
        return run_checkpoint(args)
    return run_tabicl(args) if args.model == "tabicl" else run_tabular_fm(args)


if __name__ == "__main__":
    raise SystemExit(main())
