"""Google TabFM checkpoints read without torch (``arenalite.models.tabfm.checkpoint``).

tests/data/tabfm/ holds random-weight checkpoints the package itself saved
(scripts/make_tabfm_checkpoints.py: ``TabFM_HF.save_pretrained``, the hub's keys added to
config.json, read back by ``tabfm_v1_0_0.load``), manifest.json with each tensor's shape
and SHA-256, and shapes.json with ``TabFM(**config).state_dict()``'s names and shapes for
v1.0.0 and other switch combinations. Broken files are made here from the good ones.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from arenalite.cli import main
from arenalite.models import safetensors, tabfm
from arenalite.models.tabfm import checkpoint as ck

DATA = Path(__file__).parent / "data" / "tabfm"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
SHAPES = json.loads((DATA / "shapes.json").read_text())
SMALL = DATA / "small"
CLASSIFIER = SMALL / "classification"


def sha(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, "<f4").tobytes()).hexdigest()


def refused(path: Path, *culprits: str, task: str | None = None) -> str:
    """read_checkpoint's ValueError for ``path``: it names the file and each culprit."""
    with pytest.raises(ValueError) as info:
        ck.read_checkpoint(path, task)
    message = str(info.value)
    assert str(path) in message, message
    for culprit in culprits:
        assert culprit in message, message
    return message


def raw_safetensors(entries: dict[str, tuple[str, list[int], bytes]],
                    metadata: dict | None = None) -> bytes:
    """A safetensors file spelled by hand: name → (dtype, shape, bytes)."""
    header: dict = {"__metadata__": metadata or {"format": "pt"}}
    offset, chunks = 0, []
    for name, (dtype, shape, raw) in entries.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        chunks.append(raw)
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def copy_folder(tmp_path: Path, src: Path = CLASSIFIER) -> Path:
    out = tmp_path / "ckpt"
    shutil.copytree(src, out)
    return out


def good_tensors() -> dict[str, np.ndarray]:
    return ck.read_checkpoint(CLASSIFIER).tensors


# --- what is read ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(MANIFEST))
def test_package_saved_folders_read_as_saved(name: str) -> None:
    entry = MANIFEST[name]
    got = ck.read_checkpoint(DATA / name)
    assert got.task == entry["task"]
    assert list(got.tensors) == list(entry["tensors"])
    for key, (shape, digest) in entry["tensors"].items():
        assert list(got[key].shape) == shape and got[key].dtype == np.float32
        assert sha(got[key]) == digest, key
    for key, value in entry["config"].items():
        assert got.config[key] == value


def test_the_parent_folder_takes_the_task() -> None:
    assert ck.read_checkpoint(SMALL, "classification").task == "classification"
    reg = ck.read_checkpoint(SMALL, "regression")
    assert reg.task == "regression" and reg.path == SMALL / "regression" / "model.safetensors"
    message = refused(SMALL, "say which task", "classification")
    assert str(SMALL / "regression") in message
    refused(CLASSIFIER, "a classification checkpoint, asked for regression", task="regression")


def test_a_parent_with_one_task_folder(tmp_path: Path) -> None:
    shutil.copytree(SMALL / "regression", tmp_path / "regression")
    assert ck.read_checkpoint(tmp_path).task == "regression"
    refused(tmp_path, "has no classification/ folder", task="classification")
    refused(tmp_path / "empty", "does not exist")
    (tmp_path / "empty").mkdir()
    refused(tmp_path / "empty", "holds neither")


@pytest.mark.parametrize("case", list(SHAPES))
def test_expected_shapes_are_the_packages(case: str) -> None:
    """shapes.json is ``TabFM(**config).state_dict()`` as the package builds it."""
    want = [(name, tuple(shape)) for name, shape in SHAPES[case]["shapes"]]
    assert list(ck.expected_shapes(SHAPES[case]["config"]).items()) == want


def test_v1_0_0_size() -> None:
    shapes = ck.expected_shapes(ck.V1_0_0)
    assert len(shapes) == 913
    assert sum(int(np.prod(s)) for s in shapes.values()) == 1_639_444_522
    assert shapes["icl_predictor.tf_icl.blocks.23.linear1.weight"] == (8192, 2048)
    assert shapes["row_interactor.tf_row.rope.freqs"] == (16,)


