"""The WebGPU timing page (``_site/webgpu/``, issue 9): the builder's export and the page itself.

The page and its data are put into a temp folder by the site builder's own steps
(``copy_bridge`` + ``copy_webgpu_page``: exactly what a full build puts in ``_site/webgpu/``
and ``_site/webgpu_bridge/``; the JupyterLite part is not needed by the page) and served by
build.py's server. Headless Chromium (SwiftShader WebGPU, every non-local request aborted)
runs two datasets × all three models on three splits, downloads the CSV, and the CSV must
be the Python runner's table: same columns, one row per model × dataset × split, scores
equal to ``arenalite.runner.run`` on the same split file within 1e-4 (docs/models.md), and
``load_csv`` + ``elo_ranking`` work on it alone and next to the Python results. Without the
WebGPU flag the page must say why and what to try, quickly.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import arenalite
from arenalite import datasets, models, node_runner, runner, splits
from arenalite.browser import SITE_INFO
from browser_harness import chromium, float32_dataset, playwright_session, serving
from sitebuild import cli, pages, serve

ROOT = Path(__file__).resolve().parents[1]

TOL = 1e-4
RUN = ["breast_cancer", "wine"]
N_SPLITS = 3
# Where the run test saves a screenshot of the finished page to look at: a folder named by
# ARENALITE_SCREENSHOTS, else the test's own temporary folder (nothing outside it).
SCREENSHOTS = os.environ.get("ARENALITE_SCREENSHOTS")
MODELS = [{"name": "knn", "k": 5}, {"name": "attention", "temperature": None},
          {"name": "icl_transformer", "weights": None}]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("webgpu-site")
    pages.copy_bridge(out)
    pages.copy_webgpu_page(out)
    pages.copy_landing(out)
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    with serving(serve.make_server(site, 0)) as url:
        yield url


def test_build_exports_every_bundled_dataset_with_its_persisted_splits(site: Path) -> None:
    data = site / "webgpu" / "data"
    listing = json.loads((data / "datasets.json").read_text())
    assert [d["name"] for d in listing] == datasets.names()
    for entry in listing:
        ds = datasets.load(entry["name"])
        assert (entry["task"], entry["n_rows"], entry["n_features"]) == (
            ds.task, ds.n_rows, ds.X.shape[1])
        persisted = splits.load(data / f"{ds.name}.splits.json")
        assert persisted == splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=ds.name)
        assert entry["n_splits"] == len(persisted["splits"])
        exported = json.loads((data / f"{ds.name}.json").read_text())
        assert exported["featureNames"] == list(ds.feature_names)
        np.testing.assert_array_equal(np.reshape(exported["x"], ds.X.shape), ds.X)
        np.testing.assert_array_equal(exported["y"], ds.y)
    for name in ("index.html", "app.js", "summary.js", "model_form.js", "chart.js", "style.css"):
        assert (site / "webgpu" / name).is_file(), name


def test_page_is_linked_from_the_landing_page_notebook_06_and_the_report(site: Path) -> None:
    from html.parser import HTMLParser

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.hrefs: list[str] = []
            self.config: list[dict] = []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            a = dict(attrs)
            if tag == "a":
                self.hrefs.append(a["href"])
            if a.get("id") == "jupyter-config-data":
                self.config.append(a)

    landing = Links()
    landing.feed((site / "index.html").read_text())
    assert {"lab/index.html", "webgpu/index.html", "report/report.html"} <= set(landing.hrefs)
    # JupyterLite's apps read the root page's configuration element: it must stay
    assert landing.config == [{"id": "jupyter-config-data", "type": "application/json",
                               "data-jupyter-lite-root": "."}]
    notebook = (ROOT / "content" / "06_splits_and_webgpu.ipynb").read_text()
    assert "webgpu/index.html" in notebook
    # the site's report/report.html links webgpu/ (sitebuild.pages passes the link; a report
    # written elsewhere has no such page and no link: test_cli)
    assert pages.build_report.__doc__ and '"--webgpu-link", "../webgpu/index.html"' in (
        (ROOT / "sitebuild" / "pages.py").read_text())


def chosen_splits(site: Path, names: list[str] = RUN, count: int = N_SPLITS) -> dict[str, dict]:
    """The first ``count`` splits (one whole repeat by default, as the page runs them) of
    the page's own split files."""
    data = site / "webgpu" / "data"
    chosen = {}
    for name in names:
        persisted = splits.load(data / f"{name}.splits.json")
        assert persisted["n_folds"] == N_SPLITS
        chosen[name] = {**persisted, "n_repeats": 1, "splits": persisted["splits"][:count]}
    return chosen


