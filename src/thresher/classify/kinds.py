"""The registry of classifier kinds: which model formats `--classifier NAME=PATH` reads, and how.

A kind is a `ClassifierKind`: its name, the file-name endings that identify its model files, whether
a model comes with a tokenizer file, and `load`, a `module:function` imported only when a model of
the kind is loaded:

    load(path: str, *, tokenizer: str | None, max_len: int) -> ClassifierModel

The built-ins are `thc` (thresher's own linear classifier, `thresher.classify.format`), `onnx`
(a user's transformer exported to ONNX, with its `tokenizer.json`; the `onnx` extra) and `fasttext`
(a fastText supervised model, `.bin` or quantized `.ftz`, read by `thresher.classify.fasttext`; the
`fasttext` extra). A third-party
package adds a kind through an entry point in the `thresher.classifiers` group, naming a
`ClassifierKind`; a model file whose name ends with one of its suffixes is then loaded by it. The
model is chosen by its file name, as an input is by its own: a file that no kind claims is read as
a `.thc` model (and refused with a one-line `ModelFileError` if it is not one).

What the classifier stage (`thresher.classify.stage`) asks of a loaded model is `ClassifierModel`:
its labels, the sha256 of its file (the manifest records it and it enters the config hash), and
`scores_array(texts)`, the scores of every label for each text as a float64 NumPy array (texts x
labels). A text's scores must not depend on the other texts of the call: the build scores the scan
loop's batches and a document alone (`explain`, the library `Pipeline`) alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from thresher.registry import Registry, load_object


@runtime_checkable
class ClassifierModel(Protocol):
    labels: tuple[str, ...]
    sha256: str

    def scores_array(self, texts: Sequence[str]) -> Any:
        """A float64 array (len(texts) x len(labels)): each text's score of every label, in [0, 1]."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassifierKind:
    name: str
    load: str  # `module:function`, imported when a model of this kind is loaded
    suffixes: tuple[str, ...] = ()  # lower-case endings of the model files of this kind
    tokenizer: bool = False  # a model comes with a tokenizer file (beside it, or --classifier-tokenizer)

    def loader(self) -> Any:
        return load_object(self.load)


def _check(obj: object) -> ClassifierKind:
    if not isinstance(obj, ClassifierKind):
        raise TypeError(f"a thresher.classifiers entry point must name a ClassifierKind, not {obj!r}")
    return obj


DEFAULT_KIND = "thc"
BUILTIN_KINDS = ("thc", "onnx", "fasttext")

CLASSIFIERS: Registry[ClassifierKind] = Registry("classifier kind", "thresher.classifiers", {}, check=_check)
for _kind in (
    ClassifierKind(name="thc", load="thresher.classify.format:load_thc", suffixes=(".thc",)),
    ClassifierKind(name="onnx", load="thresher.classify.transformer:load_onnx", suffixes=(".onnx",), tokenizer=True),
    ClassifierKind(name="fasttext", load="thresher.classify.fasttext:load_fasttext", suffixes=(".bin", ".ftz")),
):
    CLASSIFIERS.register(_kind.name, _kind)


def kind_of(path: str) -> ClassifierKind:
    """The kind of the model file `path`, by its name: a built-in's suffix first (no plugin is looked
    up for a `.thc`, `.onnx`, `.bin` or `.ftz` file), else the plugin kind with the longest matching suffix, else
    `thc`."""
    low = path.lower()
    for names in (CLASSIFIERS.names_so_far, CLASSIFIERS.names):
        best: ClassifierKind | None = None
        best_len = 0
        for name in names():
            kind = CLASSIFIERS.get(name)
            for suffix in kind.suffixes:
                if len(suffix) > best_len and low.endswith(suffix.lower()):
                    best, best_len = kind, len(suffix)
        if best is not None:
            return best
    return CLASSIFIERS.get(DEFAULT_KIND)
