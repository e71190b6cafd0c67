"""The build's classifier stage: score each document, annotate every label's score, and drop a
document whose keep labels all score below the bound.

Annotations: `classify.<name>.<label>` = the score (4 decimals; decisions use the exact score).
Drop: `Drop("classify", "low_score", value=best keep score, limit=bound, detail={"model": name,
"label": best keep label})`.

Models are loaded once per process (`load_cached`, keyed by path, size and mtime) and verified
(format version, sha256) when the build starts: `resolve_classifiers` is what the config hash
and the manifest record, so a changed model file changes the run's identity.
"""

from __future__ import annotations

import os
from typing import Any

from thresher.classify.config import ClassifierPlan, ClassifyConfig
from thresher.classify.format import load_model
from thresher.classify.model import Model
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError

DIGITS = 4
_loaded: dict[tuple[str, int, int], Model] = {}


def annotation_keys(name: str, labels: tuple[str, ...] | list[str]) -> list[str]:
    return [f"classify.{name}.{label}" for label in labels]


def load_cached(path: str) -> Model:
    """The model at `path`, loaded (and checksum-verified) once per process."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"classifier model not found: {path}") from None
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    model = _loaded.get(key)
    if model is None:
        model = _loaded[key] = load_model(path)
    return model


def resolve_classifiers(config: ClassifyConfig) -> list[dict[str, Any]]:
    """Load and check every configured model: what the manifest records (name, path, sha256, labels,
    keep, bound). Raises `ConfigError` / `ModelFileError` with one line before any work starts."""
    resolved = []
    for plan in config.plan():
        model = load_cached(plan.path)
        missing = [label for label in plan.keep if label not in model.labels]
        if missing:
            raise ConfigError(
                f"--classifier-keep {missing[0]!r}: classifier {plan.name!r} ({plan.path}) has labels {', '.join(model.labels)}"
            )
        resolved.append({"name": plan.name, "path": plan.path, "sha256": model.sha256, "labels": list(model.labels),
                         "keep": list(plan.keep), "min_score": plan.min_score})
    return resolved


def classifier_records(config: ClassifyConfig) -> dict[str, Any]:
    """`{"classifiers": [...]}` for the manifest of a build that ran models, else `{}`."""
    return {"classifiers": resolve_classifiers(config)} if config.models else {}


class Classifier:
    """Scores one document with one model (see the module docstring)."""

    name = "classify"

    def __init__(self, plan: ClassifierPlan, model: Model) -> None:
        self.plan = plan
        self.model = model
        self.keys = annotation_keys(plan.name, model.labels)
        self.keep_index = [model.labels.index(label) for label in plan.keep]

    def check(self, doc: Document) -> Drop | None:
        scores = self.model.score_list(doc.text)
        annotations = doc.annotations
        for key, score in zip(self.keys, scores, strict=True):
            annotations[key] = round(score, DIGITS)
        if not self.keep_index:
            return None
        best = max(self.keep_index, key=lambda i: (scores[i], -i))
        bound = self.plan.min_score
        if scores[best] >= bound:
            return None
        return Drop("classify", "low_score", value=round(scores[best], DIGITS), limit=bound,
                    detail={"model": self.plan.name, "label": self.model.labels[best]})


def build_classifier_stages(config: ClassifyConfig) -> list[Classifier]:
    return [Classifier(plan, load_cached(plan.path)) for plan in config.plan()]
