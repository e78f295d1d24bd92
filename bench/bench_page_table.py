"""The WebGPU page on a user's million-row table in headless Chromium: parse (in the worker),
check and split (SPEC §6, the 250,000-row holdout), then knn on a 100,000-row slice.

    python bench/bench_page_table.py                   # 1,000,000 rows × 20 columns (minutes)
    python bench/bench_page_table.py --rows 200000     # smaller
    python bench/bench_page_table.py --knn-rows 0      # no knn run

Prints the page's wall times (its own ``performance.now()`` marks: parse, check, split;
knn's split total) and the peak JS heap of the page with its worker
(``performance.measureUserAgentSpecificMemory``, sampled every 0.5 s, answered at once with
Chromium's ForceEagerMeasureMemory; the bench's server sends COOP/COEP so the page is
cross-origin isolated, as that API needs), next to
arenalite's Python loader (``read_table`` + ``make_table_splits``) on the same file in the
same run. Software WebGPU (SwiftShader) here: knn's time is not a GPU's.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from arenalite.datasets import table  # noqa: E402
from browser_harness import chromium, playwright_session, serving  # noqa: E402
from sitebuild import pages, serve  # noqa: E402


def make_csv(path: Path, n_rows: int) -> Path:
    """20 columns: 12 decimals, 3 integers, 4 text columns with empty cells, a yes/no target."""
    rng = np.random.default_rng(0)
    columns = {f"x{i}": rng.normal(size=n_rows).round(4) for i in range(12)}
    columns |= {f"n{i}": rng.integers(0, 10 ** (i + 2), n_rows) for i in range(3)}
    for i, levels in enumerate((4, 12, 40, 300)):
        text = rng.choice([f"t{i}_{k}" for k in range(levels)] + [""], n_rows)
        columns[f"c{i}"] = text
    signal = columns["x0"] + (columns["c0"] == "t0_1") + rng.normal(size=n_rows)
    columns["bought"] = np.where(signal > 0.3, "yes", "no")
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


EAGER_MEMORY = "--enable-blink-features=ForceEagerMeasureMemory"
"""measureUserAgentSpecificMemory answers at once instead of after the next GC (~10 s)."""


class IsolatedHandler(serve.QuietSiteHandler):
    """The site's handler with COOP/COEP, so measureUserAgentSpecificMemory is allowed."""

    def end_headers(self) -> None:
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()


class HeapSampler:
    """Peak of measureUserAgentSpecificMemory (page + worker) over the samples taken."""

    def __init__(self, page) -> None:
        self.page, self.peak = page, 0

    def sample(self) -> int:
        got = self.page.evaluate("""async () => {
            const m = await performance.measureUserAgentSpecificMemory();
            return m.bytes; }""")
        self.peak = max(self.peak, got)
        return got


def python_reference(path: Path) -> dict:
    start = time.perf_counter()
    t = table.read_table(path, target="bought")
    read = time.perf_counter() - start
    start = time.perf_counter()
    table.make_table_splits(t)
    return {"read": read, "split": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--knn-rows", type=int, default=100_000)
    parser.add_argument("--timeout-min", type=float, default=15.0,
                        help="the longest wait for one page step (SwiftShader's knn on 100,000 "
                             "rows takes about half an hour)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arenalite-bench-page-") as tmp:
        tmp = Path(tmp)
        start = time.perf_counter()
        csv = make_csv(tmp / "big.csv", args.rows)
        print(f"table: {args.rows:,} rows × 20 columns, {csv.stat().st_size / 2**20:.0f} MB "
              f"(written in {time.perf_counter() - start:.1f} s)", flush=True)
        py = python_reference(csv)
        print(f"python loader: read_table {py['read']:.2f} s, make_table_splits "
              f"{py['split']:.2f} s", flush=True)
        site = tmp / "site"
        pages.copy_bridge(site)
        pages.copy_webgpu_page(site)
        handler = functools.partial(IsolatedHandler, directory=str(site))
        with serving(serve.SiteServer(("127.0.0.1", 0), handler)) as url, \
                playwright_session() as p, chromium(p, url, webgpu=True,
                                                    extra_args=(EAGER_MEMORY,)) as browser:
            page = browser.context.new_page()
            page.set_default_timeout(args.timeout_min * 60_000)
            page.goto(url + "/webgpu/index.html")
            page.wait_for_selector("body[data-state=ready]")
            assert page.evaluate("crossOriginIsolated"), "the page is not cross-origin isolated"
            heap = HeapSampler(page)
            idle = heap.sample()
            begun = time.perf_counter()
            page.set_input_files("#table-file", str(csv))
            while page.get_attribute("body", "data-table") != "parsed":
                heap.sample()
                time.sleep(0.5)
            page.select_option("#table-target", "bought")
            page.wait_for_function("!document.getElementById('table-describe').hidden"
                                   " && document.getElementById('own-table').dataset.splitMs")
            wall = time.perf_counter() - begun
            heap.sample()
            marks = page.evaluate("({...document.getElementById('own-table').dataset})")
            print(f"page: parse {int(marks['parseMs']) / 1000:.2f} s, check "
                  f"{int(marks['checkMs']) / 1000:.2f} s, split {int(marks['splitMs']) / 1000:.2f}"
                  f" s; pick → described {wall:.1f} s (× python read+split "
                  f"{wall / (py['read'] + py['split']):.1f})", flush=True)
            print(f"peak JS heap (page + worker): {heap.peak / 2**20:.0f} MB "
                  f"(idle page {idle / 2**20:.0f} MB)", flush=True)
            print(page.inner_text("#table-describe").splitlines()[-1])
            if args.knn_rows:
                run_knn(page, args.knn_rows, heap)


def run_knn(page, rows: int, heap: HeapSampler) -> None:
    page.evaluate("() => document.getElementById('own-table').dataset.splitMs = ''")
    page.fill("#table-rows", str(rows))
    page.dispatch_event("#table-rows", "change")
    page.wait_for_function("document.getElementById('own-table').dataset.splitMs")
    boxes = "#dataset-rows input, #model-list input[type=checkbox]:enabled"
    for box in page.eval_on_selector_all(boxes, "bs => bs.map(b => b.id)"):
        page.set_checked(f"#{box}", box in ("ds-own", "use-knn"))
    page.fill("#n-splits", "1")
    begun = time.perf_counter()
    page.get_by_role("button", name="Run").click()
    while page.get_attribute("body", "data-state") == "running":
        heap.sample()
        time.sleep(0.5)
    wall = time.perf_counter() - begun
    assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
    total = page.inner_text("#results tbody tr td:nth-child(9)").split("\n")[0]
    print(f"knn on the first {rows:,} rows (one split of the 3 folds): run {wall:.1f} s, "
          f"split total {total} ms; peak JS heap so far {heap.peak / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
