"""Build arenalite's JupyterLite site (SPEC §9) and serve it.

``python build.py`` builds the wheel into ``dist/``, vendors Pyodide's core (npm package
``pyodide``) into ``lite/static/pyodide/`` with the pure-Python wheels the kernel needs to
boot (from PyPI, ``pyodide-lock.json`` patched to their file names and sha256), puts the
arenalite wheel in the piplite index (``%pip install arenalite`` in the kernel), runs
``jupyter lite build`` into ``_site/`` and adds the demo report (``_site/report/``),
the WebGPU bridge (``_site/webgpu_bridge/``), the WebGPU timing page with the bundled
datasets and their persisted splits (``_site/webgpu/``) and a front page linking them all.
Numeric packages (numpy, pandas, matplotlib, scipy and their lock-file dependencies) are
downloaded once from the Pyodide CDN (``--pyodide-cdn``), checked against the lock's sha256
and vendored too, so one online build gives a fully offline site; ``--pyodide-dist DIR`` (a
full Pyodide distribution) is another source. When neither has them, the site loads them
from the CDN at run time; the build warns and writes that mode into ``arenalite-site.json``
at the site root, where the notebooks' first cell reads it.
``python build.py serve`` builds, then serves the site on 127.0.0.1 (``--port``, 8000),
quietly (``--verbose`` logs every request).
``python build.py fetch`` only downloads what the build needs into ``build/site-cache/``;
``--offline`` builds from that cache and never touches the network.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import http.client
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "pkg"))  # this checkout's arenalite, for the report and the data

# the site's mode file and the numeric packages, as the notebooks' first cell checks them
from arenalite.browser import NUMERIC, SITE_INFO  # noqa: E402  (imports no numpy)

SITE = ROOT / "_site"
LITE = ROOT / "lite"
CONTENT = ROOT / "content"
DEMO = CONTENT / "demo_results.csv"
CACHE = ROOT / "build" / "site-cache"
VENDORED = LITE / "static" / "pyodide"
PIPLITE_DIR = LITE / "pypi"

PYODIDE_VERSION = "314.0.7"
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
    print(f"[build] {message}", flush=True)
    return time.perf_counter()


def canonical(name: str) -> str:
    """PEP 503 normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wheel_id(wheel: Path) -> tuple[str, str]:
    """(normalized project name, version) from a wheel's file name."""
    name, version = wheel.name.split("-")[:2]
    return canonical(name), version


# --- the lock file (pure functions, tested directly) -----------------------------------


def lock_closure(lock: Mapping, roots: Iterable[str]) -> list[str]:
    """Lock-file keys of ``roots`` and everything they depend on (sorted).

    Raises ValueError naming a root or dependency that the lock file does not list.
    """
    packages = {canonical(k): k for k in lock["packages"]}
    seen: set[str] = set()
    todo = [(canonical(r), "the kernel") for r in roots]
    while todo:
        name, needed_by = todo.pop()
        if name not in packages:
            raise ValueError(f"pyodide-lock.json has no package {name!r} (needed by {needed_by})")
        key = packages[name]
        if key in seen:
            continue
        seen.add(key)
        todo.extend((canonical(d), key) for d in lock["packages"][key]["depends"])
    return sorted(seen)


def patch_lock(lock: Mapping, local: Mapping[str, Path], cdn: str = CDN) -> dict:
    """A copy of ``lock`` where each package resolves to a local file or to the CDN.

    ``local`` maps lock keys to files placed next to the lock file: their entries get the
    file's name and sha256. Every other entry gets an absolute ``cdn`` URL (its sha256,
    the CDN file's, is kept), so Pyodide fetches it from there at run time.
    """
    unknown = sorted(set(local) - set(lock["packages"]))
    if unknown:
        raise ValueError(f"local files for packages not in pyodide-lock.json: {unknown}")
    out = json.loads(json.dumps(lock))
    for key, entry in out["packages"].items():
        if key in local:
            entry["file_name"] = local[key].name
            entry["sha256"] = sha256_of(local[key])
        elif not re.match(r"^https?://", entry["file_name"]):
            entry["file_name"] = cdn + entry["file_name"]
    return out


