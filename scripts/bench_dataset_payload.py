"""Time and size of :func:`arenalite.browser.dataset_payload` on a 100k × 50 table.

    python scripts/bench_dataset_payload.py [--rows N] [--features F]
    python3 scripts/wasm_python.py -- scripts/bench_dataset_payload.py   # the wasm32 lane

Prints, per form of ``x`` (the JSON-ready list every caller got before issue 30, and the
float32 buffer that Pyodide's ``to_js`` turns into one Float32Array): the build time (best
of 3), the Python memory the payload holds (tracemalloc), and for the list the JSON text
the site builder writes.
"""

from __future__ import annotations

import argparse
import inspect
import json
import platform
import struct
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pkg"))

import numpy as np  # noqa: E402

from arenalite import browser  # noqa: E402
from arenalite.datasets import Dataset  # noqa: E402


def measure(ds: Dataset, **kwargs) -> tuple[float, int, dict]:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        payload = browser.dataset_payload(ds, **kwargs)
        best = min(best, time.perf_counter() - start)
        del payload
    tracemalloc.start()
    payload = browser.dataset_payload(ds, **kwargs)
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return best, held, payload


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=50)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.rows, args.features))
    ds = Dataset("bench", x, (x[:, 0] > 0).astype(np.int64), "binary", 2,
                 tuple(f"f{j}" for j in range(args.features)))
    print(f"{args.rows} x {args.features} on {platform.machine() or sys.platform} "
          f"({struct.calcsize('P') * 8}-bit), numpy {np.__version__}")
    forms = [("list (JSON-ready)", {})]
    if "typed" in inspect.signature(browser.dataset_payload).parameters:
        forms.append(("float32 buffer (typed=True)", {"typed": True}))
    for label, kwargs in forms:
        seconds, held, payload = measure(ds, **kwargs)
        line = f"{label}: build {seconds * 1000:.1f} ms, holds {held / 2**20:.1f} MiB"
        if not kwargs:
            start = time.perf_counter()
            text = json.dumps(payload)
            line += (f"; json.dumps {time.perf_counter() - start:.2f} s, "
                     f"{len(text) / 2**20:.1f} MiB of JSON")
        else:
            view = payload["x"]
            line += (f"; x: {type(view).__name__} format {view.format!r}, "
                     f"{view.nbytes / 2**20:.1f} MiB")
        print(line)


if __name__ == "__main__":
    main()
