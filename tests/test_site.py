"""The JupyterLite site of SPEC §9: the builder's lock-file logic, the built site, offline boot.

The pure functions of ``sitebuild.lock`` (lock closure, lock patching, distribution files) are
tested directly on small fake lock files (the numeric packages' download: test_fetch.py).
The site itself is built once per session with ``python build.py --offline`` into a temp
dir (from build/site-cache/, filled by ``python build.py fetch``: nothing is downloaded at
test time; the cache has no numeric packages on this machine, so the site loads them from
the CDN, which the build must say once and write into the site). Those tests are marked
``browser`` (they need the ``site`` extra, and the last three the system Chromium, where
every request that is not for 127.0.0.1 is aborted and counted): the REPL at
``repl/index.html?kernel=python&code=print(6*7)`` prints ``42``, installs the arenalite
wheel and calls the WebGPU bridge from the kernel's Web Worker; notebook 01's first cell
stops with the one clear error of ``arenalite.browser.require_numeric``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import time
import tomllib
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sitebuild.lock as site_lock
from arenalite.browser import NUMERIC, SITE_INFO
from sitebuild import fetch, serve
from sitebuild.settings import CDN, KERNEL_ROOTS, PYODIDE_VERSION

ROOT = Path(__file__).resolve().parents[1]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry(name: str, version: str, file_name: str, depends: list[str] | None = None) -> dict:
    return {"name": name, "version": version, "file_name": file_name, "sha256": "0" * 64,
            "depends": depends or [], "imports": [name], "package_type": "package"}


FAKE_LOCK = {
    "info": {"python": "3.14.2"},
    "packages": {
        "micropip": entry("micropip", "0.11.1", "micropip-0.11.1-py3-none-any.whl"),
        "ipython": entry("ipython", "9.12.0", "ipython-9.12.0-py3-none-any.whl",
                         ["traitlets", "prompt_toolkit"]),
        "prompt-toolkit": entry("prompt_toolkit", "3.0.52",
                                "prompt_toolkit-3.0.52-py3-none-any.whl", ["wcwidth"]),
        "wcwidth": entry("wcwidth", "0.6.0", "wcwidth-0.6.0-py3-none-any.whl"),
        "traitlets": entry("traitlets", "5.14.3", "traitlets-5.14.3-py3-none-any.whl"),
        "numpy": entry("numpy", "2.4.6", "numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl"),
    },
}


# --- the lock file's pure functions------------------------------------------------------


def test_lock_closure_follows_depends_with_normalized_names() -> None:
    assert site_lock.lock_closure(FAKE_LOCK, ["ipython"]) == [
        "ipython", "prompt-toolkit", "traitlets", "wcwidth"]
    assert site_lock.lock_closure(FAKE_LOCK, ["Micropip"]) == ["micropip"]


def test_lock_closure_names_the_missing_package_and_who_needs_it() -> None:
    lock = {"packages": {"a": entry("a", "1", "a-1-py3-none-any.whl", ["ghost"])}}
    with pytest.raises(ValueError, match=r"no package 'ghost' \(needed by a\)"):
        site_lock.lock_closure(lock, ["a"])


def test_patch_lock_points_local_files_and_cdn(tmp_path: Path) -> None:
    wheel = tmp_path / "traitlets-5.14.3-py3-none-any.whl"
    wheel.write_bytes(b"not really a wheel")
    out = site_lock.patch_lock(FAKE_LOCK, {"traitlets": wheel}, cdn="https://cdn.example/full/")
    assert out["packages"]["traitlets"]["file_name"] == wheel.name
    assert out["packages"]["traitlets"]["sha256"] == sha(wheel)
    numpy = out["packages"]["numpy"]
    assert numpy["file_name"] == ("https://cdn.example/full/"
                                  "numpy-2.4.6-cp314-cp314-pyemscripten_2026_0_wasm32.whl")
    assert numpy["sha256"] == "0" * 64          # the CDN file's digest is kept
    assert FAKE_LOCK["packages"]["numpy"]["file_name"].startswith("numpy-")  # input untouched
    assert out["info"] == FAKE_LOCK["info"]


def test_patch_lock_rejects_files_for_unknown_packages(tmp_path: Path) -> None:
    stray = tmp_path / "ghost-1.0-py3-none-any.whl"
    stray.write_bytes(b"x")
    with pytest.raises(ValueError, match="ghost"):
        site_lock.patch_lock(FAKE_LOCK, {"ghost": stray})


@settings(max_examples=25, deadline=None)
@given(local=st.sets(st.sampled_from(sorted(FAKE_LOCK["packages"]))))
def test_patch_lock_every_entry_is_local_or_cdn(local: set[str], tmp_path_factory) -> None:
    folder = tmp_path_factory.mktemp("wheels")
    files = {}
    for key in local:
        files[key] = folder / FAKE_LOCK["packages"][key]["file_name"]
        files[key].write_bytes(key.encode())
    out = site_lock.patch_lock(FAKE_LOCK, files, cdn="https://cdn.example/full/")
    assert set(out["packages"]) == set(FAKE_LOCK["packages"])
    for key, e in out["packages"].items():
        original = FAKE_LOCK["packages"][key]
        if key in local:
            assert (e["file_name"], e["sha256"]) == (files[key].name, sha(files[key]))
        else:
            assert e["file_name"] == "https://cdn.example/full/" + original["file_name"]
            assert e["sha256"] == original["sha256"]
        assert {k: v for k, v in e.items() if k not in ("file_name", "sha256")} == {
            k: v for k, v in original.items() if k not in ("file_name", "sha256")}
    again = site_lock.patch_lock(out, files, cdn="https://cdn.example/full/")
    assert again == out                          # idempotent: absolute URLs stay as they are


def test_wheel_for_matches_name_and_version() -> None:
    wheels = [Path("prompt_toolkit-3.0.52-py3-none-any.whl"),
              Path("six-1.17.0-py2.py3-none-any.whl")]
    assert site_lock.wheel_for(FAKE_LOCK["packages"]["prompt-toolkit"], wheels) == wheels[0]
    with pytest.raises(ValueError, match=r"traitlets==5\.14\.3"):
        site_lock.wheel_for(FAKE_LOCK["packages"]["traitlets"], wheels)


def test_dist_files_checks_sha256_against_the_lock(tmp_path: Path) -> None:
    good = tmp_path / "micropip-0.11.1-py3-none-any.whl"
    good.write_bytes(b"micropip bytes")
    lock = json.loads(json.dumps(FAKE_LOCK))
    lock["packages"]["micropip"]["sha256"] = sha(good)
    (tmp_path / "pyodide-lock.json").write_text(json.dumps(lock))
    assert site_lock.dist_files(lock, tmp_path) == {"micropip": good}
    (tmp_path / "traitlets-5.14.3-py3-none-any.whl").write_bytes(b"other build")
    with pytest.raises(ValueError, match=r"traitlets-5\.14\.3-py3-none-any\.whl has sha256"):
        site_lock.dist_files(lock, tmp_path)


def test_dist_files_needs_a_distribution_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no pyodide-lock.json"):
        site_lock.dist_files(FAKE_LOCK, tmp_path)


def test_offline_build_without_cache_says_how_to_fill_it(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"--offline was given; run `python build.py fetch`"):
        fetch.core(offline=True, cache=tmp_path / "empty-cache")


# --- the built site --------------------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """``python build.py --offline`` into a temp dir, once; yields (site, build output)."""
    if importlib.util.find_spec("jupyterlite_core") is None:
        pytest.fail("the site tests need the `site` extra: pip install -e '.[site]'",
                    pytrace=False)
    out = tmp_path_factory.mktemp("site") / "_site"
    start = time.perf_counter()
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--offline", "--output",
                             str(out), "--n-bootstrap", "100"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        pytest.fail(f"build.py --offline failed (exit {result.returncode}); if the cache is "
                    f"missing run `python build.py fetch` once:\n{result.stdout[-3000:]}\n"
                    f"{result.stderr[-3000:]}", pytrace=False)
    print(f"\n[test_site] build.py --offline: {seconds:.1f}s")
    yield out, result.stdout + result.stderr


@pytest.mark.browser
def test_build_warns_once_and_writes_the_sites_mode(site: tuple[Path, str]) -> None:
    """No numeric packages in the cache here (the CDN is unreachable from this machine)."""
    out, output = site
    assert output.count("WARNING") == 1
    assert f"from the Pyodide CDN {CDN} at run time" in output
    lock = json.loads((out / "static" / "pyodide" / "pyodide-lock.json").read_text())
    remote = [k for k in site_lock.lock_closure(lock, NUMERIC)
              if lock["packages"][k]["file_name"].startswith(CDN)]
    assert {"numpy", "pandas", "matplotlib", "scipy"} <= set(remote)
    assert ", ".join(remote) in output
    mode = json.loads((out / SITE_INFO).read_text())
    assert mode == {"pyodide": PYODIDE_VERSION, "numeric": "cdn", "cdn": CDN,
                    "remote": remote}


@pytest.mark.browser
def test_arenalite_wheel_is_in_the_piplite_index(site: tuple[Path, str]) -> None:
    out, _ = site
    wheels = sorted((out / "pypi").glob("arenalite-*-py3-none-any.whl"))
    assert len(wheels) == 1
    index_path = out / "pypi" / "all.json"
    index = json.loads(index_path.read_text())
    releases = index["arenalite"]["releases"]
    (release,) = [r for rs in releases.values() for r in rs]
    assert release["filename"] == wheels[0].name
    assert release["url"] == f"./{wheels[0].name}"
    assert release["digests"]["sha256"] == sha(wheels[0])
    assert "comm" in index                       # the kernel's extra, not in the lock file
    config = json.loads((out / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert f"./pypi/all.json?sha256={sha(index_path)}" in kernel["pipliteUrls"]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert config["appName"] == "arenalite"


@pytest.mark.browser
def test_vendored_lock_entries_match_their_files(site: tuple[Path, str]) -> None:
    out, _ = site
    pyodide = out / "static" / "pyodide"
    for name in ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip"):
        assert (pyodide / name).is_file(), name
    lock = json.loads((pyodide / "pyodide-lock.json").read_text())
    local = {k: e for k, e in lock["packages"].items() if not e["file_name"].startswith("http")}
    assert set(site_lock.lock_closure(lock, KERNEL_ROOTS)) <= set(local)
    for key, e in local.items():
        path = pyodide / e["file_name"]
        assert path.is_file(), f"{key}: {e['file_name']} is not in the site"
        assert sha(path) == e["sha256"], f"{key}: sha256 of {e['file_name']} differs"
    remote = {k: e for k, e in lock["packages"].items() if k not in local}
    assert {"numpy", "pandas", "matplotlib", "scipy"} <= set(remote)
    assert all(e["file_name"].startswith(CDN) for e in remote.values())


@pytest.mark.browser
def test_site_has_notebooks_report_and_bridge(site: tuple[Path, str]) -> None:
    out, _ = site
    listing = json.loads((out / "api" / "contents" / "all.json").read_text())
    names = {item["name"] for item in listing["content"]}
    assert {p.name for p in (ROOT / "content").glob("*.ipynb")} <= names
    assert "demo_results.csv" in names
    assert (out / "report" / "report.html").is_file()
    assert (out / "webgpu_bridge" / "src" / "index.js").is_file()
    assert (out / "webgpu_bridge" / "weights" / "icl_transformer.json").is_file()
    assert (out / "repl" / "index.html").is_file()


@pytest.fixture(scope="session")
def served(site: tuple[Path, str]) -> Iterator[str]:
    """The built site on 127.0.0.1 through the builder's own server (a free port)."""
    from browser_harness import serving

    with serving(serve.make_server(site[0], 0)) as url:
        yield url