def python_results(site: Path) -> pd.DataFrame:
    """The Python runner on the page's first splits (float32-rounded features, as the
    bridge sees them)."""
    return runner.run({n: float32_dataset(n) for n in RUN}, chosen_splits(site), MODELS,
                      progress=False)


@pytest.mark.browser
def test_page_runs_models_and_downloads_the_runner_table(site: Path, served: str,
                                                          tmp_path: Path) -> None:
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        description = page.inner_text("#adapter-description")
        fields = page.eval_on_selector_all(
            "#adapter dd", "ds => ds.map(d => [d.hidden, d.previousElementSibling.hidden, "
                           "d.textContent])")
        assert all(dd_hidden == dt_hidden and (dd_hidden or text)
                   for dd_hidden, dt_hidden, text in fields), fields
        form = page.eval_on_selector_all("#model-list input", """inputs => inputs.map(i =>
            [i.id, i.type, i.getAttribute("min"), i.getAttribute("max"), i.value])""")
        disabled = page.eval_on_selector_all("#model-list input:disabled",
                                             "is => is.map(i => i.id)")
        for name in datasets.names():
            page.set_checked(f"#ds-{name}", name in RUN)
        for name in models.WEBGPU_MODELS:  # tabular_fm has its own, smaller run below
            page.set_checked(f"#use-{name}", name in [m["name"] for m in MODELS])
        page.fill("#n-splits", str(N_SPLITS))
        page.get_by_role("button", name="Run").click()
        page.wait_for_selector("body[data-state=done], body[data-state=failed]", timeout=300_000)
        assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
        progress = page.eval_on_selector_all("#progress progress",
                                             "bs => bs.map(b => [b.value, b.max])")
        page.set_viewport_size({"width": 1200, "height": 900})
        shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "webgpu_page.png"), full_page=True)
        with page.expect_download() as download:
            page.get_by_role("button", name="Download results CSV").click()
        csv = tmp_path / download.value.suggested_filename
        download.value.save_as(csv)
        chart_bars = page.locator("#chart svg rect.chart-bar").count()
        blocked = list(browser.blocked)
    assert errors == [] and blocked == [], (errors, blocked)
    # the model list and its inputs come from the registry (every model runs on WebGPU since
    # issue 44; a boolean parameter is a checkbox)
    assert list(models.WEBGPU_MODELS) == list(models.MODELS)
    assert [f[0] for f in form if f[1] == "checkbox" and f[0].startswith("use-")] == [
        f"use-{m}" for m in models.WEBGPU_MODELS]
    assert disabled == []
    assert ["tabfm-average_logits", "checkbox", None, None, "on"] in form
    assert ["knn-k", "number", "1", "64", "5"] in form
    assert ["attention-temperature", "number", "0", None, ""] in form
    assert progress == [[N_SPLITS, N_SPLITS]] * (len(RUN) * len(MODELS))
    assert chart_bars == len(RUN) * len(MODELS)   # one bar per model × dataset

    web = pd.read_csv(csv)
    assert list(web.columns) == runner.COLUMNS
    assert len(web) == len(RUN) * len(MODELS) * N_SPLITS
    assert not web.duplicated(["model", "dataset", "split_id"]).any()
    assert (web["runner"] == "webgpu").all() and (web["device"] == description).all()
    assert (web["total_ms"] > 0).all() and np.isfinite(web["rows_per_s"]).all()

    py = python_results(site)
    keys = ["model", "dataset", "split_id"]
    both = web.merge(py, on=keys, suffixes=("_web", "_py"), validate="one_to_one")
    assert len(both) == len(web)
    for col in ("task", "metric", "repeat", "fold", "seed", "n_train", "n_test"):
        assert (both[f"{col}_web"] == both[f"{col}_py"]).all(), col
    np.testing.assert_allclose(both["score_web"], both["score_py"], atol=TOL, rtol=0)

    # GPU timestamps beside the wall times (SwiftShader offers timestamp-query)
    for stage in ("embed", "layers", "head", "total"):
        assert (web[f"gpu_{stage}_ms"] >= 0).all() and (
            web[f"gpu_{stage}_ms"] <= web[f"{stage}_ms"]).all(), stage

    # the Node runner (dawn.node) on the same split files writes the same table
    node_csv = node_runner.run_to_csv({n: float32_dataset(n) for n in RUN},
                                      chosen_splits(site), MODELS, tmp_path / "node.csv",
                                      vulkan_icd="/usr/lib/chromium/vk_swiftshader_icd.json")
    node = pd.read_csv(node_csv)
    assert list(node.columns) == list(web.columns)
    paired = web.merge(node, on=keys, suffixes=("_web", "_node"), validate="one_to_one")
    assert len(paired) == len(web)
    np.testing.assert_allclose(paired["score_web"], paired["score_node"], atol=TOL, rtol=0)

    alone = arenalite.load_csv(csv, seed="seed")
    assert set(alone.elo_ranking(n_bootstrap=20, random_state=0).table["model"]) == {
        "knn", "attention", "icl_transformer"}
    together = pd.concat([web, py]).assign(model=lambda d: d["model"] + " @ " + d["runner"])
    joined_csv = tmp_path / "both.csv"
    together.to_csv(joined_csv, index=False)
    ranked = arenalite.load_csv(joined_csv, seed="seed").elo_ranking(n_bootstrap=20, random_state=0)
    assert len(ranked.table) == 2 * len(MODELS)


