"""What every checkpoint model does with its state dict, given the shapes its config implies
(each model's ``expected_shapes(config)``): check a file's tensors against them, and draw a
random-weight checkpoint of them in numpy.

:func:`check` is the presence and shape check, with one message layout for every model;
:func:`random_tensors` draws random weights by one rule (named in its docstring) so that
every block of a random checkpoint acts; :func:`check_seed` refuses a bad seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np

from .torch_checkpoint import few

SMALL_STD = 0.02
"""The spread of a random checkpoint's biases, learned tokens and inducing vectors."""


def check(shapes: Mapping[str, tuple[int, ...]], tensors: Mapping[str, np.ndarray], where: str,
          model: str, *, unexpected: Iterable[str] = ()) -> dict[str, np.ndarray]:
    """``tensors`` in the order of ``shapes`` after checking they are exactly those tensors
    with those shapes.

    ValueError starting with ``where`` names the missing, unexpected (``tensors`` not in
    ``shapes``, plus the caller's ``unexpected`` names) or wrong-shaped tensor; ``model``
    describes the config (``"TabICL with embed_dim=128, …"``)."""
    missing = [n for n in shapes if n not in tensors]
    extra = [n for n in tensors if n not in shapes] + list(unexpected)
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing tensors {few(missing)}")
        if extra:
            parts.append(f"unexpected tensors {few(extra)}")
        raise ValueError(f"{where}: {' and '.join(parts)} for its config ({model} has "
                         f"{len(shapes)} tensors)")
    for name, shape in shapes.items():
        got = tuple(np.shape(tensors[name]))
        if got != tuple(shape):
            raise ValueError(f"{where}: tensor {name!r} has shape {list(got)}, expected "
                             f"{list(shape)} for its config")
    return {name: tensors[name] for name in shapes}


def check_seed(seed: object) -> int:
    """``seed`` as an int; ValueError unless it is a non-negative integer."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def random_tensors(shapes: Mapping[str, tuple[int, ...]], seed: int,
                   fixed: Mapping[str, np.ndarray] | None = None,
                   small_std: float = SMALL_STD) -> dict[str, np.ndarray]:
    """Random float32 tensors of ``shapes``, drawn in their order from
    ``numpy.random.default_rng(seed)`` (the same seed, the same weights).

    A name in ``fixed`` takes that value (no draw); a tensor of two or more axes whose name
    ends in ``weight`` is normal(0, 1/√fan_in), fan_in its last axis; a one-axis ``…weight``
    (a norm's scale) is 1; everything else (biases, learned tokens, inducing vectors) is
    normal(0, ``small_std``). Nothing is zeroed, so every block acts; what such weights
    predict is what random weights predict."""
    fixed = fixed or {}
    rng = np.random.default_rng(check_seed(seed))
    tensors: dict[str, np.ndarray] = {}
    for name, shape in shapes.items():
        if name in fixed:
            value = fixed[name]
        elif name.endswith("weight") and len(shape) >= 2:
            value = rng.normal(0.0, 1.0 / math.sqrt(shape[-1]), shape)
        elif name.endswith("weight"):
            value = np.ones(shape)
        else:
            value = rng.normal(0.0, small_std, shape)
        tensors[name] = np.ascontiguousarray(value, dtype=np.float32)
    return tensors
