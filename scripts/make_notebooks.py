"""Write the site's notebooks (content/*.ipynb) from their source, sitebuild/notebooks.py.

``python scripts/make_notebooks.py`` after editing a notebook's cells there;
``--check`` writes nothing and exits 1 if a committed notebook is not what it makes.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the site builder beside build.py

from sitebuild.notebooks import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
