"""One rule for every method's arguments: TypeError for a wrong type, ValueError for a wrong
value, and the message names the parameter (arenalite.params)."""

from __future__ import annotations

import pytest

from frames import quiet_load as load

CASES = [
    # (method, keyword arguments, expected error, parameter named in the message)
    ("aggregate_ranking", {"agg": 3}, TypeError, "agg"),
    ("aggregate_ranking", {"agg": "average"}, ValueError, "agg"),
    ("elo_ranking", {"n_bootstrap": 2.5}, TypeError, "n_bootstrap"),
    ("elo_ranking", {"n_bootstrap": -1}, ValueError, "n_bootstrap"),
    ("elo_ranking", {"n_bootstrap": 0, "tie_threshold": "0.1"}, TypeError, "tie_threshold"),
    ("elo_ranking", {"n_bootstrap": 0, "tie_threshold": -0.1}, ValueError, "tie_threshold"),
    ("elo_ranking", {"n_bootstrap": 5, "random_state": "seed"}, TypeError, "random_state"),
    ("elo_ranking", {"n_bootstrap": 5, "random_state": -3}, ValueError, "random_state"),
    ("improvability_ranking", {"normalized": "yes"}, TypeError, "normalized"),
    ("frequentist_comparison", {"alpha": "0.05"}, TypeError, "alpha"),
    ("frequentist_comparison", {"alpha": 1.5}, ValueError, "alpha"),
    ("bayesian_comparison", {"rope": None}, TypeError, "rope"),
    ("bayesian_comparison", {"rope": -0.1}, ValueError, "rope"),
    ("bayesian_comparison", {"random_state": True}, TypeError, "random_state"),
    ("bayesian_comparison", {"random_state": -3}, ValueError, "random_state"),
    ("gate", {"candidate": "Steady", "reference": "Sprinter", "margin": "a lot"}, TypeError,
     "margin"),
    ("gate", {"candidate": "Steady", "reference": "Sprinter", "margin": -0.01}, ValueError,
     "margin"),
    ("gate", {"candidate": "Steady", "reference": 3}, TypeError, "reference"),
    ("gate", {"candidate": "Steady", "reference": "Nobody"}, ValueError, "reference"),
]


@pytest.mark.parametrize("method, kwargs, error, name", CASES)
def test_wrong_type_is_type_error_and_wrong_value_is_value_error(four_models, method, kwargs,
                                                                 error, name):
    bench = load(four_models, norm_ref_low=0.0, norm_ref_high=1.0)
    with pytest.raises(error, match=name):
        getattr(bench, method)(**kwargs)


def test_load_options_follow_the_same_rule(four_models):
    with pytest.raises(TypeError, match="drop_incomplete must be True or False"):
        load(four_models, drop_incomplete="yes")
    with pytest.raises(TypeError, match="norm_ref_low must be a number, a model name"):
        load(four_models, norm_ref_low=[0.0], norm_ref_high=1.0)
    with pytest.raises(ValueError, match="norm_ref_high must be finite, got inf"):
        load(four_models, norm_ref_low=0.0, norm_ref_high=float("inf"))
