"""Downloads into the build cache (``build/site-cache/``): Pyodide's npm package, the kernel's
pure-Python wheels, the wheel's build requirements and the numeric packages from the CDN.

Every file is checked (sha256, length) before it appears in the cache; progress is a
``[build]`` line per step and per file.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
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

from .lock import canonical, lock_closure, numeric_keys, read_lock, sha256_of, wheel_id
from .settings import (
    CACHE,
    CDN,
    KERNEL_ROOTS,
    PAPAPARSE_VERSION,
    PIPLITE_EXTRA,
    PYODIDE_VERSION,
    ROOT,
    TIMEOUT,
    step,
)


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


def npm_pack(package: str, version: str, tgz: Path, offline: bool, cache: Path) -> None:
    """``npm pack package@version`` into ``cache`` unless ``tgz`` is there already;
    offline with it missing: SystemExit saying to run ``fetch``."""
    if tgz.is_file():
        return
    if offline:
        raise SystemExit(f"build: {tgz} is missing and --offline was given; run "
                         "`python build.py fetch` once with network")
    start = step(f"npm pack {package}@{version}")
    subprocess.run(["npm", "pack", f"{package}@{version}", "--silent",
                    "--pack-destination", str(cache)], check=True, stdout=subprocess.DEVNULL)
    print(f"[build]   {tgz.name} ({time.perf_counter() - start:.1f}s)")


def core(offline: bool, *, cache: Path = CACHE) -> tuple[Path, list[Path]]:
    """Pyodide's npm package (extracted), the kernel's wheels and the arenalite wheel's build
    requirements, from ``cache`` or (unless ``offline``) the network; returns (package folder,
    kernel wheels). Offline with something missing: SystemExit saying to run ``fetch``."""
    package = cache / f"pyodide-{PYODIDE_VERSION}"
    tgz = cache / f"pyodide-{PYODIDE_VERSION}.tgz"
    wheels_dir = cache / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    npm_pack("pyodide", PYODIDE_VERSION, tgz, offline, cache)
    if not (package / "pyodide-lock.json").is_file():
        shutil.rmtree(package, ignore_errors=True)
        with tarfile.open(tgz) as tar, tempfile.TemporaryDirectory(dir=cache) as tmp:
            # the "data" filter (3.11.4+) refuses links and paths outside the folder
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, **safe)
            Path(tmp, "package").rename(package)
    lock = read_lock(package)
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
    build_dir = cache / "build-wheels"
    if not _pip_quiet(["install", "--dry-run", "--no-index", "--find-links", str(build_dir),
                       "--ignore-installed", "--no-deps", *build_reqs]):
        if offline:
            raise SystemExit(f"build: the wheel's build requirements {build_reqs} are not in "
                             f"{build_dir} and --offline was given; run `python build.py fetch`")
        step(f"pip download the wheel's build requirements {build_reqs}")
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:",
                        "-d", str(build_dir), *build_reqs], check=True)
    return package, sorted(wheels_dir.glob("*.whl"))


def papaparse(offline: bool, *, cache: Path = CACHE) -> Path:
    """The folder of npm ``papaparse`` (``papaparse.min.js``, ``LICENSE``) at the pinned
    version: the bridge's ``node_modules`` copy when ``npm ci`` put that version there, else
    the npm registry's package, packed once into ``cache`` (``offline``: SystemExit when it
    is not there yet)."""
    installed = ROOT / "webgpu_bridge" / "node_modules" / "papaparse"
    manifest = installed / "package.json"
    if manifest.is_file() and json.loads(manifest.read_text(encoding="utf-8"))[
            "version"] == PAPAPARSE_VERSION:
        return installed
    folder = cache / f"papaparse-{PAPAPARSE_VERSION}"
    tgz = cache / f"papaparse-{PAPAPARSE_VERSION}.tgz"
    if not (folder / "papaparse.min.js").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        npm_pack("papaparse", PAPAPARSE_VERSION, tgz, offline, cache)
        shutil.rmtree(folder, ignore_errors=True)
        with tarfile.open(tgz) as tar, tempfile.TemporaryDirectory(dir=cache) as tmp:
            safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(tmp, **safe)
            Path(tmp, "package").rename(folder)
    return folder


def fetch_all(cdn: str = CDN, *, kernel_only: bool = False, cache: Path = CACHE) -> None:
    """``build.py fetch``: everything the build downloads, the numeric packages included
    unless ``kernel_only`` (the test suite's set-up: its site loads no numeric package);
    any failure (an unreachable CDN too) is an error here."""
    package, _ = core(offline=False, cache=cache)
    papaparse(offline=False, cache=cache)
    if kernel_only:
        step(f"cache ready in {cache}/ (the kernel only: numeric packages not fetched)")
        return
    lock = read_lock(package)
    try:
        lock_files(lock, numeric_keys(lock), cache / "pyodide-packages", cdn)
    except OSError as exc:
        raise SystemExit(f"build fetch: the Pyodide CDN {cdn} cannot be reached "
                         f"({getattr(exc, 'reason', exc)}); numpy/pandas/matplotlib/scipy were "
                         "not downloaded") from exc
    except ValueError as exc:
        raise SystemExit(f"build fetch: {exc}") from exc
    step(f"cache ready in {cache}/ (numpy/pandas/matplotlib/scipy included)")


def numeric_files(lock: Mapping, keys: list[str], *, offline: bool, cdn: str,
                  cache: Path = CACHE) -> tuple[dict[str, Path], str]:
    """The numeric packages' files from the cache, downloading the missing ones unless
    ``offline``; returns (lock key → file, why the others are missing).

    An unreachable CDN is not an error here (the site then loads them from the CDN at run
    time); a bad download is (SystemExit naming the file).
    """
    folder = cache / "pyodide-packages"
    if offline:
        return lock_files(lock, keys, folder), "--offline was given and the cache lacks them"
    try:
        return lock_files(lock, keys, folder, cdn), ""
    except ValueError as exc:
        raise SystemExit(f"build: {exc}") from exc
    except OSError as exc:
        reason = getattr(exc, "reason", exc)
        return lock_files(lock, keys, folder), f"{cdn} cannot be reached: {reason}"


def _pip_quiet(args: list[str]) -> bool:
    """Whether ``pip <args>`` succeeds (output discarded)."""
    result = subprocess.run([sys.executable, "-m", "pip", *args, "-q"],
                            capture_output=True, text=True)
    return result.returncode == 0
