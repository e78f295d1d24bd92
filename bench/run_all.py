"""Run every benchmark script in bench/ in turn (each prints its own timings and ratios).

``python bench/run_all.py`` runs them all; ``python bench/run_all.py rankings stats``
runs only the named ones (bench_<name>.py).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if argv:
        wanted = {f"bench_{name}.py" for name in argv}
        scripts = [s for s in scripts if s.name in wanted]
        missing = wanted - {s.name for s in scripts}
        if missing:
            print(f"unknown bench script(s): {sorted(missing)}", file=sys.stderr)
            return 2
    failed = []
    for script in scripts:
        print(f"\n##### {script.name}", flush=True)
        start = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)])
        print(f"##### {script.name}: exit {code}, {time.perf_counter() - start:.1f}s", flush=True)
        if code:
            failed.append(script.name)
    if failed:
        print(f"failed: {failed}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
