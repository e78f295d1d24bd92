"""Node for the tests that run the WebGPU bridge outside a browser.

``require_node()`` gives the ``node`` executable (20 or newer) and checks that
``webgpu_bridge/node_modules`` holds the npm package ``webgpu`` (``npm ci`` there); without
them the tests fail with a message that says so, unless ``ARENALITE_ALLOW_NO_BROWSER=1``
(the switch the browser tests use), which skips them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BRIDGE = ROOT / "webgpu_bridge"
SWIFTSHADER_ICD = Path("/usr/lib/chromium/vk_swiftshader_icd.json")
"""Debian chromium's Vulkan driver for SwiftShader, which dawn.node runs on here."""


def _missing(message: str) -> None:
    if os.environ.get("ARENALITE_ALLOW_NO_BROWSER") == "1":
        pytest.skip(message + " [skipped: ARENALITE_ALLOW_NO_BROWSER=1]")
    pytest.fail(message, pytrace=False)


def require_node() -> str:
    """The path of ``node`` with the bridge's npm dependencies installed."""
    node = shutil.which("node")
    if node is None:
        _missing("node not found on PATH: these tests need Node.js 20 or newer")
    if not (BRIDGE / "node_modules" / "webgpu").is_dir():
        _missing(f"{BRIDGE / 'node_modules' / 'webgpu'} is missing: run `npm ci` in {BRIDGE}")
    return node


def require_swiftshader() -> Path:
    """Node with the bridge installed, and Debian chromium's SwiftShader Vulkan driver."""
    require_node()
    if not SWIFTSHADER_ICD.is_file():
        _missing(f"{SWIFTSHADER_ICD} missing: install Debian's chromium (apt-get install "
                 "chromium)")
    return SWIFTSHADER_ICD


def node_json(script: str) -> object:
    """Run an ES module ``script`` with node inside webgpu_bridge/; its last stdout line as JSON."""
    run = subprocess.run([require_node(), "--input-type=module", "-e", script], cwd=BRIDGE,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])
