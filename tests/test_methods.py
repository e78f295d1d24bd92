"""The method registry (arenalite.methods): every registered method is reachable from the
Benchmark, the command line (parsed and run on the bundled demo results), the report and,
where marked, compare_rankings; a subcommand offers exactly the flags its function takes,
and a flag it does not take is refused in one line."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pandas as pd
import pytest

from arenalite import Benchmark
from arenalite.cli import build_parser, main, method_options, option_flag
from arenalite.methods import METHODS, MethodSpec, compared, get, reported
from frames import quiet_load

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "content" / "demo_results.csv"
LOAD = ["--seed-col", "seed", "--norm-ref-low", "0", "--norm-ref-high", "1"]
EXAMPLES = {"gate": ["--candidate", "icl-transformer", "--reference", "knn-15",
                     "--margin", "rmse=2.5"]}
"""What a method with required parameters (or no default for these data) needs on the demo."""
COMMON = {"--help", "-h", "--output", "-o", "--debug", "--config", "--encoding", "--sep",
          "--model-col", "--dataset-col", "--metric-col", "--score-col", "--seed-col",
          "--norm-ref-low", "--norm-ref-high", "--drop-incomplete", "--direction",
          "--input-format", "--format", "--task-metadata"}
"""The load, file and output flags every table command has."""


def commands() -> dict[str, argparse.ArgumentParser]:
    return build_parser()._subparsers._group_actions[0].choices


def method_flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings
            if flag.startswith("--")} - COMMON - {"--style", "--webgpu-link", "--no-normalized"}


def fast(spec: MethodSpec) -> list[str]:
    """Small bootstrap and Monte Carlo sizes, so that each method runs in a moment."""
    return (["--n-bootstrap", "20"] if spec.bootstraps else []) + (
        ["--n-samples", "2000"] if "n_samples" in spec.parameters else [])


@pytest.fixture(scope="module")
def demo() -> Benchmark:
    return quiet_load(pd.read_csv(DEMO), seed="seed", norm_ref_low=0.0, norm_ref_high=1.0)


def test_names_are_unique_and_specs_complete():
    names = [n for spec in METHODS for n in (spec.name, *spec.aliases)]
    assert len(names) == len(set(names))
    for spec in METHODS:
        assert callable(spec.call) and spec.title
        assert (spec.value is None) == (spec.direction is None), spec.name
        assert spec.direction in (None, "max", "min")
        assert spec.label is None or spec.value is not None, spec.name
        assert get(spec.name) is spec
    assert all(spec.value is not None for spec in compared())
    for spec in reported():  # the report runs each method with the flags given, if any
        assert all(p.default is not inspect.Parameter.empty
                   for p in spec.parameters.values()), spec.name
    assert {s.name for s in reported()} >= {"normalized-error", "leaderboard", "profiles"}


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: s.name)
def test_benchmark_method_is_the_function(spec, demo):
    method = getattr(demo, spec.function)
    assert method.__doc__ == spec.call.__doc__
    assert list(inspect.signature(method).parameters) == list(spec.parameters)


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: s.name)
def test_subcommand_offers_exactly_the_functions_parameters(spec):
    parsers = commands()
    for name in (spec.name, *spec.aliases):
        offered = method_flags(parsers[name])
        assert offered == {option_flag(p) for p in method_options([spec])}, name
        assert {f[2:].replace("-", "_") for f in offered} <= set(spec.parameters), name
        assert ("--n-bootstrap" in offered) == spec.bootstraps, name
        assert ("--confidence" in offered) == ("confidence" in spec.parameters), name


def test_report_offers_the_union_of_its_methods_flags():
    offered = method_flags(commands()["report"])
    assert offered == {option_flag(p) for p in method_options(reported())}
    assert "--candidate" not in offered  # the gate is not in the report


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: s.name)
def test_subcommand_runs_on_the_demo_results(spec, tmp_path, capsys):
    out = tmp_path / spec.name
    argv = [spec.name, str(DEMO), *LOAD, *fast(spec), *EXAMPLES.get(spec.name, []),
            "-o", str(out)]
    assert main(argv) == 0, capsys.readouterr().err
    table = pd.read_csv(out / f"{spec.name}.csv")
    assert len(table) > 0
    if spec.value is not None and spec.name != "profiles":  # profiles: the AUP table
        assert spec.value in table.columns
        values = table[spec.value].to_numpy()
        best_first = values[:-1] >= values[1:] if spec.higher_is_better else (
            values[:-1] <= values[1:])
        assert best_first.all(), spec.name


def test_report_has_a_section_and_verdict_per_method(tmp_path, capsys):
    out = tmp_path / "report"
    assert main(["report", str(DEMO), *LOAD, "--n-bootstrap", "20", "--n-samples", "2000",
                 "-o", str(out)]) == 0
    page = (out / "report.html").read_text()
    sections = re.findall(r'<h2 id="([^"]+)">', page)
    assert [s for s in sections if s not in ("summary", "datasets")] == [
        s.name for s in reported()]
    assert "Not applicable" not in page
    summary = page[page.index('id="summary"'):page.index("<nav>")]
    for spec in reported():
        assert (out / f"{spec.name}.csv").is_file(), spec.name
        if spec.label is not None:
            assert f"{spec.label}: <b>" in summary, spec.label


def test_compare_rankings_ranks_by_each_compared_method(demo):
    result = demo.compare_rankings()
    assert list(result.table.columns) == ["model", *(s.name for s in compared()),
                                          "rank_spread"]
    for spec in compared():
        own = spec.point(demo).table.set_index("model")[spec.value]
        ranks = result.table.set_index("model")[spec.name]
        best = own.idxmax() if spec.higher_is_better else own.idxmin()
        assert ranks[best] == 1, spec.name


def fails(argv: list[str], capsys) -> str:
    """The one ``arenalite: error:`` line of a refused command line."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1 and lines[0].startswith("arenalite: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("spec", [s for s in METHODS if not s.bootstraps],
                         ids=lambda s: s.name)
