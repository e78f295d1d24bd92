"""arenalite: honest model rankings across benchmark suites, in the browser or in CPython.

Data flows one way: load (:func:`load_df`) → normalize → method
(:mod:`arenalite.rankings`, :mod:`arenalite.stats`) → result (:mod:`arenalite.results`)
→ plot (:mod:`arenalite.plots`). scipy and matplotlib are imported lazily.
"""

from . import metrics, splits
from .benchmark import Benchmark, BenchmarkGroup
from .load import load_csv, load_df
from .rankings.aggregate import aggregate_ranking
from .rankings.elo import elo_gap, elo_rule_of_thumb, elo_win_probability
from .rankings.iqm import iqm_ranking
from .registry import get_metric, register_metric

__version__ = "0.1.0"

__all__ = [
    "Benchmark",
    "BenchmarkGroup",
    "aggregate_ranking",
    "elo_gap",
    "elo_rule_of_thumb",
    "elo_win_probability",
    "get_metric",
    "iqm_ranking",
    "load_csv",
    "load_df",
    "metrics",
    "register_metric",
    "splits",
]
