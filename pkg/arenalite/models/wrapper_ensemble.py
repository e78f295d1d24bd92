"""The ensemble draws and the final softmax of the TabICL-family scikit-learn wrappers.

``tabicl`` 2.2.0's ``Shuffler`` and Google ``tabfm`` 1.0.1's ``FeatureShuffler`` draw the
members' feature permutations from their own ``random.Random(random_state)`` by the same
rules (tabfm has the "none" and "random" methods; tabicl also "shift" and "latin"), and
both wrappers end with the same numpy softmax. Both models' ``ensemble`` modules take them
from here (docs/models.md, "TabICL preprocessing and ensemble", "Google TabFM (tabfm)").
"""

from __future__ import annotations

import itertools
import random

import numpy as np

SHUFFLE_METHODS = ("none", "shift", "random", "latin")
MAX_ELEMENTS_FOR_LATIN = 4000
"""Above this many features (or classes) a "latin" shuffle falls back to "random"."""
SOFTMAX_TEMPERATURE = 0.9


def latin_square(n: int, rng: random.Random) -> list[list[int]]:
    """tabicl's random Latin square of 0 … n−1 drawn from ``rng``; its rows.

    Recursive construction (unrolled): draw a symbol with ``rng.choice`` from those left
    and remove it, down to one symbol; then, from the innermost square [[s]] outwards,
    append a copy of row 0 and insert the symbol drawn at that level at position i of row
    i. Then ``rng.shuffle`` the rows, transpose, and ``rng.shuffle`` the rows again.
    """
    symbols = list(range(n))
    drawn = []
    while len(symbols) > 1:
        sym = rng.choice(symbols)
        symbols.remove(sym)
        drawn.append(sym)
    square = [symbols]
    for sym in reversed(drawn):
        square.append(square[0].copy())
        for i in range(len(square)):
            square[i].insert(i, sym)
    rng.shuffle(square)
    trans = list(zip(*square, strict=True))
    rng.shuffle(trans)
    return [list(row) for row in trans]


def shuffle_patterns(n_elements: int, method: str, n_estimators: int,
                     random_state: int | None) -> list[list[int]]:
    """The wrappers' ``Shuffler(n_elements, method, random_state).shuffle(n_estimators)``.

    Its own ``random.Random(random_state)``. "none" or a single estimator: the identity
    only; "shift": all n circular shifts, shift i being [n−i, …, n−1, 0, …, n−i−1];
    "random": ``rng.sample`` of min(n_estimators, n!) of all permutations for n ≤ 5, else
    n_estimators draws of ``rng.sample(range(n), n)``; "latin": :func:`latin_square`
    ("random" above 4000 elements).
    """
    rng = random.Random(random_state)
    indices = list(range(n_elements))
    if n_elements > MAX_ELEMENTS_FOR_LATIN and method == "latin":
        method = "random"
    if method == "none" or n_estimators == 1:
        return [indices]
    if method == "shift":
        return [indices[-i:] + indices[:-i] for i in range(n_elements)]
    if method == "random":
        if n_elements <= 5:
            perms = [list(p) for p in itertools.permutations(indices)]
            return rng.sample(perms, min(n_estimators, len(perms)))
        return [rng.sample(indices, n_elements) for _ in range(n_estimators)]
    return latin_square(n_elements, rng)


def softmax(x: np.ndarray, temperature: float = SOFTMAX_TEMPERATURE) -> np.ndarray:
    """softmax(x / temperature) over the last axis, max-shifted (the wrappers' numpy one)."""
    x = x / temperature
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)
