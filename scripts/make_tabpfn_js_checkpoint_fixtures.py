"""Write tests/data/tabpfn/js/: what webgpu_bridge's TabPFN checkpoint reader
(src/tabpfn/checkpoint.js) is checked against, from arenalite's own reader (numpy, no torch).

- ``checkpoint_reference.json`` ``"good"``: per committed v3 fixture of tests/data/tabpfn/ and
  per converted file here, what :func:`read_checkpoint` returns: the config, the inference
  config and its source, the description, the task, each tensor's name, shape and the
  first 16 hex digits of the SHA-256 of its float32 bytes (state-dict order), the criterion's
  and the borders'.
- ``classifier_small.safetensors``, ``regressor_saved.safetensors``: ``arenalite convert
  tabpfn`` of those fixtures.
- ``bad/``: small hostile or broken files (a tiny random v3 checkpoint, or none of its
  tensors where the file is refused before they are read), and ``"bad"``: each file's name
  and Python's exact message for it (read as ``checkpoint '<name>'``, the path relative).
- ``"truncated"``: the committed fixtures cut at fixed byte counts, and Python's message for
  each (the JS test cuts the same bytes itself; nothing more is committed).

Run: ``.venv-pins/bin/python scripts/make_tabpfn_js_checkpoint_fixtures.py`` (its pytest helpers
spell pickles in opcodes; nothing is ever unpickled unrestricted).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import test_tabpfn_checkpoint as T  # noqa: E402
from arenalite.models import safetensors  # noqa: E402
from arenalite.models.tabpfn import checkpoint as ck  # noqa: E402

DATA = ROOT / "tests" / "data" / "tabpfn"
OUT = DATA / "js"
BAD = OUT / "bad"
GOOD = ["classifier_small.ckpt", "classifier_small_package.safetensors", "regressor_small.ckpt",
        "regressor_saved.ckpt", "classifier_wide.ckpt"]
CONVERTED = ["classifier_small", "regressor_saved"]
TINY = {"max_num_classes": 3, "embed_dim": 4, "dist_embed_num_blocks": 1,
        "dist_embed_num_heads": 2, "dist_embed_num_inducing_points": 1, "feature_group_size": 2,
        "feat_agg_num_blocks": 1, "feat_agg_num_heads": 2, "feat_agg_num_cls_tokens": 1,
        "ff_factor": 1, "nlayers": 1, "icl_num_heads": 2, "decoder_head_dim": 2,
        "decoder_num_heads": 1, "softmax_scaling_mlp_hidden_dim": 2}
TINY_REGRESSOR = {**TINY, "max_num_classes": -1, "num_buckets": 6}
CUTS = [1, 9, 100, 1000, 20000, 100000, -1]


def digest(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr, "<f4").tobytes()).hexdigest()[:16]


def jsonable(value: object) -> object:
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def summary(c: ck.Checkpoint) -> dict:
    return {"config": c.config, "inference_config": jsonable(c.inference_config),
            "inference_config_source": c.inference_config_source,
            "description": c.description, "task": c.task,
            "tensors": [[n, list(a.shape), digest(a)] for n, a in c.tensors.items()],
            "criterion": [[n, list(a.shape), digest(a)] for n, a in c.criterion.items()],
            "borders": None if c.borders is None else digest(c.borders)}


def message(name: str) -> str:
    """read_checkpoint's message for ``name`` (relative to the current folder)."""
    try:
        ck.read_checkpoint(name)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"{name} was read")


