"""Every notebook of the site (content/*.ipynb) runs top to bottom in CPython (and on wasm32).

Each code cell is executed in order in one fresh namespace per notebook, with cwd =
content/ and matplotlib's Agg backend, as the JupyterLite kernel would run it. Cells are
compiled with ``ast.PyCF_ALLOW_TOP_LEVEL_AWAIT`` (as IPython does), so the install cell's
``await piplite.install(...)``, guarded by ``sys.platform == "emscripten"``, is valid here
and skipped; a cell with top-level await runs to completion on a fresh event loop (on WASI,
which has none, in one step: see ``finish``).
No nbclient or Jupyter kernel is needed.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import functools
import inspect
import json
import os
import sys
import types
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

CONTENT = Path(__file__).resolve().parents[1] / "content"
NOTEBOOKS = sorted(CONTENT.glob("*.ipynb"))
EXPECTED = {"01_quick_start", "02_performance_profiles", "03_three_rankings", "10_your_own_table",
            "04_statistics_and_gate", "05_auroc_vs_auprc", "06_splits_and_webgpu",
            "07_gate_protocol", "08_tabular_fm", "09_tabicl_own_checkpoint",
            "11_tabpfn_own_checkpoint", "12_google_tabfm_own_checkpoint",
            "13_tournament_of_your_own"}


def code_cells(path: Path) -> list[str]:
    """The source of each code cell (nbformat 4: a string or a list of lines)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    assert nb["nbformat"] == 4, f"{path.name}: nbformat {nb['nbformat']}, expected 4"
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "code"]


@functools.cache
def executed(path: Path) -> tuple[dict, str]:
    """Run a notebook's code cells in order in a fresh namespace with cwd = content/, once
    per session (test_07_gate_protocol_verdicts reads the same run); returns (namespace,
    the cwd after its last cell)."""
    namespace: dict = {"__name__": "__main__"}
    with contextlib.chdir(CONTENT):
        for i, source in enumerate(code_cells(path)):
            run_cell(source, namespace, f"{path.name}[code cell {i}]")
        return namespace, os.getcwd()