def test_n_bootstrap_is_refused_where_the_method_does_not_bootstrap(spec, tmp_path, capsys):
    line = fails([spec.name, str(DEMO), *EXAMPLES.get(spec.name, []), "--n-bootstrap", "50",
                  "-o", str(tmp_path)], capsys)
    assert line == (f"arenalite: error: {spec.name} has no option --n-bootstrap ({spec.name} "
                    "does not bootstrap); --n-bootstrap is an option of: report, leaderboard, "
                    "iqm, elo")


def test_another_methods_flag_is_refused_naming_who_takes_it(tmp_path, capsys):
    line = fails(["aggregate", str(DEMO), "--tie-threshold", "0.1", "-o", str(tmp_path)], capsys)
    assert line == ("arenalite: error: aggregate has no option --tie-threshold "
                    "(aggregate_ranking takes no tie_threshold); --tie-threshold is an option "
                    "of: report, elo")
    line = fails(["elo", str(DEMO), "--no-such-flag", "-o", str(tmp_path)], capsys)
    assert line == "arenalite: error: unrecognized arguments: --no-such-flag"


def toy_ranking(benchmark: Benchmark, n_bootstrap: int = 100, confidence: float = 0.95,
                label: str | None = None, pairs: list | None = None) -> None:
    """A method as a method module would write it.

    Parameters
    ----------
    n_bootstrap : int
        Replicates.
    confidence : float
        Level of the intervals (default 0.95).
    label : str or None
        A name.
    pairs : list or None
        Not a command-line value: no flag.
    """


def test_a_new_parameter_gets_its_flag_from_the_signature():
    spec = MethodSpec("toy", "rankings.aggregate", "toy_ranking", "Toy")
    spec.__dict__["call"] = toy_ranking  # the function, as if imported
    options = method_options([spec])
    assert set(options) == {"n_bootstrap", "confidence", "label"}
    assert options["confidence"]["help"] == "Level of the intervals (default: 0.95)"
    parser = argparse.ArgumentParser()
    for name, settings in options.items():
        parser.add_argument(option_flag(name), dest=name, **settings)
    assert parser.parse_args(["--confidence", "0.9"]).confidence == 0.9
    assert parser.parse_args([]).n_bootstrap == 1000  # the command line's default
    with pytest.raises(SystemExit):
        parser.parse_args(["--confidence", "1.5"])


PYTHON_EXAMPLES = {"gate": {"candidate": "icl-transformer", "reference": "knn-15",
                            "margin": {"rmse": 2.5}}}
"""EXAMPLES' required parameters as keyword arguments."""


@pytest.mark.parametrize("spec", METHODS, ids=lambda s: s.name)
def test_every_result_pickles_before_and_after_its_lazy_tables(spec, demo):
    """Results may build some tables on first access (profiles, Elo's scorecards); they
    pickle either way, with what they hold."""
    import pickle
    import warnings

    kwargs = dict(PYTHON_EXAMPLES.get(spec.name, {}))
    if spec.bootstraps:
        kwargs |= {"n_bootstrap": 20, "random_state": 0}
    if "n_samples" in spec.parameters:
        kwargs["n_samples"] = 2000
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = getattr(demo.select_models(demo.models_), spec.function)(**kwargs)
        again = pickle.loads(pickle.dumps(result))
        pd.testing.assert_frame_equal(again.table, result.table)
        for name in ("winrate_matrix", "record", "rho"):
            if hasattr(type(result), name):
                pd.testing.assert_frame_equal(getattr(again, name), getattr(result, name))
        pickle.loads(pickle.dumps(result))


def test_a_result_pickled_with_a_plain_table_attribute_still_loads():
    """Results pickled before ``table`` became a property (it was in the instance dict)."""
    import pickle

    from arenalite.results import Result

    res = Result(pd.DataFrame({"model": ["A"], "score": [1.0]}), reference="A")
    state = dict(vars(res))
    state["table"] = state.pop("_table")
    old = Result.__new__(Result)
    old.__setstate__(state)
    again = pickle.loads(pickle.dumps(old))
    assert again.table["model"].tolist() == ["A"] and again.reference == "A"
    again.table = pd.DataFrame({"model": ["B"]})
    assert again.table["model"].tolist() == ["B"]
