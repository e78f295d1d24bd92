#!/usr/bin/env bash
# The main job on a fresh machine: install arenalite (and the JupyterLite build tools) into
# .venv, build the JupyterLite site (wheel, vendored Pyodide core, numpy/pandas/matplotlib/
# scipy, notebooks, demo report, WebGPU bridge) and serve it on 127.0.0.1.
# The first run needs PyPI, the npm registry and, for a fully offline site, the Pyodide CDN
# once (downloads are cached in build/site-cache/); without the CDN the build warns and the
# site loads the numeric packages from it at run time. Later, with no network at all:
# .venv/bin/python build.py serve --offline
# Extra arguments go to build.py (e.g. --port 8001).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip setuptools wheel
.venv/bin/python -m pip install -q -e ".[site]"
exec .venv/bin/python build.py serve "$@"