def run_cell(source: str, namespace: dict, where: str) -> None:
    """Execute one cell like IPython: top-level await allowed."""
    code = compile(source, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = types.FunctionType(code, namespace)()
    if inspect.iscoroutine(result):
        finish(result, where)


def finish(cell: types.CoroutineType, where: str) -> None:
    """Run a cell with top-level await to its end, on a fresh event loop.

    WASI (the wasm32 lane) can make no event loop (its self-pipe needs a socket pair); there a
    cell whose awaits all sit behind the ``emscripten`` guard finishes in one step.
    """
    if sys.platform != "wasi":
        asyncio.run(cell)
        return
    try:
        cell.send(None)
    except StopIteration:
        return
    cell.close()
    raise RuntimeError(f"{where} awaited something, and WASI has no event loop to run it")


def test_the_ten_notebooks_exist() -> None:
    assert {p.stem for p in NOTEBOOKS} == EXPECTED


def test_committed_notebooks_are_what_their_source_makes() -> None:
    """sitebuild/notebooks.py is the notebooks' one source: every committed notebook is what
    it makes (compared as parsed JSON: every key, cell, id and metadata entry; only the
    formatting may differ), none is missing and none has no source there."""
    from sitebuild import notebooks

    assert set(notebooks.NOTEBOOKS) == EXPECTED
    assert notebooks.stale(CONTENT) == [], "run `python scripts/make_notebooks.py`"


def test_the_source_check_sees_any_change(tmp_path: Path) -> None:
    """A changed character, a cell id, an output, a missing or a stray notebook: all stale;
    reformatted JSON alone is not."""
    from sitebuild import notebooks

    notebooks.write(tmp_path)
    assert notebooks.stale(tmp_path) == []
    first = tmp_path / "01_quick_start.ipynb"
    nb = json.loads(first.read_text())
    first.write_text(json.dumps(nb))                      # formatting only
    assert notebooks.stale(tmp_path) == []
    edits = [lambda n: n["cells"][2].update(source=n["cells"][2]["source"] + " "),
             lambda n: n["cells"][2].update(id="cell-x"),
             lambda n: n["cells"][2].update(outputs=[{"output_type": "stream", "name": "stdout",
                                                      "text": "42"}]),
             lambda n: n["metadata"].update(trusted=True)]
    for edit in edits:
        changed = json.loads(json.dumps(nb))
        edit(changed)
        first.write_text(json.dumps(changed))
        assert notebooks.stale(tmp_path) == [
            "01_quick_start.ipynb: differs from what sitebuild/notebooks.py makes"]
    first.unlink()
    (tmp_path / "99_scratch.ipynb").write_text("{}")
    assert notebooks.stale(tmp_path) == ["01_quick_start.ipynb: missing",
                                         "99_scratch.ipynb: no source in sitebuild/notebooks.py"]


def test_every_notebook_starts_with_the_install_cell() -> None:
    for path in NOTEBOOKS:
        first = code_cells(path)[0]
        assert 'sys.platform == "emscripten"' in first, path.name
        assert 'await piplite.install("arenalite")' in first, path.name


def test_webgpu_part_is_guarded() -> None:
    cells = code_cells(CONTENT / "06_splits_and_webgpu.ipynb")
    bridge = [c for c in cells if "create_bridge" in c]
    assert bridge and all(c.startswith('if sys.platform == "emscripten":') for c in bridge)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path) -> None:
    from matplotlib.figure import Figure

    cells = code_cells(path)
    assert cells, f"{path.name} has no code cells"
    namespace, cwd = executed(path)
    assert namespace["arenalite"].__name__ == "arenalite"
    figures = [v for v in namespace.values() if isinstance(v, Figure)]
    if "fig" in "".join(cells):
        assert figures, f"{path.name}: a cell builds `fig` but no Figure is left"
    assert cwd == str(CONTENT)


def test_07_gate_protocol_verdicts() -> None:
    """The protocol notebook's verdicts, ranking and honest-spread baseline, as it states them."""
    namespace, _ = executed(CONTENT / "07_gate_protocol.ipynb")
    assert {s["kind"] for s in namespace["persisted"].values()} == {"kfold"}
    assert {len(s["splits"]) for s in namespace["persisted"].values()} == {10}
    table = namespace["gate"].table.set_index("metric")
    assert list(table.index) == ["log_loss", "rmse", "roc_auc"]
    assert table["n_datasets"].tolist() == [2, 1, 1]
    assert table.loc["log_loss", "margin"] == 0.01 and table.loc["roc_auc", "margin"] == 0.01
    # the candidate scored better on every dataset, and still cannot pass with n ≤ 2
    assert (table["median_difference"] > 0).all()
    assert (table["verdict"] == "inconclusive").all() and not table["passed"].any()
    assert table["reason"].str.contains("more datasets are needed").all()
    assert namespace["passes"] is False  # inconclusive fails
    ranking = namespace["gate"].ranking
    assert set(ranking.avg_ranks.index) == {"icl_transformer", "knn", "knn(k=15)", "attention"}
    assert ranking.avg_ranks.sum() == pytest.approx(10)  # ranks 1..4 on every dataset
    track = namespace["track"].set_index(["model", "metric"])["score"]
    sigma, oof = namespace["sigma"], namespace["oof"]
    assert len(oof) == 2 * 442  # every diabetes row once per repeat
    assert sigma == pytest.approx(float(np.sqrt(np.mean((oof["y_true"] - oof["point"]) ** 2))))
    assert track[("knn-15 + honest constant spread", "gaussian_nll")] == pytest.approx(
        0.5 * np.log(2 * np.pi * sigma**2) + 0.5)


