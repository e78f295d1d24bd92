"""TabPFN v3 checkpoints read without torch (``arenalite.models.tabpfn.checkpoint``).

The fixtures under tests/data/tabpfn/ are written by scripts/make_tabpfn_checkpoints.py with
torch and the tabpfn package (9.2.0); manifest.json records each saved tensor's SHA-256 and
what the package's ``load_model`` made of the file. Here nothing imports torch: hostile or
broken checkpoints are zips written with ``zipfile`` holding data.pkl files spelled in
pickle protocol-2 opcodes (:func:`pkl`), so no object is ever pickled, let alone run.
"""

from __future__ import annotations

import copy
import gzip
import hashlib
import json
import math
import pickle
import struct
import subprocess
import sys
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

from arenalite.cli import main
from arenalite.models import safetensors
from arenalite.models.tabpfn import checkpoint as ck

DATA = Path(__file__).parent / "data" / "tabpfn"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
V3 = tuple(MANIFEST)
"""classifier_small.ckpt, its package-written .safetensors, regressor_small.ckpt,
regressor_saved.ckpt, classifier_wide.ckpt."""
SMALL = DATA / "classifier_small.ckpt"
REGRESSOR = DATA / "regressor_small.ckpt"


def sha(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, "<f4").tobytes()).hexdigest()


