"""The site's pages: ``jupyter lite build`` (notebooks, lab, REPL) and what is added to its
output: the demo report, the WebGPU bridge, the WebGPU timing page with the bundled datasets
and their persisted splits, and the front page."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import fetch
from .settings import DEMO, LITE, ROOT, shown, step

#: the demo's load options (README's quick start): per metric the raw scores that normalize to
#: 0 and 1, so the build passes bounds and warns about none it was not given
DEMO_OPTIONS = {"seed": "seed",
                "metric_type_bounds": {"roc_auc": [0.5, 1.0], "rmse": [0.0, "knn-1"],
                                       "log_loss": [0.0, "knn-1"]}}


def jupyter_lite_build(out: Path, lite: Path = LITE) -> None:
    """``jupyter lite build`` of ``lite`` into ``out``, with a throw-away cache."""
    start = step(f"jupyter lite build → {out}")
    with tempfile.TemporaryDirectory(prefix="arenalite-lite-") as work:
        env = {**os.environ, "JUPYTERLITE_CACHE_DIR": str(Path(work) / "cache")}
        result = subprocess.run(
            [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite),
             "--output-dir", str(out)],
            cwd=work, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"build: jupyter lite build failed:\n{result.stdout}\n{result.stderr}")
    print(f"[build]   done ({time.perf_counter() - start:.1f}s)")


def build_report(out: Path, n_bootstrap: int) -> None:
    """The demo report, linking the site's WebGPU page (a report outside the site does not)."""
    start = step(f"analysing {shown(DEMO)}")
    import matplotlib

    matplotlib.use("Agg")
    from arenalite.cli import main as cli_main

    with tempfile.TemporaryDirectory(prefix="arenalite-report-") as work:
        config = Path(work) / "demo.json"
        config.write_text(json.dumps(DEMO_OPTIONS), encoding="utf-8")
        code = cli_main(["report", str(DEMO), "--output", str(out), "--config", str(config),
                         "--n-bootstrap", str(n_bootstrap),
                         "--webgpu-link", "../webgpu/index.html"])
    if code != 0:
        raise SystemExit(f"build: report failed with exit code {code}")
    print(f"[build]   report written ({time.perf_counter() - start:.1f}s)")


def copy_bridge(out: Path, *, offline: bool = False) -> None:
    """The bridge's ES modules, the packaged transformer weights (arenalite.browser URLs)
    and the page's CSV parser (``vendor/papaparse/``, with its licence)."""
    step("copying the WebGPU bridge")
    shutil.copytree(ROOT / "webgpu_bridge" / "src", out / "webgpu_bridge" / "src")
    parser = fetch.papaparse(offline)
    vendor = out / "webgpu_bridge" / "vendor" / "papaparse"
    vendor.mkdir(parents=True)
    for name in ("papaparse.min.js", "LICENSE"):
        shutil.copy2(parser / name, vendor / name)
    shutil.copytree(ROOT / "pkg" / "arenalite" / "models" / "weights",
                    out / "webgpu_bridge" / "weights")


def copy_landing(out: Path) -> None:
    """The site's front page (``lite/landing.html``): links to the notebooks, the WebGPU
    page, the report and the REPL. It replaces JupyterLite's root page, which only redirects
    to ``lab/``, and keeps its empty ``#jupyter-config-data`` (the apps read it)."""
    shutil.copy2(LITE / "landing.html", out / "index.html")


def copy_webgpu_page(out: Path) -> None:
    """The WebGPU timing page (``webgpu_bridge/page/``, no Python) into ``out/webgpu/``, with
    the bundled datasets and their persisted splits (``arenalite.splits``, the same JSON the
    Python runner reads) in ``data/``: ``datasets.json`` lists them (rows, features, task,
    splits); ``NAME.json`` is the dataset object the bridge's ``runSplits`` takes
    (:func:`arenalite.browser.dataset_payload`)."""
    step("copying the WebGPU timing page and exporting its datasets and splits")
    from arenalite import datasets, splits
    from arenalite.browser import dataset_payload

    data = out / "webgpu" / "data"
    shutil.copytree(ROOT / "webgpu_bridge" / "page", out / "webgpu")
    data.mkdir()
    listing = []
    for name in datasets.names():
        ds, entry = datasets.load(name), datasets.info(name)
        split = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name)
        splits.save(split, data / f"{name}.splits.json")
        (data / f"{name}.json").write_text(json.dumps(dataset_payload(ds)), encoding="utf-8")
        listing.append({"name": name, "task": ds.task, "n_rows": ds.n_rows,
                        "n_features": ds.X.shape[1], "n_classes": ds.n_classes,
                        "kind": split["kind"], "n_repeats": split["n_repeats"],
                        "n_folds": split["n_folds"], "n_splits": len(split["splits"]),
                        "source": entry["source"], "licence": entry["licence"]})
    (data / "datasets.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")


def site_size(out: Path) -> tuple[int, int]:
    """(number of files, bytes) of the site folder ``out``."""
    files = [p for p in out.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)
