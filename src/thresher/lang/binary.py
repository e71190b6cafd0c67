"""A trainable "target language vs other" detector, adapted to a domain from the user's own text.

General detectors are trained on clean prose; web text in a domain (tech blogs with code, formulas,
shell sessions) misleads them. This trains a linear classifier of `thresher.classify` (fastText's
model, no dependency) on the prose of texts the user labels as the target language or not, and
scores the prose of new texts the same way: code blocks, code-like lines, URLs and math are
removed first (`thresher.lang.prose`), at training and at scoring time, so the model learns the
language and not the code around it.

>>> detector = train_binary_detector("en", english_texts, other_texts)
>>> detector.save("en.thc"); detector.score("def main(): ...\\nThis post explains ...")  # P(en)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from thresher.lang.prose import prose_paragraphs

OTHER = "other"
MAX_CHARS = 2048


def prose_of(text: str, max_chars: int = MAX_CHARS) -> str:
    """The text a binary detector reads: the prose paragraphs, or the text itself when none."""
    paragraphs = prose_paragraphs(text, max_chars)
    return "\n".join(p.text for p in paragraphs) if paragraphs else text[:max_chars]


@dataclass(frozen=True, slots=True)
class BinaryLanguageDetector:
    """P(target language) of a text's prose, from a trained `thresher.classify.Model`."""

    target: str
    model: Any  # thresher.classify.Model with labels (target, "other")
    max_chars: int = MAX_CHARS

    def score(self, text: str) -> float:
        return float(self.model.scores(prose_of(text, self.max_chars))[self.target])

    def is_target(self, text: str, threshold: float = 0.5) -> bool:
        return self.score(text) >= threshold

    def save(self, path: str) -> str:
        from thresher.classify.format import save_model

        saved: str = save_model(self.model, path)
        return saved


def train_binary_detector(target: str, target_texts: Iterable[str], other_texts: Iterable[str],
                          epochs: int = 5, **options: Any) -> BinaryLanguageDetector:
    """Train on the prose of `target_texts` (label `target`) and `other_texts` (label `other`).
    `options` go to `thresher.classify.training` (dim, lr, word_ngrams, ...)."""
    from thresher.classify import train

    examples = [(prose_of(t), target) for t in target_texts] + [(prose_of(t), OTHER) for t in other_texts]
    model = train(examples, labels=(target, OTHER), epochs=epochs, **options)
    return BinaryLanguageDetector(target, model)


def load_binary_detector(path: str, target: str) -> BinaryLanguageDetector:
    from thresher.classify import load_model

    return BinaryLanguageDetector(target, load_model(path))
