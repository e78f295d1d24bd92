"""TabICL checkpoints read without torch (``arenalite.models.tabicl.checkpoint``).

The fixtures under tests/data/tabicl/ are written by scripts/make_tabicl_checkpoints.py
with torch and the tabicl package; here nothing imports torch. Hostile or broken
checkpoints are built by hand: zips written with ``zipfile`` and data.pkl files spelled in
pickle protocol-2 opcodes (:func:`pkl`), so no object is ever pickled, let alone run.
"""

from __future__ import annotations

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
from arenalite.models.tabicl import checkpoint as ck

DATA = Path(__file__).parent / "data" / "tabicl"
SMALL = ("classifier_small", "regressor_small", "classifier_wide")
TINY = DATA / "tiny.ckpt"


def bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint32)


def same_tensors(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """The same names in the same order, each bit for bit."""
    return list(a) == list(b) and all(
        a[k].shape == b[k].shape and np.array_equal(bits(a[k]), bits(b[k])) for k in a)


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


def tensor(key: str, numel: int, offset: int, size: tuple, stride: tuple,
           storage: str = "FloatStorage") -> Raw:
    """``torch._utils._rebuild_tensor_v2`` of storage ``key`` as torch.save writes it."""
    pid = b"(" + pkl("storage") + glob("torch", storage) + pkl(key) + pkl("cpu") \
        + pkl(numel) + b"tQ"
    args = b"(" + pid + pkl(offset) + pkl(size) + pkl(stride) + pkl(False) \
        + glob("collections", "OrderedDict") + b")Rt"
    return Raw(glob("torch._utils", "_rebuild_tensor_v2") + args + b"R")


def write_zip(path: Path, data_pkl: bytes, records: dict[str, bytes] | None = None,
              byteorder: bytes | None = b"little", prefix: str = "archive/") -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(prefix + "data.pkl", data_pkl + b".")
        if byteorder is not None:
            z.writestr(prefix + "byteorder", byteorder)
        for key, raw in (records or {}).items():
            z.writestr(f"{prefix}data/{key}", raw)
    return path


def parameter(t: Raw) -> Raw:
    """``torch._utils._rebuild_parameter(t, True, OrderedDict())``: an ``nn.Parameter``."""
    return Raw(glob("torch._utils", "_rebuild_parameter") + b"(" + t + pkl(True)
               + glob("collections", "OrderedDict") + b")RtR")


def hand_built(path: Path, config: dict, tensors: dict[str, np.ndarray], *,
               edit=None, extra: dict | None = None, parameters: bool = False) -> Path:
    """A checkpoint of ``tensors`` (one storage each, contiguous) with no torch involved;
    ``edit(name, fields)`` may change a tensor's (key, numel, offset, size, stride);
    ``parameters`` saves them as ``nn.Parameter`` s."""
    state, records = {}, {}
    for i, (name, arr) in enumerate(tensors.items()):
        fields = [str(i), arr.size, 0, arr.shape,
                  tuple(s // 4 for s in np.ascontiguousarray(arr).strides)]
        if edit:
            edit(name, fields)
        state[name] = parameter(tensor(*fields)) if parameters else tensor(*fields)
        records[str(i)] = np.ascontiguousarray(arr, "<f4").tobytes()
    top = {"config": config, "state_dict": OrderedDict(state), **(extra or {})}
    return write_zip(path, pkl(top), records)


@pytest.fixture(scope="module")
def tiny() -> ck.Checkpoint:
    return ck.read_checkpoint(TINY)


# --- reading the fixtures -----------------------------------------------------------------


@pytest.mark.parametrize("name", SMALL)
def test_reads_each_checkpoint(name):
    c = ck.read_checkpoint(DATA / f"{name}.ckpt")
    assert list(c.config) == list(ck.CONFIG_DEFAULTS)
    shapes = ck.expected_shapes(c.config)
    assert list(c.tensors) == list(shapes)
    for tensor_name, arr in c.tensors.items():
        assert arr.dtype == np.float32 and arr.flags.c_contiguous and arr.flags.owndata
        assert arr.shape == shapes[tensor_name]
        assert np.isfinite(arr).all() and np.abs(arr).max() > 0, tensor_name
        assert arr.size == 1 or arr.std() > 0, tensor_name
    # the v2 recipe's settings, small
    assert c.config["col_ssmax"] == c.config["icl_ssmax"] == "qassmax-mlp-elementwise"
    assert c.config["col_feature_group"] == "same" and c.config["col_feature_group_size"] == 3
    assert c.config["col_target_aware"] and not c.config["row_rope_interleaved"]
    assert not c.config["zero_init"] and not c.config["col_affine"]
    assert c.config["bias_free_ln"] == (name == "regressor_small")
    assert c.config["max_classes"] == (0 if name == "regressor_small" else 10)
    assert c.path == DATA / f"{name}.ckpt"
    assert c["row_interactor.cls_tokens"] is c.tensors["row_interactor.cls_tokens"]


@pytest.mark.parametrize("name", SMALL)
def test_rope_frequencies_decode_to_their_formula(name):
    """The one tensor whose values are known: 1 / base^(2i/d) over a row head's width."""
    c = ck.read_checkpoint(DATA / f"{name}.ckpt")
    d = c.config["embed_dim"] // c.config["row_nhead"]
    want = 1.0 / c.config["row_rope_base"] ** (np.arange(0, d, 2)[: d // 2] / d)
    np.testing.assert_allclose(c["row_interactor.tf_row.rope.freqs"], want, rtol=1e-6)


def test_trainer_checkpoint_extras_are_not_materialized(monkeypatch):
    """classifier_small is saved as tabicl's trainer saves (optimizer and scheduler states,
    curr_step): only the state dict's storages are read."""
    read = []
    original = zipfile.ZipFile.read
    monkeypatch.setattr(zipfile.ZipFile, "read",
                        lambda self, name, pwd=None: read.append(getattr(name, "filename", name))
                        or original(self, name, pwd))
    c = ck.read_checkpoint(DATA / "classifier_small.ckpt")
    storages = [n for n in read if "/data/" in n]
    assert len(storages) == len(c.tensors)
    with zipfile.ZipFile(DATA / "classifier_small.ckpt") as z:  # + Muon's momentum buffers
        assert sum("/data/" in n for n in z.namelist()) > len(c.tensors) + 100


@pytest.mark.parametrize("name", SMALL)
def test_safetensors_round_trip_is_bit_exact(name, tmp_path):
    c = ck.read_checkpoint(DATA / f"{name}.ckpt")
    out = ck.convert(DATA / f"{name}.ckpt", tmp_path / f"{name}.safetensors")
    back = ck.read_checkpoint(out)
    assert back.config == c.config and list(back.config) == list(c.config)
    assert same_tensors(back.tensors, c.tensors)
    metadata, _ = safetensors.read(out)
    assert set(metadata) == {"format", "version", "config"}
    assert metadata["format"] == "arenalite.tabicl" and metadata["version"] == "1"
    assert json.loads(metadata["config"]) == c.config
    again = ck.write_safetensors(back, tmp_path / "again.safetensors")
    assert again.read_bytes() == out.read_bytes()


def test_non_finite_values_are_kept(tiny, tmp_path):
    tensors = dict(tiny.tensors)
    w = tensors["row_interactor.cls_tokens"].copy()
    w[0, :3] = [np.nan, np.inf, -np.inf]
    tensors["row_interactor.cls_tokens"] = w
    path = hand_built(tmp_path / "nan.ckpt", tiny.config, tensors)
    c = ck.read_checkpoint(path)
    assert same_tensors(c.tensors, tensors)
    back = ck.read_checkpoint(ck.convert(path, tmp_path / "nan.safetensors"))
    assert same_tensors(back.tensors, tensors)


@pytest.mark.parametrize("variant", ["tiny_bf16", "tiny_f64", "tiny_views"])
def test_dtypes_and_strided_views_read_exactly(variant, tiny):
    """tiny's weights are bfloat16 values: bf16 and f64 copies widen to the same float32;
    tiny_views holds them as transposed / strided views at offsets of one shared storage."""
    assert same_tensors(ck.read_checkpoint(DATA / f"{variant}.ckpt").tensors, tiny.tensors)


def test_float16_widens_exactly(tiny):
    f16 = ck.read_checkpoint(DATA / "tiny_f16.ckpt").tensors
    want = {k: v.astype(np.float16).astype(np.float32) for k, v in tiny.tensors.items()}
    assert same_tensors(f16, want)


def test_big_endian_archive(tmp_path, tiny):
    """A byteorder record saying big: every storage byte-swapped reads the same."""
    out = tmp_path / "big.ckpt"
    with zipfile.ZipFile(TINY) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            raw = src.read(info)
            if info.filename.endswith("/byteorder"):
                raw = b"big"
            elif "/data/" in info.filename:
                raw = np.frombuffer(raw, "<f4").astype(">f4").tobytes()
            dst.writestr(info.filename, raw)
    assert same_tensors(ck.read_checkpoint(out).tensors, tiny.tensors)


def test_hand_built_checkpoint_reads_like_torch_s(tmp_path, tiny):
    """The opcode spelling of the tests matches what torch.save writes."""
    path = hand_built(tmp_path / "hand.ckpt", tiny.config, tiny.tensors,
                      extra={"curr_step": 3, "optimizer_state": {"state": {}, "param_groups": [
                          {"lr": 1e-3, "betas": (0.9, 0.95), "params": [0, 1]}]}})
    c = ck.read_checkpoint(path)
    assert c.config == tiny.config and same_tensors(c.tensors, tiny.tensors)
    path = hand_built(tmp_path / "params.ckpt", tiny.config, tiny.tensors, parameters=True)
    assert same_tensors(ck.read_checkpoint(path).tensors, tiny.tensors)


def test_never_unpickles_without_restriction(monkeypatch):
    def forbidden(*_, **__):
        raise AssertionError("unrestricted pickle load")

    monkeypatch.setattr(pickle, "load", forbidden)
    monkeypatch.setattr(pickle, "loads", forbidden)
    assert ck.read_checkpoint(TINY).tensors


# --- expected_shapes ----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["classifier", "regressor"])
def test_expected_shapes_of_the_full_size_v2_models(kind):
    config = json.loads((DATA / f"v2_{kind}_config.json").read_text())
    want = json.loads((DATA / f"v2_{kind}_shapes.json").read_text())
    got = ck.expected_shapes(config)
    assert [(k, list(v)) for k, v in got.items()] == list(want.items())
    params = sum(math.prod(s) for s in got.values())
    assert 27e6 < params < 29e6  # TabICLv2: about 28M parameters


def test_expected_shapes_of_every_architecture_switch():
    """shape_cases.json: torch's state dicts of configs covering ssmax kinds (names and
    bools), feature grouping modes, affine, target awareness, norm placement, bias-free
    LayerNorm, regression, zero-block stacks, odd head widths, the empty config."""
    cases = json.loads((DATA / "shape_cases.json").read_text())
    assert len(cases) > 20
    for case in cases:
        got = ck.expected_shapes(case["config"])
        assert [(k, list(v)) for k, v in got.items()] == list(case["shapes"].items()), \
            case["config"]


def test_expected_shapes_fill_defaults():
    assert ck.expected_shapes({}) == ck.expected_shapes(dict(ck.CONFIG_DEFAULTS))
    assert ck.check_config({"embed_dim": 64}) == {**ck.CONFIG_DEFAULTS, "embed_dim": 64}


@pytest.mark.parametrize(("change", "culprit"), [
    ({"flash": True}, "'flash'"),
    ({"embed_dim": 0}, "'embed_dim'"),
    ({"embed_dim": 12.0}, "'embed_dim'"),
    ({"col_nhead": 5}, "col_nhead=5"),
    ({"icl_nhead": 7}, "icl_nhead=7"),
    ({"embed_dim": 16, "row_nhead": 8}, "width 2"),
    ({"max_classes": -1}, "'max_classes'"),
    ({"max_classes": 0, "num_quantiles": 0}, "'num_quantiles'"),
    ({"col_ssmax": "fancy"}, "'col_ssmax'"),
    ({"col_feature_group": "full"}, "'col_feature_group'"),
    ({"col_feature_group": 1}, "'col_feature_group'"),
    ({"norm_first": 1}, "'norm_first'"),
    ({"activation": "swish"}, "'activation'"),
    ({"dropout": 2}, "'dropout'"),
    ({"row_rope_base": -1}, "'row_rope_base'"),
])
def test_bad_configs_are_named(change, culprit):
    with pytest.raises(ValueError, match="TabICL config") as info:
        ck.expected_shapes({**ck.CONFIG_DEFAULTS, **change})
    assert culprit in str(info.value)
    with pytest.raises(ValueError, match="must be a dict"):
        ck.check_config([("embed_dim", 8)])


# --- random_checkpoint --------------------------------------------------------------------

V2_SMALL = {"embed_dim": 16, "col_num_blocks": 1, "col_nhead": 2, "col_num_inds": 8,
            "row_num_blocks": 1, "row_nhead": 2, "row_num_cls": 2,
            "row_rope_interleaved": False, "icl_num_blocks": 2, "icl_nhead": 2,
            "zero_init": False}
"""TabICLv2's switches (the package's defaults but split-half RoPE), small."""
V2_SMALL_REGRESSOR = {**V2_SMALL, "max_classes": 0, "bias_free_ln": True}
TORCH_FREQS = {  # torch 2.13's RotaryEmbedding(dim=d, theta=base).freqs, as float32 bits
    (16, 100000): [1065353216, 1047712803, 1030116802, 1012562930, 995049016, 977573004,
                   960132947, 942726994],  # TabICLv2 (embed 128, 8 row heads)
    (32, 100000): [1065353216, 1056527311, 1047712803, 1038909398, 1030116802, 1021334738,
                   1012562930, 1003801109, 995049016, 986306396, 977573004, 968848599,
                   960132947, 951425819, 942726994, 934036253],
    (12, 100000): [1065353216, 1041649018, 1018199492, 995049016, 972249685, 948887705],
    (48, 10000): [1065353216, 1060006184, 1055761980, 1050798235, 1046256949, 1041649018,
                  1036831949, 1032554324, 1027481237, 1023510243, 1018199494, 1014004726,
                  1008981770, 1004486377, 999823482, 995049016, 990720361, 985686830,
                  981668463, 976394426, 972249692, 967166816, 962717863, 957999346],
}
"""Where float32 ``powf`` (numpy's too) would miss by an ulp: (12, 1e5) at i = 4, (48, 1e4)."""


def small_cases() -> list[dict]:
    """shape_cases.json's configs below 50k parameters: every architecture switch."""
    cases = json.loads((DATA / "shape_cases.json").read_text())
    return [c["config"] for c in cases
            if sum(math.prod(s) for s in c["shapes"].values()) < 50_000]


def test_random_checkpoint_has_the_expected_tensors():
    configs = [V2_SMALL, V2_SMALL_REGRESSOR, *small_cases()]
    assert len(configs) > 25
    for config in configs:
        c = ck.random_checkpoint(config, seed=3)
        assert c.config == ck.check_config(config) and c.path is None
        shapes = ck.expected_shapes(config)
        assert list(c.tensors) == list(shapes), config
        for name, arr in c.tensors.items():
            assert arr.shape == shapes[name] and arr.dtype == np.float32, name
            assert arr.flags.c_contiguous and np.isfinite(arr).all(), name


def test_random_checkpoint_scales():
    c = ck.random_checkpoint(V2_SMALL)
    for name, arr in c.tensors.items():
        leaf = name.rsplit(".", 1)[-1]
        if name.endswith("rope.freqs"):
            continue
        if leaf in ("ind_vectors", "cls_tokens"):
            assert 0.005 < arr.std() < 0.04, name
        elif arr.ndim == 2 and arr.size >= 64:
            assert abs(arr.std() * math.sqrt(arr.shape[1]) - 1) < 0.35, name
            assert abs(arr.mean()) < 3 / math.sqrt(arr.shape[1]), name
        elif leaf.endswith("bias"):
            assert 0 < np.abs(arr).max() < 0.15, name
        elif arr.ndim == 1:  # LayerNorm weights
            assert (arr == 1).all(), name
    assert (ck.random_checkpoint({**V2_SMALL, "col_ssmax": "ssmax"})[
        "col_embedder.tf_col.blocks.0.multihead_attn1.attn.ssmax_layer.scales"] == 1).all()


def test_random_checkpoint_is_seeded():
    a, b = ck.random_checkpoint(V2_SMALL, 7), ck.random_checkpoint(V2_SMALL, 7)
    assert same_tensors(a.tensors, b.tensors)
    other = ck.random_checkpoint(V2_SMALL, 8)
    w = "icl_predictor.decoder.2.weight"
    assert not np.array_equal(a[w], other[w])


@pytest.mark.parametrize("seed", [-1, 1.5, True, "0"])
def test_random_checkpoint_refuses_a_bad_seed(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        ck.random_checkpoint(V2_SMALL, seed)


def test_random_checkpoint_refuses_a_bad_config():
    with pytest.raises(ValueError, match="unknown config keys"):
        ck.random_checkpoint({"flash": True})


@pytest.mark.parametrize("name", SMALL)
def test_rope_frequencies_are_torch_s_bit_for_bit(name):
    """The fixtures' RoPE frequencies are torch's own (RotaryEmbedding's float32 formula)."""
    c = ck.read_checkpoint(DATA / f"{name}.ckpt")
    want = c["row_interactor.tf_row.rope.freqs"]
    assert np.array_equal(bits(ck.rope_frequencies(c.config)), bits(want))
    assert np.array_equal(bits(ck.random_checkpoint(c.config)["row_interactor.tf_row.rope.freqs"]),
                          bits(want))


@pytest.mark.parametrize(("head", "base"), list(TORCH_FREQS))
def test_rope_frequencies_match_torch_s_table(head, base):
    config = {"embed_dim": head * 2, "row_nhead": 2, "row_rope_base": base}
    got = ck.random_checkpoint({**config, "col_num_blocks": 0, "icl_num_blocks": 0,
                                "row_num_blocks": 0})["row_interactor.tf_row.rope.freqs"]
    assert bits(got).tolist() == TORCH_FREQS[head, base]
    assert bits(ck.rope_frequencies(config)).tolist() == TORCH_FREQS[head, base]


@pytest.mark.parametrize("config", [V2_SMALL, V2_SMALL_REGRESSOR])
def test_random_checkpoint_reads_back_and_predicts(config, tmp_path):
    from arenalite import datasets, models

    made = ck.random_checkpoint(config, seed=1)
    path = ck.write_safetensors(made, tmp_path / "random.safetensors")
    back = ck.read_checkpoint(path)
    assert back.config == made.config and same_tensors(back.tensors, made.tensors)
    regression = config["max_classes" if "max_classes" in config else "embed_dim"] == 0
    data = datasets.load("diabetes" if regression else "iris")
    X, y = np.asarray(data.X), np.asarray(data.y)
    rows = np.random.default_rng(0).permutation(len(y))
    train, test = rows[:60], rows[60:90]
    model = {"name": "tabicl", "weights": str(path), "n_estimators": 2}
    out = models.predict(model, X[train], y[train], X[test], data.task)
    assert np.isfinite(out).all()
    if regression:
        assert out.shape == (30,) and out.std() > 0
        assert y.min() < out.min() and out.max() < y.max()
    else:
        assert out.shape == (30, 3) and (out >= 0).all() and (out <= 1).all()
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=1e-6)
        assert out.max() < 0.99 and out.std(axis=0).min() > 0.01  # not degenerate


# --- refusals -----------------------------------------------------------------------------


@pytest.mark.parametrize("fraction", [0.0001, 0.1, 0.5, 0.9, 0.999])
def test_truncated_checkpoint(tmp_path, fraction):
    data = TINY.read_bytes()
    for cut in {int(len(data) * fraction), len(data) - 1}:
        path = tmp_path / "cut.ckpt"
        path.write_bytes(data[:cut])
        refused(path)


@pytest.mark.parametrize("fraction", [0.0001, 0.1, 0.5, 0.9, 0.999])
def test_truncated_safetensors(tmp_path, fraction):
    full = ck.convert(TINY, tmp_path / "tiny.safetensors").read_bytes()
    path = tmp_path / "cut.safetensors"
    path.write_bytes(full[:max(1, int(len(full) * fraction))])
    refused(path)


def test_corrupt_bytes_fail_the_crc(tmp_path):
    data = bytearray(TINY.read_bytes())
    with zipfile.ZipFile(TINY) as z:
        info = next(i for i in z.infolist() if i.filename.endswith("/data/3"))
    name_length, extra_length = struct.unpack("<HH", data[info.header_offset + 26:
                                                         info.header_offset + 30])
    data[info.header_offset + 30 + name_length + extra_length + 5] ^= 0xFF
    path = tmp_path / "flip.ckpt"
    path.write_bytes(bytes(data))
    refused(path, "corrupt")


@pytest.mark.parametrize(("content", "culprit"), [
    (b"", "neither"), (b"hello, world\n" * 10, "neither"), (b'{"config": {}}', "neither"),
    (b"\x80\x02}q\x00.", "legacy"),  # a bare pickle (torch's format before 1.6)
])
def test_not_a_checkpoint(tmp_path, content, culprit):
    path = tmp_path / "x.ckpt"
    path.write_bytes(content)
    refused(path, culprit)


def test_missing_file_and_directory(tmp_path):
    refused(tmp_path / "nope.ckpt", "does not exist")
    refused(tmp_path, "directory")


def test_zip_without_data_pkl(tmp_path):
    path = tmp_path / "plain.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", "hi")
    refused(path, "data.pkl")


FOREIGN = [
    (glob("os", "system"), "'os.system'"),
    (glob("posix", "system"), "'posix.system'"),
    (glob("__builtin__", "eval"), "'builtins.eval'"),
    (glob("builtins", "exec"), "'builtins.exec'"),
    (glob("subprocess", "Popen"), "'subprocess.Popen'"),
    (glob("torch", "load"), "'torch.load'"),
    (glob("torch._utils", "_rebuild_qtensor"), "'torch._utils._rebuild_qtensor'"),
    (glob("numpy.core.multiarray", "_reconstruct"), "'numpy.core.multiarray._reconstruct'"),
    # protocol 4's STACK_GLOBAL and the old INST opcode go through the same gate
    (Raw(pkl("os") + pkl("system") + b"\x93"), "'os.system'"),
]


@pytest.mark.parametrize(("callable_", "culprit"), FOREIGN)
def test_foreign_class_is_refused_and_never_called(tmp_path, callable_, culprit):
    marker = tmp_path / "ran"
    command = f"touch {marker}"
    payload = Raw(bytes(callable_) + b"(" + pkl(command) + b"tR")
    path = write_zip(tmp_path / "evil.ckpt", pkl({"config": payload, "state_dict": {}}))
    message = refused(path, culprit, "never contains", "refusing to load it")
    assert message.startswith(f"checkpoint {str(path)!r}")
    assert not marker.exists()


def test_inst_opcode_is_refused(tmp_path):
    marker = tmp_path / "ran"
    payload = Raw(b"(" + pkl(f"touch {marker}") + b"ios\nsystem\n")
    path = write_zip(tmp_path / "inst.ckpt", pkl({"config": payload}))
    refused(path, "'os.system'")
    assert not marker.exists()


def test_exact_refusal_message(tmp_path):
    path = write_zip(tmp_path / "x.ckpt", pkl(Raw(bytes(glob("os", "system")))))
    with pytest.raises(ValueError) as info:
        ck.read_checkpoint(path)
    assert str(info.value) == (f"checkpoint {str(path)!r}: data.pkl refers to class "
                               "'os.system', which a TabICL checkpoint never contains; "
                               "refusing to load it")


@pytest.mark.parametrize(("name", "culprits"), [
    ("bad_extra_tensor", ["unexpected tensors", "'icl_predictor.extra.weight'"]),
    ("bad_missing_tensor", ["missing tensors", "'row_interactor.cls_tokens'"]),
    ("bad_shape", ["'icl_predictor.decoder.2.weight'", "[4, 16]", "expected [3, 16]"]),
    ("bad_dtype", ["'row_interactor.cls_tokens'", "LongStorage"]),
    ("bad_config_key", ["unknown config keys", "'use_magic'"]),
    ("bad_no_state_dict", ["'state_dict'"]),
])
def test_bad_torch_checkpoints(name, culprits):
    refused(DATA / f"{name}.ckpt", *culprits)


def test_bad_safetensors(tmp_path, tiny):
    metadata, tensors = safetensors.read(ck.convert(TINY, tmp_path / "t.safetensors"))

    def rewrite(tensors=tensors, **meta):
        path = tmp_path / "bad.safetensors"
        safetensors.write(path, tensors, {**metadata, **meta})
        return path

    refused(rewrite({**tensors, "icl_predictor.extra": np.ones(2)}), "'icl_predictor.extra'")
    refused(rewrite({k: v for k, v in tensors.items() if k != "icl_predictor.ln.bias"}),
            "missing tensors", "'icl_predictor.ln.bias'")
    refused(rewrite({**tensors, "icl_predictor.ln.bias": np.ones(7)}),
            "'icl_predictor.ln.bias'", "[7]", "expected [8]")
    refused(rewrite(format="arenalite-weights"), "'format'")
    refused(rewrite(version="2"), "'version'")
    refused(rewrite(config="{not json"), "'config'", "not JSON")
    refused(rewrite(config=json.dumps({**tiny.config, "shiny": 1})), "'shiny'")
    path = tmp_path / "other.safetensors"
    safetensors.write(path, tensors)  # no metadata: someone else's safetensors
    refused(path, "'format'")


def test_storage_problems(tmp_path, tiny):
    def edit_offset(name, fields):
        if name == "icl_predictor.ln.weight":
            fields[2] = 1  # offset 1 of an 8-element storage, 8 elements wanted
    refused(hand_built(tmp_path / "range.ckpt", tiny.config, tiny.tensors, edit=edit_offset),
            "'icl_predictor.ln.weight'", "reaches element 8", "holds 8")

    def edit_stride(name, fields):
        if name == "row_interactor.cls_tokens":
            fields[4] = (8, 2)
    refused(hand_built(tmp_path / "stride.ckpt", tiny.config, tiny.tensors, edit=edit_stride),
            "'row_interactor.cls_tokens'", "stride [8, 2]")

    def edit_numel(name, fields):
        if name == "icl_predictor.ln.weight":
            fields[1] = 9
    refused(hand_built(tmp_path / "numel.ckpt", tiny.config, tiny.tensors, edit=edit_numel),
            "'icl_predictor.ln.weight'", "holds 32 bytes", "declares 9 elements")

    def edit_shared(name, fields):  # a second claim on storage 0, larger than it is
        if name == "col_embedder.in_linear.bias":
            fields[0], fields[1] = "0", 10**6
    refused(hand_built(tmp_path / "shared.ckpt", tiny.config, tiny.tensors, edit=edit_shared),
            "'col_embedder.in_linear.bias'", "storage '0'", "1000000 elements")

    path = hand_built(tmp_path / "gone.ckpt", tiny.config, tiny.tensors)
    with zipfile.ZipFile(path) as z:
        records = {i.filename: z.read(i) for i in z.infolist()}
    with zipfile.ZipFile(path, "w") as z:
        for filename, raw in records.items():
            if filename != "archive/data/5":
                z.writestr(filename, raw)
    refused(path, "storage '5'", "archive/data/5")


def test_malformed_pickles(tmp_path, tiny):
    cases = [
        (pkl([1, 2]), "list"),
        (pkl({"config": tiny.config}), "'state_dict'"),
        (pkl({"state_dict": {}}), "'config'"),
        (pkl({"config": tiny.config, "state_dict": [1]}), "'state_dict' is a list"),
        (pkl({"config": tiny.config, "state_dict": {"row_interactor.cls_tokens": 3.0}}),
         "'row_interactor.cls_tokens'"),
        (pkl({"config": tiny.config, "state_dict": {
            "a": Raw(bytes(glob("torch._utils", "_rebuild_tensor_v2")) + pkl((1, 0, (2,), (1,)))
                     + b"R")}}), "not a saved storage"),
        (pkl({"x": Raw(b"(" + pkl("storage") + pkl("FloatStorage") + b"tQ")}),
         "persistent id"),
        # BUILD cannot rewrite a tensor record (frozen, slotted) nor reach a class
        (pkl({"config": tiny.config, "state_dict": {"a": Raw(
            tensor("0", 8, 0, (8,), (1,)) + pkl({"offset": 5}) + b"b")}}), "TensorRef record"),
        (pkl({"config": tiny.config, "state_dict": {"a": Raw(
            tensor("0", 8, 0, (8,), (1,)) + pkl((None, {"offset": 5})) + b"b")}}),
         "TensorRef record"),
        (pkl({"x": Raw(bytes(glob("torch", "FloatStorage")) + pkl({"name": "os"}) + b"b")}),
         "StorageType record"),
        (pkl({"config": tiny.config, "state_dict": {"a": parameter(Raw(pkl(3)))}}),
         "parameter wrapping a int"),
        (pkl({"config": tiny.config, "state_dict": {"a": Raw(
            bytes(glob("torch._utils", "_rebuild_tensor_v2")) + b"(" + pkl("x")
            + b"tR")}}), "not a saved storage"),
        (b"\x80\x02}(X\x01\x00\x00", "not a valid pickle"),
        (pkl({"config": tiny.config}) + b"0" * 3, "not a valid pickle"),
    ]
    for i, (data, culprit) in enumerate(cases):
        refused(write_zip(tmp_path / f"m{i}.ckpt", data), culprit)
    refused(write_zip(tmp_path / "order.ckpt", pkl({}), byteorder=b"middle"), "'middle'")


# --- arenalite convert tabicl -------------------------------------------------------------


def test_cli_convert(tmp_path, capsys):
    out = tmp_path / "c.safetensors"
    ckpt = DATA / "classifier_small.ckpt"
    assert main(["convert", "tabicl", str(ckpt), "-o", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    original, back = ck.read_checkpoint(ckpt), ck.read_checkpoint(out)
    assert back.config == original.config and same_tensors(back.tensors, original.tensors)


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


def test_cli_convert_errors(tmp_path, capsys):
    out = str(tmp_path / "o.safetensors")
    line = cli_error(["convert", "tabicl", str(DATA / "bad_shape.ckpt"), "-o", out], capsys)
    assert "bad_shape.ckpt" in line and "'icl_predictor.decoder.2.weight'" in line
    assert not Path(out).exists()
    line = cli_error(["convert", "tabicl", str(tmp_path / "nope.ckpt"), "-o", out], capsys)
    assert "nope.ckpt" in line and "does not exist" in line
    evil = write_zip(tmp_path / "evil.ckpt", pkl(Raw(bytes(glob("os", "system")))))
    assert "'os.system'" in cli_error(["convert", "tabicl", str(evil), "-o", out], capsys)
    line = cli_error(["convert", "tabicl", str(TINY), "-o", str(tmp_path / "no" / "x.st")],
                     capsys)
    assert "does not exist" in line and "--output" in line
    assert "directory" in cli_error(["convert", "tabicl", str(TINY), "-o", str(tmp_path)],
                                    capsys)
    assert "invalid choice" in cli_error(["convert", "knn", str(TINY), "-o", out], capsys)
    assert "--output/-o" in cli_error(["convert", "tabicl", str(TINY)], capsys)


@pytest.mark.needs_processes
def test_cli_convert_entry_point(tmp_path):
    """The real entry point: the file written, or one error line and exit status 2."""
    out = tmp_path / "t.safetensors"
    run = subprocess.run([sys.executable, "-m", "arenalite", "convert", "tabicl", str(TINY),
                          "-o", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(out)
    assert same_tensors(ck.read_checkpoint(out).tensors, ck.read_checkpoint(TINY).tensors)
    bad = DATA / "bad_missing_tensor.ckpt"
    run = subprocess.run([sys.executable, "-m", "arenalite", "convert", "tabicl", str(bad),
                          "-o", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and run.stderr.startswith(
        f"arenalite: error: checkpoint {str(bad)!r}: missing tensors "
        "['row_interactor.cls_tokens']")


@pytest.mark.needs_processes
def test_reading_imports_no_torch():
    code = ("import sys; sys.modules['torch'] = None\n"  # any import of torch now fails
            "from arenalite.models.tabicl import checkpoint as ck\n"
            f"ck.read_checkpoint({str(DATA / 'classifier_small.ckpt')!r})\n"
            f"ck.read_checkpoint({str(TINY)!r})\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
