"""Build arenalite's JupyterLite site (SPEC §9) and serve it: ``python build.py [COMMAND]``.

The entry point the README gives, and nothing more: the builder is the package
``sitebuild/`` beside this file (its docstring describes the build step by step;
``python build.py --help`` lists the flags).
"""

import sys
from pathlib import Path

# this checkout's arenalite (the report, the datasets, the browser module's constants)
sys.path.insert(0, str(Path(__file__).resolve().parent / "pkg"))

from sitebuild.cli import main  # noqa: E402

if __name__ == "__main__":
    main()