def jsonable(value: object) -> object:
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def same_tensors(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """The same names in the same order, each bit for bit."""
    return list(a) == list(b) and all(
        a[k].shape == b[k].shape and a[k].tobytes() == b[k].tobytes() for k in a)


def same_checkpoint(a: ck.Checkpoint, b: ck.Checkpoint) -> bool:
    return (a.config == b.config and list(a.config) == list(b.config)
            and same_tensors(a.tensors, b.tensors) and same_tensors(a.criterion, b.criterion)
            and a.inference_config == b.inference_config
            and a.inference_config_source == b.inference_config_source)


def refused(path: Path, *culprits: str) -> str:
    """read_checkpoint's ValueError for ``path``; it must name the file and each culprit."""
    with pytest.raises(ValueError) as info:
        ck.read_checkpoint(path)
    message = str(info.value)
    assert str(path) in message or path.name in message, message
    for culprit in culprits:
        assert culprit in message, message
    return message


# --- a pickle spelled in opcodes, and zips holding it ---------------------------------------


class Raw(bytes):
    """Opcodes written as they are."""


def glob(module: str, name: str) -> Raw:
    return Raw(b"c" + f"{module}\n{name}\n".encode())


def pkl(obj: object) -> bytes:
    """Protocol-2 opcodes that rebuild ``obj`` (None, bools, ints, floats, str, tuples,
    lists, dicts, :class:`Raw`); nothing is pickled by the pickle module."""
    if isinstance(obj, Raw):
        return bytes(obj)
    if obj is None:
        return b"N"
    if isinstance(obj, bool):
        return b"\x88" if obj else b"\x89"
    if isinstance(obj, int):
        if -2**31 <= obj < 2**31:
            return b"J" + struct.pack("<i", obj)
        raw = obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
        return b"\x8a" + bytes([len(raw)]) + raw
    if isinstance(obj, float):
        return b"G" + struct.pack(">d", obj)
    if isinstance(obj, str):
        raw = obj.encode()
        return b"X" + struct.pack("<I", len(raw)) + raw
    if isinstance(obj, tuple):
        return b"(" + b"".join(pkl(x) for x in obj) + b"t"
    if isinstance(obj, list):
        return b"](" + b"".join(pkl(x) for x in obj) + b"e"
    if isinstance(obj, dict):
        head = b"}" if type(obj) is dict else bytes(glob("collections", "OrderedDict")) + b")R"
        return head + b"(" + b"".join(pkl(k) + pkl(v) for k, v in obj.items()) + b"u"
    raise TypeError(type(obj))


def tensor(key: str, numel: int, size: tuple, stride: tuple) -> Raw:
    """``torch._utils._rebuild_tensor_v2`` of float storage ``key`` as torch.save writes it."""
    pid = b"(" + pkl("storage") + glob("torch", "FloatStorage") + pkl(key) + pkl("cpu") \
        + pkl(numel) + b"tQ"
    args = b"(" + pid + pkl(0) + pkl(size) + pkl(stride) + pkl(False) \
        + glob("collections", "OrderedDict") + b")Rt"
    return Raw(glob("torch._utils", "_rebuild_tensor_v2") + args + b"R")


def write_zip(path: Path, data_pkl: bytes, records: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", data_pkl + b".")
        z.writestr("archive/byteorder", b"little")
        for key, raw in (records or {}).items():
            z.writestr(f"archive/data/{key}", raw)
    return path


def hand_built(path: Path, top: dict, tensors: dict[str, np.ndarray]) -> Path:
    """A checkpoint ``{**top, "state_dict": tensors}``, one contiguous storage per tensor,
    written without torch."""
    state, records = {}, {}
    for i, (name, arr) in enumerate(tensors.items()):
        arr = np.ascontiguousarray(arr, "<f4")
        strides = tuple(s // 4 for s in arr.strides)
        state[name] = tensor(str(i), arr.size, arr.shape, strides)
        records[str(i)] = arr.tobytes()
    return write_zip(path, pkl({**top, "state_dict": OrderedDict(state)}), records)


@pytest.fixture(scope="module")
def small() -> ck.Checkpoint:
    return ck.read_checkpoint(SMALL)


@pytest.fixture(scope="module")
def regressor() -> ck.Checkpoint:
    return ck.read_checkpoint(REGRESSOR)


def top_of(c: ck.Checkpoint, **changes) -> dict:
    """The file dict of ``c`` as the package saves it, with ``changes``."""
    top = {"config": dict(c.config), "architecture_name": "tabpfn_v3",
           "inference_config": jsonable(c.inference_config)}
    top.update(changes)
    return {k: v for k, v in top.items() if v is not DROP}


DROP = object()


def state_of(c: ck.Checkpoint) -> dict[str, np.ndarray]:
    return {**c.tensors, **{f"criterion.{k}": v for k, v in c.criterion.items()}}


# --- reading the fixtures -----------------------------------------------------------------


@pytest.mark.parametrize("name", V3)
def test_reads_each_fixture_as_saved(name):
    entry = MANIFEST[name]
    c = ck.read_checkpoint(DATA / name)
    assert c.path == DATA / name
    assert list(c.config) == list(ck.CONFIG_DEFAULTS)
    assert c.config == entry["package_config"]  # what the package's load_model parsed
    shapes = ck.expected_shapes(c.config)
    assert list(c.tensors) == list(shapes)
    saved = {**c.tensors, **{f"criterion.{k}": v for k, v in c.criterion.items()}}
    assert sorted(saved) == sorted(entry["tensors"])
    for tensor_name, arr in saved.items():
        assert arr.dtype == np.float32 and arr.flags.c_contiguous, tensor_name
        assert list(arr.shape) == entry["tensors"][tensor_name]["shape"], tensor_name
        assert sha(arr) == entry["tensors"][tensor_name]["sha256"], tensor_name
    for tensor_name, arr in c.tensors.items():  # every tensor re-randomised: none constant
        if arr.size > 1 and not tensor_name.startswith("criterion"):
            assert np.isfinite(arr).all() and arr.std() > 0, tensor_name
    assert c["x_embed.weight"] is c.tensors["x_embed.weight"]


@pytest.mark.parametrize("name", V3)
def test_inference_config_is_the_package_s(name):
    """Read from the checkpoint, or (regressor_small: none; classifier_wide: an empty one)
    the package's v2.5 defaults of the task: what load_model returned, field for field."""
    entry = MANIFEST[name]
    c = ck.read_checkpoint(DATA / name)
    assert jsonable(c.inference_config) == entry["package_inference_config"]
    assert list(c.inference_config) == list(ck.INFERENCE_DEFAULTS)
    if entry["has_inference_config"]:
        assert c.inference_config_source == "checkpoint"
        assert c.description.endswith("inference config from the checkpoint")
    else:
        assert c.inference_config_source == "v2.5 defaults"
        task = "multiclass" if c.task == "classification" else "regression"
        assert (f"the checkpoint has no inference config, so the tabpfn package's v2.5 "
                f"{task} defaults, as the package falls back") in c.description
        assert c.inference_config == ck.V2_5_INFERENCE_CONFIG[c.task]


def test_v2_5_fallback_is_the_package_s():
    want = json.loads((DATA / "inference_defaults_v2_5.json").read_text())
    assert jsonable(ck.V2_5_INFERENCE_CONFIG["classification"]) == want["multiclass"]
    assert jsonable(ck.V2_5_INFERENCE_CONFIG["regression"]) == want["regression"]
    assert list(ck.V2_5_INFERENCE_CONFIG["regression"]) == list(want["regression"])


def test_descriptions():
    c = ck.read_checkpoint(SMALL)
    assert c.task == "classification" and c.borders is None
    assert c.description.startswith("TabPFN v3 classifier from classifier_small.ckpt "
                                    "(10 classes, embed_dim 16, 2 ICL layers, ")
    r = ck.read_checkpoint(REGRESSOR)
    assert r.task == "regression"
    assert r.description.startswith("TabPFN v3 regressor from regressor_small.ckpt "
                                    "(64 buckets, embed_dim 16, 2 ICL layers, ")
    assert "InferenceConfig.get_default('regression', ModelVersion.V2_5)" in r.description
    wide = ck.read_checkpoint(DATA / "classifier_wide.ckpt")
    assert "(12 classes, embed_dim 24, 3 ICL layers" in wide.description
    assert "'multiclass'" in wide.description


@pytest.mark.parametrize("name", ["regressor_small.ckpt", "regressor_saved.ckpt"])
def test_regression_borders(name):
    """From the state dict's regression_borders, or criterion.borders where
    save_tabpfn_model wrote it: the borders the package's load_model built its bar
    distribution on."""
    c = ck.read_checkpoint(DATA / name)
    assert c.borders.shape == (65,)
    assert sha(c.borders) == MANIFEST[name]["package_borders_sha256"]
    assert np.all(np.diff(c.borders) > 0)
    if name == "regressor_saved.ckpt":
        assert list(c.criterion) == ["borders", "losses_per_bucket"]
        assert c.borders is c.criterion["borders"]
        assert c.criterion["losses_per_bucket"].shape == (64,)
    else:
        assert c.criterion == {} and c.borders is c.tensors["regression_borders"]


def test_package_safetensors_reads_like_the_ckpt(small):
    """tabpfn.checkpoint.save_as_safetensors's layout: the state dict, JSON metadata."""
    other = ck.read_checkpoint(DATA / "classifier_small_package.safetensors")
    assert same_checkpoint(other, small)


def test_rope_frequencies_are_the_package_s(small):
    d = small.config["embed_dim"] // small.config["feat_agg_num_heads"]
    base = int(small.config["feat_agg_rope_base"])
    want = 1.0 / base ** (np.arange(0, d, 2) / d)
    np.testing.assert_allclose(small["column_aggregator.rope.freqs"], want, rtol=1e-6)


def test_never_unpickles_without_restriction(monkeypatch):
    def forbidden(*_, **__):
        raise AssertionError("unrestricted pickle load")

    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    assert ck.read_checkpoint(SMALL).tensors


@pytest.mark.needs_processes
def test_reading_imports_no_torch():
    code = ("import sys; sys.modules['torch'] = None\n"  # any import of torch now fails
            "from arenalite.models.tabpfn import checkpoint as ck\n"
            + "".join(f"ck.read_checkpoint({str(DATA / n)!r})\n" for n in V3))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


# --- expected_shapes ----------------------------------------------------------------------


def shape_cases() -> list[dict]:
    return json.loads(gzip.decompress((DATA / "shapes.json.gz").read_bytes()))


def test_expected_shapes_equal_get_architecture_s():
    """shapes.json.gz: the package's state dicts for the full-size v3 classifier and
    regressor and for switch combinations (binary, 40 classes, NaN indicators, RoPE, affine
    norms, grouped KV heads and test-row KV heads, decoder softmax scaling, widths, group
    sizes, zero-block stacks, a classifier with buckets), full-size and small."""
    cases = shape_cases()
    assert len(cases) >= 30
    for case in cases:
        got = ck.expected_shapes(case["config"])
        assert [(k, list(v)) for k, v in got.items()] == list(case["shapes"].items()), \
            case["config"]


def test_full_size_parameter_counts():
    cases = shape_cases()
    classifier, regressor = cases[0], cases[1]
    assert classifier["config"] == {"max_num_classes": 10}
    assert regressor["config"] == {"num_buckets": 5000}
    for case, tensors, params in ((classifier, 502, 53_023_736), (regressor, 504, 58_274_944)):
        got = ck.expected_shapes(case["config"])
        assert len(got) == tensors
        assert sum(math.prod(s) for n, s in got.items() if n != "regression_borders") == params


def test_expected_shapes_fill_defaults():
    assert ck.check_config({"max_num_classes": 10}) == {**ck.CONFIG_DEFAULTS,
                                                        "max_num_classes": 10}
    assert ck.check_config({"max_num_classes": 10.0, "embed_dim": 64.0})["embed_dim"] == 64


@pytest.mark.parametrize(("change", "culprit"), [
    ({"flash": True}, "'flash'"),
    ({"embed_dim": 0}, "'embed_dim'"),
    ({"embed_dim": 12.5}, "'embed_dim'"),
    ({"embed_dim": "128"}, "'embed_dim'"),
    ({"nlayers": -1}, "'nlayers'"),
    ({"use_rope": 1}, "'use_rope'"),
    ({"name": 3}, "'name'"),
    ({"icl_num_kv_heads": 0}, "'icl_num_kv_heads'"),
    ({"dist_embed_num_heads": 5}, "dist_embed_num_heads=5"),
    ({"feat_agg_num_heads": 3}, "feat_agg_num_heads=3"),
    ({"icl_num_heads": 7}, "icl_num_heads=7"),
    ({"embed_dim": 24, "feat_agg_num_heads": 8}, "even head width"),
    ({"icl_num_kv_heads": 3}, "icl_num_kv_heads=3"),
    ({"icl_num_kv_heads_test": 3}, "icl_num_kv_heads_test=3"),
    ({"icl_num_kv_heads": 2, "icl_num_kv_heads_test": 4}, "more than the train"),
    ({"max_num_classes": 1}, "neither a classifier"),
    ({"feat_agg_rope_base": 0.5}, "'feat_agg_rope_base'"),
    ({"dropout": 2}, "'dropout'"),
])
def test_bad_configs_are_named(change, culprit):
    with pytest.raises(ValueError, match="TabPFN v3 config") as info:
        ck.expected_shapes({"max_num_classes": 10, **change})
    assert culprit in str(info.value)
    with pytest.raises(ValueError, match="must be a dict"):
        ck.check_config([("embed_dim", 8)])


# --- other generations --------------------------------------------------------------------


@pytest.mark.parametrize(("name", "generation", "said"), [
    ("v2_5_classifier.ckpt", "v2.5", "architecture_name 'base'"),
    ("v2_6_classifier.ckpt", "v2.6", "architecture_name 'tabpfn_v2_6'"),
    ("v3_5.safetensors", "v3.5", "architecture_name 'tabpfn_v3_5'"),
])
def test_other_generations_are_refused_by_name(name, generation, said, monkeypatch):
    read = []
    original = zipfile.ZipFile.read
    monkeypatch.setattr(zipfile.ZipFile, "read",
                        lambda self, n, pwd=None: read.append(getattr(n, "filename", n))
                        or original(self, n, pwd))
    message = refused(DATA / name, f"TabPFN {generation} checkpoints are not supported yet",
                      said)
    assert message.startswith(f"checkpoint {str(DATA / name)!r}: ")
    assert not [n for n in read if "/data/" in n]  # refused before any tensor is read


@pytest.mark.parametrize(("changes", "culprits"), [
    ({"architecture_name": DROP}, ["not a TabPFN checkpoint", "no 'architecture_name'"]),
    ({"architecture_name": DROP, "config": {"emsize": 192, "nhead": 6, "nlayers": 12}},
     ["TabPFN v2 checkpoints are not supported yet", "no architecture_name"]),
    ({"architecture_name": "tabpfn_v2"}, ["TabPFN v2 checkpoints"]),
    ({"architecture_name": "tabpfn_v4"}, ["'tabpfn_v4'", "only TabPFN v3"]),
    ({"architecture_name": 3}, ["'architecture_name' must be a string"]),
])
def test_architecture_names(tmp_path, small, changes, culprits):
    refused(hand_built(tmp_path / "x.ckpt", top_of(small, **changes), state_of(small)),
            *culprits)


@pytest.mark.parametrize(("config_changes", "culprits"), [
    ({"name": "TabPFN-v3.5"}, ["TabPFN v3.5 checkpoints are not supported yet",
                               "'TabPFN-v3.5'"]),
    ({"fourier_encoding_num_frequencies": 32}, ["TabPFN v3.5 checkpoints",
                                                "'fourier_encoding_num_frequencies'"]),
    ({"emsize": 192, "nhead": 6}, ["TabPFN v2 checkpoints", "'emsize'"]),
    ({"emsize": 192, "encoder_type": "mlp"}, ["TabPFN v2.5 or v2.6 checkpoints"]),
    ({"use_magic": True}, ["unknown config keys", "'use_magic'"]),
])
def test_the_config_tells_the_generation(tmp_path, small, config_changes, culprits):
    top = top_of(small, config={**small.config, **config_changes})
    refused(hand_built(tmp_path / "x.ckpt", top, state_of(small)), *culprits)


def test_a_renamed_v3_config_is_read(tmp_path, small):
    top = top_of(small, config={**small.config, "name": "my fine-tuned v3"})
    c = ck.read_checkpoint(hand_built(tmp_path / "x.ckpt", top, state_of(small)))
    assert c.config["name"] == "my fine-tuned v3" and same_tensors(c.tensors, small.tensors)


# --- hostile, broken and wrong files ------------------------------------------------------

FOREIGN = [
    (glob("os", "system"), "'os.system'"),
    (glob("posix", "system"), "'posix.system'"),
    (glob("__builtin__", "eval"), "'builtins.eval'"),
    (glob("subprocess", "Popen"), "'subprocess.Popen'"),
    (glob("torch", "load"), "'torch.load'"),
    (glob("tabpfn.preprocessing.configs", "FeatureSubsamplingMethod"),
     "'tabpfn.preprocessing.configs.FeatureSubsamplingMethod'"),
    (Raw(pkl("os") + pkl("system") + b"\x93"), "'os.system'"),  # STACK_GLOBAL
]


@pytest.mark.parametrize(("callable_", "culprit"), FOREIGN)
def test_hostile_pickle_is_refused_and_never_runs(tmp_path, callable_, culprit):
    marker = tmp_path / "ran"
    payload = Raw(bytes(callable_) + b"(" + pkl(f"touch {marker}") + b"tR")  # GLOBAL, REDUCE
    for where in ("config", "inference_config", "extra"):
        top = {"config": {"max_num_classes": 10}, "architecture_name": "tabpfn_v3",
               "state_dict": {}, where: payload}
        path = write_zip(tmp_path / f"evil_{where}.ckpt", pkl(top))
        message = refused(path, culprit, "which a TabPFN checkpoint never contains",
                          "refusing to load it")
        assert message.startswith(f"checkpoint {str(path)!r}: data.pkl refers to class")
    assert not marker.exists()


def test_inst_opcode_is_refused(tmp_path):
    marker = tmp_path / "ran"
    payload = Raw(b"(" + pkl(f"touch {marker}") + b"ios\nsystem\n")
    refused(write_zip(tmp_path / "inst.ckpt", pkl({"config": payload})), "'os.system'")
    assert not marker.exists()


@pytest.mark.parametrize("name", ["classifier_small.ckpt", "classifier_small_package.safetensors"])
@pytest.mark.parametrize("fraction", [0.0001, 0.1, 0.5, 0.9, 0.999])
def test_truncated_files(tmp_path, name, fraction):
    data = (DATA / name).read_bytes()
    for cut in {max(1, int(len(data) * fraction)), len(data) - 1}:
        path = tmp_path / f"cut_{name}"
        path.write_bytes(data[:cut])
        refused(path)


def test_missing_file_and_directory(tmp_path):
    refused(tmp_path / "nope.ckpt", "does not exist")
    refused(tmp_path, "directory")
    path = tmp_path / "x.ckpt"
    path.write_bytes(b"hello, world\n" * 10)
    refused(path, "neither")


def test_unknown_missing_and_wrong_shaped_tensors(tmp_path, small, regressor):
    def build(c, state, name="x.ckpt"):
        return hand_built(tmp_path / name, top_of(c), state)

    state = state_of(small)
    refused(build(small, {**state, "icl_blocks.0.extra.weight": np.ones(2)}),
            "unexpected tensors", "'icl_blocks.0.extra.weight'")
    refused(build(small, {**state, "criterion.temperature": np.ones(1)}),
            "unexpected tensors", "'criterion.temperature'")
    refused(build(small, {k: v for k, v in state.items() if k != "output_norm.weight"}),
            "missing tensors", "'output_norm.weight'")
    refused(build(small, {**state, "many_class_decoder.q_projection.bias": np.ones(7)}),
            "'many_class_decoder.q_projection.bias'", "[7]", "expected [16]")
    refused(build(small, {**state, "regression_borders": np.ones(3)}),
            "'regression_borders'", "[3]", "expected [0]")
    rstate = state_of(regressor)
    refused(build(regressor, {**rstate, "criterion.borders": np.arange(10.0)}),
            "'criterion.borders'", "[10]", "expected [65]")
    c = ck.read_checkpoint(build(regressor, {**rstate, "criterion.borders": np.arange(65.0)}))
    assert np.array_equal(c.borders, np.arange(65.0, dtype=np.float32))


def test_bad_dtype_is_named(tmp_path, small):
    state = {k: tensor(str(i), v.size, v.shape, tuple(s // 4 for s in v.strides))
             for i, (k, v) in enumerate(small.tensors.items())}
    name = "x_embed.bias"
    i = list(small.tensors).index(name)
    records = {str(j): v.tobytes() for j, v in enumerate(small.tensors.values())}
    records[str(i)] = np.zeros(16, "<i8").tobytes()
    state[name] = Raw(bytes(state[name]).replace(b"FloatStorage", b"LongStorage"))
    top = {**top_of(small), "state_dict": OrderedDict(state)}
    refused(write_zip(tmp_path / "dtype.ckpt", pkl(top), records), f"'{name}'", "LongStorage",
            "a TabPFN state_dict holds floating-point tensors only")


def test_missing_keys_and_bad_structure(tmp_path, small):
    cases = [
        (pkl([1, 2]), "list"),
        (pkl({"config": small.config}), "'state_dict'"),
        (pkl({"state_dict": {}}), "'config'"),
        (pkl({"config": small.config, "architecture_name": "tabpfn_v3", "state_dict": [1]}),
         "'state_dict' is a list"),
        (pkl({"config": 3, "architecture_name": "tabpfn_v3", "state_dict": {}}),
         "must be a dict"),
    ]
    for i, (data, culprit) in enumerate(cases):
        refused(write_zip(tmp_path / f"m{i}.ckpt", data), culprit)


# --- the inference config -----------------------------------------------------------------


def test_inference_config_is_completed_as_the_package_does(tmp_path, small):
    given = {"PREPROCESS_TRANSFORMS": [{"name": "none"}], "CONSTANT_FEATURE_COUNT": 7,
             "SOFTMAX_TEMPERATURE": 0.5, "REGRESSION_Y_PREPROCESS_TRANSFORMS": [None]}
    c = ck.read_checkpoint(hand_built(tmp_path / "x.ckpt",
                                      top_of(small, inference_config=given), state_of(small)))
    want = {**ck.INFERENCE_DEFAULTS, "PREPROCESS_TRANSFORMS": [
        {**ck.PREPROCESSOR_DEFAULTS, "name": "none"}], "SOFTMAX_TEMPERATURE": 0.5,
        "FEATURE_SUBSAMPLING_CONSTANT_FEATURE_COUNT": 7,
        "REGRESSION_Y_PREPROCESS_TRANSFORMS": (None,)}
    assert c.inference_config == want and list(c.inference_config) == list(want)
    assert c.inference_config_source == "checkpoint"


@pytest.mark.parametrize(("inference", "culprits"), [
    ({"PREPROCESS_TRANSFORMS": [], "FLASH": 1}, ["unknown inference_config keys", "'FLASH'"]),
    ({"SOFTMAX_TEMPERATURE": 0.9}, ["'PREPROCESS_TRANSFORMS'", "requires"]),
    ({"PREPROCESS_TRANSFORMS": [{"name": "none", "bogus": 1}]},
     ["PREPROCESS_TRANSFORMS[0]", "'bogus'"]),
    ({"PREPROCESS_TRANSFORMS": [{"categorical_name": "none"}]},
     ["PREPROCESS_TRANSFORMS[0]", "no 'name'"]),
    ({"PREPROCESS_TRANSFORMS": "none"}, ["must be a list"]),
    ([1], ["'inference_config' must be a dict"]),
])
def test_bad_inference_configs_are_named(tmp_path, small, inference, culprits):
    path = hand_built(tmp_path / "x.ckpt", top_of(small, inference_config=inference),
                      state_of(small))
    refused(path, *culprits)


@pytest.mark.parametrize("empty", [DROP, None, {}])
def test_no_inference_config_falls_back_to_v2_5(tmp_path, small, regressor, empty):
    for c in (small, regressor):
        path = hand_built(tmp_path / "x.ckpt", top_of(c, inference_config=empty), state_of(c))
        back = ck.read_checkpoint(path)
        assert back.inference_config_source == "v2.5 defaults"
        assert back.inference_config == ck.V2_5_INFERENCE_CONFIG[c.task]
        assert "v2.5" in back.description


def test_extra_top_level_keys_are_ignored_as_the_package_does(tmp_path, small):
    top = top_of(small, optimizer={"lr": 1e-3, "betas": (0.9, 0.99)}, step=7)
    c = ck.read_checkpoint(hand_built(tmp_path / "x.ckpt", top, state_of(small)))
    assert same_checkpoint(c, small)


# --- safetensors and convert --------------------------------------------------------------


@pytest.mark.parametrize("name", V3)
def test_convert_round_trip(name, tmp_path):
    original = ck.read_checkpoint(DATA / name)
    out = ck.convert(DATA / name, tmp_path / "c.safetensors")
    back = ck.read_checkpoint(out)
    assert same_checkpoint(back, original)
    assert back.borders is None if original.borders is None else \
        np.array_equal(back.borders, original.borders)
    assert back.description == original.description.replace(f"from {name} ",
                                                            "from c.safetensors ")
    metadata, tensors = safetensors.read(out, finite=False)
    assert sorted(tensors) == sorted(state_of(original))
    want = {"format", "version", "architecture_name", "config"}
    if original.inference_config_source == "checkpoint":
        want.add("inference_config")
    assert set(metadata) == want
    assert json.loads(metadata["format"]) == "arenalite.tabpfn"
    assert json.loads(metadata["version"]) == "1"
    assert json.loads(metadata["architecture_name"]) == "tabpfn_v3"
    assert json.loads(metadata["config"]) == original.config
    again = ck.write_safetensors(back, tmp_path / "again.safetensors")
    assert again.read_bytes() == out.read_bytes()


def test_bad_safetensors(tmp_path, small):
    metadata, tensors = safetensors.read(ck.convert(SMALL, tmp_path / "t.safetensors"))

    def rewrite(tensors=tensors, **meta):
        path = tmp_path / "bad.safetensors"
        safetensors.write(path, tensors, {**metadata, **meta}, finite=False)
        return path

    refused(rewrite({**tensors, "icl_blocks.0.extra": np.ones(2)}), "'icl_blocks.0.extra'")
    refused(rewrite({k: v for k, v in tensors.items() if k != "output_norm.weight"}),
            "missing tensors", "'output_norm.weight'")
    refused(rewrite(format=json.dumps("arenalite.tabicl")), "'format'", "'arenalite.tabicl'")
    refused(rewrite(version=json.dumps("2")), "'version'")
    refused(rewrite(config="{not json"), "'config'", "not JSON")
    refused(rewrite(config=json.dumps({**small.config, "shiny": 1})), "'shiny'")
    refused(rewrite(architecture_name=json.dumps("tabpfn_v2_6")), "TabPFN v2.6 checkpoints")
    path = tmp_path / "other.safetensors"
    safetensors.write(path, tensors)  # no metadata: someone else's safetensors
    refused(path, "no 'config'")


def test_write_refuses_a_bad_checkpoint(tmp_path, small):
    broken = ck.Checkpoint(small.config, {**small.tensors, "x_embed.bias": np.ones(3)},
                           copy.deepcopy(small.inference_config))
    with pytest.raises(ValueError, match="checkpoint to write: tensor 'x_embed.bias'"):
        ck.write_safetensors(broken, tmp_path / "w.safetensors")


# --- arenalite convert tabpfn -------------------------------------------------------------


def cli_error(argv: list[str], capsys) -> str:
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's own errors
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "error" in line]
    assert len(lines) == 1 and lines[0].startswith("arenalite: error: "), err
    return lines[0]


def test_cli_convert(tmp_path, capsys, regressor):
    out = tmp_path / "r.safetensors"
    assert main(["convert", "tabpfn", str(REGRESSOR), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert same_checkpoint(ck.read_checkpoint(out), regressor)


def test_cli_convert_errors(tmp_path, capsys):
    out = str(tmp_path / "o.safetensors")
    line = cli_error(["convert", "tabpfn", str(DATA / "v2_6_classifier.ckpt"), "-o", out],
                     capsys)
    assert "v2_6_classifier.ckpt" in line and "TabPFN v2.6 checkpoints are not supported" in line
    assert not Path(out).exists()
    line = cli_error(["convert", "tabpfn", str(tmp_path / "nope.ckpt"), "-o", out], capsys)
    assert "nope.ckpt" in line and "does not exist" in line
    evil = write_zip(tmp_path / "evil.ckpt", pkl(Raw(bytes(glob("os", "system")))))
    assert "'os.system'" in cli_error(["convert", "tabpfn", str(evil), "-o", out], capsys)
    line = cli_error(["convert", "tabpfn", str(SMALL), "-o", str(tmp_path / "no" / "x.st")],
                     capsys)
    assert "does not exist" in line and "--output" in line
    # a TabICL checkpoint is not a TabPFN one
    tabicl = Path(__file__).parent / "data" / "tabicl" / "tiny.ckpt"
    line = cli_error(["convert", "tabpfn", str(tabicl), "-o", out], capsys)
    assert "tiny.ckpt" in line and "not a TabPFN checkpoint" in line


def test_random_checkpoint_in_numpy(tmp_path):
    """What notebook 11 does without torch: random weights of any v3 config, written as
    safetensors, read back unchanged, and run through the registry model."""
    from arenalite import models
    from arenalite.models.tabpfn import checkpoint as C

    config = C.read_checkpoint(DATA / "classifier_small.ckpt").config
    a, b = C.random_checkpoint(config, seed=3), C.random_checkpoint(config, seed=3)
    assert list(a.tensors) == list(C.expected_shapes(config))
    assert all(np.array_equal(a[n], b[n]) for n in a.tensors)
    assert {n: t.shape for n, t in a.tensors.items()} == C.expected_shapes(config)
    assert a.inference_config_source == "v2.5 defaults"
    path = C.write_safetensors(a, tmp_path / "random.safetensors")
    back = C.read_checkpoint(path)
    assert all(np.array_equal(back[n], a[n]) for n in a.tensors)
    x = np.random.default_rng(0).standard_normal((40, 3))
    p = models.predict({"name": "tabpfn", "weights": path, "n_estimators": 2}, x[:30],
                       np.arange(30) % 3, x[30:], "multiclass")
    assert p.shape == (10, 3) and np.allclose(p.sum(axis=1), 1)
    reg = C.random_checkpoint(C.read_checkpoint(DATA / "regressor_small.ckpt").config, 1)
    assert np.all(np.diff(reg.borders) > 0) and len(reg.borders) == reg.config["num_buckets"] + 1
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        C.random_checkpoint(config, seed=-1)
