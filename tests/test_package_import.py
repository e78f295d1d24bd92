"""``import arenalite`` is light (PEP 562 lazy names) and ``arenalite.browser`` imports
without numpy, as in a JupyterLite kernel before the numeric packages are loaded; its
``require_numeric`` then gives the one clear error the notebooks show.

Each check runs in a fresh interpreter (a subprocess), where a ``sys.meta_path`` finder
can make numpy/pandas/scipy/matplotlib unimportable and ``sys.modules`` shows what an
import really loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import arenalite
from arenalite import browser

HEAVY = ("numpy", "pandas", "scipy", "matplotlib")

BLOCK_NUMERIC = """
import sys

class NoNumeric:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"numpy", "pandas", "scipy", "matplotlib"}:
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)")
        return None

sys.meta_path.insert(0, NoNumeric())
"""


def run_python(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object as its last line."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.needs_processes
def test_import_arenalite_loads_no_numeric_package() -> None:
    out = run_python(f"""
        import json, sys
        import arenalite
        print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))
        """)
    assert out == []


@pytest.mark.needs_processes
def test_browser_and_the_numeric_check_import_without_numpy() -> None:
    out = run_python(BLOCK_NUMERIC + """
import json
import arenalite
from arenalite import browser
try:
    browser.require_numeric()
except browser.NumericPackagesMissing as exc:
    message = str(exc)
print(json.dumps({"root": browser.site_root("http://h/site/extensions/x/worker.js"),
                  "message": message, "public": sorted(arenalite.__all__)}))
""")
    assert out["root"] == "http://h/site"
    assert out["message"].startswith("numpy, pandas, matplotlib, scipy could not be loaded")
    assert out["public"] == sorted(arenalite.__all__)


def test_public_names_resolve_lazily_and_dir_lists_them() -> None:
    from arenalite.benchmark import Benchmark
    from arenalite.rankings.elo import elo_gap

    assert arenalite.Benchmark is Benchmark and arenalite.elo_gap is elo_gap
    assert arenalite.splits.__name__ == "arenalite.splits"
    assert arenalite.datasets.__name__ == "arenalite.datasets"   # any submodule, on use
    assert set(arenalite.__all__) | {"datasets", "runner", "browser"} <= set(dir(arenalite))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        arenalite.no_such_name  # noqa: B018


def test_require_numeric_passes_in_cpython() -> None:
    browser.require_numeric()                       # numpy etc. are installed here
    assert browser.site_info() is None              # no Pyodide: no site to ask


@pytest.mark.parametrize("site, where", [
    ({"numeric": "cdn", "cdn": "https://cdn.example/full/", "remote": ["numpy"]},
     "from the Pyodide CDN https://cdn.example/full/ (this site was built without them"),
    ({"numeric": "vendored", "cdn": "https://cdn.example/full/", "remote": []},
     "from this site's own Pyodide folder"),
    (None, "arenalite-site.json is unreadable"),
])
def test_missing_numeric_message_says_from_where_and_both_fixes(site, where) -> None:
    message = browser.missing_numeric_message(["numpy", "scipy"], site)
    assert message.startswith("numpy, scipy could not be loaded ")
    assert where in message
    assert "open the site while online" in message
    assert "`python build.py fetch`" in message and "`--pyodide-dist DIR`" in message


@pytest.mark.needs_processes
def test_first_numeric_use_without_numpy_raises_the_clear_error() -> None:
    """``import arenalite`` then ``arenalite.load_csv`` in a kernel without the numeric
    packages: NumericPackagesMissing (an ImportError) with the fix, in CPython the pip line,
    in a browser kernel (sys.platform emscripten) require_numeric's own message."""
    out = run_python(BLOCK_NUMERIC + """
import json
import arenalite

import traceback

def first_use(name):
    try:
        getattr(arenalite, name)
    except ImportError as exc:
        shown = "".join(traceback.format_exception(exc))
        return [type(exc).__name__, str(exc), shown]

cpython = first_use("load_csv")
sys.platform = "emscripten"
browser_kernel = first_use("datasets")
print(json.dumps({"cpython": cpython, "browser": browser_kernel}))
""")
    # the traceback a REPL or a notebook prints holds the clear error alone, no chain
    for _, _, shown in out.values():
        assert "ModuleNotFoundError" not in shown and "direct cause" not in shown
        assert "During handling" not in shown and shown.count("NumericPackagesMissing") == 1
    out = {k: v[:2] for k, v in out.items()}
    assert out["cpython"][0] == "NumericPackagesMissing"
    assert out["cpython"][1].startswith("numpy, pandas, matplotlib, scipy could not be imported")
    assert out["cpython"][1].endswith("pip install numpy pandas matplotlib scipy")
    assert out["browser"] == ["NumericPackagesMissing",
                              browser.missing_numeric_message(list(browser.NUMERIC), None)]


def test_other_missing_modules_are_left_alone() -> None:
    assert browser.numeric_missing(ModuleNotFoundError("No module named 'x'", name="x")) is None
    error = browser.numeric_missing(ModuleNotFoundError("No module named 'numpy.linalg'"))
    assert isinstance(error, browser.NumericPackagesMissing)
