"""What the site carries of Python: Pyodide's core, the kernel's wheels and the numeric
packages next to a patched lock file (``lite/static/pyodide/``), and arenalite's own wheel
with the kernel's extras in the piplite index (``lite/pypi/``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from arenalite.browser import NUMERIC

from .fetch import numeric_files
from .lock import dist_files, lock_closure, numeric_keys, patch_lock, read_lock, wheel_for
from .settings import (
    CACHE,
    CDN,
    CORE_FILES,
    KERNEL_ROOTS,
    PIPLITE_DIR,
    PIPLITE_EXTRA,
    PYODIDE_VERSION,
    ROOT,
    VENDORED,
    shown,
    step,
)


def build_wheel(*, cache: Path = CACHE) -> Path:
    """The arenalite wheel (``dist/``), built offline from the cached build requirements."""
    start = step("building the arenalite wheel")
    dist = ROOT / "dist"
    # setuptools copies the package into build/lib and keeps what it found there before: a
    # module since moved or deleted (rankings/iqm.py became rankings/iqm/) would ship again
    for stale in [ROOT / "build" / "lib", *ROOT.glob("build/bdist.*")]:
        shutil.rmtree(stale, ignore_errors=True)
    # an isolated build environment from the cached build requirements: no network
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index",
                    "--find-links", str(cache / "build-wheels"), "-q", "-w", str(dist),
                    str(ROOT)], check=True)
    wheels = sorted(dist.glob("arenalite-*-py3-none-any.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        raise SystemExit("build: no py3-none-any wheel was produced")
    print(f"[build]   {wheels[-1].name} ({time.perf_counter() - start:.1f}s)")
    return wheels[-1]


def vendor_pyodide(package: Path, wheels: list[Path], pyodide_dist: Path | None, *,
                   offline: bool, cdn: str = CDN, cache: Path = CACHE,
                   dest: Path = VENDORED) -> dict:
    """Pyodide's core, the kernel's wheels, the numeric packages (from a full distribution,
    the cache or the CDN) + the patched lock into ``dest`` (replaced); returns the site's
    mode (``arenalite-site.json``)."""
    start = step(f"vendoring Pyodide {PYODIDE_VERSION} into {shown(dest)}/")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name in CORE_FILES:
        shutil.copy2(package / name, dest / name)
    lock = read_lock(package)
    local = {key: wheel_for(lock["packages"][key], wheels)
             for key in lock_closure(lock, KERNEL_ROOTS)}
    if pyodide_dist is not None:
        try:
            local = {**dist_files(lock, pyodide_dist), **local}
        except ValueError as exc:
            raise SystemExit(f"build: {exc}") from exc
    wanted = [key for key in numeric_keys(lock) if key not in local]
    numeric, why = numeric_files(lock, wanted, offline=offline, cdn=cdn, cache=cache)
    if pyodide_dist is not None:
        why = f"{pyodide_dist} lacks them; {why}"
    local = {**numeric, **local}
    for path in local.values():
        shutil.copy2(path, dest / path.name)
    patched = patch_lock(lock, local, cdn)
    (dest / "pyodide-lock.json").write_text(json.dumps(patched, indent=1), encoding="utf-8")
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


def stage_piplite(arenalite_wheel: Path, wheels: list[Path], dest: Path = PIPLITE_DIR) -> None:
    """The piplite index's wheels: arenalite and the kernel's extras not in the lock file."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    shutil.copy2(arenalite_wheel, dest / arenalite_wheel.name)
    for pin in PIPLITE_EXTRA:
        name, version = pin.split("==")
        wheel = wheel_for({"name": name, "version": version}, wheels)
        shutil.copy2(wheel, dest / wheel.name)
