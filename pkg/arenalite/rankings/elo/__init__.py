"""Bradley-Terry Elo: every (dataset[, seed]) is a match day, every model pair one battle.

Ratings are the joint maximum-likelihood Bradley-Terry abilities of the weighted win
matrix, reported as R = 1000 + 400/ln10 · (θ − mean θ), with a percentile bootstrap
interval over ``n_bootstrap`` replicates (the point stays the full-data MLE). One concept
a module, data flowing one way:

- :mod:`.battles`: battles, their weights and sums (win matrix, per-unit sums,
  sufficient statistics);
- :mod:`.solvers`: the Bradley-Terry MLE (Newton, the batched chord) and the tie prior
  that keeps an infinite MLE finite (the regularization rule);
- :mod:`.resampling`: the bootstrap schemes ("battle", "split", "dataset") and how the
  battle scheme is drawn;
- :mod:`.fitting`: :func:`fit`, the orchestration the ranking and the leaderboard share;
- :mod:`.scale`: the Elo scale; :mod:`.scorecard`: win rates and match records;
- :mod:`.ranking`: :func:`elo_ranking` and :class:`EloResult`.
"""

from .battles import (
    BattleSet,
    CompleteUnits,
    battle_points,
    dataset_pair_sums,
    day_model_points,
    day_pair_sums,
    group_sums,
    match_days,
    model_points,
    pair_sums_to_matrix,
    play_battles,
    win_matrix,
)
from .fitting import (
    EloFit,
    fit,
    point_abilities,
    replicate_abilities,
    solve_chunk,
    solve_complete_units,
    solve_pair_sums,
    step_inverse,
)
from .ranking import EloResult, check_models, elo_ranking, rating_table
from .resampling import (
    BATTLE_DRAWS,
    DEFAULT_RESAMPLING,
    EXACT_DRAW_LIMIT,
    RESAMPLING,
    SCHEMES,
    battle_draw,
    bootstrap_pair_sums,
    check_resampling,
    poisson_pair_sums,
    replicate_pair_sums,
    unit_bootstrap_pair_sums,
)
from .scale import (
    ELO_BASE,
    ELO_SCALE,
    RULE_OF_THUMB_DELTAS,
    elo_gap,
    elo_rule_of_thumb,
    elo_win_probability,
    to_elo,
)
from .scorecard import battle_counts, record_table, winrate_matrix, winrate_table
from .solvers import (
    bradley_terry,
    chord_inverse,
    complete_connected,
    prior_weight,
    strongly_connected,
    tie_prior,
)

__all__ = [
    "BATTLE_DRAWS", "CompleteUnits", "DEFAULT_RESAMPLING", "ELO_BASE", "ELO_SCALE",
    "EXACT_DRAW_LIMIT", "EloFit", "EloResult", "RESAMPLING", "RULE_OF_THUMB_DELTAS", "SCHEMES",
    "BattleSet", "battle_counts", "battle_draw", "battle_points", "bootstrap_pair_sums",
    "bradley_terry", "check_models", "check_resampling", "chord_inverse", "complete_connected",
    "dataset_pair_sums", "day_model_points", "day_pair_sums", "elo_gap", "elo_ranking",
    "elo_rule_of_thumb", "elo_win_probability", "fit", "group_sums", "match_days", "model_points",
    "pair_sums_to_matrix", "point_abilities", "poisson_pair_sums", "prior_weight",
    "rating_table", "record_table", "replicate_abilities", "replicate_pair_sums", "solve_chunk",
    "solve_complete_units", "solve_pair_sums", "step_inverse", "strongly_connected",
    "tie_prior", "to_elo", "play_battles", "unit_bootstrap_pair_sums", "win_matrix",
    "winrate_matrix", "winrate_table",
]