def wheel_for(entry: Mapping, wheels: Iterable[Path]) -> Path:
    """The wheel among ``wheels`` for a lock entry (same project name and version)."""
    want = (canonical(entry["name"]), entry["version"])
    for wheel in wheels:
        if wheel_id(wheel) == want:
            return wheel
    raise ValueError(f"no wheel for {entry['name']}=={entry['version']} in the cache")


def dist_files(lock: Mapping, dist: Path) -> dict[str, Path]:
    """Lock keys whose file a full Pyodide distribution ``dist`` holds, sha256-checked."""
    if not (dist / "pyodide-lock.json").is_file():
        raise ValueError(f"--pyodide-dist {dist}: no pyodide-lock.json there; pass the folder "
                         "of a full Pyodide distribution")
    found = {}
    for key, entry in lock["packages"].items():
        path = dist / entry["file_name"]
        if path.is_file():
            digest = sha256_of(path)
            if digest != entry["sha256"]:
                raise ValueError(f"--pyodide-dist {dist}: {entry['file_name']} has sha256 "
                                 f"{digest}, the lock file of Pyodide {PYODIDE_VERSION} says "
                                 f"{entry['sha256']} (another Pyodide version?)")
            found[key] = path
    return found


# --- downloads (cached) ----------------------------------------------------------------


def download(url: str, dest: Path, sha256: str, timeout: float = TIMEOUT) -> int:
    """Download ``url`` to ``dest`` atomically; returns its size in bytes.

    The bytes go to a temp file next to ``dest``, which is renamed only once its length
    matches the Content-Length and its sha256 is ``sha256``: a half-written or wrong file
    never appears at ``dest``. Raises ValueError naming the file for an HTTP error, a
    truncated download or a digest mismatch; OSError (URLError, timeout) when the server
    cannot be reached at all.
    """
    name = dest.name
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=dest.parent)
    try:
        digest, size = hashlib.sha256(), 0
        with os.fdopen(fd, "wb") as part:
            try:
                response = urllib.request.urlopen(url, timeout=timeout)
            except urllib.error.HTTPError as exc:
                raise ValueError(f"{name}: {url} answered HTTP {exc.code} {exc.reason}") from exc
            with response:
                expected = response.headers.get("Content-Length")
                try:
                    while chunk := response.read(1 << 20):
                        digest.update(chunk)
                        part.write(chunk)
                        size += len(chunk)
                except (http.client.IncompleteRead, OSError) as exc:
                    raise ValueError(f"{name}: truncated download from {url} after {size} "
                                     f"bytes ({exc!r})") from exc
        if expected is not None and size != int(expected):
            raise ValueError(f"{name}: truncated download from {url}: {size} of {expected} "
                             "bytes")
        if digest.hexdigest() != sha256:
            raise ValueError(f"{name}: sha256 of the download from {url} is "
                             f"{digest.hexdigest()}, pyodide-lock.json says {sha256}")
        os.replace(tmp, dest)
        return size
    finally:
        Path(tmp).unlink(missing_ok=True)


def lock_files(lock: Mapping, keys: Iterable[str], cache: Path, cdn: str | None = None,
               timeout: float = TIMEOUT) -> dict[str, Path]:
    """Lock keys → their files in ``cache`` (sha256 as the lock says).

    With ``cdn`` (the base URL of the lock's relative file names) the missing ones are
    downloaded first, with a line of progress per file; without it they are left out.
    Errors as :func:`download`'s; files downloaded before an error stay in the cache.
    """
    cache.mkdir(parents=True, exist_ok=True)
    entries = {key: lock["packages"][key] for key in keys}
    missing = [key for key, e in entries.items()
               if not (cache / e["file_name"]).is_file()
               or sha256_of(cache / e["file_name"]) != e["sha256"]]
    if cdn is not None and missing:
        start = step(f"downloading {len(missing)} packages from {cdn}")
        for i, key in enumerate(missing, 1):
            file_name = entries[key]["file_name"]
            print(f"[build]   ({i}/{len(missing)}) {file_name} ", end="", flush=True)
            began = time.perf_counter()
            try:
                size = download(cdn + file_name, cache / file_name, entries[key]["sha256"],
                                timeout)
            except BaseException:
                print("failed", flush=True)
                raise
            print(f"{size / 2**20:.1f} MiB ({time.perf_counter() - began:.1f}s)", flush=True)
        print(f"[build]   done ({time.perf_counter() - start:.1f}s)")
        missing = []
    return {key: cache / e["file_name"] for key, e in entries.items() if key not in missing}



