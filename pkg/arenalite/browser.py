"""Calling the WebGPU bridge from Python inside Pyodide (the JupyterLite kernel).

``bridge = await arenalite.browser.create_bridge()`` imports ``webgpu_bridge/src/index.js``
through the ``js`` module, creates a ``Bridge`` and wraps it; ``await bridge.predict(...)``
returns the same array as :func:`arenalite.models.predict` (plus stage timings) and
``await bridge.run_splits(...)`` the results-table DataFrame of :func:`arenalite.runner.run`
with runner "webgpu". The payload builders and the result conversion are pure functions
that run (and are tested) in CPython; only the calls into JavaScript need Pyodide, and the
``js`` / ``pyodide`` modules are imported lazily inside them. :func:`dataset_payload` is the
one dataset object of the bridge's ``runSplits``: the site builder writes it as the WebGPU
page's data and the Node runner as its job, too (as JSON-ready lists); ``run_splits`` hands
it over with ``x`` as one float32 buffer, which :func:`_to_js` (``pyodide.ffi.to_js``, the one
JavaScript boundary) turns into one Float32Array. A table with categorical or missing cells
(``X`` a DataFrame) goes as its typed columns instead (:func:`table_payload`), which the
bridge encodes per split and model as :mod:`arenalite.models.encoding` does.

The module imports without numpy: the notebooks' first cell calls :func:`require_numeric`
right after ``piplite.install``, which may have left numpy out (a site built without its
numeric packages, opened offline), and ``create_bridge`` needs none. numpy, pandas and
the models are imported inside the functions that use them.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

MODULE_PATH = "webgpu_bridge/src/index.js"
WEIGHTS_PATH = "webgpu_bridge/weights/icl_transformer.json"
#: written at the site root by the site builder (build.py): where its numeric packages come from
SITE_INFO = "arenalite-site.json"
NUMERIC = ("numpy", "pandas", "matplotlib", "scipy")


class NumericPackagesMissing(ImportError):
    """numpy, pandas, matplotlib or scipy cannot be imported in this kernel."""


def missing_numeric_message(missing: Sequence[str], site: Mapping[str, Any] | None) -> str:
    """The one error a notebook shows when the numeric packages did not load.

    ``site`` is the site's ``arenalite-site.json`` (None when it could not be read): it
    says whether the packages are in the site or on the Pyodide CDN, i.e. where from.
    """
    if site and site.get("numeric") == "cdn":
        where = (f"from the Pyodide CDN {site['cdn']} (this site was built without them; "
                 "the browser needs the network to get them)")
    elif site and site.get("numeric") == "vendored":
        where = "from this site's own Pyodide folder (static/pyodide/)"
    else:
        where = "from the site or the Pyodide CDN (the site's arenalite-site.json is unreadable)"
    return (f"{', '.join(missing)} could not be loaded {where}. Fix: open the site while "
            "online, or rebuild it online with `python build.py fetch` (or with "
            "`--pyodide-dist DIR`, a full Pyodide distribution) so that it carries them.")


def numeric_missing(error: ModuleNotFoundError) -> NumericPackagesMissing | None:
    """The clear error for ``error`` when it is one of the numeric packages missing (None
    for any other module): in a browser kernel the site's message (where the packages come
    from and the fixes), elsewhere how to install them. ``import arenalite`` raises it on
    first numeric use, so a kernel where ``%pip install arenalite`` could not load numpy
    says so instead of a bare ``No module named 'numpy'``."""
    named = error.name or "".join(re.findall(r"No module named '([^']+)'", str(error))[:1])
    name = named.split(".")[0]
    if name not in NUMERIC:
        return None
    missing = [n for n in NUMERIC if _absent(n)] or [name]
    if sys.platform == "emscripten":
        return NumericPackagesMissing(missing_numeric_message(missing, site_info()))
    return NumericPackagesMissing(f"{', '.join(missing)} could not be imported ({error}); "
                                  f"arenalite needs {', '.join(NUMERIC)}: pip install "
                                  f"{' '.join(missing)}")


def _absent(name: str) -> bool:
    """Whether the top-level module ``name`` cannot be found (nothing is imported)."""
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def site_info() -> dict[str, Any] | None:
    """This site's ``arenalite-site.json`` read from the kernel (Pyodide); None elsewhere
    or when it cannot be read."""
    try:
        import js
        from pyodide.http import open_url
    except ImportError:
        return None
    try:
        return json.loads(open_url(f"{site_root(str(js.location.href))}/{SITE_INFO}").read())
    except Exception:  # a missing or broken file only makes the message less specific
        return None


def require_numeric() -> None:
    """Raise one clear NumericPackagesMissing unless numpy, pandas, matplotlib and scipy
    import (``piplite.install`` does not fail when Pyodide cannot fetch them)."""
    missing = []
    for name in NUMERIC:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise NumericPackagesMissing(missing_numeric_message(missing, site_info()))


def site_root(href: str) -> str:
    """The static site's root URL seen from ``href`` (the page's or the worker's location).

    The JupyterLite kernel runs in a Web Worker served from
    ``<root>/extensions/@jupyterlite/pyodide-kernel-extension/static/...``, so relative
    URLs would resolve there; everything from ``/extensions/`` on is cut. For a plain
    page the root is the page's folder.
    """
    base = href.split("?", 1)[0].split("#", 1)[0]
    if "/extensions/" in base:
        return base.split("/extensions/", 1)[0]
    return base.rsplit("/", 1)[0]


def model_payload(model: dict[str, Any], weights_url: str | None = None) -> dict[str, Any]:
    """The JS model dict: validated, defaults filled, ``label`` pinned to Python's label.

    A weights parameter (registry type ``weights``, e.g. the transformer's ``weights``)
    must be a URL the page can fetch (``weights_url``) or None for the bridge's default
    weights; a local path means nothing to the browser.
    """
    from .models import check_model, model_label, registry

    checked = check_model(model)
    out = {k: v for k, v in checked.items() if k != "label"}
    out["label"] = model_label(model)
    for key, spec in registry.entry(checked["name"])["params"].items():
        if spec["type"] != "weights":
            continue
        if checked[key] is not None and weights_url is None:
            raise ValueError(f"model {out['label']!r}: {key}={checked[key]!r} is a local "
                             "path; pass weights_url, a URL the browser can fetch")
        out[key] = weights_url
    return out


def data_payload(X_train: Any, y_train: Any, X_test: Any, task: str,
                 n_classes: int | None = None) -> dict[str, Any]:
    """The JS ``data`` dict (float32, row-major), validated as predict() validates it."""
    import numpy as np

    from .models.preprocess import prepare

    prep = prepare(X_train, y_train, X_test, task, n_classes)
    x_train = np.ascontiguousarray(np.asarray(X_train, dtype=np.float64), dtype=np.float32)
    x_test = np.ascontiguousarray(np.asarray(X_test, dtype=np.float64), dtype=np.float32)
    return {"xTrain": x_train.ravel(), "yTrain": np.asarray(y_train, dtype=np.float32).ravel(),
            "xTest": x_test.ravel(), "nFeatures": int(x_train.shape[1]), "task": task,
            "nClasses": None if task == "regression" else int(prep.n_classes)}


def dataset_payload(dataset: Any, typed: bool = False) -> dict[str, Any]:
    """An :class:`arenalite.datasets.Dataset` as the bridge's ``runSplits`` takes it.

    ``typed=False`` (the site builder's page data, the Node runner's job: JSON-ready):
    ``x`` is a row-major list of the float64 values, which the bridge makes its
    Float32Array from (round to nearest, as numpy's float32 cast), so nothing is lost;
    ``y`` keeps the dataset's values (class indices or targets) as a list.

    ``typed=True`` (:meth:`BrowserBridge.run_splits`, the caller in Pyodide): ``x`` is
    one row-major float32 buffer, a memoryview of format ``'f'`` that
    ``pyodide.ffi.to_js`` hands over as one Float32Array (one copy, instead of a JS Array
    of 5M numbers made one by one for a 100k × 50 table); its values are the float32
    cast the bridge would make of the list, so the bridge sees the same numbers. ``y``
    is a float64 buffer (format ``'d'``, a Float64Array: class indices and targets
    exactly).

    A dataset whose ``X`` is a DataFrame (a table with categorical or missing cells,
    :func:`arenalite.datasets.table.to_dataset`) is :func:`table_payload`'s instead.
    """
    import numpy as np
    import pandas as pd

    if isinstance(dataset.X, pd.DataFrame):  # a table's typed columns
        return table_payload(dataset, typed)
    x = np.asarray(dataset.X, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"dataset {dataset.name!r}: X must be rows × features, got shape "
                         f"{x.shape}")
    y = np.asarray(dataset.y)
    if typed:
        xs: Any = memoryview(np.ascontiguousarray(x, dtype=np.float32).reshape(-1))
        ys: Any = memoryview(np.ascontiguousarray(y, dtype=np.float64).reshape(-1))
    else:
        xs, ys = x.ravel().tolist(), y.tolist()
    return {"name": dataset.name, "task": dataset.task,
            "nClasses": None if dataset.n_classes is None else int(dataset.n_classes),
            "nFeatures": int(x.shape[1]), "featureNames": list(dataset.feature_names),
            "x": xs, "y": ys}


def _column_payload(series: Any, typed: bool) -> dict[str, Any]:
    """One column as ``runSplits``' ``features`` take it (webgpu_bridge/src/encoding.js)."""
    import numpy as np
    import pandas as pd

    from .models import encoding

    name, dtype = series.name, series.dtype
    role = encoding.column_role(dtype)
    if role == "numeric":
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        if np.isinf(values).any():
            row = int(np.argmax(np.isinf(values)))
            raise ValueError(f"column {name!r} has an infinite value {values[row].item()!r} in "
                             f"row {row}; make it empty (missing) or finite")
        if typed:
            return {"name": name, "kind": "numeric", "values": memoryview(values)}
        cells = values.astype(object)
        cells[missing] = None
        return {"name": name, "kind": "numeric", "values": cells.tolist()}
    if role is None and pd.api.types.is_bool_dtype(dtype):
        raise TypeError(f"column {name!r} is a numpy bool column, which tabicl leaves out and "
                        "the other models one-hot encode; make it a 'category' column (as "
                        "read_table does) for the WebGPU runner")
    if role is None:
        raise TypeError(f"column {name!r} has dtype {dtype}, which the models do not encode; "
                        "give numbers, text, bool or category")
    cat = series if isinstance(dtype, pd.CategoricalDtype) else series.astype("category")
    categories = [v.item() if isinstance(v, np.generic) else v for v in cat.cat.categories]
    bad = [v for v in categories if not isinstance(v, str | bool | int | float)]
    if bad:
        raise TypeError(f"column {name!r} has category {bad[0]!r} ({type(bad[0]).__name__}); "
                        "the WebGPU runner takes text, number and bool categories")
    try:
        order = sorted(range(len(categories)), key=categories.__getitem__)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in categories})
        raise TypeError(f"column {name!r} mixes value types {kinds}; a categorical column "
                        "holds strings only or numbers only") from None
    rank = np.empty(len(categories) + 1, dtype=np.int32)  # rank[-1]: missing stays −1
    rank[order] = np.arange(len(categories), dtype=np.int32)
    rank[-1] = -1
    codes = np.ascontiguousarray(rank[cat.cat.codes.to_numpy()], dtype=np.int32)
    # int32's buffer format is 'l' where C's long is 32-bit (wasm32, Pyodide): cast to 'i'
    return {"name": name, "kind": "categorical",
            "codes": memoryview(codes).cast("B").cast("i") if typed else codes.tolist(),
            "categories": [categories[i] for i in order]}