def unavailable_page(browser, url: str, init_script: str | None = None) -> dict:
    """Open the page in a browser without WebGPU; what it shows, and how fast."""
    page = browser.context.new_page()
    if init_script:
        page.add_init_script(init_script)
    start = time.monotonic()
    page.goto(url + "/webgpu/index.html")
    page.wait_for_selector("body[data-state=unavailable]", timeout=20_000)
    shown = {"seconds": time.monotonic() - start, "reason": page.inner_text("#no-webgpu-reason"),
             "advice": page.inner_text("#no-webgpu"), "run_disabled": page.is_disabled("#run"),
             "listed": page.locator("#dataset-rows input[type=checkbox]").count(),
             "adapter_shown": page.is_visible("#adapter") or page.locator(
                 "#adapter dt:visible").count() > 0}
    page.close()
    return shown


@pytest.mark.browser
def test_page_without_webgpu_says_why_and_what_to_try(served: str) -> None:
    """Chromium without --enable-unsafe-webgpu here has navigator.gpu but no adapter; a
    browser with no navigator.gpu at all is imitated by deleting it before the page loads."""
    with playwright_session() as p, chromium(p, served, webgpu=False) as browser:
        no_adapter = unavailable_page(browser, served)
        no_api = unavailable_page(browser, served, "delete Navigator.prototype.gpu;")
        blocked = list(browser.blocked)
    assert "no adapter" in no_adapter["reason"], no_adapter["reason"]
    assert "navigator.gpu is undefined" in no_api["reason"], no_api["reason"]
    for shown in (no_adapter, no_api):
        assert shown["seconds"] < 20
        assert shown["reason"].startswith("WebGPU is not available")
        assert "--enable-unsafe-webgpu" in shown["advice"]
        assert shown["run_disabled"] and shown["listed"] == len(datasets.names())
        assert not shown["adapter_shown"]  # no empty adapter labels left on screen
    assert blocked == []


# Keeps the page's GPUDevice reachable so that a test can destroy it (a lost device).
KEEP_DEVICE = """const request = GPUAdapter.prototype.requestDevice;
GPUAdapter.prototype.requestDevice = async function (...args) {
  window.testDevice = await request.apply(this, args);
  return window.testDevice;
};"""


@pytest.mark.browser
def test_lost_device_stops_the_run_with_a_message_and_never_hangs(served: str) -> None:
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(60_000)
        page.add_init_script(KEEP_DEVICE)
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        page.get_by_role("button", name="Run").click()
        page.wait_for_function("document.querySelector('#progress progress')?.value >= 1")
        page.evaluate("window.testDevice.destroy()")
        # "lost" whichever comes first: device.lost or a GPU call failing on the lost device
        page.wait_for_selector("body[data-state=lost]", timeout=30_000)
        status = page.inner_text("#status")
        reason = page.inner_text("#no-webgpu-reason")
        run_disabled = page.is_disabled("#run")
    assert "lost" in status and "reload the page" in status, status
    assert reason.startswith("the GPU device was lost (destroyed"), reason
    assert run_disabled


