"""The Node runner: the WebGPU bridge under dawn.node on persisted splits, from Python.

``run_to_csv(datasets, splits, models, out)`` writes a job file (each dataset as the
bridge's ``runSplits`` takes it, its persisted split dict, the model objects with their
Python labels) and starts ``node webgpu_bridge/bin/run_splits.mjs JOB OUT``, which runs
the bridge under dawn.node (npm package ``webgpu``) and writes the results table exactly
as the timing page's "Download results CSV" does (``runner=webgpu``, ``device`` = the
adapter, GPU timestamp columns filled when the adapter offers ``timestamp-query``).
``arenalite run --runner webgpu`` calls it. A table with categorical or missing cells
(a dataset whose ``X`` is a DataFrame) goes as its typed columns
(:func:`arenalite.browser.table_payload`), which the bridge encodes per split and model as
the registry's ``encoding`` of the model says, to the same float64 numbers as
:mod:`arenalite.models.encoding` (webgpu_bridge/src/encoding.js).

It needs a source checkout's ``webgpu_bridge/`` with ``npm ci`` run in it, Node.js 20.10
or newer, and a Vulkan loader (``libvulkan.so.1``) with a driver: a GPU vendor's, or the
SwiftShader software driver Debian's ``chromium`` ships (``vulkan_icd=
"/usr/lib/chromium/vk_swiftshader_icd.json"``, which also puts the loader beside it on
``LD_LIBRARY_PATH``). Anything missing is one :class:`NodeRunnerError` that says what.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from . import datasets as bundled
from .browser import dataset_payload
from .models import check_model, model_label, registry
from .models.weights import DEFAULT_PATH

BRIDGE_ENV = "ARENALITE_WEBGPU_BRIDGE"
CHECKOUT_BRIDGE = Path(__file__).resolve().parents[2] / "webgpu_bridge"
SCRIPT = Path("bin") / "run_splits.mjs"
MIN_NODE = (20, 10)
"""Node.js 20.10 or newer: the bridge imports its registry as a JSON module (``with``)."""


class NodeRunnerError(OSError):
    """The Node runner cannot start or failed; the message says why and what to do."""


def find_bridge(bridge_dir: str | PathLike | None = None) -> Path:
    """The bridge folder: ``bridge_dir``, else $ARENALITE_WEBGPU_BRIDGE, else the checkout's."""
    folder = Path(bridge_dir or os.environ.get(BRIDGE_ENV) or CHECKOUT_BRIDGE)
    if not (folder / SCRIPT).is_file() or not (folder / "src" / "index.js").is_file():
        raise NodeRunnerError(f"the WebGPU bridge was not found in {folder} (no {SCRIPT} or "
                              "src/index.js): --runner webgpu needs webgpu_bridge/ of arenalite's "
                              f"source checkout; pass --bridge-dir or set {BRIDGE_ENV}")
    return folder


def find_node(node: str | None = None) -> str:
    """The ``node`` executable (Node.js ≥ 20.10)."""
    found = shutil.which(node or "node")
    if found is None:
        raise NodeRunnerError(f"node not found on PATH: --runner webgpu needs Node.js "
                              f"{MIN_NODE[0]}.{MIN_NODE[1]} or newer")
    version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout
    got = re.match(r"v(\d+)\.(\d+)", version.strip())
    if not got or (int(got.group(1)), int(got.group(2))) < MIN_NODE:
        raise NodeRunnerError(f"{found} is Node.js {version.strip() or '(unknown version)'}; "
                              f"--runner webgpu needs {MIN_NODE[0]}.{MIN_NODE[1]} or newer")
    return found


def node_env(vulkan_icd: str | PathLike | None = None) -> dict[str, str]:
    """This process's environment, with ``VK_ICD_FILENAMES`` = ``vulkan_icd`` and its
    folder first on ``LD_LIBRARY_PATH`` when it holds the loader (Debian's chromium)."""
    env = dict(os.environ)
    if vulkan_icd is None:
        return env
    icd = Path(vulkan_icd)
    if not icd.is_file():
        raise NodeRunnerError(f"Vulkan driver manifest {icd} (--vulkan-icd) not found; with "
                              "Debian's chromium it is /usr/lib/chromium/vk_swiftshader_icd.json")
    env["VK_ICD_FILENAMES"] = str(icd)
    if (icd.parent / "libvulkan.so.1").is_file():
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            filter(None, [str(icd.parent), env.get("LD_LIBRARY_PATH")]))
    return env


def model_payload(model: dict[str, Any]) -> dict[str, Any]:
    """The bridge's model object: checked, defaults filled, ``label`` pinned to Python's;
    a weights parameter becomes an absolute path (node reads files) or null (default)."""
    checked = check_model(model)
    registry.check_runner(checked["name"], "webgpu")
    out = {k: v for k, v in checked.items() if k != "label"}
    out["label"] = model_label(model)
    for key, spec in registry.entry(checked["name"])["params"].items():
        value = checked[key]
        if spec["type"] == "weights" and value is not None:
            if not isinstance(value, str | PathLike):
                raise TypeError(f"model {out['label']!r}: {key} must be a path (or None) for "
                                f"the Node runner, got {type(value).__name__}")
            out[key] = str(Path(value).resolve())
    return out


def run_to_csv(datasets: Mapping[str, bundled.Dataset], splits: Mapping[str, dict],
               models: Sequence[dict], out: str | PathLike, *,
               bridge_dir: str | PathLike | None = None,
               vulkan_icd: str | PathLike | None = None, node: str | None = None,
               timeout: float | None = None) -> Path:
    """Run every model on every split of every dataset under dawn.node; writes ``out``
    (the page's CSV) and returns its path. Errors: :class:`NodeRunnerError`; a model the
    bridge does not implement (the registry's ``runners``) is a ValueError before Node or
    the bridge is looked for."""
    payloads = [model_payload(m) for m in models]
    bridge = find_bridge(bridge_dir)
    executable = find_node(node)
    env = node_env(vulkan_icd)
    missing = [n for n in datasets if n not in splits]
    if missing:
        raise ValueError(f"splits must have one entry per dataset: missing {missing}")
    job = {"weights": str(DEFAULT_PATH.parent) + os.sep,
           "datasets": [{"dataset": dataset_payload(ds), "splits": splits[name]}
                        for name, ds in datasets.items()],
           "models": payloads}
    out = Path(out)
    with tempfile.TemporaryDirectory(prefix="arenalite-node-") as tmp:
        job_path = Path(tmp) / "job.json"
        job_path.write_text(json.dumps(job), encoding="utf-8")
        try:
            done = subprocess.run([executable, str(bridge / SCRIPT), str(job_path),
                                   str(out.resolve())], cwd=bridge, env=env,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise NodeRunnerError(f"the Node runner did not finish within {timeout} s") from exc
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("arenalite-webgpu:")]
        why = lines[-1].split("error: ", 1)[-1] if lines else (
            done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise NodeRunnerError(f"the Node runner failed (exit {done.returncode}): {why}")
    return out
