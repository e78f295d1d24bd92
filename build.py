"""Build arenalite's JupyterLite site (SPEC §9) and serve it.

``python build.py`` builds the wheel into ``dist/``, vendors Pyodide's core (npm package
``pyodide``) into ``lite/static/pyodide/`` with the pure-Python wheels the kernel needs to
boot (from PyPI, ``pyodide-lock.json`` patched to their file names and sha256), puts the
arenalite wheel in the piplite index (``%pip install arenalite`` in the kernel), runs
``jupyter lite build`` into ``_site/`` and adds the demo report (``_site/report/``) and
the WebGPU bridge (``_site/webgpu_bridge/``).
Numeric packages (numpy, pandas, matplotlib, scipy) come from ``--pyodide-dist DIR`` (a
full Pyodide distribution: fully offline site) or else from the Pyodide CDN at run time.
``python build.py serve`` builds, then serves the site on 127.0.0.1 (``--port``, 8000).
``python build.py fetch`` only downloads what the build needs into ``build/site-cache/``;
``--offline`` builds from that cache and never touches the network.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
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
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent
SITE = ROOT / "_site"
LITE = ROOT / "lite"
CONTENT = ROOT / "content"
DEMO = CONTENT / "demo_results.csv"
CACHE = ROOT / "build" / "site-cache"
VENDORED = LITE / "static" / "pyodide"
PIPLITE_DIR = LITE / "pypi"

PYODIDE_VERSION = "314.0.7"
CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
#: the files of the npm package that make up Pyodide's core (the rest are docs/types)
CORE_FILES = ("pyodide.mjs", "pyodide.js", "pyodide.asm.mjs", "pyodide.asm.wasm",
              "python_stdlib.zip", "pyodide-lock.json", "package.json")
#: lock-file packages the pyodide kernel loads at boot (micropip, then piplite installs
#: ipython and jedi); their lock-file dependencies are vendored too
KERNEL_ROOTS = ("micropip", "ipython", "jedi")
#: pure-Python wheels the kernel installs through piplite that are not in the lock file
PIPLITE_EXTRA = ("comm==0.2.3",)
NUMERIC = ("numpy", "pandas", "matplotlib", "scipy")


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


def vendor_pyodide(package: Path, wheels: list[Path], pyodide_dist: Path | None) -> None:
    """Pyodide's core, the kernel's wheels (and a full distribution's files) + patched lock."""
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
    for path in local.values():
        shutil.copy2(path, VENDORED / path.name)
    patched = patch_lock(lock, local)
    (VENDORED / "pyodide-lock.json").write_text(json.dumps(patched, indent=1), encoding="utf-8")
    needed = lock_closure(lock, NUMERIC)
    remote = [k for k in needed if k not in local]
    print(f"[build]   {len(local)} of {len(lock['packages'])} lock-file packages local "
          f"({time.perf_counter() - start:.1f}s)")
    if not remote:
        print(f"[build]   numpy/pandas/matplotlib/scipy: vendored from {pyodide_dist} — the "
              "site is fully offline")
    elif pyodide_dist is not None:
        print(f"[build]   numpy/pandas/matplotlib/scipy: {pyodide_dist} lacks {remote}; "
              f"those load at run time from the Pyodide CDN {CDN}")
    else:
        print(f"[build]   numpy/pandas/matplotlib/scipy: loaded at run time from the Pyodide "
              f"CDN {CDN} (the kernel itself boots offline; pass --pyodide-dist DIR with a "
              "full Pyodide distribution for a fully offline site)")


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


def build_report(out: Path, n_bootstrap: int) -> None:
    start = step(f"analysing {DEMO.relative_to(ROOT)}")
    sys.path.insert(0, str(ROOT / "pkg"))
    import matplotlib

    matplotlib.use("Agg")
    from arenalite.cli import main as cli_main

    code = cli_main(["report", str(DEMO), "--output", str(out), "--metric", "metric",
                     "--score", "score", "--seed", "seed", "--n-bootstrap", str(n_bootstrap)])
    if code != 0:
        raise SystemExit(f"build: report failed with exit code {code}")
    print(f"[build]   report written ({time.perf_counter() - start:.1f}s)")


def copy_bridge(out: Path) -> None:
    """The bridge's ES modules and the packaged transformer weights (arenalite.browser URLs)."""
    step("copying the WebGPU bridge")
    shutil.copytree(ROOT / "webgpu_bridge" / "src", out / "webgpu_bridge" / "src")
    shutil.copytree(ROOT / "pkg" / "arenalite" / "models" / "weights",
                    out / "webgpu_bridge" / "weights")


def site_size(out: Path) -> tuple[int, int]:
    files = [p for p in out.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def build_site(out: Path = SITE, *, pyodide_dist: Path | None = None, offline: bool = False,
               n_bootstrap: int = 1000) -> Path:
    """Everything of SPEC §9 into ``out`` (replaced); returns ``out``."""
    start = time.perf_counter()
    package, wheels = fetch(offline)
    wheel = build_wheel()
    vendor_pyodide(package, wheels, pyodide_dist)
    stage_piplite(wheel, wheels)
    if out.exists():
        shutil.rmtree(out)
    jupyter_lite_build(out)
    build_report(out / "report", n_bootstrap)
    copy_bridge(out)
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
    """SiteHandler without the per-request log lines (for tests)."""

    def log_message(self, format: str, *args: object) -> None:
        pass


class SiteServer(http.server.ThreadingHTTPServer):
    """Threading server that ignores clients closing connections early (browsers do)."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def make_server(directory: Path, port: int,
                quiet: bool = False) -> http.server.ThreadingHTTPServer:
    """A threading HTTP server for ``directory`` on 127.0.0.1:``port`` (0: a free port)."""
    handler = functools.partial(QuietSiteHandler if quiet else SiteHandler,
                                directory=str(directory))
    return SiteServer(("127.0.0.1", port), handler)


def serve(site: Path, port: int) -> None:
    with make_server(site, port) as server:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        print(f"[build] serving {site} on {base}/ (Ctrl-C stops)\n"
              f"[build]   JupyterLab: {base}/lab/index.html  REPL: {base}/repl/index.html\n"
              f"[build]   demo report: {base}/report/report.html", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("\n[build] stopped")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["build", "serve", "fetch"],
                        default="build")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--output", type=Path, default=SITE, help="site folder (_site)")
    parser.add_argument("--pyodide-dist", type=Path, default=None,
                        help="a full Pyodide distribution folder: vendor its packages too")
    parser.add_argument("--offline", action="store_true",
                        help="use only build/site-cache/ (see `fetch`); never download")
    parser.add_argument("--n-bootstrap", type=int, default=1000,
                        help="bootstrap replicates of the demo report")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        fetch(offline=False)
        step(f"cache ready in {CACHE.relative_to(ROOT)}/")
        return
    out = build_site(args.output.resolve(), pyodide_dist=args.pyodide_dist,
                     offline=args.offline, n_bootstrap=args.n_bootstrap)
    if args.command == "serve":
        serve(out, args.port)


if __name__ == "__main__":
    main()
