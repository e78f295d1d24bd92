"""Headless Chromium for the browser tests: a local static server and an offline page.

The system Chromium (Debian's package, ``/usr/bin/chromium``) runs headless through
Playwright with a fresh user-data directory; every request that is not for the local
server on 127.0.0.1 is aborted and recorded, so a test can show that nothing left the
machine. No browser is ever downloaded. Without Chromium the tests fail with a clear
message (CI installs it) unless ``ARENALITE_ALLOW_NO_BROWSER=1``, which skips them.
"""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest

from arenalite import datasets

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("ARENALITE_CHROMIUM", "/usr/bin/chromium"))
BASE_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]
WEBGPU_ARG = "--enable-unsafe-webgpu"

HARNESS_HTML = """<!doctype html>
<meta charset="utf-8"><title>arenalite bridge harness</title>
<script type="module">
import * as bridge from "/bridge/index.js";
window.arenaBridge = bridge;
window.harnessReady = true;
</script>
"""

# A module worker that imports the bridge and answers {model, data} with {output, timings}.
HARNESS_WORKER = """import { Bridge } from "/bridge/index.js";
let bridge = null;
self.onmessage = async (event) => {
  try {
    bridge ??= await Bridge.create({ defaultWeights: "/weights/icl_transformer.json" });
    const { output, timings } = await bridge.predict(event.data.model, event.data.data);
    self.postMessage({ output: Array.from(output), timings, adapter: bridge.adapterInfo,
                       inWorker: typeof window === "undefined" });
  } catch (err) {
    self.postMessage({ error: String(err.message ?? err) });
  }
};
"""


def require_chromium() -> Path:
    """Chromium's path; fails (or skips with ARENALITE_ALLOW_NO_BROWSER=1) when absent."""
    if CHROMIUM.exists():
        return CHROMIUM
    message = (f"{CHROMIUM} not found: browser tests need Debian's chromium "
               "(apt-get install -y chromium chromium-driver; never `playwright install`)")
    if os.environ.get("ARENALITE_ALLOW_NO_BROWSER") == "1":
        pytest.skip(message + " [skipped: ARENALITE_ALLOW_NO_BROWSER=1]")
    pytest.fail(message, pytrace=False)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Serves URL prefixes from mapped directories; quiet; correct JS/WGSL types."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript",
                      ".wgsl": "text/plain", ".json": "application/json",
                      ".bin": "application/octet-stream"}

    def __init__(self, *args: Any, mounts: Mapping[str, Path], **kwargs: Any) -> None:
        self.mounts = mounts
        super().__init__(*args, **kwargs)

    def translate_path(self, path: str) -> str:
        clean = urlsplit(path).path
        for prefix, folder in self.mounts.items():
            if clean.startswith(prefix):
                # normpath, not resolve(): ".." cannot leave the folder, while a link in it
                # (src/registry.json → the package's registry) is still served
                target = Path(os.path.normpath(folder / clean[len(prefix):]))
                if folder in (target, *target.parents):
                    return str(target)
        return str(Path(tempfile.gettempdir()) / "arenalite-harness-missing")

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(server: http.server.HTTPServer) -> Iterator[str]:
    """Run ``server`` (bound to 127.0.0.1) in a thread; yields its base URL, then stops it."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def harness_server() -> Iterator[str]:
    """Serve the bridge sources (``/bridge/``), the packaged weights (``/weights/``) and
    the harness page and worker (``/harness/``, a temp dir removed afterwards) on
    127.0.0.1 (free port); yields the base URL."""
    with tempfile.TemporaryDirectory(prefix="arenalite-harness-") as tmp:
        harness = Path(tmp)
        (harness / "index.html").write_text(HARNESS_HTML)
        (harness / "worker.js").write_text(HARNESS_WORKER)
        mounts = {"/bridge/": ROOT / "webgpu_bridge" / "src",
                  "/weights/": ROOT / "pkg" / "arenalite" / "models" / "weights",
                  "/harness/": harness}
        handler = functools.partial(_Handler, mounts=mounts)
        with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as url:
            yield url


def float32_dataset(name: str) -> datasets.Dataset:
    """A bundled dataset with features (and targets) rounded to float32, kept as float64:
    the bridge's data contract is Float32Array, so both runners then see identical inputs."""
    ds = datasets.load(name)
    x = ds.X.astype(np.float32).astype(np.float64)
    y = ds.y.astype(np.float32).astype(np.float64) if ds.task == "regression" else ds.y
    return datasets.Dataset(ds.name, x, y, ds.task, ds.n_classes, ds.feature_names)


class Browser:
    """A headless Chromium context whose every non-local request is aborted."""

    def __init__(self, context: Any, base_url: str) -> None:
        self.context = context
        self.base_url = base_url
        self.blocked: list[str] = []
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.base_url + "/"):
            route.continue_()
        else:
            self.blocked.append(url)
            route.abort()

    def open_harness(self, timeout_ms: int = 30_000) -> Any:
        """A page with the bridge module loaded as ``window.arenaBridge``."""
        page = self.context.new_page()
        page.set_default_timeout(timeout_ms)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(self.base_url + "/harness/index.html")
        try:
            page.wait_for_function("window.harnessReady === true")
        except Exception as exc:
            raise AssertionError(f"the bridge module did not load: {errors}") from exc
        return page


@contextmanager
def playwright_session() -> Iterator[Any]:
    """One Playwright driver for the whole test session (Chromium must exist)."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@contextmanager
def chromium(playwright: Any, base_url: str, *, webgpu: bool = True,
             extra_args: tuple[str, ...] = ()) -> Iterator[Browser]:
    """Launch the system Chromium headless (fresh profile), with or without WebGPU."""
    profile = tempfile.mkdtemp(prefix="arenalite-chromium-")
    args = BASE_ARGS + ([WEBGPU_ARG] if webgpu else []) + list(extra_args)
    try:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(require_chromium()), headless=True, args=args)
        try:
            yield Browser(context, base_url)
        finally:
            context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@contextmanager
def bridge_page(setup: Callable[[Any, str], None] | None = None) -> Iterator[Any]:
    """The harness page in headless Chromium with ``window.bridge`` created (default
    weights from ``/weights/``); ``setup(page, base_url)`` runs first (extra routes). On
    exit, asserts that no non-local request was attempted."""
    with playwright_session() as pw, harness_server() as url, chromium(pw, url) as b:
        page = b.open_harness(timeout_ms=300_000)
        if setup is not None:
            setup(page, url)
        page.evaluate("""async () => {
          window.bridge = await window.arenaBridge.Bridge.create(
            {defaultWeights: "/weights/"});
        }""")
        yield page
        assert b.blocked == [], f"non-local requests were attempted: {b.blocked}"
