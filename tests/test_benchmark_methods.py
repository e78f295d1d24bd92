"""Benchmark's methods show their method function's own signature and docstring: one source
for each method's parameters and defaults (help(bench.elo_ranking) documents them all)."""

from __future__ import annotations

import importlib
import inspect
import pydoc
import subprocess
import sys

import pytest

from arenalite import Benchmark, BenchmarkGroup
from frames import quiet_load as load

DELEGATED = {
    "aggregate_ranking": "arenalite.rankings.aggregate",
    "iqm_ranking": "arenalite.rankings.iqm",
    "elo_ranking": "arenalite.rankings.elo",
    "leaderboard": "arenalite.rankings.leaderboard",
    "normalized_error_ranking": "arenalite.rankings.normalized_error",
    "improvability_ranking": "arenalite.rankings.improvability",
    "performance_profiles": "arenalite.rankings.profiles",
    "compare_rankings": "arenalite.rankings.compare",
    "frequentist_comparison": "arenalite.stats.frequentist",
    "bayesian_comparison": "arenalite.stats.bayesian",
    "gate": "arenalite.stats.gate",
}


@pytest.mark.parametrize("name, module", DELEGATED.items())
def test_method_has_the_function_signature_and_docstring(four_models, name, module):
    function = getattr(importlib.import_module(module), name)
    bench = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    expected = list(inspect.signature(function).parameters.values())[1:]
    assert list(inspect.signature(getattr(bench, name)).parameters.values()) == expected
    assert getattr(bench, name).__doc__ == function.__doc__
    assert getattr(Benchmark, name).__name__ == name
    if expected:
        assert "Parameters" in function.__doc__
        for parameter in expected:
            assert parameter.name in function.__doc__, (name, parameter.name)


def test_help_of_elo_ranking_documents_every_parameter(four_models):
    bench = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    text = pydoc.render_doc(bench.elo_ranking, renderer=pydoc.plaintext)
    start = text.index("elo_ranking(")
    signature = text[start:text.index(")", start)]  # its layout varies by Python version
    assert "n_bootstrap" in signature and "= 1000" in signature and "self" not in signature
    for line in ("tie_threshold : float or None", "calibration_model : str or None",
                 "resampling : str", "EloResult"):
        assert line in text


def test_methods_call_the_functions(four_models):
    from arenalite.rankings.aggregate import aggregate_ranking

    bench = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    assert bench.aggregate_ranking(agg="mean").table.equals(
        aggregate_ranking(bench, agg="mean").table)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        bench.aggregate_ranking(nope=1)


def test_group_rank_sensitivity_shows_its_function():
    from arenalite.stats.sensitivity import rank_sensitivity

    assert BenchmarkGroup.rank_sensitivity.__doc__ == rank_sensitivity.__doc__
    assert "confidence" in inspect.signature(BenchmarkGroup.rank_sensitivity).parameters


@pytest.mark.needs_processes
def test_importing_the_benchmark_loads_no_method_module():
    code = ("import sys, arenalite.benchmark; "
            "print(sorted(m for m in sys.modules if m.startswith(('arenalite.rankings', "
            "'arenalite.stats', 'scipy', 'matplotlib'))))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout.strip() == "[]"
