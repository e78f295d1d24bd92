"""The README's examples run as written: the Python quick start (and the in-context block
after it) and every command of the "Command line" section, on the bundled demo table."""

from __future__ import annotations

import re
import shlex
import shutil
import warnings
from pathlib import Path

import matplotlib
import pandas as pd
import pytest

from arenalite.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    """The README text under ``## title`` up to the next ``## `` heading."""
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else None]


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


def commands(script: str) -> list[list[str]]:
    """Each command of a bash block: continuation lines joined, comments dropped."""
    joined = script.replace("\\\n", " ")
    return [shlex.split(line, comments=True) for line in joined.splitlines() if line.strip()]


def test_python_quick_start_runs_without_normalization_warnings(monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(ROOT)
    code = blocks(section("Quick start (Python)"), "python")
    assert len(code) == 2 and "demo_results.csv" in code[0]
    namespace: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for block in code:
            exec(compile(block, "README.md", "exec"), namespace)
    load_warnings = [str(w.message) for w in caught
                     if "bracket" in str(w.message) or "not given" in str(w.message)]
    assert load_warnings == []
    assert namespace["elo"].table.columns.tolist() == ["model", "ELO", "CI_low", "CI_high"]
    assert len(namespace["bench"].models_) == 2  # the in-context block's two models


def test_command_line_examples_run_on_the_demo(tmp_path, monkeypatch, capsys):
    text = section("Command line")
    shutil.copytree(ROOT / "content", tmp_path / "content")  # WASI links to no other folder
    (tmp_path / "load.yaml").write_text(blocks(text, "yaml")[0], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    examples = commands(blocks(text, "bash")[0])
    assert [argv[:2] for argv in examples][:4] == [["arenalite", "report"]] * 2 + [
        ["arenalite", "elo"], ["arenalite", "gate"]]
    for argv in examples:
        assert argv[0] == "arenalite"
        assert main(argv[1:]) == 0, (argv, capsys.readouterr().err)
        err = capsys.readouterr().err
        assert "arenalite: error" not in err
        if "--config" in argv:
            assert "warning: metric_type_bounds" not in err and "not given" not in err
    assert (tmp_path / "out" / "report.html").exists()
    assert (tmp_path / "out" / "elo.pdf").exists()
    assert (tmp_path / "out" / "gate.csv").exists()
    assert (tmp_path / "runs" / "results.csv").exists()


@pytest.mark.parametrize("flag", ["--model-col", "--seed-col", "--format", "--debug"])
def test_command_line_section_documents_the_flags(flag):
    assert flag in section("Command line")


def test_coming_from_tabarena_runs(tmp_path, monkeypatch, capsys):
    """The section's Python block and commands, on the synthetic TabArena-format file."""
    matplotlib.use("Agg")
    text = section("Coming from TabArena")
    data = tmp_path / "tests" / "data"
    data.mkdir(parents=True)
    shutil.copy(ROOT / "tests" / "data" / "tabarena_results.csv", data)
    monkeypatch.chdir(tmp_path)
    [code] = blocks(text, "python")
    namespace: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(code, "README.md", "exec"), namespace)
    messages = [str(w.message) for w in caught]
    assert any(m.startswith("recognised TabArena's per-split results") for m in messages)
    assert not any("chance level" in m or "named like an error" in m for m in messages)
    table = namespace["board"].table.set_index("model")
    assert table.loc["GBM-default", "elo"] == pytest.approx(1000.0)
    assert table.index[0] == "GBM-tuned" and table["improvability"].between(0, 1).all()
    written = (tmp_path / "tabarena_leaderboard.csv").read_text().splitlines()[0]
    assert written.startswith("method,elo,elo+,elo-,rank,winrate,improvability")
    assert namespace["fig"].axes[0].get_xscale() == "log"
    examples = [argv for argv in commands(blocks(text, "bash")[0]) if argv]  # not comments
    assert len(examples) == 3
    for argv in examples:
        assert argv[0] == "arenalite"
        assert main(argv[1:]) == 0, (argv, capsys.readouterr().err)
        err = capsys.readouterr().err
        assert "arenalite: error" not in err and "chance level" not in err
    assert (tmp_path / "tabarena-out" / "leaderboard_pareto.png").exists()
    assert "anchored on <b>GBM-default</b> at 1000" in (
        tmp_path / "tabarena-out" / "report.html").read_text()
    assert pd.read_csv(tmp_path / "tabarena-out" / "elo.csv")["model"].iloc[0] == "GBM-tuned"


def test_tabicl_section_runs_on_random_weights(tmp_path, monkeypatch):
    """The tabicl section's Python block (a numpy random-weight checkpoint, no torch) runs;
    its commands need the user's own checkpoint and are not run here."""
    text = section("tabicl: TabICLv2 from your own checkpoint")
    assert "No TabICL weights ship with arenalite" in text and "random-weight" in text
    monkeypatch.chdir(tmp_path)
    [code] = blocks(text, "python")
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    results = namespace["results"]
    assert set(results["model"]) == {"tabicl-RANDOM-weights", "knn"} and len(results) == 4
    assert results["score"].notna().all()
    [script] = blocks(text, "bash")
    assert [argv[:3] for argv in commands(script)] == [["arenalite", "convert", "tabicl"],
                                                      ["arenalite", "run", "iris"],
                                                      ["arenalite", "run", "iris"]]
    third = commands(script)[2]
    assert third[third.index("--runner") + 1] == "webgpu"
