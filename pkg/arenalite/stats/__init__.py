"""Statistical comparisons on the per-dataset score matrix (datasets are the unit).

Numeric cores (pure functions on arrays): :mod:`.friedman` (Friedman, Iman-Davenport,
Nemenyi, critical difference, cliques), :mod:`.wilcoxon` (signed-rank test, Holm).
Methods returning results: :mod:`.frequentist`, :mod:`.gate`, :mod:`.bayesian`,
:mod:`.sensitivity`; :mod:`.checks` holds their shared argument checks;
:mod:`.bootstrap` the unit bootstrap (counts, percentile intervals) of Elo, IQM and rank
sensitivity.
"""
