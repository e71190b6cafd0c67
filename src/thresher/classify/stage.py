"""The build's classifier stage: score each document, annotate every label's score, and drop a
document whose keep labels all score below the bound.

Annotations: `classify.<name>.<label>` = the score (4 decimals; decisions use the exact score).
Drop: `Drop("classify", "low_score", value=best keep score, limit=bound, detail={"model": name,
"label": best keep label})`.

Models are loaded once per process (`load_cached`, keyed by path, size and mtime) and verified
(format version, sha256) when the build starts: `resolve_classifiers` is what the config hash
and the manifest record, so a changed model file changes the run's identity.

Three built-in kinds of model (`thresher.classify.kinds`, where plugins add more): a `.thc` file
(thresher's linear classifier), a user's ONNX sequence classifier (`.onnx`, with its
`tokenizer.json`; the `onnx` extra) and a fastText supervised model (`.bin`/`.ftz`,
`thresher.classify.fasttext`: the scores fastText's `predict` gives; the `fasttext` extra). All take
the scan loop's batches (`pipeline.BatchEvaluator`).
A `.thc` batch gives each document exactly the scores it gets alone. ONNX Runtime's kernels may
round a text's logits differently in another batch shape (its padded length), in the last bits; the
batches are the same on every engine and worker count (the scan loop forms them from a partition's
documents alone), so a build's output is still deterministic, and a document judged alone (the
library `Pipeline`, `explain`, a retried task) is scored as a batch of one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from thresher.classify.config import ClassifierPlan, ClassifyConfig
from thresher.classify.kinds import BUILTIN_KINDS, CLASSIFIERS, ClassifierModel, kind_of
from thresher.classify.model import Model, numpy_available, round_array
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.core.stages import Evaluation

DIGITS = 4
_loaded: dict[tuple[Any, ...], Any] = {}


def annotation_keys(name: str, labels: tuple[str, ...] | list[str]) -> list[str]:
    return [f"classify.{name}.{label}" for label in labels]


def load_cached(path: str, tokenizer: str | None = None, max_len: int = 256, kind: str | None = None) -> Any:
    """The model at `path`, loaded by its classifier kind (`thresher.classify.kinds`: the one `kind`
    names, else the one its file name says) and checked once per process."""
    spec = CLASSIFIERS.get(kind) if kind is not None else kind_of(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ConfigError(f"classifier model not found: {path}") from None
    key: tuple[Any, ...] = (spec.name, os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if tokenizer is not None:
        try:
            tst = os.stat(tokenizer)
        except FileNotFoundError:
            what = "ONNX" if spec.name == "onnx" else spec.name
            raise ConfigError(
                f"tokenizer of {what} classifier {path} not found: {tokenizer} (--classifier-tokenizer)"
            ) from None
        key += (os.path.abspath(tokenizer), tst.st_size, tst.st_mtime_ns, max_len)
    model = _loaded.get(key)
    if model is None:
        model = spec.loader()(path, tokenizer=tokenizer, max_len=max_len)
        if not isinstance(model, ClassifierModel):
            raise ConfigError(
                f"classifier {path}: the {spec.name} kind loaded {type(model).__name__}, which lacks labels, "
                "sha256 or scores_array"
            )
        _loaded[key] = model
    return model


def _load(plan: ClassifierPlan, config: ClassifyConfig) -> Any:
    return load_cached(plan.path, plan.tokenizer, config.onnx_max_len, plan.kind)


def resolve_classifiers(config: ClassifyConfig) -> list[dict[str, Any]]:
    """Load and check every configured model: what the manifest records (name, path, sha256, labels,
    keep, bound). Raises `ConfigError` / `ModelFileError` with one line before any work starts."""
    resolved = []
    for plan in config.plan():
        model = _load(plan, config)
        missing = [label for label in plan.keep if label not in model.labels]
        if missing:
            raise ConfigError(
                f"--classifier-keep {missing[0]!r}: classifier {plan.name!r} ({plan.path}) has labels "
                f"{', '.join(model.labels)}"
            )
        record = {"name": plan.name, "path": plan.path, "sha256": model.sha256, "labels": list(model.labels),
                  "keep": list(plan.keep), "min_score": plan.min_score}
        if plan.kind not in BUILTIN_KINDS or plan.kind == "fasttext":  # which reader read a file not .thc/.onnx
            record["kind"] = plan.kind
        if isinstance(model, Model) and "heldout" in model.info:  # its held-out calibration, for the report
            record["heldout"] = model.info["heldout"]
        if plan.tokenizer is not None:
            import hashlib

            with open(plan.tokenizer, "rb") as f:
                record |= {"tokenizer": plan.tokenizer, "tokenizer_sha256": hashlib.sha256(f.read()).hexdigest(),
                           "max_len": config.onnx_max_len}
        resolved.append(record)
    return resolved


def classifier_records(config: ClassifyConfig) -> dict[str, Any]:
    """`{"classifiers": [...]}` for the manifest of a build that ran models, else `{}`."""
    return {"classifiers": resolve_classifiers(config)} if config.models else {}


def _fill_slots(cls: type, names: tuple[str, ...]) -> tuple[Any, ...]:
    """The setters of a slotted frozen dataclass's fields, in `names` order: `object.__new__(cls)`
    then each setter makes the instance its constructor makes (these classes have no
    `__post_init__`; a test checks equality), without the per-field `object.__setattr__` calls
    of a frozen `__init__`."""
    fields = getattr(cls, "__dataclass_fields__", {})
    if list(fields) != list(names) or getattr(cls, "__post_init__", None) is not None:
        raise TypeError(f"{cls.__name__} no longer has exactly the fields {names}")
    return tuple(cls.__dict__[field].__set__ for field in names)


_EVALUATION_SLOTS = _fill_slots(Evaluation, ("annotations", "drops"))
_DROP_SLOTS = _fill_slots(Drop, ("stage", "reason", "value", "limit", "detail"))


class Classifier:
    """Scores one document with one model (see the module docstring)."""

    name = "classify"

    def __init__(self, plan: ClassifierPlan, model: Any) -> None:
        self.plan = plan
        self.model = model
        self.onnx = not isinstance(model, Model)  # scores through scores_array only (ONNX, a plugin's kind)
        self.keys = annotation_keys(plan.name, model.labels)
        self.annotates = tuple(self.keys)
        self.keep_index = [model.labels.index(label) for label in plan.keep]

    def evaluate(self, doc: Document) -> Evaluation:
        """The scores as annotations and the drop, if any, in one pure pass (the runner writes the
        annotations: deciding never mutates)."""
        if self.onnx:
            return self.evaluate_batch([doc])[0]
        return self.decide(self.model.score_list(doc.text))

    def evaluate_batch(self, docs: Sequence[Document]) -> list[Evaluation]:
        """`evaluate` of many documents at once (the scan loop's batches, `pipeline.BatchEvaluator`):
        NumPy scores the batch when installed, with the same float64 scores as `score_list`, and
        rounds and decides the batch as arrays (`round_array`: Python's rounding, bit for bit)."""
        texts = [doc.text for doc in docs]
        if not self.onnx and not numpy_available():
            return [self.decide(self.model.score_list(t)) for t in texts]
        return self.decide_batch(self.model.scores_array(texts))

    def decide_batch(self, scores: Any) -> list[Evaluation]:
        """`decide` of each row of a float64 score array (texts x labels), as arrays; the
        `Evaluation`s and `Drop`s are made by `_fill_slots` (the same objects, at a third of the
        cost of their frozen constructors: ~1.5 of the ~4 µs a short document took here)."""
        import numpy as np

        rounded = round_array(scores, DIGITS)
        keys = self.keys
        new, evaluation = object.__new__, _EVALUATION_SLOTS
        set_annotations, set_drops = evaluation
        out = []
        if not self.keep_index:
            for row in rounded:
                ev = new(Evaluation)
                set_annotations(ev, dict(zip(keys, row, strict=True)))
                set_drops(ev, [])
                out.append(ev)
            return out
        keep_scores = scores[:, self.keep_index]
        best = np.argmax(keep_scores, axis=1)  # the first of equal maxima, as `decide`
        dropped = (keep_scores[np.arange(len(scores)), best] < self.plan.min_score).tolist()
        best_label = [self.keep_index[b] for b in best.tolist()]
        set_stage, set_reason, set_value, set_limit, set_detail = _DROP_SLOTS
        bound, name, labels = self.plan.min_score, self.plan.name, self.model.labels
        for row, drop, label in zip(rounded, dropped, best_label, strict=True):
            ev = new(Evaluation)
            set_annotations(ev, dict(zip(keys, row, strict=True)))
            if drop:
                d = new(Drop)
                set_stage(d, "classify")
                set_reason(d, "low_score")
                set_value(d, row[label])
                set_limit(d, bound)
                set_detail(d, {"model": name, "label": labels[label]})
                set_drops(ev, [d])
            else:
                set_drops(ev, [])
            out.append(ev)
        return out

    def decide(self, scores: Sequence[float]) -> Evaluation:
        """The annotations and the drop, if any, for one document's scores (in label order)."""
        annotations = dict(zip(self.keys, [round(score, DIGITS) for score in scores], strict=True))
        keep = self.keep_index
        if not keep:
            return Evaluation(annotations, [])
        best = keep[0]
        for i in keep[1:]:  # the best keep label; the first on a tie
            if scores[i] > scores[best]:
                best = i
        bound = self.plan.min_score
        if scores[best] >= bound:
            return Evaluation(annotations, [])
        drop = Drop("classify", "low_score", value=round(scores[best], DIGITS), limit=bound,
                    detail={"model": self.plan.name, "label": self.model.labels[best]})
        return Evaluation(annotations, [drop])

    def check_all(self, doc: Document) -> list[Drop]:
        return self.evaluate(doc).drops

    def check(self, doc: Document) -> Drop | None:
        drops = self.check_all(doc)
        return drops[0] if drops else None

    def annotate(self, doc: Document) -> None:
        doc.annotations.update(self.evaluate(doc).annotations)


def build_classifier_stages(config: ClassifyConfig) -> list[Classifier]:
    return [Classifier(plan, _load(plan, config)) for plan in config.plan()]
