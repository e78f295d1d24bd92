"""Google TabFM's member forward on WebGPU in Chromium (SwiftShader) against the numpy
reference.

The same checks as webgpu_bridge/test/tabfm_gpu.test.js (dawn.node), in the browser: every
committed stage fixture (tests/data/tabfm/stages_<case>.npz, index stages.json) through ONE
member's raw forward (src/tabfm/model.js: TabFMMember's fitContext + queryBatches) against
numpy's stages (cells, both column and row stages, the ICL output of the query rows) and
output; random checkpoints and tables made here by numpy (checkpoint.py's
random_checkpoint, one with v1.0.0's ICL head width of 256; missing cells as NaN); and
forced small buffer
limits (chunked stages and split weights: the unchunked output). The page imports the
bridge's modules from ``/bridge/`` and fetches checkpoint folders (config.json +
model.safetensors) from ``/tabfm-data/`` (tests/data/tabfm/) and ``/tabfm-tmp/`` (the
random ones), routes of this page. Tolerance 1e-4 on every output.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from arenalite.models.tabfm import TabFMModel, forward, random_checkpoint, save_pretrained
from browser_harness import bridge_page

DATA = Path(__file__).resolve().parent / "data" / "tabfm"
INDEX = json.loads((DATA / "stages.json").read_text())
TOL = 1e-4
pytestmark = pytest.mark.browser
STAGES = ("cells", "column", "row", "column_2", "row_2")
BASE = {"embed_dim": 16, "max_classes": 4, "col_num_blocks": 1, "col_nhead": 2, "col_num_inds": 5,
        "row_num_blocks": 1, "row_nhead": 2, "row_num_cls": 2, "icl_num_blocks": 2,
        "icl_nhead": 2, "ff_factor": 2, "feature_group_size": 3, "num_freq": 6,
        "decoder_hidden": None, "is_classifier": True}
RANDOM = {
    "padded_categorical_missing": ({**BASE, "feature_group_size": 4, "max_classes": 6},
                                   dict(h=9, d=7, c=6, n=30, m=7, batch=3, seed=11, cat=[0, 4])),
    "icl_head_256": ({**BASE, "embed_dim": 32, "row_num_cls": 8, "icl_nhead": 1,
                      "icl_num_blocks": 1},
                     dict(h=4, d=4, c=3, n=20, m=5, batch=5, seed=12, cat=[])),
    "regression_heads": ({**BASE, "is_classifier": False, "embed_dim": 24, "col_nhead": 3,
                          "row_nhead": 4, "icl_nhead": 6, "row_num_cls": 3, "decoder_hidden": 20},
                         dict(h=5, d=5, c=0, n=25, m=6, batch=4, seed=13, cat=[2])),
}


def serve(page, base_url: str, prefix: str, root: Path) -> None:
    """``/{prefix}/PATH`` → root/PATH (files under root only): a page route, consulted
    before the harness's context route (that one still aborts every non-local request)."""

    def fulfil(route) -> None:
        name = route.request.url.split(f"/{prefix}/", 1)[1]
        path = (root / name).resolve()
        if ".." in name or not path.is_file() or root.resolve() not in path.parents:
            route.fulfill(status=404, body="")
        else:
            route.fulfill(status=200, body=path.read_bytes(),
                          headers={"Content-Type": "application/octet-stream"})

    page.route(f"{base_url}/{prefix}/**", fulfil)


def random_cases(folder: Path) -> dict:
    """Each RANDOM case's checkpoint folder under ``folder`` and its inputs and numpy output."""
    out = {}
    for name, (config, c) in RANDOM.items():
        checkpoint = random_checkpoint(config, seed=c["seed"])
        save_pretrained(checkpoint, folder / name)
        rng = np.random.default_rng(c["seed"])
        x_train = rng.normal(size=(c["n"], c["h"])).astype(np.float32)
        x_test = rng.normal(size=(c["m"], c["h"])).astype(np.float32)
        x_train[rng.random(x_train.shape) < 0.1] = np.nan
        cat = np.zeros(c["h"], bool)
        cat[c["cat"]] = True
        for j in c["cat"]:
            x_train[:, j] = rng.integers(0, 3, c["n"])
            x_test[:, j] = rng.integers(0, 3, c["m"])
        if c["c"]:
            y = np.concatenate([np.arange(c["c"]), rng.integers(0, c["c"], c["n"] - c["c"])])
        else:
            y = rng.normal(size=c["n"])
        model = TabFMModel(checkpoint.config, checkpoint.tensors)
        output, _ = forward(model, x_train, y.astype(np.float64), x_test, d=c["d"], cat_mask=cat)
        out[name] = {**c, "x_train": x_train, "y": y.astype(np.float64), "x_test": x_test,
                     "cat_mask": cat, "output": output}
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tabfm-random")
    cases = random_cases(folder)

    def routes(page, base_url: str) -> None:
        serve(page, base_url, "tabfm-data", DATA)
        serve(page, base_url, "tabfm-tmp", folder)

    with bridge_page(routes) as page:
        yield page, cases