@pytest.mark.browser
def test_server_sends_module_and_wasm_types(served: str) -> None:
    for path, kind in [("/static/pyodide/pyodide.mjs", "text/javascript"),
                       ("/static/pyodide/pyodide.asm.wasm", "application/wasm")]:
        with urllib.request.urlopen(served + path) as response:
            assert response.headers["Content-Type"].startswith(kind), path


INSTALL_NO_DEPS = ('import piplite\nawait piplite.install("arenalite", deps=False)\n'
                   'import importlib.metadata as md\nprint("installed arenalite", '
                   'md.version("arenalite"))')

# The REPL's first numeric use of arenalite in this kernel (no numeric packages here).
FIRST_NUMERIC_USE = """import arenalite
try:
    arenalite.load_csv
except ImportError as exc:
    print("first use:", type(exc).__name__ + ":", exc)"""

# From the kernel's Web Worker: the bridge's ES modules and WebGPU, then one kNN call with
# plain Python lists (no numpy in this kernel: it is not on this machine).
BRIDGE_FROM_KERNEL = """import sys
import js
from pyodide.ffi import to_js

from arenalite import browser

bridge = await browser.create_bridge()
print("adapter:", bridge.adapter_info["description"])
data = {"xTrain": %s, "yTrain": %s, "xTest": %s, "nFeatures": 2, "task": "binary",
        "nClasses": 2}


def as_js(value):
    return to_js(value, dict_converter=js.Object.fromEntries)


result = await bridge.bridge.predict(as_js({"name": "knn", "k": 3}), as_js(data))
print("knn:", list(result.output.to_py()))
print("numpy imported:", "numpy" in sys.modules)"""
KNN_TRAIN = [[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [9.0, 9.0], [10.0, 9.5], [8.0, 10.0]]
KNN_Y = [0, 0, 1, 1, 1, 0]
KNN_TEST = [[0.5, 0.5], [9.5, 9.5], [4.0, 5.0]]


def output_is(text: str) -> str:
    """A JS predicate: some output area's text is exactly ``text``."""
    return ("[...document.querySelectorAll('.jp-OutputArea-output')]"
            f".some(e => e.innerText.trim() === {json.dumps(text)})")


def output_line(prefix: str) -> str:
    """A JS expression: the first line of any output area that starts with ``prefix``
    (a cell's prints share one output area)."""
    return ("[...document.querySelectorAll('.jp-OutputArea-output')]"
            ".flatMap(e => e.innerText.split('\\n')).map(t => t.trim())"
            f".find(t => t.startsWith({json.dumps(prefix)}))")


def wait_for(page: Any, predicate: str, timeout_ms: int, browser: Any, console: list[str]) -> None:
    """Wait for a JS predicate; on timeout say what was blocked and what the page shows."""
    try:
        page.wait_for_function(predicate, timeout=timeout_ms)
    except Exception as exc:
        raise AssertionError(f"{predicate} did not become true; blocked {browser.blocked}; "
                             f"console tail {console[-15:]}; page tail "
                             f"{page.inner_text('body')[-800:]!r}") from exc


@pytest.fixture(scope="module")
def pw() -> Iterator[Any]:
    from browser_harness import playwright_session

    with playwright_session() as p:
        yield p


class Repl:
    """The REPL page opened with its code cells, the requests it made, its console."""

    def __init__(self, page: Any, browser: Any, requests: list[str], console: list[str],
                 start: float) -> None:
        self.page, self.browser, self.requests, self.console = page, browser, requests, console
        self.start = start

    def wait_for(self, predicate: str, timeout_ms: int) -> None:
        wait_for(self.page, predicate, timeout_ms, self.browser, self.console)


@pytest.fixture(scope="module")
def repl(pw: Any, served: str) -> Iterator[Repl]:
    """SPEC §9's REPL URL in headless Chromium (WebGPU on, every non-local request aborted)
    with three more ``code`` cells: install the arenalite wheel without its numeric
    dependencies (not on this machine) and call the WebGPU bridge from the kernel."""
    from browser_harness import chromium

    bridge_code = BRIDGE_FROM_KERNEL % (sum(KNN_TRAIN, []), KNN_Y, sum(KNN_TEST, []))
    url = (served + "/repl/index.html?kernel=python&code=print(6*7)"
           + "".join("&code=" + urllib.parse.quote(c)
                     for c in (INSTALL_NO_DEPS, bridge_code, FIRST_NUMERIC_USE)))
    requests: list[str] = []
    console: list[str] = []
    with chromium(pw, served, webgpu=True) as browser:
        browser.context.on("request", lambda r: requests.append(r.url))
        page = browser.context.new_page()
        page.on("console", lambda m: console.append(m.text))
        start = time.perf_counter()
        page.goto(url)
        yield Repl(page, browser, requests, console, start)


@pytest.mark.browser
def test_repl_prints_42_with_every_non_local_request_blocked(repl: Repl, served: str) -> None:
    """The kernel boots offline; then installs the arenalite wheel from the piplite index."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    repl.wait_for(output_is("42"), 300_000)
    seconds = time.perf_counter() - repl.start
    repl.wait_for(output_is(f"installed arenalite {version}"), 120_000)
    print(f"\n[test_site] REPL printed 42 after {seconds:.1f}s; {len(repl.requests)} requests, "
          f"{len(repl.browser.blocked)} blocked")
    assert repl.browser.blocked == [], f"non-local requests were made: {repl.browser.blocked}"
    assert all(u.startswith(served + "/") for u in repl.requests)
    assert any("/static/pyodide/pyodide.asm.wasm" in u for u in repl.requests)
    assert any(u.split("?")[0].endswith(f"/pypi/arenalite-{version}-py3-none-any.whl")
               for u in repl.requests)
    assert any("Loaded micropip" in line for line in repl.console)


@pytest.mark.browser
def test_kernel_worker_calls_the_webgpu_bridge_without_numpy(repl: Repl) -> None:
    """``from arenalite import browser`` and ``await browser.create_bridge()`` in the
    Pyodide kernel (a Web Worker): the adapter's description comes back from JavaScript
    (SwiftShader here), and a kNN call with plain lists matches the numpy reference."""
    from arenalite.models import predict

    repl.wait_for(output_line("adapter:"), 180_000)
    adapter = repl.page.evaluate(output_line("adapter:"))
    assert "swiftshader" in adapter.lower(), adapter
    repl.wait_for(output_line("numpy imported:"), 120_000)
    knn = repl.page.evaluate(output_line("knn:"))
    gpu = json.loads(knn.removeprefix("knn:").strip())
    ref = predict({"name": "knn", "k": 3}, KNN_TRAIN, KNN_Y, KNN_TEST, "binary")
    assert len(gpu) == ref.size
    assert max(abs(a - b) for a, b in zip(gpu, ref.ravel(), strict=True)) < 1e-6
    assert repl.page.evaluate(output_line("numpy imported:")) == "numpy imported: False"
    assert any("/webgpu_bridge/src/index.js" in u for u in repl.requests)
    assert repl.browser.blocked == []


@pytest.mark.browser
def test_repl_first_numeric_use_says_why_numpy_is_missing(repl: Repl, site: tuple[Path, str]
                                                          ) -> None:
    """``%pip install arenalite`` succeeds in a kernel that could not load numpy; the first
    ``arenalite.load_csv`` then raises require_numeric's clear message, not a bare
    ``No module named 'numpy'``."""
    from arenalite import browser as arenalite_browser

    mode = json.loads((site[0] / SITE_INFO).read_text())
    expected = arenalite_browser.missing_numeric_message(list(NUMERIC), mode)
    repl.wait_for(output_line("first use:"), 180_000)
    shown = repl.page.evaluate(output_line("first use:"))
    assert shown == f"first use: NumericPackagesMissing: {expected}", shown


@pytest.mark.browser
def test_notebook_01_offline_says_why_numpy_is_missing(pw: Any, site: tuple[Path, str],
                                                       served: str) -> None:
    """Notebook 01 in this offline site (no numeric packages here): the first cell stops
    with the one error of arenalite.browser.require_numeric, naming the CDN and the fixes."""
    from arenalite import browser as arenalite_browser
    from browser_harness import chromium

    mode = json.loads((site[0] / SITE_INFO).read_text())
    expected = arenalite_browser.missing_numeric_message(list(NUMERIC), mode)
    console: list[str] = []
    with chromium(pw, served, webgpu=False) as browser:
        page = browser.context.new_page()
        page.on("console", lambda m: console.append(m.text))
        page.goto(served + "/notebooks/index.html?path=01_quick_start.ipynb")
        page.wait_for_selector(".jp-CodeCell .cm-content", timeout=120_000)
        page.locator(".jp-CodeCell .cm-content").first.click()
        page.keyboard.press("Shift+Enter")        # queued until the kernel has booted
        wait_for(page, "[...document.querySelectorAll('.jp-OutputArea-output')].some(e => "
                 "e.innerText.includes('NumericPackagesMissing: '))", 400_000, browser, console)
        shown = page.evaluate("[...document.querySelectorAll('.jp-OutputArea-output')]"
                              ".map(e => e.innerText).join('\\n')")
        blocked = list(browser.blocked)
    message = shown.strip().splitlines()[-1]
    assert message == f"NumericPackagesMissing: {expected}", shown
    assert blocked, "the numeric packages were not even requested"
    assert all(u.startswith(CDN) for u in blocked), blocked