@pytest.mark.browser
def test_landing_page_says_where_the_numeric_packages_come_from(site: Path, served: str) -> None:
    """The front page reads the builder's SITE_INFO: CDN mode names the CDN and the fix."""
    info = site / SITE_INFO
    try:
        with playwright_session() as p, chromium(p, served, webgpu=False) as browser:
            page = browser.context.new_page()
            info.write_text(json.dumps({"numeric": "cdn", "cdn": "https://cdn.example/full/"}))
            page.goto(served + "/index.html")
            page.wait_for_selector("#site-mode:not([hidden])")
            text = page.inner_text("#site-mode")
            assert "https://cdn.example/full/" in text and "build.py fetch" in text
            assert "REPL work offline" not in text
            cards = page.inner_text("ul")
            assert "nothing to install" not in cards.lower()
            assert page.inner_text("#notebooks-mode").startswith("They need the network")
            assert "needs the network" in page.inner_text("#repl-mode")
            info.write_text(json.dumps({"numeric": "vendored", "cdn": "unused"}))
            page.reload()
            page.wait_for_selector("#site-mode:not([hidden])")
            assert page.inner_text("#site-mode").startswith("Fully offline")
            assert page.inner_text("#notebooks-mode").startswith("Nothing to install")
            assert page.inner_text("#repl-mode").startswith("Works offline")
    finally:
        info.unlink(missing_ok=True)


def only(page, dataset: str, model: str) -> None:
    """Tick one dataset and one model in the form."""
    for name in datasets.names():
        page.set_checked(f"#ds-{name}", name == dataset)
    for name in ("knn", "attention", "icl_transformer"):
        page.set_checked(f"#use-{name}", name == model)


@pytest.mark.browser
def test_a_rerun_clears_old_results_and_download_until_it_ends(served: str, tmp_path: Path) -> None:
    """A download mid-run once saved the previous run's rows: a run now starts with no results
    on screen and Download disabled, and the CSV afterwards holds the new run only."""
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(120_000)
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        before = page.is_disabled("#download")
        only(page, "iris", "knn")
        page.fill("#n-splits", "1")
        page.get_by_role("button", name="Run").click()
        page.wait_for_selector("body[data-state=done]")
        after_first = page.is_disabled("#download")
        only(page, "wine", "knn")
        # the click and the look happen in one task: nothing of the new run can end between them
        at_start = page.evaluate("""() => {
            document.getElementById("run").click();
            return {download: document.getElementById("download").disabled,
                    results: document.getElementById("results-section").hidden,
                    rows: document.querySelectorAll("#results tr").length,
                    state: document.body.dataset.state};
        }""")
        page.wait_for_function("document.getElementById('run').disabled === false")
        page.wait_for_selector("body[data-state=done]")
        with page.expect_download() as download:
            page.get_by_role("button", name="Download results CSV").click()
        csv = tmp_path / "rerun.csv"
        download.value.save_as(csv)
    assert before and not after_first
    assert at_start == {"download": True, "results": True, "rows": 0, "state": "running"}
    assert set(pd.read_csv(csv)["dataset"]) == {"wine"}


@pytest.mark.browser
def test_split_count_is_capped_with_a_visible_note(served: str) -> None:
    """1e9 splits used to run all of them silently: the field is capped at what the files
    hold, a note says so, and the run is set up for that count (not waited for: 60 splits
    on a software adapter take minutes)."""
    listing = {d["name"]: d for d in build_listing()}
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(120_000)
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        page.fill("#n-splits", "1e9")
        page.dispatch_event("#n-splits", "change")
        most = max(d["n_splits"] for d in listing.values())
        capped, note = page.input_value("#n-splits"), page.inner_text("#splits-note")
        visible = page.is_visible("#splits-note")
        only(page, "iris", "knn")
        page.fill("#n-splits", "1e9")             # no change event: the run itself caps it
        page.get_by_role("button", name="Run").click()
        page.wait_for_selector("body[data-state=running]")
        bar_max = page.eval_on_selector("#progress progress", "b => b.max")  # all it will run
        run_note = page.inner_text("#splits-note")
    assert capped == str(most) and visible
    assert note == (f"Capped at {most}: the chosen datasets' split files hold at most {most} "
                    "splits each (you asked for 1,000,000,000).")
    assert bar_max == listing["iris"]["n_splits"]
    assert run_note.startswith(f"Capped at {listing['iris']['n_splits']}:")


def build_listing() -> list[dict]:
    """The datasets.json the builder writes (the same for every build of this checkout)."""
    from arenalite import datasets as bundled

    out = []
    for name in bundled.names():
        ds = bundled.load(name)
        out.append({"name": name,
                    "n_splits": len(splits.make_splits(ds.n_rows, ds.task, y=ds.y)["splits"])})
    return out


