"""The model registry (``arenalite/models/registry.json``): one declaration per model.

Every model of the manifest is reachable from Python (``MODELS``, ``check_model``,
``model_label``, its numpy reference), from the bridge (``IMPLEMENTATIONS``, ``checkModel``)
and from the page's form (``page/model_form.js``), and an unknown parameter is rejected in
each with the same message. The page's generated form in Chromium is checked in
tests/test_webgpu_page.py, ``Bridge.predict``'s message in tests/test_bridge_browser.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite import models
from arenalite.models import registry
from node_harness import BRIDGE, node_json

ROOT = Path(__file__).resolve().parents[1]


def unknown_message(name: str) -> str:
    with pytest.raises(ValueError) as caught:
        models.check_model({"name": name, "zz": 1})
    return str(caught.value)


def test_every_registry_model_is_reachable_from_python() -> None:
    names = [e["name"] for e in json.loads(registry.PATH.read_text())["models"]]
    assert list(models.MODELS) == list(registry.REGISTRY) == names
    assert all(callable(models.reference(name)) for name in names)
    x = np.random.default_rng(0).normal(size=(30, 3))
    y = (x[:, 0] > 0).astype(int)
    for name in names:
        checked = models.check_model({"name": name})
        assert checked == {"name": name, **registry.defaults(name)}
        assert models.model_label({"name": name}) == name
        needs_weights = any(p["type"] == "weights" and p["default"] is None and "file" not in p
                            for p in registry.entry(name)["params"].values())
        if needs_weights:  # tabicl, tabpfn: the user's own checkpoint (their own tests)
            with pytest.raises(ValueError, match=f"model '{name}' needs a .+ checkpoint: "):
                models.predict({"name": name}, x[:20], y[:20], x[20:], "binary")
            continue
        out = models.predict({"name": name}, x[:20], y[:20], x[20:], "binary")
        assert out.shape == (10, 2)


def test_unknown_parameter_message_names_the_culprit_and_the_known_ones() -> None:
    assert unknown_message("knn") == "model 'knn' has unknown parameters ['zz']; it takes ['k']"
    with pytest.raises(ValueError, match=r"known models are \['knn', 'attention', "):
        models.check_model({"name": "svm"})


def test_bad_values_follow_the_registry_bounds() -> None:
    with pytest.raises(ValueError, match="'temperature' must be a finite number > 0 or null"):
        models.check_model({"name": "attention", "temperature": 0})
    with pytest.raises(ValueError, match="must be an integer ≥ 1, got True"):
        models.check_model({"name": "knn", "k": True})
    assert models.check_model({"name": "knn", "k": np.int64(3)})["k"] == 3


def test_registry_file_is_checked_on_load(tmp_path: Path) -> None:
    data = json.loads(registry.PATH.read_text())
    data["models"][0]["params"]["k"]["type"] = "string"
    bad = tmp_path / "registry.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="parameter 'k' needs a type in"):
        registry.load(bad)
    data["models"][0]["params"]["k"]["type"] = "integer"
    data["models"][0]["limits"] = {"rows": 3}
    bad.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"unknown limits \['rows'\]"):
        registry.load(bad)


def test_what_a_model_is_comes_from_its_entry() -> None:
    """The lists a new model once had to join are registry keys (docs/ARCHITECTURE.md)."""
    assert models.SPREAD_MODELS == registry.with_flag("spread") == ("tabular_fm", "tabicl",
                                                                    "tabpfn")
    assert models.MISSING_CELL_MODELS == registry.with_flag("missing_cells") == ("tabpfn",)
    for key in registry.FUNCTIONS:
        for name in registry.with_function(key):
            assert callable(registry.function(name, key)), (name, key)
    assert registry.with_function("convert") == ("tabicl", "tabpfn", "tabfm")
    assert registry.function("knn", "convert") is None
    from arenalite.models import encoding

    assert tuple(encoding.ENCODINGS) == registry.ENCODINGS
    from arenalite.cli import build_parser

    convert = build_parser().commands["convert"]
    choices = next(a.choices for a in convert._actions if a.dest == "model")
    assert list(choices) == ["tabicl", "tabpfn", "tabfm"]


@pytest.mark.parametrize("change, message", [
    ({"colour": "red"}, r"unknown keys \['colour'\]"),
    ({"spread": "yes"}, "'spread' must be true or false"),
    ({"missing_cells": 1}, "'missing_cells' must be true or false"),
    ({"reference": "knn_output"}, "'reference' must name a function as 'arenalite.module:"),
    ({"convert": "os:remove"}, "'convert' must name a function"),
    ({"context": "arenalite.models:_context"}, "'context' must name a function"),
    ({"encoding": "onehot"}, r"encoding must be one of \['tabicl', 'common', 'tabpfn'\] or"),
])
def test_bad_entry_keys_are_refused(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        registry._check_entry({**registry.REGISTRY["knn"], **change}, 0)
    entry = dict(registry.REGISTRY["knn"])
    del entry["reference"]
    with pytest.raises(ValueError, match=r"lacks \['reference'\]"):
        registry._check_entry(entry, 0)


def test_a_model_may_name_its_own_encoding_function(monkeypatch) -> None:
    import pandas as pd

    from arenalite.models import encoding

    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "c": ["x", "y", "x", None]})
    common = encoding.encode_table("knn", frame, frame)
    tables = encoding.encode_table("tabpfn", frame, frame)
    monkeypatch.setitem(registry.REGISTRY, "knn", {**registry.REGISTRY["knn"],
                        "encoding": "arenalite.models.encoding:common_encoding"})
    own = encoding.encode_table("knn", frame, frame)
    assert own[2] is None and all(np.array_equal(a, b, equal_nan=True)
                                  for a, b in zip(own[:2], common[:2], strict=True))
    monkeypatch.setitem(registry.REGISTRY, "knn", {**registry.REGISTRY["knn"],
                        "encoding": "arenalite.models.encoding:tabpfn_table"})
    own = encoding.encode_table("knn", frame, frame)
    assert own[2] == tables[2]
    assert np.array_equal(encoding.encode("knn", frame, frame)[0], tables[0], equal_nan=True)


def test_the_bridge_reads_the_same_file() -> None:
    link = BRIDGE / "src" / "registry.json"
    assert link.resolve() == registry.PATH.resolve()


@pytest.mark.needs_processes
def test_bridge_and_page_reach_every_model_and_reject_unknown_parameters_alike() -> None:
    got = node_json("""
      import { REGISTRY, IMPLEMENTATIONS, checkModel, modelLabel } from "./src/index.js";
      import { modelFromInputs } from "./page/model_form.js";
      const message = (f) => { try { f(); return null; } catch (e) { return e.message; } };
      console.log(JSON.stringify(REGISTRY.map((e) => ({
        name: e.name, implemented: e.name in IMPLEMENTATIONS, label: modelLabel({ name: e.name }),
        bridge: message(() => checkModel({ name: e.name, zz: 1 })),
        page: message(() => modelFromInputs(e, { zz: "1" }, 1, checkModel)),
      }))));
    """)
    assert [m["name"] for m in got] == list(models.WEBGPU_MODELS)
    for m in got:
        assert m["implemented"] and m["label"] == models.model_label({"name": m["name"]})
        assert m["bridge"] == m["page"] == unknown_message(m["name"]), m


def test_a_model_without_a_webgpu_implementation_is_refused_by_the_node_runner(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from arenalite import node_runner

    # tabicl runs in both since its bridge port (issue 28); a Python-only entry is refused
    assert "tabicl" in models.MODELS and "tabicl" in models.WEBGPU_MODELS
    assert registry.runners("tabicl") == ["python", "webgpu"]
    assert node_runner.model_payload({"name": "tabicl", "weights": "x.ckpt"})["weights"].endswith(
        "x.ckpt")
    monkeypatch.setitem(registry.REGISTRY, "tabicl",
                        {**registry.REGISTRY["tabicl"], "runners": ["python"]})
    with pytest.raises(ValueError, match=r"model 'tabicl' has no webgpu implementation yet; "
                       r"it runs in \['python'\] \(arenalite run --runner python\)"):
        node_runner.model_payload({"name": "tabicl", "weights": "x.ckpt"})
    with pytest.raises(ValueError, match="runners must be a non-empty subset"):
        registry._check_entry({**registry.REGISTRY["knn"], "runners": ["cuda"]}, 0)