def table_payload(dataset: Any, typed: bool = False) -> dict[str, Any]:
    """A dataset whose ``X`` is a DataFrame of typed columns as ``runSplits`` takes it.

    Instead of ``x``, ``features``: per column in frame order, a numeric one as ``{name,
    kind: "numeric", values}`` (float64; ``typed=False``: a list with None, JSON's null,
    for a missing cell; ``typed=True``: a float64 buffer with NaN, a Float64Array) and a
    categorical one (``category``, text, object, nullable boolean) as ``{name, kind:
    "categorical", codes, categories}``: ``categories`` sorted as Python's ``sorted`` sorts
    them, ``codes`` their positions (−1: missing; ``typed=True``: an int32 buffer, an
    Int32Array). The bridge encodes them per split and model as
    :mod:`arenalite.models.encoding` does (webgpu_bridge/src/encoding.js). A numpy ``bool``
    column (which tabicl leaves out and the other models one-hot encode) and a datetime
    column are refused by name.
    """
    import numpy as np
    import pandas as pd

    frame = dataset.X
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"dataset {dataset.name!r}: X must be a DataFrame, got "
                        f"{type(frame).__name__}")
    bad = [c for c in frame.columns if not isinstance(c, str)]
    if bad:
        raise TypeError(f"dataset {dataset.name!r}: column names must be strings, got {bad[0]!r}")
    y = np.asarray(dataset.y)
    ys: Any = memoryview(np.ascontiguousarray(y, dtype=np.float64).reshape(-1)) if typed else (
        y.tolist())
    return {"name": dataset.name, "task": dataset.task,
            "nClasses": None if dataset.n_classes is None else int(dataset.n_classes),
            "featureNames": list(frame.columns),
            "features": [_column_payload(frame[c], typed) for c in frame.columns], "y": ys}


