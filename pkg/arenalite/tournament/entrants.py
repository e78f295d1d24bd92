"""The models of a tournament: a label, a key that pins its parameters, what it can take.

A registry model (``{"name": "knn", "k": 15}`` or the CLI's ``knn:k=15``) becomes a
:class:`RegistryModel`. Its key is its label and parameters as JSON, a checkpoint by its
file's SHA-256, so that rows of a changed model are never mixed with old ones. Before the
run, :meth:`Model.not_applicable` says why a model cannot take a table (its task, a
checkpoint's class or feature limit, the runner), from the model registry's limits. Your
own model joins by subclassing :class:`Model` (its ``predict_timed`` returns the
registry models' outputs and timings).
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .. import models as registry_models
from ..models import registry


@lru_cache(maxsize=32)
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file, cached while its size and modification time stay."""
    stat = Path(path).stat()
    return _file_sha256(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


class Model:
    """A tournament entrant. Subclasses set ``label`` and ``params`` and define
    :meth:`predict_timed`; they must pickle (workers receive them)."""

    label: str = "model"
    params: dict[str, Any] = {}

    def key(self) -> str:
        """What pins this model's outputs: label, parameters, checkpoint hashes (JSON)."""
        return json.dumps({"label": self.label, "params": self.params,
                           "checkpoints": self.checkpoints()}, sort_keys=True, default=str)

    def checkpoints(self) -> dict[str, str]:
        """Parameter name → SHA-256 of the checkpoint file it names."""
        return {}

    def not_applicable(self, task: str, n_features: int, n_classes: int | None,
                       runner: str) -> str | None:
        """Why this model cannot take a table of this shape, or None when it can."""
        return None if runner == "python" else f"no {runner} implementation"

    def predict_timed(self, x_train: Any, y_train: np.ndarray, x_test: Any, task: str,
                      n_classes: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        raise NotImplementedError

    def info(self) -> dict[str, Any]:
        """What tournament.json records of the model."""
        return {"label": self.label, "params": self.params, "checkpoints": self.checkpoints()}


class RegistryModel(Model):
    """A model of the registry (:mod:`arenalite.models`), as a checked model dict."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.spec = registry_models.check_model(spec)
        self.label = registry_models.model_label(spec)
        self.params = {k: v for k, v in self.spec.items() if k != "label"}

    def checkpoints(self) -> dict[str, str]:
        out = {}
        for key, p in registry.entry(self.spec["name"])["params"].items():
            value = self.spec.get(key)
            if p["type"] == "weights" and isinstance(value, (str, Path)):
                out[key] = file_sha256(value)
        return out

    def not_applicable(self, task: str, n_features: int, n_classes: int | None,
                       runner: str) -> str | None:
        """The registry's refusal (runner, task, limits) or the reason the model's own
        ``applicable`` gives (its weights' task, class or feature limits), else None."""
        name = self.spec["name"]
        try:
            registry.check_runner(name, runner)
            registry.check_task(name, task)
            registry.check_limits(name, {"features": n_features, "classes": n_classes})
            applicable = registry.function(name, "applicable")
            if applicable is not None:
                applicable(self.spec, task, n_features, n_classes)
        except (ValueError, OSError) as error:
            return str(error)
        return None

    def predict_timed(self, x_train: Any, y_train: np.ndarray, x_test: Any, task: str,
                      n_classes: int | None) -> tuple[np.ndarray, dict[str, Any]]:
        return registry_models.predict_timed(self.spec, x_train, y_train, x_test, task,
                                             n_classes)


def _scalar(text: str) -> Any:
    if text in ("", "null", "~"):
        return None
    if text in ("true", "false"):
        return text == "true"
    if text[:1] in "'\"" and text[-1:] == text[:1] and len(text) > 1:
        return text[1:-1]
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        return text


def parse_model(text: str) -> dict[str, Any]:
    """``"knn:k=15,label=knn-15"`` → ``{"name": "knn", "k": 15, "label": "knn-15"}``."""
    name, _, options = text.partition(":")
    model: dict[str, Any] = {"name": name.strip()}
    for item in filter(None, (part.strip() for part in options.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"model option {item!r} in {text!r} must look like key=value")
        model[key.strip()] = _scalar(value.strip())
    return model


def as_model(model: Any) -> Model:
    """A :class:`Model` from a model dict, a ``NAME[:key=value,...]`` text or a Model."""
    if isinstance(model, Model):
        return model
    if isinstance(model, str):
        return RegistryModel(parse_model(model))
    if isinstance(model, dict):
        return RegistryModel(model)
    raise TypeError(f"a model is a dict such as {{'name': 'knn', 'k': 5}}, a text such as "
                    f"'knn:k=5' or an arenalite.tournament.Model, got {type(model).__name__}")


def as_models(models: Any) -> list[Model]:
    """Checked models with distinct labels."""
    if isinstance(models, (dict, str, Model)):
        models = [models]
    try:
        out = [as_model(m) for m in models]
    except TypeError as error:
        if "not iterable" in str(error):
            raise TypeError(f"models must be a list of models, got {type(models).__name__}"
                            ) from None
        raise
    if not out:
        raise ValueError("models is empty: a tournament needs at least one model")
    labels = [m.label for m in out]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise ValueError(f"models have duplicate labels {dup}; give them distinct labels "
                         "(label=...)")
    return out
