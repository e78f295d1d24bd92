"""Google TabFM's member forward on the WebGPU bridge under dawn.node (SwiftShader) against
arenalite's numpy forward (issue 44, item 2's model stages): ``TabFMMember``
(webgpu_bridge/src/tabfm/model.js) run by webgpu_bridge/test/tabfm_gpu_member_run.mjs on
the committed stage fixtures' inputs and on random checkpoints (``random_checkpoint``: every
switch of the architecture, padded columns, categorical columns, NaN cells, ICL heads past
64 floats), its outputs compared here with :func:`arenalite.models.tabfm.forward` (and the
fixtures' stored output) within 1e-4; forced small buffer limits give the same output. The
per-stage checks are webgpu_bridge/test/tabfm_gpu.test.js's; Chromium's,
test_tabfm_chromium.py. Tiny shapes only: SwiftShader is slow (v1.0.0's widths with one
block per stage only with ARENALITE_TABFM_FULL_WIDTH=1).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabfm import TabFMModel, forward, load, random_checkpoint, save_pretrained
from arenalite.models.tabfm.checkpoint import V1_0_0
from node_harness import BRIDGE, SWIFTSHADER_ICD, require_node, require_swiftshader

DATA = Path(__file__).parent / "data" / "tabfm"
INDEX = json.loads((DATA / "stages.json").read_text())
TOL = 1e-4
pytestmark = [pytest.mark.needs_processes, pytest.mark.slow]

BASE = {"embed_dim": 16, "max_classes": 4, "col_num_blocks": 1, "col_nhead": 2, "col_num_inds": 5,
        "row_num_blocks": 1, "row_nhead": 2, "row_num_cls": 2, "icl_num_blocks": 2,
        "icl_nhead": 2, "ff_factor": 2, "feature_group_size": 3, "num_freq": 6,
        "decoder_hidden": None, "is_classifier": True}
RANDOM = {
    "ten_classes_padded": ({**BASE, "max_classes": 10, "col_num_blocks": 2, "num_freq": 4},
                           dict(n=40, m=9, h=12, d=10, classes=10, batch=4, seed=21, cat=[1, 9])),
    "odd_heads_regression": ({**BASE, "is_classifier": False, "embed_dim": 12, "col_nhead": 3,
                              "row_nhead": 3, "icl_nhead": 5, "row_num_cls": 5, "ff_factor": 1,
                              "col_num_inds": 1},
                             dict(n=26, m=7, h=4, d=4, classes=0, batch=7, seed=22, cat=[0])),
    "no_blocks": ({**BASE, "col_num_blocks": 0, "row_num_blocks": 0, "icl_num_blocks": 0},
                  dict(n=15, m=4, h=3, d=2, classes=3, batch=2, seed=23, cat=[])),
    "icl_head_128": ({**BASE, "embed_dim": 32, "row_num_cls": 4, "icl_nhead": 1,
                      "feature_group_size": 1},
                     dict(n=20, m=5, h=3, d=3, classes=2, batch=5, seed=24, cat=[2])),
}
if os.environ.get("ARENALITE_TABFM_FULL_WIDTH") == "1":
    # v1.0.0's widths (embed 256, 256 inducing points, head dims 64 / 32 / 256, ICL width
    # 2048, ff factor 4) with one block per stage: 82 M weights, about 90 s on SwiftShader
    RANDOM["v1_widths"] = ({**V1_0_0, "col_num_blocks": 1, "row_num_blocks": 1,
                            "icl_num_blocks": 1},
                           dict(n=24, m=6, h=5, d=5, classes=10, batch=6, seed=31, cat=[3]))


def run_members(cases: list[dict], tmp: Path) -> dict:
    """The Node runner script on ``cases``; its report."""
    out = tmp / "report.json"
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = {**os.environ, "VK_ICD_FILENAMES": str(SWIFTSHADER_ICD),
           "LD_LIBRARY_PATH": ":".join(filter(None, ["/usr/lib/chromium",
                                                     os.environ.get("LD_LIBRARY_PATH")]))}
    run = subprocess.run([require_node(), "test/tabfm_gpu_member_run.mjs",
                          str(tmp / "cases.json"), str(out)], cwd=BRIDGE, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    return json.loads(out.read_text())


def folder_of(spec: dict) -> Path:
    return DATA / ("small/" + spec["task"] if spec["checkpoint"] == "small"
                   else spec["checkpoint"])


def random_inputs(c: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(c["seed"])
    x_train = rng.normal(size=(c["n"], c["h"])).astype(np.float32)
    x_test = rng.normal(size=(c["m"], c["h"])).astype(np.float32)
    for x in (x_train, x_test):
        x[rng.random(x.shape) < 0.1] = np.nan
    cat = np.zeros(c["h"], bool)
    cat[c["cat"]] = True
    for j in c["cat"]:
        x_train[:, j] = rng.integers(0, 5, c["n"])
        x_test[:, j] = rng.integers(0, 5, c["m"])
    if c["classes"]:
        y = np.concatenate([np.arange(c["classes"]),
                            rng.integers(0, c["classes"], c["n"] - c["classes"])])
    else:
        y = rng.normal(size=c["n"]) * 3
    return x_train, y.astype(np.float64), x_test, cat


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """Every case through the GPU once; with each case's numpy reference (and the
    fixture's stored output)."""
    require_swiftshader()
    tmp = tmp_path_factory.mktemp("tabfm-webgpu")
    cases, refs = [], {}
    for name, spec in INDEX.items():
        z = np.load(DATA / f"stages_{name}.npz")
        n = spec["context"]
        x_train, x_test, y, cat, d = z["x"][:n], z["x"][n:], z["y"], z["cat_mask"], int(z["d"])
        np.savez(tmp / f"{name}.npz", x_train=x_train, y_train=y.astype(np.float64),
                 x_test=x_test, cat_mask=cat)
        out, _ = forward(load(folder_of(spec)), x_train, y, x_test, d=d, cat_mask=cat)
        refs[name] = (out, z["output"][n:])
        cases.append({"name": name, "folder": str(folder_of(spec)), "npz": str(tmp / f"{name}.npz"),
                      "d": d, "batch": 5})
    for name, (config, c) in RANDOM.items():
        checkpoint = random_checkpoint(config, seed=c["seed"])
        save_pretrained(checkpoint, tmp / name)
        x_train, y, x_test, cat = random_inputs(c)
        np.savez(tmp / f"{name}.npz", x_train=x_train, y_train=y, x_test=x_test, cat_mask=cat)
        out, _ = forward(TabFMModel(checkpoint.config, checkpoint.tensors), x_train, y, x_test,
                         d=c["d"], cat_mask=cat)
        refs[name] = (out, None)
        cases.append({"name": name, "folder": str(tmp / name), "npz": str(tmp / f"{name}.npz"),
                      "d": c["d"], "batch": c["batch"]})
    small = {"maxStorageBufferBindingSize": 14000, "maxBufferSize": 1 << 20}
    cases.append({**cases[[c["name"] for c in cases].index("wide")], "name": "wide_small_limits",
                  "limits": small})
    refs["wide_small_limits"] = refs["wide"]
    return run_members(cases, tmp), refs


