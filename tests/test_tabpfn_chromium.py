"""TabPFN v3's member forward on WebGPU in Chromium (SwiftShader) against numpy.

The same checks as webgpu_bridge/test/tabpfn_gpu.test.js (dawn.node), in the browser:
every committed forward fixture (tests/data/tabpfn/forward_<case>.npz, index forward.json)
through ONE member's raw forward (``TabPFNMember``'s fitContext + queryBatches, the
checkpoint's ``.ckpt`` read in the page) against the package's stages (column, row, ICL)
and logits; random configs (``random_checkpoint``, written as safetensors) against
arenalite's numpy forward; and forced small buffer limits (every stage chunked, weights
sliced) giving the unchunked output. The page fetches the files from ``/tabpfn-data/`` (a
route of this page onto tests/data/tabpfn/ and the test's temporary folder). Tolerance 1e-4
on every stage.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabpfn import forward, load
from arenalite.models.tabpfn.checkpoint import random_checkpoint, write_safetensors
from browser_harness import bridge_page

DATA = Path(__file__).resolve().parent / "data" / "tabpfn"
INDEX = json.loads((DATA / "forward.json").read_text())
TOL = 1e-4
pytestmark = pytest.mark.browser

SMALL = {"embed_dim": 16, "dist_embed_num_blocks": 1, "dist_embed_num_heads": 2,
         "dist_embed_num_inducing_points": 6, "feat_agg_num_blocks": 2, "feat_agg_num_heads": 2,
         "feat_agg_num_cls_tokens": 2, "nlayers": 2, "icl_num_heads": 4, "decoder_head_dim": 4,
         "decoder_num_heads": 2, "softmax_scaling_mlp_hidden_dim": 8}
RANDOM = {
    "kv_heads_slices": ({**SMALL, "max_num_classes": 9, "icl_num_kv_heads": 2,
                         "icl_num_kv_heads_test": 1, "decoder_use_softmax_scaling": True},
                        dict(n=33, m=9, f=5, classes=9, batch=4, seed=21)),
    "regression_groups_of_four": ({**SMALL, "num_buckets": 12, "feature_group_size": 4,
                                   "layernorm_elementwise_affine": False},
                                  dict(n=26, m=7, f=11, classes=0, batch=3, seed=22)),
}


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="arenalite-tabpfn-") as tmp:
        yield Path(tmp)


@pytest.fixture(scope="module")
def page(folder: Path):
    def serve(page, base_url: str) -> None:
        def fulfil(route) -> None:
            name = route.request.url.split("/tabpfn-data/", 1)[1]
            path = next((d / name for d in (DATA, folder) if (d / name).is_file()), None)
            if "/" in name or path is None:
                route.fulfill(status=404, body="")
            else:
                route.fulfill(status=200, body=path.read_bytes(),
                              headers={"Content-Type": "application/octet-stream"})

        page.route(f"{base_url}/tabpfn-data/**", fulfil)

    with bridge_page(serve) as page:
        yield page


MEMBER_JS = """async ({weights, xTrain, yTrain, xTest, batchRows, limits, fresh}) => {
  const { TabPFNMember } = await import("/bridge/tabpfn/model.js");
  const { loadTabpfnWeights } = await import("/bridge/tabpfn/checkpoint.js");
  const { Engine } = await import("/bridge/engine.js");
  // fresh: an engine of its own (zero-filled buffers, nothing left by another run)
  const engine = fresh ? new Engine(window.bridge.device) : window.bridge.engine;
  const f32 = (a) => Float32Array.from(a, (v) => (v === null ? NaN : v));
  const member = await TabPFNMember.create(engine, await loadTabpfnWeights(weights), { limits });
  const timer = member.timer();
  const context = await member.fitContext(f32(xTrain), f32(yTrain), { timer, capture: true });
  const { output, captured } = await member.queryBatches(context, f32(xTest),
                                                         { batchRows, timer, capture: true });
  const timings = await timer.finish();
  const cat = (k) => [context.captured[k], ...captured[k]].flatMap((p) => Array.from(p));
  return { output: Array.from(output), column: cat("column"), row: cat("row"), icl: cat("icl"),
           timings, plan: context.plan, layerNames: member.layerNames(),
           sliced: [...member.ops.parts.values()].filter((p) => p.length > 1).length,
           adapter: window.bridge.adapterInfo, fresh: engine !== window.bridge.engine };
}"""


def cells(x: np.ndarray) -> list:
    """Cells for JSON: ±inf as ±1e39 (float32 rounds them back to ±inf), NaN as null."""
    x = np.asarray(x, np.float64)
    x = np.where(np.isposinf(x), 1e39, np.where(np.isneginf(x), -1e39, x))
    return [None if np.isnan(v) else float(v) for v in x.ravel()]


def run_member(page, weights: str, x_train, y_train, x_test, batch: int, limits=None) -> dict:
    """One member's forward; a run with ``limits`` on a fresh engine."""
    return page.evaluate(MEMBER_JS, {"weights": weights, "xTrain": cells(x_train),
                                     "yTrain": np.asarray(y_train, float).tolist(),
                                     "xTest": cells(x_test), "batchRows": batch,
                                     "limits": limits or {}, "fresh": limits is not None})


