"""Per-stage timings and rows/s of the three in-context models: WebGPU in headless
Chromium next to the numpy reference, on the same data.

    python bench/bench_webgpu.py [--repeats 3] [--datasets breast_cancer wine diabetes]

For each bundled dataset one persisted split (arenalite.splits, first fold) gives the
context and the query rows; every model runs once untimed (warm-up, reported separately)
and then ``--repeats`` times; the median of each stage is printed. Here the adapter is
software (SwiftShader): the numbers compare the two paths on one machine, they are not
claims about GPUs. The Chromium harness (local server, offline) is tests/browser_harness.py.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from arenalite import datasets, splits  # noqa: E402
from arenalite.models import model_label, predict_timed  # noqa: E402
from arenalite.progress import Progress  # noqa: E402
from browser_harness import (  # noqa: E402
    chromium,
    float32_dataset,
    harness_server,
    playwright_session,
)

MODELS = [{"name": "knn", "k": 5}, {"name": "attention"}, {"name": "icl_transformer"}]
RUN_JS = """async ({model, data, repeats}) => {
  const f32 = (a) => Float32Array.from(a);
  const d = {...data, xTrain: f32(data.xTrain), yTrain: f32(data.yTrain), xTest: f32(data.xTest)};
  const runs = [];
  let warmup = null;
  for (let r = 0; r < repeats; r++) {
    const {timings} = await window.bridge.predict(model, d, {warmup: r === 0});
    if (r === 0) warmup = timings.warmup;
    runs.push(timings);
  }
  return {runs, warmup};
}"""


def stage_medians(runs: list[dict]) -> dict[str, float]:
    """Median ms of embed, layers (sum), head and total over repeated runs."""
    return {"embed": float(np.median([r["embed"] for r in runs])),
            "layers": float(np.median([sum(r["layers"]) for r in runs])),
            "head": float(np.median([r["head"] for r in runs])),
            "total": float(np.median([r["total"] for r in runs]))}


def fold_data(name: str) -> tuple[datasets.Dataset, np.ndarray, np.ndarray]:
    """A dataset (features rounded to float32) and the train/test rows of its first split."""
    ds = float32_dataset(name)
    s = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name, n_repeats=1)
    first = s["splits"][0]
    return ds, np.asarray(first["train"]), np.asarray(first["test"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", default=["breast_cancer", "wine", "diabetes"])
    args = parser.parse_args(argv)
    header = (f"{'dataset':<14}{'model':<17}{'runner':<8}{'embed':>9}{'layers':>9}{'head':>9}"
              f"{'total':>9}{'warmup':>9}{'rows/s':>11}{'gpu/np':>8}")
    lines = []
    with harness_server() as url, playwright_session() as pw, \
            chromium(pw, url) as b:
        page = b.open_harness(timeout_ms=300_000)
        device = page.evaluate("""async () => {
          window.bridge = await window.arenaBridge.Bridge.create(
            {defaultWeights: "/weights/icl_transformer.json"});
          return window.bridge.adapterInfo.label;
        }""")
        with Progress(len(args.datasets) * len(MODELS), "bench", enabled=True) as bar:
            for name in args.datasets:
                ds, train, test = fold_data(name)
                x, y = ds.X, ds.y
                data = {"xTrain": x[train].ravel().tolist(), "yTrain": y[train].tolist(),
                        "xTest": x[test].ravel().tolist(), "nFeatures": x.shape[1],
                        "task": ds.task, "nClasses": ds.n_classes}
                for model in MODELS:
                    res = page.evaluate(RUN_JS, {"model": model, "data": data,
                                                 "repeats": args.repeats})
                    gpu = stage_medians(res["runs"])
                    ref_runs = [predict_timed(model, x[train], y[train], x[test], ds.task,
                                              ds.n_classes)[1] for _ in range(args.repeats + 1)]
                    ref = stage_medians(ref_runs[1:])
                    label = model_label(model)
                    for runner, t, warm in (("webgpu", gpu, res["warmup"]),
                                            ("numpy", ref, ref_runs[0]["total"])):
                        ratio = f"{gpu['total'] / ref['total']:8.2f}" if runner == "webgpu" else ""
                        lines.append(f"{name:<14}{label:<17}{runner:<8}{t['embed']:9.2f}"
                                     f"{t['layers']:9.2f}{t['head']:9.2f}{t['total']:9.2f}"
                                     f"{warm:9.2f}{len(test) / (t['total'] / 1e3):11.0f}{ratio}")
                    bar.update()
    print(f"WebGPU adapter: {device}; times in ms (median of {args.repeats}), "
          f"rows/s = query rows / total; gpu/np = total time ratio")
    print(header)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