@pytest.mark.browser
def test_site_server_is_quiet_unless_verbose(site: Path, capfd: pytest.CaptureFixture) -> None:
    """A short visit makes dozens of requests: the builder's server logs none of them unless
    ``serve --verbose`` asks (then one line each)."""
    assert cli.parse_args(["serve"]).verbose is False
    assert cli.parse_args(["serve", "--verbose"]).verbose is True
    logged = {}
    for verbose in (False, True):
        capfd.readouterr()
        server = serve.make_server(site, 0, verbose=verbose)
        with serving(server) as url, playwright_session() as p, \
                chromium(p, url, webgpu=False) as browser:
            page = browser.context.new_page()
            page.goto(url + "/webgpu/index.html")
            page.wait_for_selector("body[data-state=unavailable]", timeout=20_000)
            page.goto(url + "/index.html")
            page.close()
        captured = capfd.readouterr()
        logged[verbose] = [line for line in (captured.out + captured.err).splitlines()
                           if '"GET ' in line]
    assert logged[False] == []
    assert len(logged[True]) >= 5 and any("/webgpu/app.js" in line for line in logged[True])


@pytest.mark.browser
def test_page_runs_tabular_fm_and_draws_its_layers(site: Path, served: str,
                                                   tmp_path: Path) -> None:
    """The registry's new model on the page: its CSV rows match the Python runner's scores
    and the stage chart has one segment per stage (embed, its 3 layers, head)."""
    n_layers = 3
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(60_000)
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        for name in datasets.names():
            page.set_checked(f"#ds-{name}", name == "iris")
        for name in models.WEBGPU_MODELS:
            page.set_checked(f"#use-{name}", name == "tabular_fm")
        page.fill("#n-splits", "2")
        page.get_by_role("button", name="Run").click()
        page.wait_for_selector("body[data-state=done], body[data-state=failed]", timeout=300_000)
        assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
        page.set_viewport_size({"width": 1200, "height": 900})
        shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "webgpu_page_tabular_fm.png"), full_page=True)
        segments = page.locator("#chart svg rect.chart-stage").count()
        legend = page.inner_text("#chart")
        with page.expect_download() as download:
            page.get_by_role("button", name="Download results CSV").click()
        csv = tmp_path / download.value.suggested_filename
        download.value.save_as(csv)
    assert segments == n_layers + 2
    assert all(f"layer {i}" in legend for i in range(n_layers))
    web = pd.read_csv(csv)
    py = runner.run({"iris": float32_dataset("iris")}, chosen_splits(site, ["iris"]),
                    [{"name": "tabular_fm"}], progress=False)
    merged = web.merge(py, on=["model", "dataset", "split_id"], suffixes=("_web", "_py"))
    assert len(merged) == len(web) >= 2
    assert np.allclose(merged["score_web"], merged["score_py"], atol=1e-4)


TABICL = ROOT / "tests" / "data" / "tabicl"


