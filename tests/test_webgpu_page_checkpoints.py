"""TabPFN v3 and Google TabFM on the WebGPU timing page (issue 44, item 3): the user picks
the checkpoint from disk (tabpfn: one ``.ckpt``; tabfm: its folder's ``config.json`` and
``model.safetensors`` together), the page reads it with the model's own loader (nothing is
uploaded: every non-local request is aborted), a pick the loader refuses gets its message
under the input; the run draws the stage chart with the model's layer names
(``timings.layerNames``), and the downloaded CSV has one time per layer (wall and GPU) and
scores equal to the Python runner's on the same splits within 1e-4. iris, the committed
random-weight fixtures, 2 members: SwiftShader is slow. Screenshots go to
$ARENALITE_SCREENSHOTS when set.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from arenalite import datasets, models, runner
from browser_harness import chromium, float32_dataset, playwright_session
from test_webgpu_page import chosen_splits, served, site  # noqa: F401 (module fixtures)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
TOL = 1e-4
N_SPLITS = 3
SCREENSHOTS = os.environ.get("ARENALITE_SCREENSHOTS")
PICKS = {
    "tabpfn": {"files": [DATA / "tabpfn" / "classifier_small.ckpt"],
               "weights": DATA / "tabpfn" / "classifier_small.ckpt",
               "described": "classifier_small.ckpt: TabPFN v3 classifier",
               "refused": DATA / "tabpfn" / "forward.json"},
    "tabfm": {"files": [DATA / "tabfm" / "small" / "classification" / "config.json",
                        DATA / "tabfm" / "small" / "classification" / "model.safetensors"],
              "weights": DATA / "tabfm" / "small" / "classification",
              "described": "config.json + model.safetensors: Google TabFM classifier",
              "refused": DATA / "tabfm" / "stages.json"},
}


@pytest.mark.browser
@pytest.mark.parametrize("name", list(PICKS))
def test_page_runs_a_checkpoint_picked_from_disk(name: str, site: Path,  # noqa: F811
                                                 served: str, tmp_path: Path) -> None:  # noqa: F811
    pick = PICKS[name]
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        for ds in datasets.names():
            page.set_checked(f"#ds-{ds}", ds == "iris")
        for model in models.WEBGPU_MODELS:
            page.set_checked(f"#use-{model}", model == name)
        page.get_by_role("button", name="Run").click()
        missing = page.inner_text("#form-error")
        field = f"#{name}-weights"
        page.set_input_files(field, str(pick["refused"]))
        page.wait_for_selector(f"{field}[data-loaded=no]")
        refused = page.inner_text(f"{field}-status")
        page.set_input_files(field, [str(f) for f in pick["files"]])
        page.wait_for_selector(f"{field}[data-loaded=yes]")
        described = page.inner_text(f"{field}-status")
        page.fill(f"#{name}-n_estimators", "2")
        page.fill("#n-splits", str(N_SPLITS))
        page.get_by_role("button", name="Run").click()
        page.wait_for_selector("body[data-state=done], body[data-state=failed]", timeout=600_000)
        assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
        page.set_viewport_size({"width": 1200, "height": 900})
        shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / f"webgpu_page_{name}.png"), full_page=True)
        page.locator("#results-section").screenshot(path=str(shots / f"webgpu_{name}_results.png"))
        stages = page.eval_on_selector_all("#chart svg rect.chart-stage",
                                           "rs => rs.map(r => r.dataset.stage)")
        with page.expect_download() as download:
            page.get_by_role("button", name="Download results CSV").click()
        csv = tmp_path / download.value.suggested_filename
        download.value.save_as(csv)
        blocked = list(browser.blocked)
    assert errors == [] and blocked == [], (errors, blocked)
    assert missing.startswith(f"{name} needs a ") and "nothing is uploaded" in missing, missing
    assert refused and "Error" not in refused[:6], refused
    assert described.startswith(pick["described"]), described
    assert stages[0] == "embed" and stages[-1] == "head" and len(stages) > 3, stages
    web = pd.read_csv(csv)
    assert list(web.columns) == runner.COLUMNS and len(web) == N_SPLITS
    label = web["model"].iloc[0]
    for _, row in web.iterrows():
        wall = [float(v) for v in row["layer_times_ms"].split(";")]
        gpu = [float(v) for v in row["gpu_layer_times_ms"].split(";")]
        assert len(wall) == len(gpu) == len(stages) - 2
        assert all(0 < g <= w * (1 + 1e-5) for g, w in zip(gpu, wall, strict=True))
    py = runner.run({"iris": float32_dataset("iris")}, chosen_splits(site, ["iris"]),
                    [{"name": name, "weights": str(pick["weights"]), "n_estimators": 2,
                      "label": label}], progress=False)
    merged = web.merge(py, on=["model", "dataset", "split_id"], suffixes=("_web", "_py"),
                       validate="one_to_one")
    assert len(merged) == N_SPLITS
    diff = (merged["score_web"] - merged["score_py"]).abs().max()
    print(f"{name} page vs Python runner: max |score diff| {diff:.3g}; label {label!r}; "
          f"stages {stages}; refused: {refused}; described: {described}")
    assert diff < TOL
