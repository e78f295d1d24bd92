"""The references the JavaScript TabPFN pipeline and predictor are tested against
(tests/data/tabpfn/js/preprocessing.json and predictor.json, written by
scripts/make_tabpfn_js_preprocessing_fixtures.py and make_tabpfn_js_predictor_fixtures.py)
are still what arenalite's numpy TabPFN computes: the scripts' cases re-run here. Draws,
modalities and cleaned rows exactly; member rows, model inputs and outputs to 1e-6 (the
row fingerprint column excepted: a hash of float rows, which another libm may flip).
(webgpu_bridge/test/tabpfn_preprocessing.test.js and tabpfn_predictor.test.js hold the
JavaScript to the same files.)
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
JS = ROOT / "tests" / "data" / "tabpfn" / "js"


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def values(a) -> np.ndarray:
    return np.array([float(v) for v in a], dtype=np.float64)


def close(got, want, skip_column: int | None = None, cols: int = 1) -> None:
    a, b = values(got), values(want)
    assert a.shape == b.shape
    if skip_column is not None:
        keep = np.arange(len(a)) % cols != skip_column
        a, b = a[keep], b[keep]
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)


PRE = script("make_tabpfn_js_preprocessing_fixtures")
PRE_REF = json.loads((JS / "preprocessing.json").read_text())


@pytest.mark.parametrize("name", ["classifier_nan_constant", "hostile_classifier",
                                  "hostile_regressor_odd"])
def test_preprocessing_reference_is_current(name):
    got = PRE.run(PRE.cases()[name])
    want = PRE_REF[name]
    for key in ("members", "modality", "clean_train", "clean_test", "shape"):
        assert json.dumps(got[key]) == json.dumps(want[key]), key
    for a, b in zip(got["member"], want["member"], strict=True):
        assert a["cols"] == b["cols"] and a["categorical"] == b["categorical"]
        assert a["sources"] == b["sources"] and a["fingerprint_column"] == b["fingerprint_column"]
        close(a["model_input"], b["model_input"], b["fingerprint_column"], b["cols"])
    if "regression" in want:
        for key in ("mean", "median", "mode"):
            close(got["regression"][key], want["regression"][key])


def test_predictor_reference_is_current():
    pred = script("make_tabpfn_js_predictor_fixtures")
    want = json.loads((JS / "predictor.json").read_text())["classifier"]
    x, y, xt = pred.numeric("classifier")
    got = pred.case("classifier_small.ckpt", "multiclass", x, y, xt)
    close(got["proba"], want["proba"])
    assert got["x_train"] == want["x_train"]