MEMBER_JS = """async ({folder, xTrain, yTrain, xTest, d, catMask, batchRows, limits, capture,
                       fresh}) => {
  const {TabFMMember} = await import("/bridge/tabfm/model.js");
  const {parseSafetensors} = await import("/bridge/safetensors.js");
  const get = async (name) => {
    const r = await fetch(folder + name);
    if (!r.ok) throw new Error(`${folder}${name}: ${r.status}`);
    return r;
  };
  const config = await (await get("config.json")).json();
  const bytes = await (await get("model.safetensors")).arrayBuffer();
  const {tensors, shapes} = parseSafetensors(bytes, folder);
  const engine = fresh ? (await window.arenaBridge.Bridge.create()).engine : window.bridge.engine;
  const member = await TabFMMember.create(engine, {config, tensors, shapes, name: folder},
                                          {limits: limits ?? {}});
  const timer = member.timer();
  const dispatches = engine.stats.dispatches;
  const context = await member.fitContext(Float32Array.from(xTrain), Float64Array.from(yTrain),
                                          {timer, d, catMask, capture});
  const {output, captured} = await member.queryBatches(context, Float32Array.from(xTest),
                                                       {batchRows, timer, capture});
  const timings = await timer.finish();
  const result = {output: Array.from(output), timings, adapter: window.bridge.adapterInfo,
                  dispatches: engine.stats.dispatches - dispatches,
                  layerNames: member.layerNames()};
  if (capture) {
    for (const s of ["cells", "column", "row", "column_2", "row_2"]) {
      result[s] = [context.captured[s], ...captured.map((c) => c[s])].flatMap((p) => Array.from(p));
    }
    result.icl = captured.flatMap((c) => Array.from(c.icl));
  }
  return result;
}"""


def max_diff(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64).ravel()
    assert got.shape == want.shape, (got.shape, want.shape)
    return float(np.abs(got - want).max())


def fixture_folder(spec: dict) -> str:
    sub = f"small/{spec['task']}/" if spec["checkpoint"] == "small" else f"{spec['checkpoint']}/"
    return "/tabfm-data/" + sub


def fixture_args(case: str, **extra) -> tuple[dict, np.lib.npyio.NpzFile, int]:
    spec = INDEX[case]
    z = np.load(DATA / f"stages_{case}.npz")
    x, n = z["x"], spec["context"]
    args = {"folder": fixture_folder(spec), "xTrain": x[:n].ravel().tolist(),
            "yTrain": z["y"].astype(float).tolist(), "xTest": x[n:].ravel().tolist(),
            "d": int(z["d"]), "catMask": z["cat_mask"].tolist(), "batchRows": 5,
            "limits": None, "capture": False, "fresh": False, **extra}
    return args, z, n


@pytest.mark.parametrize("case", list(INDEX))
def test_member_forward_matches_the_stage_fixture_in_chromium(setup, case):
    page, _ = setup
    args, z, n = fixture_args(case, capture=True)
    run = page.evaluate(MEMBER_JS, args)
    assert run["adapter"]["architecture"] == "swiftshader"
    diffs = {s: max_diff(run[s], z[s]) for s in STAGES}
    diffs["icl"] = max_diff(run["icl"], z["icl"][n:])
    diffs["output"] = max_diff(run["output"], z["output"][n:])
    print(f"{case}: max |Chromium - numpy| " + ", ".join(f"{k} {v:.2g}" for k, v in diffs.items())
          + f"; {run['dispatches']} dispatches")
    assert all(v < TOL for v in diffs.values()), f"{case}: {diffs}"
    t = run["timings"]
    assert t["batches"] == -(-INDEX[case]["query"] // 5)
    assert len(t["layers"]) == len(run["layerNames"]) == 4 + json.loads(
        (DATA / fixture_folder(INDEX[case])[len("/tabfm-data/"):] / "config.json").read_text()
    )["icl_num_blocks"]
    assert t["total"] == pytest.approx(t["embed"] + sum(t["layers"]) + t["head"])


@pytest.mark.parametrize("name", list(RANDOM))
def test_random_checkpoint_matches_numpy_in_chromium(setup, name):
    page, cases = setup
    c = cases[name]
    run = page.evaluate(MEMBER_JS, {
        "folder": f"/tabfm-tmp/{name}/", "xTrain": c["x_train"].ravel().tolist(),
        "yTrain": c["y"].tolist(), "xTest": c["x_test"].ravel().tolist(), "d": c["d"],
        "catMask": c["cat_mask"].tolist(), "batchRows": c["batch"], "limits": None,
        "capture": False, "fresh": False})
    worst = max_diff(run["output"], c["output"])
    print(f"{name}: max |Chromium - numpy| {worst:.2g}")
    assert worst < TOL, f"{name}: {worst}"
    assert run["timings"]["batches"] == -(-c["m"] // c["batch"])


def test_small_limits_chunk_to_the_same_output_in_chromium(setup):
    """The wide fixture under a 14,000-byte binding limit: columns in chunks of 3, token
    blocks of 13 rows, feed-forwards in row chunks, ICL weights split by rows; on a fresh
    device, so no bigger buffer an earlier run left can hide an out-of-range read."""
    page, _ = setup
    args, z, n = fixture_args("wide")
    full = page.evaluate(MEMBER_JS, args)
    small = page.evaluate(MEMBER_JS, {**args, "fresh": True,
                                      "limits": {"maxStorageBufferBindingSize": 14000,
                                                 "maxBufferSize": 1 << 20}})
    vs = max_diff(small["output"], full["output"])
    worst = max_diff(small["output"], z["output"][n:])
    print(f"small limits: vs unchunked {vs:.2g}, vs numpy {worst:.2g}; dispatches "
          f"{small['dispatches']} (unchunked {full['dispatches']})")
    assert vs < 1e-6 and worst < TOL
    assert small["dispatches"] > full["dispatches"]