def test_11_tabpfn_says_its_weights_are_random() -> None:
    """The TabPFN notebook runs numpy random-weight checkpoints (a classifier and a
    regressor), says so where they are read and in every table, and ranks them next to knn."""
    path = CONTENT / "11_tabpfn_own_checkpoint.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    intro = nb["cells"][0]["source"]
    assert "RANDOM WEIGHTS" in intro and "not from TabPFN v3" in intro
    namespace, _ = executed(path)
    both = namespace["both"]
    random = "tabpfn (RANDOM weights, not TabPFN v3)"
    assert set(both["model"]) == {random, "knn"}
    assert set(both["dataset"]) == {"iris", "wine", "diabetes"} and len(both) == 3 * 2 * 3
    assert np.isfinite(both["score"]).all()
    assert list(namespace["agg"].table["model"]) == ["knn", random]
    assert not Path(namespace["classifier"]).is_relative_to(CONTENT)
    assert not namespace["CHECKPOINT"].is_file()
    real = "".join(code_cells(path)[-1])
    assert real.startswith('CHECKPOINT = Path("tabpfn-v3-classifier-v3_default.ckpt")')
    text = "".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "Prior-Labs/tabpfn_3" in text and "arenalite convert tabpfn" in text


def test_12_google_tabfm_says_its_weights_are_random() -> None:
    """The Google TabFM notebook runs a numpy random-weight checkpoint folder (both tasks),
    says so where it is made and in every table, ranks it next to knn, and says how to run
    the real google/tabfm-1.0.0-pytorch folder."""
    path = CONTENT / "12_google_tabfm_own_checkpoint.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    intro = nb["cells"][0]["source"]
    assert "RANDOM WEIGHTS" in intro and "not from Google TabFM" in intro
    namespace, _ = executed(path)
    results = namespace["results"]
    random = "tabfm (RANDOM weights, not Google TabFM)"
    assert set(results["model"]) == {random, "knn"}
    assert set(results["dataset"]) == {"iris", "wine", "diabetes"} and len(results) == 3 * 2 * 3
    assert np.isfinite(results["score"]).all()
    assert list(namespace["agg"].table["model"]) == ["knn", random]
    assert not Path(namespace["folder"]).is_relative_to(CONTENT)
    assert not namespace["CHECKPOINT"].exists()
    text = "".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "google/tabfm-1.0.0-pytorch" in text and "arenalite convert tabfm" in text


def test_09_tabicl_says_its_weights_are_random() -> None:
    """The TabICL notebook runs a numpy random-weight checkpoint (no torch in the browser),
    says so where it is read and in every table, and ranks it next to knn."""
    path = CONTENT / "09_tabicl_own_checkpoint.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    intro = nb["cells"][0]["source"]
    assert "RANDOM WEIGHTS" in intro and "not from TabICLv2" in intro
    namespace, _ = executed(path)
    results = namespace["results"]
    assert set(results["model"]) == {"tabicl (RANDOM weights, not TabICLv2)", "knn"}
    assert set(results["dataset"]) == {"iris", "wine"} and len(results) == 2 * 2 * 3
    assert np.isfinite(results["score"]).all()
    assert list(namespace["agg"].table["model"]) == ["knn", "tabicl (RANDOM weights, not TabICLv2)"]
    assert set(namespace["iqm"].table["model"]) == set(results["model"])
    assert not Path(namespace["weights"]).is_relative_to(CONTENT)  # nothing left in content/
    assert not namespace["CHECKPOINT"].is_file()  # the real one is the user's to upload
    real = "".join(code_cells(path)[-1])
    assert real.startswith('CHECKPOINT = Path("tabicl-classifier-v2-20260212.ckpt")')
    assert "if CHECKPOINT.is_file():" in real
    text = "".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
    assert "jingang/TabICL" in text and "arenalite convert tabicl" in text
    assert "upload the file into the file browser" in text
