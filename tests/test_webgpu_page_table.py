"""The WebGPU page on the user's own table (issue 35): a CSV picked from disk is parsed in a
worker, described and split in the page exactly as ``arenalite describe`` / ``arenalite
splits`` do, a foreign split file and a bad table get the Python messages, the run's CSV
equals the Python runner's on the same split file (knn and tabicl, 1e-4), and a million-row
file is parsed without freezing the page (a timer keeps firing). Headless Chromium with
SwiftShader WebGPU; every non-local request is aborted and none may be made."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from arenalite import cli, runner, splits
from arenalite.datasets import table
from browser_harness import chromium, playwright_session, serving
from sitebuild import pages, serve
from test_node_runner_tables import CHECKPOINTS, write_table

pytestmark = [pytest.mark.browser, pytest.mark.needs_sockets, pytest.mark.needs_threads]

TOL = 1e-4
SCREENSHOTS = os.environ.get("ARENALITE_SCREENSHOTS")
DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("webgpu-table-site")
    pages.copy_bridge(out)
    pages.copy_webgpu_page(out)
    pages.copy_landing(out)
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    with serving(serve.make_server(site, 0)) as url:
        yield url


@pytest.fixture(scope="module")
def browser(served: str) -> Iterator:
    with playwright_session() as p, chromium(p, served, webgpu=True) as b:
        yield b


def open_page(browser, served: str):
    page = browser.context.new_page()
    page.set_default_timeout(120_000)
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.goto(served + "/webgpu/index.html")
    page.wait_for_selector("body[data-state=ready]")
    return page


def pick(page, path: Path) -> None:
    page.set_input_files("#table-file", str(path))
    page.wait_for_selector("body[data-table=parsed]")


def settle(page) -> str:
    """Wait until the section shows a description or an error; returns which."""
    page.wait_for_function("""() => !document.getElementById('table-describe').hidden
        || document.getElementById('table-error').textContent !== ''""")
    return "error" if page.inner_text("#table-error") else "described"


def choose(page, **roles) -> str:
    """Set the role fields (target, task, group, time: a name; leakage, categorical: lists)."""
    for key, value in roles.items():
        page.evaluate("() => { document.getElementById('table-error').textContent = ''; "
                      "document.getElementById('table-describe').hidden = true; }")
        page.select_option(f"#table-{key}", value)
    return settle(page)


def downloaded_splits(page, tmp_path: Path) -> str:
    with page.expect_download() as download:
        page.click("#table-splits-download")
    out = tmp_path / download.value.suggested_filename
    download.value.save_as(out)
    return out.read_text(encoding="utf-8")


def python_splits_file(path: Path, tmp_path: Path, flags: list[str]) -> Path:
    out = tmp_path / "py-splits"
    assert cli.main(["splits", str(path), *flags, "-o", str(out)]) == 0
    return next(out.glob("*.splits.json"))


def dated_table(path: Path, rows: int = 240) -> Path:
    rng = np.random.default_rng(5)
    day = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 90, rows), unit="D")
    frame = pd.DataFrame({
        "shop": rng.choice(["north", "south", "east", "west", "hub"], rows),
        "when": day.strftime("%Y-%m-%d"),
        "order_id": [f"o{i:05d}" for i in range(rows)],
        "price": np.where(rng.random(rows) < 0.1, np.nan, rng.gamma(2, 10, rows).round(2)),
        "kind": rng.choice(["a", "b", "c"], rows),
        "label": rng.choice(["buy", "skip"], rows)})
    frame.to_csv(path, index=False)
    return path


def test_page_describes_and_splits_a_picked_table_as_arenalite_does(browser, served: str,
                                                                     tmp_path: Path) -> None:
    path = dated_table(tmp_path / "orders.csv")
    page = open_page(browser, served)
    pick(page, path)
    # the id column is refused with the Python message until it is named a leakage column
    assert choose(page, target="label") == "error"
    with pytest.raises(ValueError) as caught:
        table.read_table(path, target="label")
    assert page.inner_text("#table-error") == str(caught.value)
    cases = [
        # the page lists the chosen columns in the header's order
        ({"leakage": ["order_id", "when"]}, ["--leakage-columns", "when,order_id"],
         {"leakage_columns": ["when", "order_id"]}),
        ({"group": "shop", "leakage": ["order_id"]}, ["--group-column", "shop",
                                                      "--leakage-columns", "order_id"],
         {"group_column": "shop", "leakage_columns": ["order_id"]}),
        ({"group": "", "time": "when", "leakage": ["order_id"]},
         ["--time-column", "when", "--leakage-columns", "order_id"],
         {"time_column": "when", "leakage_columns": ["order_id"]}),
    ]
    for k, (roles, flags, options) in enumerate(cases):
        assert choose(page, **roles) == "described", page.inner_text("#table-error")
        t = table.read_table(path, target="label", **options)
        assert page.inner_text("#table-describe") == table.describe(t)
        expected = python_splits_file(path, tmp_path / str(k), ["--target", "label", *flags])
        assert downloaded_splits(page, tmp_path / str(k)) == expected.read_text(encoding="utf-8")
    assert page.errors == [] and browser.blocked == []


def test_a_foreign_split_file_and_a_bad_table_get_the_python_message(browser, served: str,
                                                                      tmp_path: Path) -> None:
    path = write_table(tmp_path / "shop.csv", "binary")
    (tmp_path / "other").mkdir()
    other = write_table(tmp_path / "other" / "shop.csv", "binary", seed=9)
    foreign = python_splits_file(other, tmp_path, ["--target", "y", "--leakage-columns", "id"])
    page = open_page(browser, served)
    pick(page, path)
    assert choose(page, target="y", leakage=["id"]) == "described"
    page.set_input_files("#table-splits-file", str(foreign))
    settle(page)
    t = table.read_table(path, target="y", leakage_columns=["id"])
    with pytest.raises(ValueError) as caught:
        table.check_table_splits(t, splits.load(foreign), foreign.name)
    assert page.inner_text("#table-error") == str(caught.value)
    # the user's own file for this table is taken as it is
    own = python_splits_file(path, tmp_path / "own", ["--target", "y", "--leakage-columns", "id"])
    page.set_input_files("#table-splits-file", str(own))
    assert settle(page) == "described"
    assert page.inner_text("#table-splits-note") == f"splits from {own.name}"

    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,y\n" + "".join(f"{'n/a?' if i == 17 else i},{i % 3},{i % 2}\n"
                                       for i in range(40)), encoding="utf-8")
    pick(page, bad)
    assert choose(page, target="y") == "error"
    with pytest.raises(ValueError) as caught:
        table.read_table(bad, target="y")
    assert page.inner_text("#table-error") == str(caught.value)
    assert page.errors == [] and browser.blocked == []


@pytest.mark.parametrize("task", ["binary", "regression"])
def test_page_run_on_a_picked_table_equals_the_python_runner(browser, served: str,
                                                             tmp_path: Path, task: str) -> None:
    path = write_table(tmp_path / "shop.csv", task)
    flags = ["--target", "y", "--leakage-columns", "id"]
    page = open_page(browser, served)
    for box in page.eval_on_selector_all("#dataset-rows input", "bs => bs.map(b => b.id)"):
        page.set_checked(f"#{box}", False)
    pick(page, path)
    assert choose(page, target="y", leakage=["id"]) == "described"
    page.set_checked("#ds-own", True)
    for box in page.eval_on_selector_all("#model-list input[type=checkbox]:enabled",
                                         "bs => bs.map(b => b.id)"):
        page.set_checked(f"#{box}", box in ("use-knn", "use-tabicl"))
    page.set_input_files("#tabicl-weights", str(CHECKPOINTS[task]))
    page.wait_for_selector("#tabicl-weights[data-loaded=yes]")
    page.fill("#tabicl-n_estimators", "2")
    page.fill("#n-splits", "3")
    page.get_by_role("button", name="Run").click()
    page.wait_for_selector("body[data-state=done], body[data-state=failed]", timeout=600_000)
    assert page.get_attribute("body", "data-state") == "done", page.inner_text("#status")
    for width, name in ((1280, f"webgpu_page_table_{task}.png"),
                        (800, f"webgpu_page_table_{task}_800.png")):
        page.set_viewport_size({"width": width, "height": 900})
        shots = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / name), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
    with page.expect_download() as download:
        page.get_by_role("button", name="Download results CSV").click()
    web_csv = tmp_path / "web.csv"
    download.value.save_as(web_csv)
    page_splits = downloaded_splits(page, tmp_path / "page")
    py_file = python_splits_file(path, tmp_path, flags)
    assert page_splits == py_file.read_text(encoding="utf-8")
    out = tmp_path / "py"
    assert cli.main(["run", str(path), *flags, "--splits-dir", str(py_file.parent),
                     "--model", "knn",
                     "--model", f"tabicl:weights={CHECKPOINTS[task]},n_estimators=2",
                     "--runner", "python", "-o", str(out)]) == 0
    web, py = pd.read_csv(web_csv), pd.read_csv(out / "results.csv")
    web["model"] = web["model"].str.replace(r"weights=[^,)]*", "weights=W", regex=True)
    py["model"] = py["model"].str.replace(r"weights=[^,)]*", "weights=W", regex=True)
    assert list(web.columns) == runner.COLUMNS
    both = web.merge(py, on=["model", "dataset", "split_id"], suffixes=("_web", "_py"),
                     validate="one_to_one")
    assert len(both) == len(web) == 6  # the page ran the file's first 3 splits; python all
    for col in ("task", "metric", "n_train", "n_test", "seed"):
        assert (both[f"{col}_web"] == both[f"{col}_py"]).all(), col
    scale = float(np.std(table.read_table(path, target="y", leakage_columns=["id"]).y)) \
        if task == "regression" else 1.0
    diff = (both["score_web"] - both["score_py"]).abs() / scale
    print(f"page vs python runner ({task}), max |score diff| / {scale:.4g} per model:",
          diff.groupby(both["model"]).max().to_dict())
    assert diff.max() < TOL
    assert page.errors == [] and browser.blocked == []


@pytest.mark.slow
def test_a_million_row_file_is_parsed_in_the_worker_without_freezing_the_page(
        browser, served: str, tmp_path: Path) -> None:
    rows = 1_000_000
    rng = np.random.default_rng(1)
    path = tmp_path / "big.csv"
    frame = pd.DataFrame({"a": rng.normal(size=rows).round(5),
                          "b": rng.choice(["x", "y", "z"], rows),
                          "c": rng.integers(0, 100, rows), "y": rng.integers(0, 2, rows)})
    frame.to_csv(path, index=False)
    page = open_page(browser, served)
    page.evaluate("""() => { window.ticks = []; window.timer = setInterval(
        () => window.ticks.push(performance.now()), 50); }""")
    started = page.evaluate("performance.now()")
    pick(page, path)
    parsed_at = page.evaluate("performance.now()")
    assert choose(page, target="y") == "described"
    gaps = page.evaluate("""() => { clearInterval(window.timer); const t = window.ticks;
        return t.slice(1).map((x, i) => x - t[i]); }""")
    ticks_during_parse = page.evaluate(f"window.ticks.filter(t => t > {started} && "
                                       f"t < {parsed_at}).length")
    print(f"1M rows: parsed in {(parsed_at - started) / 1000:.1f} s, {ticks_during_parse} "
          f"timer ticks meanwhile, longest gap {max(gaps):.0f} ms")
    assert ticks_during_parse > (parsed_at - started) / 50 * 0.5  # the main thread kept running
    assert "1000000 rows" in page.inner_text("#table-describe")
    assert "one 250,000-row holdout" in page.inner_text("#table-describe")
    assert page.errors == [] and browser.blocked == []
