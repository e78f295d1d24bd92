"""Build arenalite's JupyterLite site (SPEC §9) and serve it.

The command line of ``python build.py [build|serve|fetch]`` and :func:`build_site`, the
build it runs: fetch → vendor → pages, then serve when asked.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from pathlib import Path

from arenalite.browser import SITE_INFO

from . import fetch, pages, serve, vendor
from .settings import CACHE, CDN, SITE, step


def build_site(out: Path = SITE, *, pyodide_dist: Path | None = None, offline: bool = False,
               n_bootstrap: int = 1000, cdn: str = CDN, cache: Path = CACHE) -> Path:
    """Everything of SPEC §9 into ``out`` (replaced); returns ``out``."""
    start = time.perf_counter()
    package, wheels = fetch.core(offline, cache=cache)
    wheel = vendor.build_wheel(cache=cache)
    mode = vendor.vendor_pyodide(package, wheels, pyodide_dist, offline=offline, cdn=cdn,
                                 cache=cache)
    vendor.stage_piplite(wheel, wheels)
    if out.exists():
        shutil.rmtree(out)
    pages.jupyter_lite_build(out)
    (out / SITE_INFO).write_text(json.dumps(mode, indent=1) + "\n", encoding="utf-8")
    pages.build_report(out / "report", n_bootstrap)
    pages.copy_bridge(out, offline=offline)
    pages.copy_webgpu_page(out)
    pages.copy_landing(out)
    n_files, n_bytes = pages.site_size(out)
    step(f"site ready in {out} ({n_files} files, {n_bytes / 2**20:.1f} MiB, "
         f"{time.perf_counter() - start:.1f}s)")
    return out


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of build.py."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["build", "serve", "fetch"],
                        default="build")
    parser.add_argument("--port", type=int, default=8000,
                        help="port of `serve` on 127.0.0.1 (default 8000; 0 picks a free one)")
    parser.add_argument("--output", type=Path, default=SITE, help="site folder (_site)")
    parser.add_argument("--pyodide-dist", type=Path, default=None,
                        help="a full Pyodide distribution folder: vendor its packages too")
    parser.add_argument("--offline", action="store_true",
                        help="use only build/site-cache/ (see `fetch`); never download")
    parser.add_argument("--pyodide-cdn", default=os.environ.get("ARENALITE_PYODIDE_CDN", CDN),
                        help="base URL of the lock file's packages (env ARENALITE_PYODIDE_CDN; "
                        f"default {CDN})")
    parser.add_argument("--n-bootstrap", type=int, default=1000,
                        help="bootstrap replicates of the demo report (default 1000)")
    parser.add_argument("--kernel-only", action="store_true",
                        help="with `fetch`: only what the kernel boots with (Pyodide's core, "
                        "pure-Python wheels), not numpy/pandas/matplotlib/scipy from the CDN")
    parser.add_argument("--verbose", action="store_true",
                        help="with `serve`: log every request (default: quiet)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """``python build.py``: build (default), ``serve`` (bind the port, build, serve) or
    ``fetch`` (fill the cache only)."""
    args = parse_args(argv)
    cdn = args.pyodide_cdn.rstrip("/") + "/"
    if args.command == "fetch":
        fetch.fetch_all(cdn, kernel_only=args.kernel_only)
        return
    server = (serve.open_port(args.output.resolve(), args.port, args.verbose)
              if args.command == "serve" else None)
    out = build_site(args.output.resolve(), pyodide_dist=args.pyodide_dist,
                     offline=args.offline, n_bootstrap=args.n_bootstrap, cdn=cdn)
    if server is not None:
        serve.serve(server, out)
