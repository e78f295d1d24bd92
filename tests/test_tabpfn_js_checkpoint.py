"""The reference the JavaScript TabPFN checkpoint reader is tested against
(tests/data/tabpfn/js/, scripts/make_tabpfn_js_checkpoint_fixtures.py) is still what
arenalite's Python reader says: every committed bad file's message word for word, every
truncation's, and each good file's config, inference config and description. (The node test
webgpu_bridge/test/tabpfn_checkpoint.test.js holds the JavaScript reader to the same file.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arenalite.models.tabpfn import checkpoint as ck

DATA = Path(__file__).parent / "data" / "tabpfn"
JS = DATA / "js"
REFERENCE = json.loads((JS / "checkpoint_reference.json").read_text())


def test_bad_files_messages_are_python_s(monkeypatch):
    monkeypatch.chdir(JS / "bad")
    for name, want in REFERENCE["bad"].items():
        if "read" in want:
            c = ck.read_checkpoint(name)
            assert c.description == want["read"]["description"], name
            continue
        with pytest.raises(ValueError) as info:
            ck.read_checkpoint(name)
        assert str(info.value) == want["message"], name


def test_truncations_messages_are_python_s(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for case in REFERENCE["truncated"]:
        Path(case["name"]).write_bytes((DATA / case["file"]).read_bytes()[:case["bytes"]])
        with pytest.raises(ValueError) as info:
            ck.read_checkpoint(case["name"])
        assert str(info.value) == case["message"]


def test_good_files_read_as_recorded():
    for name, want in REFERENCE["good"].items():
        path = JS / name if (JS / name).exists() else DATA / name
        c = ck.read_checkpoint(path)
        assert c.config == want["config"] and c.description == want["description"], name
        assert json.loads(json.dumps(c.inference_config)) == want["inference_config"], name
        assert [n for n in c.tensors] == [t[0] for t in want["tensors"]], name
