"""`words`: a classifier you write by hand, as a JSON file of word weights (`NAME.words.json`).

    {
      "labels": ["other", "cooking"],
      "bias": {"cooking": -3.0},
      "weights": {"cooking": {"flour": 1.5, "oven": 1.5, "simmer": 2.0, "recipe": 1.0}}
    }

A label's logit is its bias plus the weights of the distinct words of the text (lower-cased runs of
letters and digits; a word counts once however often it repeats, so stuffing a page with one word
buys no more than using it once); the scores are the softmax of the logits. Labels missing from
`bias` or `weights` have 0 there. That is a linear bag-of-words model with a handful of features:
no training data needed, every decision explainable by the words that made it, and a start for a
topic filter before there is a labelled set to train a `.thc` model on (`thresher classify train`).

A file is checked when the build starts: unreadable JSON, no labels or a weight for an unknown
label stop the build with one line naming the file.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thresher.classify.kinds import ClassifierKind
from thresher.core.errors import ConfigError

# Files ending `.words.json` are this kind: `--classifier topic=topic.words.json`.
KIND = ClassifierKind(name="words", load="thresher_word_weights:load", suffixes=(".words.json",))

_WORD = re.compile(r"\w+")


class WordWeights:
    def __init__(self, labels: Sequence[str], bias: dict[str, float], weights: dict[str, dict[str, float]],
                 sha256: str) -> None:
        self.labels = tuple(labels)
        self.sha256 = sha256
        self.bias = [float(bias.get(label, 0.0)) for label in self.labels]
        # word -> its weight for each label, in label order
        self.rows: dict[str, list[float]] = {}
        for i, label in enumerate(self.labels):
            for word, weight in weights.get(label, {}).items():
                self.rows.setdefault(word.lower(), [0.0] * len(self.labels))[i] += float(weight)

    def logits(self, text: str) -> list[float]:
        logits = list(self.bias)
        for word in sorted(set(_WORD.findall(text.lower()))):  # a fixed order: the same float sums every time
            row = self.rows.get(word)
            if row is not None:
                for i, weight in enumerate(row):
                    logits[i] += weight
        return logits

    def scores_array(self, texts: Sequence[str]) -> Any:
        """Softmax scores (texts x labels, float64); each text's row depends on that text alone."""
        import numpy as np

        logits = np.array([self.logits(text) for text in texts], dtype=np.float64).reshape(len(texts),
                                                                                           len(self.labels))
        if len(texts) == 0:
            return logits
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def scores(self, text: str) -> dict[str, float]:
        return dict(zip(self.labels, self.scores_array([text])[0].tolist(), strict=True))


def load(path: str, *, tokenizer: str | None = None, max_len: int = 256) -> WordWeights:
    """The loader the `words` kind names: read and check a `.words.json` file (a whole text is
    scored, so the token limit does not apply; there is no tokenizer)."""
    data = Path(path).read_bytes()
    try:
        spec = json.loads(data)
    except ValueError as exc:
        raise ConfigError(f"{path}: not a word-weight model (JSON): {exc}") from None
    labels = spec.get("labels") if isinstance(spec, dict) else None
    if not isinstance(labels, list) or not labels or not all(isinstance(label, str) for label in labels):
        raise ConfigError(f"{path}: a word-weight model needs \"labels\": a list of label names")
    bias, weights = spec.get("bias", {}), spec.get("weights", {})
    for section, value in (("bias", bias), ("weights", weights)):
        if not isinstance(value, dict):
            raise ConfigError(f"{path}: \"{section}\" must map labels to values")
        unknown = sorted(set(value) - set(labels))
        if unknown:
            raise ConfigError(f"{path}: \"{section}\" names {unknown[0]!r}, not one of the labels {labels}")
    return WordWeights(labels, bias, weights, hashlib.sha256(data).hexdigest())
