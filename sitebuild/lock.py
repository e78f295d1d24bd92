"""Pure functions on Pyodide's ``pyodide-lock.json``: which packages a set of roots needs,
the lock patched to local files or the CDN, and the files a full distribution holds."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

# the numeric packages, as the notebooks' first cell checks them (imports no numpy)
from arenalite.browser import NUMERIC

from .settings import CDN, KERNEL_ROOTS, PYODIDE_VERSION


def canonical(name: str) -> str:
    """PEP 503 normalized project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wheel_id(wheel: Path) -> tuple[str, str]:
    """(normalized project name, version) from a wheel's file name."""
    name, version = wheel.name.split("-")[:2]
    return canonical(name), version


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


def numeric_keys(lock: Mapping) -> list[str]:
    """Lock keys of the numeric packages and their dependencies, less the kernel's own."""
    kernel = set(lock_closure(lock, KERNEL_ROOTS))
    return [key for key in lock_closure(lock, NUMERIC) if key not in kernel]


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


def read_lock(package: Path) -> dict:
    """The ``pyodide-lock.json`` of an extracted Pyodide package (or distribution) folder."""
    return json.loads((package / "pyodide-lock.json").read_text(encoding="utf-8"))