def output_array(output: Any, n_test: int, task: str, n_classes: int | None) -> np.ndarray:
    """The bridge's flat Float32Array as predict()'s shape: m × C, or m for regression."""
    import numpy as np

    flat = np.asarray(output, dtype=np.float64).ravel()
    width = 1 if task == "regression" else int(n_classes or 0)
    if width < 1 or flat.size != n_test * width:
        raise ValueError(f"bridge output has {flat.size} values; expected n_test={n_test} × "
                         f"{'1' if task == 'regression' else f'n_classes={n_classes}'}")
    return flat if task == "regression" else flat.reshape(n_test, width)


def rows_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The results table from the bridge's rows; every row must have exactly COLUMNS."""
    import pandas as pd

    from .runner import COLUMNS

    for i, row in enumerate(rows):
        keys = list(row)
        if keys != COLUMNS:
            missing = [c for c in COLUMNS if c not in keys]
            extra = [c for c in keys if c not in COLUMNS]
            raise ValueError(f"bridge result row {i} does not have the results-table columns: "
                             f"missing {missing}, unexpected {extra}")
    return pd.DataFrame([dict(r) for r in rows], columns=COLUMNS)


def _ffi() -> tuple[Any, Any, Any]:
    try:
        import js
        from pyodide.code import run_js
        from pyodide.ffi import to_js
    except ImportError as exc:
        raise RuntimeError("arenalite.browser calls the WebGPU bridge and needs Pyodide "
                           "(the JupyterLite kernel); in CPython use arenalite.models.predict "
                           "and arenalite.runner.run") from exc
    return js, run_js, to_js


