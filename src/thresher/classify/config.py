"""Settings of the build's classifier stage: which models run, which labels a document must score
high enough on, and the bounds.

    --classifier quality=q.thc,tox=tox.thc --classifier-keep quality:good,tox:neither \
        --classifier-min-score quality:0.5,tox:0.8

A model given without `NAME=` is named after its file's stem. Its file name says its kind
(`thresher.classify.kinds`): a path ending `.onnx` is a user's transformer model (the `onnx` extra),
read with the `tokenizer.json` beside it or the one `--classifier-tokenizer NAME=PATH` names; a path
ending `.bin` or `.ftz` is a fastText model, whose labels are named without fastText's `__label__`
prefix (`--classifier-keep hq` and `--classifier-keep __label__hq` name the same label); a
plugin's kind claims its own endings; any other file is a `.thc` model. A keep entry is `LABEL` (when one
model runs) or `NAME:LABEL`; a model without a keep entry only annotates. A min-score entry is
`SCORE` (every model) or `NAME:SCORE`. Whether the files exist and hold the labels is checked when
the build starts (`thresher.classify.stage.resolve_classifiers`): a config never reads files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING

from thresher.core.config import setting

if TYPE_CHECKING:
    from thresher.classify.kinds import ClassifierKind


FASTTEXT_LABEL_PREFIX = "__label__"


@dataclass(frozen=True, slots=True)
class ClassifierPlan:
    name: str
    path: str
    keep: tuple[str, ...]  # empty: annotate only
    min_score: float
    tokenizer: str | None = None  # an ONNX model's tokenizer.json (None: a kind that reads none)
    kind: str = "thc"  # its classifier kind (thresher.classify.kinds), from the file name


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassifyConfig:
    models: tuple[str, ...] | None = setting(
        None, "classifier models (.thc, .onnx, fastText .bin/.ftz) run on every document that passed the quality "
        "rules, NAME=PATH each (comma-separated); writes classify.NAME.LABEL scores", flag="--classifier",
    )
    keep: tuple[str, ...] | None = setting(
        None, "labels a document must score at least the min score on to be kept: LABEL, or NAME:LABEL with "
        "several models (a model without one only annotates)", flag="--classifier-keep",
    )
    min_score: tuple[str, ...] = setting(
        ("0.5",), "the score a keep label needs: SCORE for every model, or NAME:SCORE", flag="--classifier-min-score",
    )
    tokenizers: tuple[str, ...] | None = setting(
        None, "tokenizer.json of an ONNX classifier (a --classifier path ending .onnx): NAME=PATH each; default: "
        "tokenizer.json beside the model", flag="--classifier-tokenizer",
    )
    onnx_max_len: int = setting(256, "ONNX classifiers: tokens of a document scored (the rest is cut)")

    def __post_init__(self) -> None:
        self.plan()  # raises ValueError (a ConfigError when built from flags or TOML) on a contradiction

    def plan(self) -> list[ClassifierPlan]:
        """Each model with its keep labels and bound, in the order given."""
        models: dict[str, str] = {}
        for entry in self.models or ():
            name, sep, path = entry.partition("=")
            if not sep:
                name, path = PurePath(entry).stem, entry
            name, path = name.strip(), path.strip()
            if not name or not path or "." in name:
                raise ValueError(f"classifier {entry!r}: expected NAME=PATH with a NAME without dots")
            if name in models:
                raise ValueError(f"two classifiers are named {name!r}: name them NAME=PATH")
            models[name] = path
        keep: dict[str, list[str]] = {name: [] for name in models}
        for entry in self.keep or ():
            name, sep, label = entry.rpartition(":")
            if not sep:
                if len(models) != 1:
                    raise ValueError(f"--classifier-keep {entry!r}: name the model (NAME:LABEL)" if models
                                     else "--classifier-keep needs a --classifier model")
                name = next(iter(models))
            if name not in keep:
                raise ValueError(
                    f"--classifier-keep {entry!r}: no classifier named {name!r} (known: {', '.join(models) or 'none'})"
                )
            keep[name].append(label)
        default, scores = 0.5, {}
        for entry in self.min_score:
            name, sep, value = entry.rpartition(":")
            try:
                score = float(value)
            except ValueError:
                raise ValueError(f"--classifier-min-score {entry!r}: not a number") from None
            if not 0.0 <= score <= 1.0:
                raise ValueError(f"--classifier-min-score {entry!r}: a score is in [0, 1]")
            if not sep:
                default = score
            elif name not in models:
                raise ValueError(f"--classifier-min-score {entry!r}: no classifier named {name!r}")
            else:
                scores[name] = score
        kinds: dict[str, ClassifierKind] = {}
        if models:
            from thresher.classify.kinds import kind_of  # the built-in kinds, and plugins for other files

            kinds = {name: kind_of(path) for name, path in models.items()}
        tokenizers: dict[str, str] = {}
        for entry in self.tokenizers or ():
            name, sep, path = entry.partition("=")
            if not sep:
                if len(models) != 1:
                    raise ValueError(f"--classifier-tokenizer {entry!r}: name the model (NAME=PATH)")
                name, path = next(iter(models)), entry
            if name not in models or not kinds[name].tokenizer:
                raise ValueError(f"--classifier-tokenizer {entry!r}: no ONNX classifier named {name!r}")
            tokenizers[name] = path
        if self.onnx_max_len < 1:
            raise ValueError("classify.onnx_max_len must be at least 1")
        plans = []
        for name, path in models.items():
            tokenizer = None
            if kinds[name].tokenizer:
                tokenizer = tokenizers.get(name, str(PurePath(path).parent / "tokenizer.json"))
            labels = tuple(keep[name])
            if kinds[name].name == "fasttext":
                labels = tuple(label.removeprefix(FASTTEXT_LABEL_PREFIX) for label in labels)
            plans.append(ClassifierPlan(name, path, labels, scores.get(name, default), tokenizer, kinds[name].name))
        return plans