def test_convert_round_trip_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = ck.convert(SMALL, tmp_path / "reg.safetensors", task="regression")
    back = ck.read_checkpoint(out)
    folder = ck.read_checkpoint(SMALL / "regression")
    assert back.config == folder.config and list(back.tensors) == list(folder.tensors)
    assert all(back[k].tobytes() == folder[k].tobytes() for k in folder.tensors)
    metadata, _ = safetensors.read(out)
    assert metadata["format"] == "arenalite.tabfm" and metadata["version"] == "1"
    assert tabfm.load(out).task == "regression"
    assert main(["convert", "tabfm", str(CLASSIFIER), "-o", str(tmp_path / "c.safetensors")]) == 0
    assert ck.read_checkpoint(tmp_path / "c.safetensors").task == "classification"
    capsys.readouterr()
    assert main(["convert", "tabfm", str(SMALL), "-o", str(tmp_path / "x.safetensors")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arenalite: error: ") and "say which task" in err
    assert not (tmp_path / "x.safetensors").exists()


def test_load_is_cached_and_checks_the_task(tmp_path: Path) -> None:
    a = tabfm.load(SMALL, "classification")
    assert tabfm.load(CLASSIFIER) is a
    assert tabfm.load(SMALL, "regression").task == "regression"
    with pytest.raises(ValueError, match="asked for regression"):
        tabfm.load(CLASSIFIER, "regression")
    with pytest.raises(ValueError, match="does not exist"):
        tabfm.load(tmp_path / "nowhere")


# --- what is refused -----------------------------------------------------------------------


def test_truncated_weights(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path)
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:-100])
    refused(folder, "truncated")
    weights.write_bytes(data[:5])
    refused(folder, "5 bytes")


def test_a_header_that_lies_about_its_size(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path)
    weights = folder / "model.safetensors"
    data = weights.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    weights.write_bytes(struct.pack("<Q", len(data)) + data[8:])
    refused(folder, f"{len(data)}-byte header")
    weights.write_bytes(struct.pack("<Q", n - 3) + data[8:])  # still JSON (padding)
    refused(folder, f"{len(data) - 8 - n + 3}-byte buffer", "lies about its size")
    weights.write_bytes(struct.pack("<Q", n + 5) + data[8:])
    refused(folder, "not JSON")


def test_a_tensor_whose_span_lies(tmp_path: Path) -> None:
    t = good_tensors()
    entries = {k: ("F32", list(v.shape), v.tobytes()) for k, v in t.items()}
    name = "cls_tokens"
    dtype, shape, raw = entries[name]
    entries[name] = (dtype, [shape[0], shape[1] + 1], raw)
    folder = copy_folder(tmp_path)
    (folder / "model.safetensors").write_bytes(raw_safetensors(entries))
    refused(folder, name)


def test_missing_unexpected_and_misshapen_tensors(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path)
    weights = folder / "model.safetensors"
    t = good_tensors()
    missing = dict(t)
    del missing["row_interactor.tf_row.rope.freqs"]
    safetensors.write(weights, missing)
    refused(folder, "missing tensors", "row_interactor.tf_row.rope.freqs")
    safetensors.write(weights, {**t, "icl_predictor.extra.weight": np.zeros(2, np.float32)})
    refused(folder, "unexpected tensors", "icl_predictor.extra.weight")
    wrong = dict(t)
    wrong["cell_embedder.fourier_frequencies"] = np.zeros((3, 9), np.float32)
    safetensors.write(weights, wrong)
    refused(folder, "'cell_embedder.fourier_frequencies' has shape [3, 9], expected [3, 8]")


@pytest.mark.parametrize("dtype,numpy_dtype", [("F64", "<f8"), ("F16", "<f2"),
                                               ("BF16", "<u2"), ("I32", "<i4")])
def test_non_float32_tensors(tmp_path: Path, dtype: str, numpy_dtype: str) -> None:
    t = good_tensors()
    entries = {k: ("F32", list(v.shape), v.tobytes()) for k, v in t.items()}
    name = "icl_predictor.ln.weight"
    entries[name] = (dtype, list(t[name].shape), t[name].astype(numpy_dtype).tobytes())
    folder = copy_folder(tmp_path)
    (folder / "model.safetensors").write_bytes(raw_safetensors(entries))
    refused(folder, name, dtype)