def fetch(offline: bool) -> tuple[Path, list[Path]]:
    """Pyodide's npm package (extracted) and the kernel's wheels, from the cache or the net."""
    package = CACHE / f"pyodide-{PYODIDE_VERSION}"
    tgz = CACHE / f"pyodide-{PYODIDE_VERSION}.tgz"
    wheels_dir = CACHE / "wheels"
    CACHE.mkdir(parents=True, exist_ok=True)
    if not tgz.is_file():
        if offline:
            raise SystemExit(f"build: {tgz} is missing and --offline was given; run "
                             "`python build.py fetch` once with network")
        start = step(f"npm pack pyodide@{PYODIDE_VERSION}")
        subprocess.run(["npm", "pack", f"pyodide@{PYODIDE_VERSION}", "--silent",
                        "--pack-destination", str(CACHE)], check=True, stdout=subprocess.DEVNULL)
        print(f"[build]   {tgz.name} ({time.perf_counter() - start:.1f}s)")
    if not (package / "pyodide-lock.json").is_file():
        shutil.rmtree(package, ignore_errors=True)
        with tarfile.open(tgz) as tar, tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            # the "data" filter (3.11.4+) refuses links and paths outside the folder
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, **safe)
            Path(tmp, "package").rename(package)
    lock = json.loads((package / "pyodide-lock.json").read_text(encoding="utf-8"))
    pins = [f"{lock['packages'][k]['name']}=={lock['packages'][k]['version']}"
            for k in lock_closure(lock, KERNEL_ROOTS)] + list(PIPLITE_EXTRA)
    wheels_dir.mkdir(exist_ok=True)
    have = {wheel_id(w) for w in wheels_dir.glob("*.whl")}
    missing = [p for p in pins if (canonical(p.split("==")[0]), p.split("==")[1]) not in have]
    if missing:
        if offline:
            raise SystemExit(f"build: wheels {missing} are not in {wheels_dir} and --offline "
                             "was given; run `python build.py fetch` once with network")
        start = step(f"pip download --no-deps {len(missing)} pure-Python wheels")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                        "--only-binary=:all:", "--python-version", "3.14", "-d",
                        str(wheels_dir), *missing], check=True)
        print(f"[build]   done ({time.perf_counter() - start:.1f}s)")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build_reqs = pyproject["build-system"]["requires"]
    build_dir = CACHE / "build-wheels"
    if not _pip_quiet(["install", "--dry-run", "--no-index", "--find-links", str(build_dir),
                       "--ignore-installed", "--no-deps", *build_reqs]):
        if offline:
            raise SystemExit(f"build: the wheel's build requirements {build_reqs} are not in "
                             f"{build_dir} and --offline was given; run `python build.py fetch`")
        step(f"pip download the wheel's build requirements {build_reqs}")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
                        "-d", str(build_dir), *build_reqs], check=True)
    return package, sorted(wheels_dir.glob("*.whl"))


def fetch_all(cdn: str = CDN, *, kernel_only: bool = False) -> None:
    """``build.py fetch``: everything the build downloads, the numeric packages included
    unless ``kernel_only`` (the test suite's set-up: its site loads no numeric package);
    any failure (an unreachable CDN too) is an error here."""
    package, _ = fetch(offline=False)
    if kernel_only:
        step(f"cache ready in {CACHE}/ (the kernel only: numeric packages not fetched)")
        return
    lock = json.loads((package / "pyodide-lock.json").read_text(encoding="utf-8"))
    try:
        lock_files(lock, numeric_keys(lock), CACHE / "pyodide-packages", cdn)
    except OSError as exc:
        raise SystemExit(f"build fetch: the Pyodide CDN {cdn} cannot be reached "
                         f"({getattr(exc, 'reason', exc)}); numpy/pandas/matplotlib/scipy were "
                         "not downloaded") from exc
    except ValueError as exc:
        raise SystemExit(f"build fetch: {exc}") from exc
    step(f"cache ready in {CACHE}/ (numpy/pandas/matplotlib/scipy included)")


def _pip_quiet(args: list[str]) -> bool:
    """Whether ``pip <args>`` succeeds (output discarded)."""
    result = subprocess.run([sys.executable, "-m", "pip", *args, "-q"],
                            capture_output=True, text=True)
    return result.returncode == 0


