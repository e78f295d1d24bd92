"""Build arenalite's static site and serve it.

``python build.py`` builds the wheel into ``dist/`` and a static site into ``_site/``:
the report of the bundled demo results (``content/demo_results.csv``: real runs of the
bundled in-context models on the bundled datasets), the wheel, and the WebGPU bridge.
``python build.py serve`` builds, then serves ``_site/`` on 127.0.0.1 (``--port``, default 8000).

Not built yet: the JupyterLite site of SPEC §9 (vendored Pyodide, notebooks); see README.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SITE = ROOT / "_site"
DEMO = ROOT / "content" / "demo_results.csv"


def step(message: str) -> float:
    print(f"[build] {message}", flush=True)
    return time.perf_counter()


def build_wheel() -> Path:
    start = step("building the arenalite wheel")
    dist = ROOT / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(dist), str(ROOT)], check=True)
    wheels = sorted(dist.glob("arenalite-*-py3-none-any.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise SystemExit("build: no py3-none-any wheel was produced")
    print(f"[build]   {wheels[-1].name} ({time.perf_counter() - start:.1f}s)")
    return wheels[-1]


def build_report(out: Path) -> Path:
    start = step(f"analysing {DEMO.relative_to(ROOT)}")
    sys.path.insert(0, str(ROOT / "pkg"))
    import matplotlib

    matplotlib.use("Agg")
    from arenalite.cli import main as cli_main

    code = cli_main(["report", str(DEMO), "--output", str(out), "--metric", "metric",
                     "--score", "score", "--seed", "seed", "--n-bootstrap", "1000"])
    if code != 0:
        raise SystemExit(f"build: report failed with exit code {code}")
    print(f"[build]   report written ({time.perf_counter() - start:.1f}s)")
    return out / "report.html"


def build_site() -> Path:
    if SITE.exists():
        shutil.rmtree(SITE)
    SITE.mkdir()
    wheel = build_wheel()
    (SITE / "wheels").mkdir()
    shutil.copy2(wheel, SITE / "wheels" / wheel.name)
    build_report(SITE / "report")
    step("copying the WebGPU bridge")
    bridge = ROOT / "webgpu_bridge" / "src"
    if bridge.is_dir():
        shutil.copytree(bridge, SITE / "webgpu_bridge" / "src")
    shutil.copy2(DEMO, SITE / DEMO.name)
    (SITE / "index.html").write_text(
        "<!doctype html><meta charset='utf-8'><title>arenalite</title>"
        "<h1>arenalite</h1><ul>"
        "<li><a href='report/report.html'>Demo report (bundled results)</a></li>"
        f"<li><a href='wheels/{wheel.name}'>{wheel.name}</a></li>"
        f"<li><a href='{DEMO.name}'>{DEMO.name}</a></li>"
        "<li><a href='webgpu_bridge/src/index.js'>WebGPU bridge (ES modules)</a></li></ul>",
        encoding="utf-8")
    step(f"site ready in {SITE.relative_to(ROOT)}/")
    return SITE


def serve(port: int) -> None:
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(SITE))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"[build] serving {SITE} on http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("\n[build] stopped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["build", "serve"], default="build")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    build_site()
    if args.command == "serve":
        serve(args.port)


if __name__ == "__main__":
    main()