@pytest.mark.browser
def test_page_runs_tabicl_from_a_checkpoint_picked_from_disk(site: Path, served: str,
                                                            tmp_path: Path) -> None:
    """tabicl on the page (issue 28): the user picks the checkpoint file (read in the page by
    checkpoint.js, nothing uploaded; every non-local request is aborted), a file that is not a
    TabICL checkpoint gets the reader's message, progress per split and per member, the stage
    chart per layer (its 2 row blocks and 2 ICL layers); the CSV's per-layer columns, its
    scores equal to the Python runner's within 1e-4, and ``load_csv`` ranks it. iris, the
    tiny random-weight fixture, 2 members: SwiftShader is slow."""
    label = "tabicl(weights=classifier_small.ckpt, n_estimators=2)"
    with playwright_session() as p, chromium(p, served, webgpu=True) as browser:
        page = browser.context.new_page()
        page.set_default_timeout(60_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(served + "/webgpu/index.html")
        page.wait_for_selector("body[data-state=ready]")
        for name in datasets.names():
            page.set_checked(f"#ds-{name}", name == "iris")
        for name in models.WEBGPU_MODELS:
            page.set_checked(f"#use-{name}", name in ("tabicl", "knn"))
        # without a file: the form says what is missing
        page.get_by_role("button", name="Run").click()
        missing = page.inner_text("#form-error")
        # a file that is not a checkpoint: the reader's message under the input
        page.set_input_files("#tabicl-weights", str(TABICL / "stages.json"))
        page.wait_for_selector("#tabicl-weights[data-loaded=no]")
        refused = page.inner_text("#tabicl-weights-status")
        page.set_input_files("#tabicl-weights", str(TABICL / "classifier_small.ckpt"))
        page.wait_for_selector("#tabicl-weights[data-loaded=yes]")
        described = page.inner_text("#tabicl-weights-status")
        page.fill("#tabicl-n_estimators", "2")
        page.fill("#n-splits", str(N_SPLITS))
        seen: list[str] = []
        page.expose_function("noteProgress", lambda text: seen.append(text))
        page.evaluate("""() => new MutationObserver(() => document.querySelectorAll(
            "#progress .count").forEach((c) => window.noteProgress(c.textContent))).observe(
            document.getElementById("progress"), {subtree: true, childList: true,
            characterData: true})""")
        page.get_by_role("button", name="Run").click()
        page.wait_for_selector("body[data-state=done], body[data-state=failed]", timeout=300_000)
        assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
        page.set_viewport_size({"width": 1200, "height": 900})
        shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "webgpu_page_tabicl.png"), full_page=True)
        # the results alone (table, rows/s, per-stage chart): docs/img/webgpu_page_tabicl.png
        page.locator("#results-section").screenshot(path=str(shots / "webgpu_tabicl_results.png"))
        page.set_viewport_size({"width": 800, "height": 900})  # a narrow window
        page.screenshot(path=str(shots / "webgpu_page_tabicl_800.png"), full_page=True)
        overflow = page.evaluate("""() => document.documentElement.scrollWidth
            - document.documentElement.clientWidth""")
        stages = page.eval_on_selector_all("#chart svg rect.chart-stage",
                                           "rs => rs.map(r => r.dataset.stage)")
        with page.expect_download() as download:
            page.get_by_role("button", name="Download results CSV").click()
        csv = tmp_path / download.value.suggested_filename
        download.value.save_as(csv)
        blocked = list(browser.blocked)
    assert errors == [] and blocked == [], (errors, blocked)
    assert overflow <= 0, f"the page is {overflow} px wider than an 800-px window"
    assert missing.startswith("tabicl needs a TabICL checkpoint: pick a .ckpt or .safetensors")
    assert refused == ("checkpoint 'stages.json' is neither a torch checkpoint (a zip archive "
                       "holding data.pkl) nor a safetensors file")
    assert described.startswith("classifier_small.ckpt: TabICL classifier (max_classes 10)")
    assert any("member 1 / 2" in t for t in seen) and any("member 2 / 2" in t for t in seen)
    # knn: embed, its one layer, head, padded to tabicl's 4 layers; tabicl's own names
    assert stages[-6:] == ["embed", "row 0", "row 1", "icl 0", "icl 1", "head"], stages
    web = pd.read_csv(csv)
    assert list(web.columns) == runner.COLUMNS and len(web) == 2 * N_SPLITS
    tab = web[web["model"] == label]
    assert len(tab) == N_SPLITS
    for _, row in tab.iterrows():
        wall = [float(v) for v in row["layer_times_ms"].split(";")]
        gpu = [float(v) for v in row["gpu_layer_times_ms"].split(";")]
        assert len(wall) == len(gpu) == 4 and all(0 < g <= w * (1 + 1e-5) for g, w in zip(
            gpu, wall, strict=True))
        assert np.isclose(sum(wall), row["layers_ms"], rtol=1e-5)
        assert np.isclose(row["embed_ms"] + row["layers_ms"] + row["head_ms"], row["total_ms"])
    py = runner.run({"iris": float32_dataset("iris")}, chosen_splits(site, ["iris"]),
                    [{"name": "tabicl", "weights": str(TABICL / "classifier_small.ckpt"),
                      "n_estimators": 2, "label": label}, {"name": "knn"}], progress=False)
    merged = web.merge(py, on=["model", "dataset", "split_id"], suffixes=("_web", "_py"),
                       validate="one_to_one")
    assert len(merged) == len(web)
    diff = (merged["score_web"] - merged["score_py"]).abs().max()
    print(f"page vs Python runner: max |score diff| {diff:.3g}")
    assert diff < TOL
    ranked = arenalite.load_csv(csv, seed="seed").elo_ranking(n_bootstrap=20, random_state=0)
    assert set(ranked.table["model"]) == {label, "knn"}