def max_diff(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64).ravel()
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got - want).max())


@pytest.mark.parametrize("case", list(INDEX))
def test_member_forward_matches_the_forward_fixture_in_chromium(page, case):
    spec = INDEX[case]
    z = np.load(DATA / f"forward_{case}.npz")
    x, n = z["x"], spec["context_rows"]
    run = run_member(page, "/tabpfn-data/" + spec["checkpoint"], x[:n], z["y_train"], x[n:], 5)
    assert run["adapter"]["architecture"] == "swiftshader"
    diffs = {stage: max_diff(run[stage], z[stage]) for stage in ("column", "row", "icl")}
    diffs["logits"] = max_diff(run["output"], z["logits"])
    shown = ", ".join(f"{k} {v:.2g}" for k, v in diffs.items())
    print(f"{case}: max |Chromium - package| {shown}")
    assert all(v < TOL for v in diffs.values()), f"{case}: {diffs}"
    t = run["timings"]
    assert t["batches"] == -(-spec["query_rows"] // 5)
    assert len(t["layers"]) == len(run["layerNames"])
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])


def random_case(folder: Path, name: str):
    config, s = RANDOM[name]
    write_safetensors(random_checkpoint(config, seed=s["seed"]), folder / f"{name}.safetensors")
    rng = np.random.default_rng(s["seed"])
    x_train = rng.normal(size=(s["n"], s["f"])).astype(np.float32)
    x_test = rng.normal(size=(s["m"], s["f"])).astype(np.float32)
    x_train[rng.random(x_train.shape) < 0.1] = np.nan
    x_test[0, 0], x_test[1, 1] = np.inf, -np.inf
    y = (rng.integers(0, s["classes"], s["n"]) if s["classes"]
         else rng.normal(size=s["n"])).astype(np.float32)
    ref = forward(load(folder / f"{name}.safetensors"), x_train, y, x_test)
    return x_train, y, x_test, ref, s["batch"]


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_config_matches_numpy_in_chromium(page, folder, name):
    x_train, y, x_test, ref, batch = random_case(folder, name)
    run = run_member(page, f"/tabpfn-data/{name}.safetensors", x_train, y, x_test, batch)
    diff = max_diff(run["output"], ref)
    print(f"{name}: max |Chromium - numpy| {diff:.2g}")
    assert diff < TOL
    assert run["timings"]["batches"] == -(-len(x_test) // batch)


def test_small_limits_chunk_every_stage_in_chromium(page, folder):
    """A 6000-byte binding limit: column chunks of one column, row blocks, ICL chunks, query
    batches split, weights sliced by rows; the output equals the unchunked one."""
    x_train, y, x_test, ref, batch = random_case(folder, "kv_heads_slices")
    weights = "/tabpfn-data/kv_heads_slices.safetensors"
    full = run_member(page, weights, x_train, y, x_test, batch)
    small = run_member(page, weights, x_train, y, x_test, batch,
                       {"maxStorageBufferBindingSize": 6000})
    plan = small["plan"]
    print(f"small limits in Chromium: {plan}")
    assert plan["columns"] < 5 and plan["rows"] < 33 and plan["iclRows"] < 33, plan
    assert plan["queryRows"] < len(x_test) and small["sliced"] > 0 and small["fresh"]
    assert small["output"] == full["output"]
    assert max_diff(small["output"], ref) < TOL