# --- build steps -----------------------------------------------------------------------


def build_wheel() -> Path:
    start = step("building the arenalite wheel")
    dist = ROOT / "dist"
    # an isolated build environment from the cached build requirements: no network
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index",
                    "--find-links", str(CACHE / "build-wheels"), "-q", "-w", str(dist),
                    str(ROOT)], check=True)
    wheels = sorted(dist.glob("arenalite-*-py3-none-any.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise SystemExit("build: no py3-none-any wheel was produced")
    print(f"[build]   {wheels[-1].name} ({time.perf_counter() - start:.1f}s)")
    return wheels[-1]


def numeric_keys(lock: Mapping) -> list[str]:
    """Lock keys of the numeric packages and their dependencies, less the kernel's own."""
    kernel = set(lock_closure(lock, KERNEL_ROOTS))
    return [key for key in lock_closure(lock, NUMERIC) if key not in kernel]


def numeric_files(lock: Mapping, keys: list[str], *, offline: bool,
                  cdn: str) -> tuple[dict[str, Path], str]:
    """The numeric packages' files from the cache, downloading the missing ones unless
    ``offline``; returns (lock key → file, why the others are missing).

    An unreachable CDN is not an error here (the site then loads them from the CDN at run
    time); a bad download is (SystemExit naming the file).
    """
    cache = CACHE / "pyodide-packages"
    if offline:
        return lock_files(lock, keys, cache), "--offline was given and the cache lacks them"
    try:
        return lock_files(lock, keys, cache, cdn), ""
    except ValueError as exc:
        raise SystemExit(f"build: {exc}") from exc
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        return lock_files(lock, keys, cache), f"{cdn} cannot be reached: {reason}"


def vendor_pyodide(package: Path, wheels: list[Path], pyodide_dist: Path | None, *,
                   offline: bool, cdn: str = CDN) -> dict:
    """Pyodide's core, the kernel's wheels, the numeric packages (from a full distribution,
    the cache or the CDN) + the patched lock; returns the site's mode (SITE_INFO)."""
    start = step(f"vendoring Pyodide {PYODIDE_VERSION} into {VENDORED.relative_to(ROOT)}/")
    shutil.rmtree(VENDORED, ignore_errors=True)
    VENDORED.mkdir(parents=True)
    for name in CORE_FILES:
        shutil.copy2(package / name, VENDORED / name)
    lock = json.loads((package / "pyodide-lock.json").read_text(encoding="utf-8"))
    local = {key: wheel_for(lock["packages"][key], wheels)
             for key in lock_closure(lock, KERNEL_ROOTS)}
    if pyodide_dist is not None:
        try:
            local = {**dist_files(lock, pyodide_dist), **local}
        except ValueError as exc:
            raise SystemExit(f"build: {exc}") from exc
    wanted = [key for key in numeric_keys(lock) if key not in local]
    numeric, why = numeric_files(lock, wanted, offline=offline, cdn=cdn)
    if pyodide_dist is not None:
        why = f"{pyodide_dist} lacks them; {why}"
    local = {**numeric, **local}
    for path in local.values():
        shutil.copy2(path, VENDORED / path.name)
    patched = patch_lock(lock, local, cdn)
    (VENDORED / "pyodide-lock.json").write_text(json.dumps(patched, indent=1), encoding="utf-8")
    remote = [key for key in lock_closure(lock, NUMERIC) if key not in local]
    print(f"[build]   {len(local)} of {len(lock['packages'])} lock-file packages local "
          f"({time.perf_counter() - start:.1f}s)")
    if remote:
        print(f"[build] WARNING: numpy/pandas/matplotlib/scipy are not in the site ({why}); "
              f"it will load these {len(remote)} packages from the Pyodide CDN {cdn} at run "
              f"time, so its notebooks need the network: {', '.join(remote)}. For a fully "
              "offline site run `python build.py fetch` once online (or pass --pyodide-dist "
              "DIR, a full Pyodide distribution).", file=sys.stderr, flush=True)
    else:
        print("[build]   numpy/pandas/matplotlib/scipy: vendored — the site is fully offline")
    return {"pyodide": PYODIDE_VERSION, "numeric": "cdn" if remote else "vendored",
            "cdn": cdn, "remote": remote}


def stage_piplite(arenalite_wheel: Path, wheels: list[Path]) -> None:
    """The piplite index's wheels: arenalite and the kernel's extras not in the lock file."""
    shutil.rmtree(PIPLITE_DIR, ignore_errors=True)
    PIPLITE_DIR.mkdir(parents=True)
    shutil.copy2(arenalite_wheel, PIPLITE_DIR / arenalite_wheel.name)
    for pin in PIPLITE_EXTRA:
        name, version = pin.split("==")
        wheel = wheel_for({"name": name, "version": version}, wheels)
        shutil.copy2(wheel, PIPLITE_DIR / wheel.name)


def jupyter_lite_build(out: Path) -> None:
    start = step(f"jupyter lite build → {out}")
    with tempfile.TemporaryDirectory(prefix="arenalite-lite-") as work:
        env = {**os.environ, "JUPYTERLITE_CACHE_DIR": str(Path(work) / "cache")}
        result = subprocess.run(
            [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(LITE),
             "--output-dir", str(out)],
            cwd=work, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"build: jupyter lite build failed:\n{result.stdout}\n{result.stderr}")
    print(f"[build]   done ({time.perf_counter() - start:.1f}s)")


#: the demo's load options (README's quick start): per metric the raw scores that normalize to
#: 0 and 1, so the build passes bounds and warns about none it was not given
DEMO_OPTIONS = {"seed": "seed",
                "metric_type_bounds": {"roc_auc": [0.5, 1.0], "rmse": [0.0, "knn-1"],
                                       "log_loss": [0.0, "knn-1"]}}


def build_report(out: Path, n_bootstrap: int) -> None:
    """The demo report, linking the site's WebGPU page (a report outside the site does not)."""
    start = step(f"analysing {DEMO.relative_to(ROOT)}")
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


def copy_bridge(out: Path) -> None:
    """The bridge's ES modules and the packaged transformer weights (arenalite.browser URLs)."""
    step("copying the WebGPU bridge")
    shutil.copytree(ROOT / "webgpu_bridge" / "src", out / "webgpu_bridge" / "src")
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
    splits); ``NAME.json`` is the dataset object the bridge's ``runSplits`` takes."""
    step("copying the WebGPU timing page and exporting its datasets and splits")
    from arenalite import datasets, splits

    data = out / "webgpu" / "data"
    shutil.copytree(ROOT / "webgpu_bridge" / "page", out / "webgpu")
    data.mkdir()
    listing = []
    for name in datasets.names():
        ds, entry = datasets.load(name), datasets.info(name)
        split = splits.make_splits(ds.n_rows, ds.task, y=ds.y, dataset=name)
        splits.save(split, data / f"{name}.splits.json")
        dataset = {"name": name, "task": ds.task, "nClasses": ds.n_classes,
                   "nFeatures": ds.X.shape[1], "featureNames": list(ds.feature_names),
                   "x": ds.X.ravel().tolist(), "y": ds.y.tolist()}
        (data / f"{name}.json").write_text(json.dumps(dataset), encoding="utf-8")
        listing.append({"name": name, "task": ds.task, "n_rows": ds.n_rows,
                        "n_features": ds.X.shape[1], "n_classes": ds.n_classes,
                        "kind": split["kind"], "n_repeats": split["n_repeats"],
                        "n_folds": split["n_folds"], "n_splits": len(split["splits"]),
                        "source": entry["source"], "licence": entry["licence"]})
    (data / "datasets.json").write_text(json.dumps(listing, indent=1) + "\n", encoding="utf-8")


def site_size(out: Path) -> tuple[int, int]:
    files = [p for p in out.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def build_site(out: Path = SITE, *, pyodide_dist: Path | None = None, offline: bool = False,
               n_bootstrap: int = 1000, cdn: str = CDN) -> Path:
    """Everything of SPEC §9 into ``out`` (replaced); returns ``out``."""
    start = time.perf_counter()
    package, wheels = fetch(offline)
    wheel = build_wheel()
    mode = vendor_pyodide(package, wheels, pyodide_dist, offline=offline, cdn=cdn)
    stage_piplite(wheel, wheels)
    if out.exists():
        shutil.rmtree(out)
    jupyter_lite_build(out)
    (out / SITE_INFO).write_text(json.dumps(mode, indent=1) + "\n", encoding="utf-8")
    build_report(out / "report", n_bootstrap)
    copy_bridge(out)
    copy_webgpu_page(out)
    copy_landing(out)
    n_files, n_bytes = site_size(out)
    step(f"site ready in {out} ({n_files} files, {n_bytes / 2**20:.1f} MiB, "
         f"{time.perf_counter() - start:.1f}s)")
    return out


# --- serving ---------------------------------------------------------------------------


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the MIME types ES modules and WebAssembly need."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".js": "text/javascript", ".mjs": "text/javascript",
                      ".wasm": "application/wasm", ".json": "application/json",
                      ".wgsl": "text/plain", ".whl": "application/octet-stream"}


class QuietSiteHandler(SiteHandler):
    """SiteHandler that logs no request (a short visit makes about 2,000); errors of the
    server itself still reach stderr through ``SiteServer.handle_error``."""

    def log_message(self, format: str, *args: object) -> None:
        pass


class SiteServer(http.server.ThreadingHTTPServer):
    """Threading server that ignores clients closing connections early (browsers do)."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_server(directory: Path, port: int, *,
                verbose: bool = False) -> http.server.ThreadingHTTPServer:
    """A threading HTTP server for ``directory`` on 127.0.0.1:``port`` (0: a free port),
    quiet unless ``verbose`` (one log line per request, as ``serve --verbose`` asks)."""
    handler = functools.partial(SiteHandler if verbose else QuietSiteHandler,
                                directory=str(directory))
    return SiteServer(("127.0.0.1", port), handler)


def open_port(site: Path, port: int, verbose: bool = False) -> http.server.ThreadingHTTPServer:
    """Bind 127.0.0.1:``port`` for ``site`` now, so a busy port fails before a long build."""
    try:
        return make_server(site, port, verbose=verbose)
    except OSError as error:
        raise SystemExit(f"build: cannot serve on 127.0.0.1:{port} ({error.strerror}); "
                         "pass --port N for another port (0 picks a free one)") from None


def serve(server: http.server.ThreadingHTTPServer, site: Path) -> None:
    with server:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        print(f"[build] serving {site} on {base}/ (Ctrl-C stops)\n"
              f"[build]   JupyterLab: {base}/lab/index.html  REPL: {base}/repl/index.html\n"
              f"[build]   demo report: {base}/report/report.html  "
              f"WebGPU timing: {base}/webgpu/index.html", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("\n[build] stopped")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of build.py."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["build", "serve", "fetch"],
                        default="build")
    parser.add_argument("--port", type=int, default=8000,
                        help="port of `serve` on 127.0.0.1 (default 8000; 0 picks a free one)")
    parser.add_argument("--output", type=Path, default=SITE, help="site folder (_site)")
    parser.add_argument("--pyodide-dist", type=Path, default=None,
                        help="a full Pyodide distribution folder: vendor its packages too")
    parser.add_argument("--offline", action="store_true",
                        help="use only build/site-cache/ (see `fetch`); never download")
    parser.add_argument("--pyodide-cdn", default=os.environ.get("ARENALITE_PYODIDE_CDN", CDN),
                        help="base URL of the lock file's packages (env ARENALITE_PYODIDE_CDN; "
                        f"default {CDN})")
    parser.add_argument("--n-bootstrap", type=int, default=1000,
                        help="bootstrap replicates of the demo report (default 1000)")
    parser.add_argument("--kernel-only", action="store_true",
                        help="with `fetch`: only what the kernel boots with (Pyodide's core, "
                        "pure-Python wheels), not numpy/pandas/matplotlib/scipy from the CDN")
    parser.add_argument("--verbose", action="store_true",
                        help="with `serve`: log every request (default: quiet)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    cdn = args.pyodide_cdn.rstrip("/") + "/"
    if args.command == "fetch":
        fetch_all(cdn, kernel_only=args.kernel_only)
        return
    server = (open_port(args.output.resolve(), args.port, args.verbose)
              if args.command == "serve" else None)
    out = build_site(args.output.resolve(), pyodide_dist=args.pyodide_dist,
                     offline=args.offline, n_bootstrap=args.n_bootstrap, cdn=cdn)
    if server is not None:
        serve(server, out)


if __name__ == "__main__":
    main()
