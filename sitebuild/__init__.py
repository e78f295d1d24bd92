"""Build arenalite's JupyterLite site (SPEC §9) and serve it: the package behind ``build.py``.

``python build.py`` (:mod:`sitebuild.cli`) builds the wheel into ``dist/``, vendors Pyodide's
core (npm package ``pyodide``) into ``lite/static/pyodide/`` with the pure-Python wheels the
kernel needs to boot (from PyPI, ``pyodide-lock.json`` patched to their file names and
sha256), puts the arenalite wheel in the piplite index (``%pip install arenalite`` in the
kernel), runs ``jupyter lite build`` into ``_site/`` and adds the demo report
(``_site/report/``), the WebGPU bridge (``_site/webgpu_bridge/``), the WebGPU timing page with
the bundled datasets and their persisted splits (``_site/webgpu/``) and a front page linking
them all. Numeric packages (numpy, pandas, matplotlib, scipy and their lock-file
dependencies) are downloaded once from the Pyodide CDN (``--pyodide-cdn``), checked against
the lock's sha256 and vendored too, so one online build gives a fully offline site;
``--pyodide-dist DIR`` (a full Pyodide distribution) is another source. When neither has
them, the site loads them from the CDN at run time; the build warns and writes that mode
into ``arenalite-site.json`` at the site root, where the notebooks' first cell reads it.
``python build.py serve`` builds, then serves the site on 127.0.0.1 (``--port``, 8000),
quietly (``--verbose`` logs every request). ``python build.py fetch`` only downloads what
the build needs into ``build/site-cache/``; ``--offline`` builds from that cache and never
touches the network.

One concept a module, data flowing one way:

- :mod:`sitebuild.settings`: where things live, which Pyodide, what the kernel boots with;
  the ``[build]`` progress lines.
- :mod:`sitebuild.lock`: pure functions on ``pyodide-lock.json`` (closure, patching, the
  files of a distribution).
- :mod:`sitebuild.fetch`: downloads into the cache (npm, pip, the CDN), checked by sha256.
- :mod:`sitebuild.vendor`: what the site carries of Python: Pyodide's core and packages,
  the kernel's wheels, arenalite's own wheel in the piplite index.
- :mod:`sitebuild.pages`: ``jupyter lite build`` and the pages added to it (report, bridge,
  WebGPU page with its data, front page).
- :mod:`sitebuild.serve`: the static server of ``build.py serve``.
- :mod:`sitebuild.cli`: ``build.py``'s command line and the build it runs.

The package lives beside ``build.py``, outside ``pkg/``: the wheel shipped to Pyodide does
not carry it.
"""
