"""TabPFN v3's ensemble members as ``tabpfn`` 9.2.0's estimators draw them from ``random_state``.

``TabPFNClassifier`` / ``TabPFNRegressor`` run every member on its own view of the table. What
each member gets is decided in ``fit`` by numpy ``Generator``s seeded from the integer
``random_state`` (defined in docs/models.md, "TabPFN preprocessing and ensemble"):

* :func:`draw_members` — per member: the feature shift count, the class permutation
  (classification), the index of its preprocessor config in the inference config's
  ``PREPROCESS_TRANSFORMS`` (regression: also of its target transform in
  ``REGRESSION_Y_PREPROCESS_TRANSFORMS``) and the seed of its preprocessing pipeline.

The draws are bit-equal to the package's (``generate_classification_ensemble_configs``,
``generate_regression_ensemble_configs`` and ``TabPFNEnsemblePreprocessor.pipeline_seeds``)
for an integer ``random_state`` and one model. Feature and row subsampling (more features
than a config's ``max_features_per_estimator``, ``SUBSAMPLE_SAMPLES``) are not reproduced.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAXIMUM_FEATURE_SHIFT = 1000
"""The first feature shift is drawn from [0, MAXIMUM_FEATURE_SHIFT)."""
CLASS_SHUFFLE_OVERESTIMATE_FACTOR = 3
""""shuffle" draws this many candidate class permutations per member."""
CLASS_SHIFT_METHODS = ("shuffle", "rotate", None)
_INT64_MAX = int(np.iinfo(np.int64).max)
_INT32_MAX = int(np.iinfo(np.int32).max)


@dataclass(frozen=True)
class Members:
    """The members' draws, in the package's member order."""

    feature_shifts: np.ndarray  # M, int64: each member's ``feature_shift_count``
    config_index: np.ndarray  # M, int64: index into PREPROCESS_TRANSFORMS
    class_perms: np.ndarray | None  # M × C, int64 (classification with a shift method)
    target_index: np.ndarray | None  # M, int64: into REGRESSION_Y_PREPROCESS_TRANSFORMS
    pipeline_seeds: np.ndarray  # M, int64: each member's preprocessing random_state

    @property
    def n_members(self) -> int:
        return len(self.feature_shifts)


def _balance(n_items: int, count: int, n_members: int) -> list[int]:
    """The package's ``_balance`` of item indices plus its leftover rule.

    Each item ``count`` times in order, then the first items again until there are
    ``n_members``.
    """
    out = [i for i in range(n_items) for _ in range(count)]
    return out + list(range(n_members - len(out)))


def _feature_shifts(rng: np.random.Generator, n_members: int) -> np.ndarray:
    start = rng.integers(0, MAXIMUM_FEATURE_SHIFT)
    return rng.choice(np.arange(start, start + n_members), size=n_members, replace=False)


def class_permutations(rng: np.random.Generator, n_members: int, n_classes: int,
                       method: str | None) -> np.ndarray | None:
    """The package's ``_generate_class_permutations`` (M × C, or None for no shift).

    "rotate": a ``rng.permutation(C)`` of shifts, then per member a ``rng.choice(C)`` of
    them; each permutation is ``np.roll(arange(C), shift)``. "shuffle": the argsort of a
    (3·M) × C ``rng.random`` draw per row, deduplicated (``np.unique(axis=0)``, sorted
    lexicographically), each unique one ``M // U`` times, then ``M % U`` more picked by
    ``rng.choice(U, size=M % U)``.
    """
    if method is None:
        return None
    if method == "rotate":
        arange = np.arange(n_classes)
        shifts = rng.permutation(n_classes).tolist()
        perms = [np.roll(arange, s) for s in shifts]
        return np.stack([perms[c] for c in rng.choice(n_classes, n_members)])
    if method == "shuffle":
        noise = rng.random((n_members * CLASS_SHUFFLE_OVERESTIMATE_FACTOR, n_classes))
        uniqs = np.unique(np.argsort(noise, axis=1), axis=0)
        chosen = [u for u in uniqs for _ in range(n_members // len(uniqs))]
        extra = n_members % len(uniqs)
        if extra > 0:
            chosen += [uniqs[i] for i in rng.choice(len(uniqs), size=extra)]
        return np.stack(chosen)
    raise ValueError(f"class_shift_method must be one of {CLASS_SHIFT_METHODS}, got {method!r}")


def pipeline_seeds(random_state: int, n_members: int) -> np.ndarray:
    """``TabPFNEnsemblePreprocessor.pipeline_seeds``: a fresh ``default_rng(random_state)``
    draws three int64 seeds (pipelines, features, rows); the first seeds a generator that
    draws the members' int32 pipeline seeds."""
    seeds = np.random.default_rng(random_state).integers(0, _INT64_MAX, 3)
    return np.random.default_rng(seed=seeds[0]).integers(0, _INT32_MAX, n_members)


def draw_members(n_members: int, n_configs: int, random_state: int, *,
                 n_classes: int | None = None, class_shift_method: str | None = "shuffle",
                 n_target_transforms: int | None = None) -> Members:
    """The members' draws for an integer ``random_state`` (the package's static seed).

    Classification: pass ``n_classes`` (and the inference config's ``CLASS_SHIFT_METHOD``);
    regression: ``n_target_transforms`` (the length of ``REGRESSION_Y_PREPROCESS_TRANSFORMS``).
    One ``default_rng(random_state)`` draws the feature shifts (a start in [0, 1000), then
    a permutation of start … start+M−1 by ``rng.choice(replace=False)``), then the class
    permutations. Configs are balanced, not drawn: each (config) or (config, target
    transform) combination in ``itertools.product`` order ``M // K`` times, then the first
    ``M % K`` again.
    """
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise ValueError(f"random_state must be an integer, got {random_state!r}")
    if n_members < 1 or n_configs < 1:
        raise ValueError("n_members and n_configs must be at least 1")
    if (n_classes is None) == (n_target_transforms is None):
        raise ValueError("pass n_classes (classification) or n_target_transforms (regression)")
    rng = np.random.default_rng(int(random_state))
    shifts = _feature_shifts(rng, n_members)
    perms = target = None
    if n_classes is not None:
        perms = class_permutations(rng, n_members, n_classes, class_shift_method)
        config = np.array(_balance(n_configs, n_members // n_configs, n_members))
    else:
        k = n_configs * n_target_transforms
        combo = np.array(_balance(k, n_members // k, n_members))
        config, target = combo // n_target_transforms, combo % n_target_transforms
    return Members(feature_shifts=shifts.astype(np.int64), config_index=config.astype(np.int64),
                   class_perms=None if perms is None else perms.astype(np.int64),
                   target_index=None if target is None else target.astype(np.int64),
                   pipeline_seeds=pipeline_seeds(int(random_state), n_members).astype(np.int64))
