"""The tournament methodology's scorecard: one row per model, a thin layer over rankings/elo.

A match is one split of one table between two models that both have a score on it; the
lower error wins and equal errors tie (half a win each). Every match weighs 1, so the win
matrix holds plain counts, and the Elo is their Bradley-Terry MLE
(:func:`arenalite.rankings.elo.solvers.solve_batch`; the tie prior joins only where the
MLE is infinite, e.g. a model that never lost); a model that met no other has no rating
(NaN), and is listed last. ``elo_low`` / ``elo_high`` are the 2.5 % and
97.5 % quantiles of ``n_bootstrap`` split-bootstrap replicates (the K splits drawn with
replacement, :mod:`arenalite.rankings.elo.resampling`'s "split" scheme); ``elo_margin`` is
half their distance. Columns: model, elo, elo_low, elo_high, elo_margin, wins, losses,
ties, matches, win_rate = (wins + ties / 2) / matches, missed (splits without a score,
not applicable ones included), imputed (failed cells given the ``--impute`` model's
score), then ``vs <model>`` per opponent, "52W – 43L – 0T".
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ..params import make_rng
from ..rankings.elo.battles import BattleSet
from ..rankings.elo.fitting import replicate_abilities
from ..rankings.elo.scale import to_elo
from ..rankings.elo.scorecard import battle_counts
from ..rankings.elo.solvers import solve_batch

COLUMNS = ["model", "elo", "elo_low", "elo_high", "elo_margin", "wins", "losses", "ties",
           "matches", "win_rate", "missed", "imputed"]


def error_matrix(results: pd.DataFrame, models: list[str]
                 ) -> tuple[np.ndarray, list[tuple[str, str]], list[str]]:
    """(errors K × M with NaN where a model has no score, the K (table, split id) keys in
    table then split order, the tables)."""
    table = results.pivot_table(index=["dataset", "split_id"], columns="model", values="error",
                                aggfunc="first", sort=True)
    table = table.reindex(columns=models)
    keys = [(str(d), str(s)) for d, s in table.index]
    tables = sorted({d for d, _ in keys})
    return table.to_numpy(dtype=float), keys, tables


def battle_set(errors: np.ndarray, keys: list[tuple[str, str]], tables: list[str],
               models: list[str]) -> BattleSet:
    """Every split where some pair met, each match weighing 1 (scores: minus the error)."""
    m = len(models)
    pairs = np.vstack(np.triu_indices(m, 1))
    played = (~np.isnan(errors)).sum(axis=1) >= 2
    codes = np.asarray([tables.index(d) for d, _ in keys], dtype=np.intp)
    scores = -errors[played]
    return BattleSet(scores, 0.0, np.ones(len(scores)), codes[played], pairs, models, tables)


def vs_text(wins: int, losses: int, ties: int) -> str:
    return f"{wins}W – {losses}L – {ties}T"


def scorecard(results: pd.DataFrame, models: list[str], missed: dict[str, int] | None = None,
              imputed: dict[str, int] | None = None, n_bootstrap: int = 1000,
              random_state: Any = 0, confidence: float = 0.95) -> pd.DataFrame:
    """The scorecard of ``results`` (the results table's model, dataset, split_id, error;
    imputed cells included) for ``models``, best Elo first. ``missed`` / ``imputed``:
    per model counts, 0 where absent."""
    m = len(models)
    errors, keys, tables = error_matrix(results, models)
    scored = ~np.isnan(errors)
    # a model meets another on a split where both have a score; one that never does has
    # no rating (NaN), and the fit is of the others
    active = np.flatnonzero((scored & (scored.sum(axis=1, keepdims=True) >= 2)).any(axis=0))
    elo, low, high = np.full((3, m), np.nan)
    counts = np.zeros((3, m, m), dtype=np.int64)
    if len(active) >= 2:
        names = [models[i] for i in active]
        t = battle_set(errors[:, active], keys, tables, names)
        theta, _ = solve_batch(t.win_matrix()[None], None, t.prior)
        theta = theta[0]
        with warnings.catch_warnings():  # the tie prior is the documented rule, not news
            warnings.simplefilter("ignore", UserWarning)
            reps, _ = replicate_abilities(t, theta, "split", None, n_bootstrap,
                                          make_rng(random_state))
        elo[active] = to_elo(theta)
        if n_bootstrap:
            tail = 100 * (1 - confidence) / 2
            low[active], high[active] = np.percentile(to_elo(reps), [tail, 100 - tail],
                                                      axis=0)
        else:
            low[active] = high[active] = elo[active]
        counts[np.ix_(range(3), active, active)] = battle_counts(t.points, t.pairs,
                                                                 len(active))
    wins, losses, ties = (c.sum(axis=1) for c in counts)
    matches = wins + losses + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(matches > 0, (wins + 0.5 * ties) / np.maximum(matches, 1), np.nan)
    table = pd.DataFrame({
        "model": models, "elo": elo, "elo_low": low, "elo_high": high,
        "elo_margin": (high - low) / 2, "wins": wins,
        "losses": losses, "ties": ties, "matches": matches, "win_rate": rate,
        "missed": [int((missed or {}).get(x, 0)) for x in models],
        "imputed": [int((imputed or {}).get(x, 0)) for x in models]})
    for j, opponent in enumerate(models):
        table[f"vs {opponent}"] = ["—" if i == j else vs_text(*(int(c[i, j]) for c in counts))
                                   for i in range(m)]
    order = np.lexsort((np.asarray(models, dtype=object), -np.nan_to_num(elo, nan=-np.inf)))
    return table.iloc[order].reset_index(drop=True)


def impute(results: pd.DataFrame, failed: pd.DataFrame, model: str
           ) -> tuple[pd.DataFrame, dict[str, int]]:
    """TabArena's imputation: each failed (table, model, split) cell takes ``model``'s
    score and error on the same split, where it has one. Returns the results with those
    rows added (``imputed`` True) and the count per model. Not-applicable cells are not
    failures and are never imputed."""
    results = results.assign(imputed=False)
    if failed.empty:
        return results, {}
    base = results[results["model"] == model].set_index(["dataset", "split_id"])
    rows = []
    for cell in failed.itertuples(index=False):
        key = (cell.table, cell.split_id)
        if cell.model == model or key not in base.index:
            continue
        row = base.loc[key].to_dict()
        row.update(dataset=cell.table, split_id=cell.split_id, model=cell.model,
                   imputed=True)
        rows.append(row)
    if not rows:
        return results, {}
    added = pd.DataFrame(rows)
    return (pd.concat([results, added], ignore_index=True),
            added["model"].value_counts().to_dict())