@pytest.mark.parametrize("name", [*INDEX, *RANDOM])
def test_member_forward_matches_numpy(report, name):
    got, refs = report
    assert got["adapter"]["architecture"] == "swiftshader"
    run = got["cases"][name]
    ours, package = refs[name]
    gpu = np.asarray(run["output"], np.float64).reshape(ours.shape)
    worst = float(np.abs(gpu - ours).max())
    vs_fixture = float(np.abs(gpu - package).max()) if package is not None else None
    print(f"{name}: max |dawn.node - numpy| {worst:.2g}"
          + (f", vs the fixture's output {vs_fixture:.2g}" if vs_fixture is not None else "")
          + f"; dispatches {run['dispatches']['context']} context, "
          f"{run['dispatches']['total']} all")
    assert worst < TOL
    assert vs_fixture is None or vs_fixture < TOL
    t = run["timings"]
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])


def test_small_limits_give_the_unchunked_output(report):
    got, _ = report
    small, full = got["cases"]["wide_small_limits"], got["cases"]["wide"]
    print(f"small limits: plan {small['plan']} (unchunked {full['plan']}); dispatches "
          f"{small['dispatches']['total']} (unchunked {full['dispatches']['total']})")
    assert small["plan"]["columns"] < full["plan"]["columns"]
    assert small["plan"]["tokenRows"] < full["plan"]["tokenRows"]
    assert np.array_equal(np.asarray(small["output"]), np.asarray(full["output"]))
