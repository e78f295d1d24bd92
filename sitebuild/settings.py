"""The site builder's settings: where it reads and writes, which Pyodide it vendors, what the
kernel boots with; and its ``[build]`` progress lines."""

from __future__ import annotations

import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_site"
LITE = ROOT / "lite"
CONTENT = ROOT / "content"
DEMO = CONTENT / "demo_results.csv"
CACHE = ROOT / "build" / "site-cache"
VENDORED = LITE / "static" / "pyodide"
PIPLITE_DIR = LITE / "pypi"

PYODIDE_VERSION = "314.0.7"
PAPAPARSE_VERSION = "5.7.1"
"""The CSV parser the WebGPU page's table reader runs in its worker (npm ``papaparse``, MIT),
the version webgpu_bridge/package-lock.json pins for the Node tools."""
#: where the lock file's relative file names live; ARENALITE_PYODIDE_CDN or --pyodide-cdn
#: override it (tests point it at a loopback server)
CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
#: seconds to wait for the CDN to connect or send more bytes: an offline build never hangs
TIMEOUT = 15.0
#: the files of the npm package that make up Pyodide's core (the rest are docs/types)
CORE_FILES = ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
              "python_stdlib.zip", "pyodide-lock.json", "package.json")
#: lock-file packages the pyodide kernel loads at boot (micropip, then piplite installs
#: ipython and jedi); their lock-file dependencies are vendored too
KERNEL_ROOTS = ("micropip", "ipython", "jedi")
#: pure-Python wheels the kernel installs through piplite that are not in the lock file
PIPLITE_EXTRA = ("comm==0.2.3",)


def step(message: str) -> float:
    """Print one ``[build]`` progress line; returns the time, to report a step's duration."""
    print(f"[build] {message}", flush=True)
    return time.perf_counter()


def shown(path: Path) -> str:
    """``path`` as a progress line names it: relative to the checkout when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