def _to_js(value: Any) -> Any:
    js, _, to_js = _ffi()
    return to_js(value, dict_converter=js.Object.fromEntries)


class BrowserBridge:
    """A created JS ``Bridge`` seen from Python: predict and run_splits, awaited."""

    def __init__(self, module: Any, bridge: Any) -> None:
        self.module = module
        self.bridge = bridge

    @property
    def adapter_info(self) -> dict[str, Any]:
        """Vendor, architecture, description and fallback flag of the WebGPU adapter."""
        return dict(self.bridge.adapterInfo.to_py())

    async def predict(self, model: dict[str, Any], X_train: Any, y_train: Any, X_test: Any,
                      task: str, n_classes: int | None = None,
                      weights_url: str | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Run one model on the GPU; returns (output as predict() shapes it, timings in ms)."""
        data = data_payload(X_train, y_train, X_test, task, n_classes)
        result = await self.bridge.predict(_to_js(model_payload(model, weights_url)),
                                           _to_js(data))
        n_test = len(data["xTest"]) // data["nFeatures"]
        out = output_array(result.output.to_py(), n_test, task, data["nClasses"])
        return out, dict(result.timings.to_py())

    async def run_splits(self, dataset: Any, splits: dict[str, Any],
                         models: Sequence[dict[str, Any]]) -> pd.DataFrame:
        """Every model on every split of an arenalite.datasets.Dataset, as a DataFrame."""
        rows = await self.module.runSplits(self.bridge,
                                           _to_js(dataset_payload(dataset, typed=True)),
                                           _to_js(splits),
                                           _to_js([model_payload(m) for m in models]))
        return rows_frame(rows.to_py())

    def destroy(self) -> None:
        self.bridge.destroy()


async def create_bridge(module_url: str | None = None,
                        default_weights: str | None = None) -> BrowserBridge:
    """Import the bridge module and create a Bridge (raises when WebGPU is unavailable).

    By default both URLs point into this site (``webgpu_bridge/`` at the site root).
    """
    js, run_js, _ = _ffi()
    root = site_root(str(js.location.href))
    module_url = module_url or f"{root}/{MODULE_PATH}"
    default_weights = default_weights or f"{root}/{WEIGHTS_PATH}"
    module = await run_js(f"import({module_url!r})")
    bridge = await module.Bridge.create(_to_js({"defaultWeights": default_weights}))
    return BrowserBridge(module, bridge)