def test_non_finite_weights(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path)
    t = dict(good_tensors())
    t["cls_tokens"] = t["cls_tokens"].copy()
    t["cls_tokens"][0, 0] = np.nan
    safetensors.write(folder / "model.safetensors", t, finite=False)
    refused(folder, "cls_tokens", "non-finite")


@pytest.mark.parametrize("change,culprits", [
    ({"use_flash": True}, ("unknown config key", "use_flash")),
    ({"embed_dim": "16"}, ("'embed_dim' must be a positive integer",)),
    ({"row_nhead": 3}, ("row_nhead=3 does not divide embed_dim = 16",)),
    ({"embed_dim": 12, "row_nhead": 4, "col_nhead": 2, "icl_nhead": 2},
     ("row heads of odd width",)),
    ({"task": "ranking"}, ("'task' must be one of",)),
    ({"task": "regression"}, ("contradicts 'is_classifier'",)),
    ({"is_classifier": "yes"}, ("'is_classifier' must be true or false",)),
    ({"decoder_hidden": 0}, ("'decoder_hidden' must be null or a positive integer",)),
    ({"version": 1}, ("'version' must be a string",)),
])
def test_bad_configs(tmp_path: Path, change: dict, culprits: tuple) -> None:
    folder = copy_folder(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    config.update(change)
    (folder / "config.json").write_text(json.dumps(config))
    refused(folder, *culprits)


def test_missing_or_broken_files(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path)
    (folder / "config.json").write_text("{not json")
    refused(folder, "config.json", "not JSON")
    (folder / "config.json").unlink()
    refused(folder, "has no config.json")
    shutil.copy(CLASSIFIER / "config.json", folder / "config.json")
    (folder / "model.safetensors").unlink()
    refused(folder, "has no model.safetensors")


def test_a_bare_safetensors_file_is_not_a_converted_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "bare.safetensors"
    shutil.copy(CLASSIFIER / "model.safetensors", path)
    refused(path, "'format' must be 'arenalite.tabfm'", "give the folder instead")
    safetensors.write(path, good_tensors(), {"format": "arenalite.tabfm", "version": "1",
                                             "config": "{oops"})
    refused(path, "'config' is not JSON")


def test_the_task_missing_from_the_config_is_the_packages_default(tmp_path: Path) -> None:
    folder = copy_folder(tmp_path, SMALL / "regression")
    config = json.loads((folder / "config.json").read_text())
    del config["is_classifier"]
    (folder / "config.json").write_text(json.dumps(config))
    assert ck.read_checkpoint(folder).task == "regression"  # from "task"
    del config["task"]
    (folder / "config.json").write_text(json.dumps(config))
    refused(folder, "missing tensors", "y_encoder.projection.weight")  # package: classifier


# --- random checkpoints --------------------------------------------------------------------


def test_random_checkpoints_draw_every_tensor(tmp_path: Path) -> None:
    a = ck.random_checkpoint(MANIFEST["wide"]["config"], seed=4)
    b = ck.random_checkpoint(MANIFEST["wide"]["config"], seed=4)
    c = ck.random_checkpoint(MANIFEST["wide"]["config"], seed=5)
    assert all(a[k].tobytes() == b[k].tobytes() for k in a.tensors)
    assert all(a[k].tobytes() != c[k].tobytes() for k in a.tensors)
    for name, value in a.tensors.items():
        assert value.dtype == np.float32 and np.isfinite(value).all()
        if value.size > 1:
            assert np.std(value) > 0, name
        assert not np.all(value == 0) and not np.all(value == 1), name
    assert (a["row_interactor.tf_row.rope.freqs"] > 0).all()
    folder = ck.save_pretrained(a, tmp_path / "random")
    back = ck.read_checkpoint(folder)
    assert back.config == a.config
    assert all(back[k].tobytes() == a[k].tobytes() for k in a.tensors)
    with pytest.raises(ValueError, match="seed"):
        ck.random_checkpoint({}, seed=-1)