def bad_files() -> dict[str, object]:
    """name → writer(path) of each bad file."""
    tiny = ck.random_checkpoint(TINY, seed=1)
    tiny_r = ck.random_checkpoint(TINY_REGRESSOR, seed=2)
    top = T.top_of(tiny)
    top_r = {**T.top_of(tiny_r), "inference_config": T.DROP}
    top_r = {k: v for k, v in top_r.items() if v is not T.DROP}
    state = T.state_of(tiny)
    rstate = {**T.state_of(tiny_r), "criterion.borders": tiny_r.tensors["regression_borders"],
              "criterion.losses_per_bucket": np.ones(6, np.float32)}
    built = {}

    def hand(name, top_, state_=None):
        built[name] = lambda p: T.hand_built(p, top_, state if state_ is None else state_)

    def bare(name, top_):  # refused before tensors: no storages
        built[name] = lambda p: T.write_zip(p, T.pkl({**top_, "state_dict": {}}))

    def raw(name, data, records=None):
        built[name] = lambda p: T.write_zip(p, data, records)

    drop = T.DROP
    hand("tiny.ckpt", top)
    hand("tiny_regressor.ckpt", top_r, rstate)
    for i, (changes, _) in enumerate([
            ({"architecture_name": drop}, 0),
            ({"architecture_name": drop, "config": {"emsize": 192, "nhead": 6, "nlayers": 12}}, 0),
            ({"architecture_name": "tabpfn_v2"}, 0), ({"architecture_name": "tabpfn_v4"}, 0),
            ({"architecture_name": 3}, 0), ({"architecture_name": "base"}, 0),
            ({"architecture_name": drop, "config": 7}, 0)]):
        bare(f"arch_{i}.ckpt", {k: v for k, v in T.top_of(tiny, **changes).items()})
    for i, changes in enumerate([
            {"name": "TabPFN-v3.5"}, {"name": "TabPFN-v2.6"},
            {"fourier_encoding_num_frequencies": 32}, {"emsize": 192, "nhead": 6},
            {"emsize": 192, "encoder_type": "mlp"}, {"use_magic": True, "zeta": 1},
            {"embed_dim": 0}, {"embed_dim": 2.5}, {"embed_dim": 4.0, "nlayers": -1},
            {"max_num_classes": "3"}, {"icl_num_kv_heads": 0}, {"dist_embed_num_heads": 3},
            {"feat_agg_num_heads": 3}, {"icl_num_heads": 3},
            {"embed_dim": 6, "feat_agg_num_heads": 2, "dist_embed_num_heads": 2},
            {"icl_num_kv_heads": 3}, {"icl_num_kv_heads_test": 3},
            {"icl_num_kv_heads": 1, "icl_num_kv_heads_test": 2}, {"max_num_classes": 1},
            {"feat_agg_rope_base": 0.5}, {"dropout": 2}, {"dropout": True},
            {"use_rope": 1}, {"name": 5}, {"feat_agg_rope_base": "big"}]):
        bare(f"config_{i}.ckpt", T.top_of(tiny, config={**tiny.config, **changes}))
    bare("config_list.ckpt", T.top_of(tiny, config=[["embed_dim", 8]]))
    for i, (callable_, _) in enumerate(T.FOREIGN):
        payload = T.Raw(bytes(callable_) + b"(" + T.pkl("touch /tmp/never") + b"tR")
        raw(f"evil_{i}.ckpt", T.pkl({"config": {"max_num_classes": 10},
                                     "architecture_name": "tabpfn_v3", "state_dict": {},
                                     "inference_config": payload}))
    raw("evil_inst.ckpt", T.pkl({"config": T.Raw(b"(" + T.pkl("touch /tmp/never")
                                                   + b"ios\nsystem\n")}))
    hand("extra.ckpt", top, {**state, "icl_blocks.0.extra.weight": np.ones(2)})
    hand("criterion_extra.ckpt", top, {**state, "criterion.temperature": np.ones(1)})
    hand("missing.ckpt", top, {k: v for k, v in state.items() if k != "output_norm.weight"})
    hand("shape.ckpt", top, {**state, "many_class_decoder.q_projection.bias": np.ones(7)})
    hand("borders_classifier.ckpt", top, {**state, "regression_borders": np.ones(3)})
    hand("criterion_classifier.ckpt", top, {**state, "criterion.borders": np.ones((2, 2))})
    hand("criterion_borders.ckpt", top_r, {**rstate, "criterion.borders": np.arange(10.0)})
    hand("criterion_losses.ckpt", top_r, {**rstate, "criterion.losses_per_bucket": np.ones(7)})
    for i, inference in enumerate([
            {"PREPROCESS_TRANSFORMS": [], "FLASH": 1}, {"SOFTMAX_TEMPERATURE": 0.9},
            {"PREPROCESS_TRANSFORMS": [{"name": "none", "bogus": 1}]},
            {"PREPROCESS_TRANSFORMS": [{"categorical_name": "none"}]},
            {"PREPROCESS_TRANSFORMS": "none"}, [1], {"PREPROCESS_TRANSFORMS": [3]}]):
        hand(f"inference_{i}.ckpt", T.top_of(tiny, inference_config=inference))

    def dtype(p):
        refs = {k: T.tensor(str(i), v.size, v.shape, tuple(s // 4 for s in v.strides))
                for i, (k, v) in enumerate(tiny.tensors.items())}
        name = "x_embed.bias"
        i = list(tiny.tensors).index(name)
        records = {str(j): v.tobytes() for j, v in enumerate(tiny.tensors.values())}
        records[str(i)] = np.zeros(4, "<i8").tobytes()
        refs[name] = T.Raw(bytes(refs[name]).replace(b"FloatStorage", b"LongStorage"))
        return T.write_zip(p, T.pkl({**top, "state_dict": OrderedDict(refs)}), records)

    built["dtype.ckpt"] = dtype
    for i, data in enumerate([
            T.pkl([1, 2]), T.pkl({"config": tiny.config}), T.pkl({"state_dict": {}}),
            T.pkl({"config": tiny.config, "architecture_name": "tabpfn_v3", "state_dict": [1]}),
            T.pkl({"config": 3, "architecture_name": "tabpfn_v3", "state_dict": {}})]):
        raw(f"structure_{i}.ckpt", data)

    def text(p):
        p.write_bytes(b"hello, world\n" * 10)

    def legacy(p):
        p.write_bytes(b"\x80\x02}q\x00." + b"\x00" * 8)

    built["text.ckpt"] = text
    built["legacy.ckpt"] = legacy
    metadata = {"format": json.dumps(ck.FORMAT), "version": json.dumps(ck.VERSION),
                "architecture_name": json.dumps("tabpfn_v3"), "config": json.dumps(tiny.config)}
    tensors = dict(tiny.tensors)

    def st(name, tensors_=tensors, **meta):
        built[name] = lambda p: safetensors.write(p, tensors_, {**metadata, **meta},
                                                  finite=False)

    st("st_good.safetensors")
    st("st_extra.safetensors", {**tensors, "icl_blocks.0.extra": np.ones(2)})
    st("st_missing.safetensors", {k: v for k, v in tensors.items() if k != "output_norm.weight"})
    st("st_format.safetensors", format=json.dumps("arenalite.tabicl"))
    st("st_version.safetensors", version=json.dumps("2"))
    st("st_version_int.safetensors", version="2")
    st("st_config_json.safetensors", config="{not json")
    st("st_config_key.safetensors", config=json.dumps({**tiny.config, "shiny": 1}))
    st("st_config_float.safetensors", config=json.dumps({**tiny.config, "embed_dim": 8.5}))
    st("st_arch.safetensors", architecture_name=json.dumps("tabpfn_v2_6"))
    st("st_inference.safetensors", inference_config=json.dumps({"PREPROCESS_TRANSFORMS": "x"}))
    built["st_no_config.safetensors"] = lambda p: safetensors.write(p, tensors)

    def st_edit(name, edit):
        def write(p):
            safetensors.write(p, tensors, metadata, finite=False)
            data = bytearray(p.read_bytes())
            n = int.from_bytes(data[:8], "little")
            header = json.loads(data[8:8 + n])
            edit(header)
            text_ = json.dumps(header).encode()
            text_ += b" " * (-len(text_) % 8)
            p.write_bytes(len(text_).to_bytes(8, "little") + text_ + bytes(data[8 + n:]))
        built[name] = write

    first = sorted(tensors)[0]
    second = sorted(tensors)[1]
    st_edit("st_dtype.safetensors", lambda h: h[first].update(dtype="I64"))
    st_edit("st_shape.safetensors", lambda h: h[first].update(shape=[1, 2, 3]))
    st_edit("st_overlap.safetensors",
            lambda h: h[second].update(data_offsets=h[first]["data_offsets"]))
    st_edit("st_keys.safetensors", lambda h: h[first].pop("dtype"))
    st_edit("st_beyond.safetensors", lambda h: h[first].update(
        data_offsets=[10**6, 10**6 + h[first]["data_offsets"][1] - h[first]["data_offsets"][0]]))
    return built


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    BAD.mkdir(parents=True)
    good = {}
    for name in GOOD:
        good[name] = summary(ck.read_checkpoint(DATA / name))
    cwd = Path.cwd()
    try:
        os.chdir(OUT)
        for stem in CONVERTED:
            out = f"{stem}.safetensors"
            ck.convert(DATA / f"{stem}.ckpt", out)
            good[out] = summary(ck.read_checkpoint(Path(out)))
        os.chdir(BAD)
        bad = {}
        for name, write in bad_files().items():
            write(Path(name))
            try:
                bad[name] = {"read": summary(ck.read_checkpoint(name))}
            except ValueError as exc:
                bad[name] = {"message": str(exc)}
        truncated = []
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            for name in ("classifier_small.ckpt", "classifier_small_package.safetensors",
                         "regressor_saved.ckpt"):
                data = (DATA / name).read_bytes()
                for cut in CUTS:
                    end = len(data) + cut if cut < 0 else cut
                    path = f"cut_{end}_{name}"
                    Path(path).write_bytes(data[:end])
                    truncated.append({"file": name, "bytes": end, "name": path,
                                      "message": message(path)})
    finally:
        os.chdir(cwd)
    reference = {"good": good, "bad": bad, "truncated": truncated}
    (OUT / "checkpoint_reference.json").write_text(json.dumps(reference, indent=1) + "\n")
    size = sum(p.stat().st_size for p in OUT.rglob("*") if p.is_file())
    print(f"wrote {OUT} ({size // 1024} KB, {len(bad)} bad files, {len(truncated)} cuts)")


if __name__ == "__main__":
    main()
