"""TabPFN v3's member forward on the WebGPU bridge under dawn.node (SwiftShader) against
arenalite's numpy forward (issue 44, item 1's model stages): ``TabPFNMember`` (webgpu_bridge/
src/tabpfn/model.js) run by webgpu_bridge/test/tabpfn_gpu_member_run.mjs on the committed
forward fixtures' inputs and on random configs (``random_checkpoint``), its logits compared
here with :func:`arenalite.models.tabpfn.forward` (and the package's own, stored in the
fixtures) within 1e-4; forced small buffer limits give the same output. The per-stage
checks are webgpu_bridge/test/tabpfn_gpu.test.js's; Chromium's, test_tabpfn_chromium.py.
Tiny shapes only: SwiftShader is slow.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabpfn import forward, load
from arenalite.models.tabpfn.checkpoint import random_checkpoint, write_safetensors
from node_harness import BRIDGE, SWIFTSHADER_ICD, require_node, require_swiftshader

DATA = Path(__file__).parent / "data" / "tabpfn"
INDEX = json.loads((DATA / "forward.json").read_text())
TOL = 1e-4
pytestmark = [pytest.mark.needs_processes, pytest.mark.slow]

SMALL = {"embed_dim": 16, "dist_embed_num_blocks": 1, "dist_embed_num_heads": 2,
         "dist_embed_num_inducing_points": 6, "feat_agg_num_blocks": 2, "feat_agg_num_heads": 2,
         "feat_agg_num_cls_tokens": 2, "nlayers": 2, "icl_num_heads": 4, "decoder_head_dim": 4,
         "decoder_num_heads": 2, "softmax_scaling_mlp_hidden_dim": 8}
RANDOM = {
    "kv_heads_slices": ({**SMALL, "max_num_classes": 9, "icl_num_kv_heads": 2,
                         "icl_num_kv_heads_test": 1, "decoder_use_softmax_scaling": True},
                        dict(n=33, m=9, f=5, classes=9, batch=4, seed=11)),
    "regression_no_rope": ({**SMALL, "num_buckets": 16, "use_rope": False,
                            "feature_group_size": 2}, dict(n=27, m=6, f=8, classes=0, batch=6,
                                                           seed=12)),
}


def run_members(cases: list[dict], tmp: Path) -> dict:
    """The Node runner script on ``cases``; its report by case name."""
    out = tmp / "report.json"
    (tmp / "cases.json").write_text(json.dumps(cases))
    env = {**os.environ, "VK_ICD_FILENAMES": str(SWIFTSHADER_ICD),
           "LD_LIBRARY_PATH": ":".join(filter(None, ["/usr/lib/chromium",
                                                     os.environ.get("LD_LIBRARY_PATH")]))}
    run = subprocess.run([require_node(), "test/tabpfn_gpu_member_run.mjs",
                          str(tmp / "cases.json"), str(out)], cwd=BRIDGE, env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr
    return json.loads(out.read_text())


def nan_cells(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cells = rng.random(x.shape)
    x = x.copy()
    x[cells < 0.1] = np.nan
    x[(cells >= 0.1) & (cells < 0.13)] = np.inf
    x[(cells >= 0.13) & (cells < 0.16)] = -np.inf
    return x


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """Every case through the GPU once; with each case's numpy reference."""
    require_swiftshader()
    tmp = tmp_path_factory.mktemp("tabpfn-webgpu")
    cases, refs = [], {}
    for name, spec in INDEX.items():
        z = np.load(DATA / f"forward_{name}.npz")
        n = spec["context_rows"]
        x_train, x_test, y = z["x"][:n], z["x"][n:], z["y_train"]
        np.savez(tmp / f"{name}.npz", x_train=x_train, y_train=y.astype(np.float32),
                 x_test=x_test)
        weights = DATA / spec["checkpoint"]
        refs[name] = (forward(load(weights), x_train, y, x_test), z["logits"])
        cases.append({"name": name, "weights": str(weights), "npz": str(tmp / f"{name}.npz"),
                      "batchRows": 5})
    for name, (config, s) in RANDOM.items():
        weights = write_safetensors(random_checkpoint(config, seed=s["seed"]),
                                    tmp / f"{name}.safetensors")
        rng = np.random.default_rng(s["seed"])
        x_train = nan_cells(rng.normal(size=(s["n"], s["f"])).astype(np.float32), rng)
        x_test = nan_cells(rng.normal(size=(s["m"], s["f"])).astype(np.float32), rng)
        y = (rng.integers(0, s["classes"], s["n"]) if s["classes"]
             else rng.normal(size=s["n"])).astype(np.float32)
        np.savez(tmp / f"{name}.npz", x_train=x_train, y_train=y, x_test=x_test)
        refs[name] = (forward(load(weights), x_train, y, x_test), None)
        cases.append({"name": name, "weights": str(weights), "npz": str(tmp / f"{name}.npz"),
                      "batchRows": s["batch"]})
    # the first random case again under a 6000-byte binding limit: every stage chunked
    base = next(c for c in cases if c["name"] == "kv_heads_slices")
    cases.append({**base, "name": "small_limits",
                  "limits": {"maxStorageBufferBindingSize": 6000}})
    refs["small_limits"] = refs["kv_heads_slices"]
    return run_members(cases, tmp), refs


def logits(run: dict) -> np.ndarray:
    out = np.asarray(run["output"], np.float64)
    return out.reshape(-1, run["width"])


@pytest.mark.parametrize("name", [*INDEX, *RANDOM, "small_limits"])
def test_member_logits_match_numpy_on_dawn_node(report: tuple[dict, dict], name: str) -> None:
    runs, refs = report
    run = runs[name]
    assert run["adapter"]["architecture"] == "swiftshader"
    ours, package = refs[name]
    got = logits(run)
    assert got.shape == ours.shape
    diff = float(np.abs(got - ours).max())
    print(f"{name}: max |dawn.node - numpy| {diff:.2g}; dispatches fitContext "
          f"{run['dispatches']['fitContext']}, queries {run['dispatches']['query']}; "
          f"plan {run['plan']['columns']} columns a chunk, row blocks of {run['plan']['rows']}")
    assert diff < TOL
    if package is not None:
        assert float(np.abs(got - package).max()) < TOL
    t = run["timings"]
    assert len(t["layers"]) == len(run["layerNames"])
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])


def test_small_limits_chunk_every_stage(report: tuple[dict, dict]) -> None:
    runs, _ = report
    plan, full = runs["small_limits"]["plan"], runs["kv_heads_slices"]["plan"]
    assert plan["limit"] == {"bytes": 6000, "name": "maxStorageBufferBindingSize"}
    assert plan["columns"] < 5 and plan["rows"] < 33 and plan["queryRows"] < 9, plan
    assert full["columns"] == 5 and full["queryRows"] >= 9, full
    assert np.array_equal(logits(runs["small_limits"]), logits(runs["kv_heads_slices"]))
