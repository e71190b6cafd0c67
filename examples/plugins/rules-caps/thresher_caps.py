"""`caps`: a quality rule set against shouting, the style of spam, scams and comment-section rants.

Two rules, both measured on every document and written as annotations (the run's reports can
show their distributions), each dropping a document past its bound:

- `too_much_uppercase`: the share of upper-case letters among cased letters (`caps.upper_ratio`)
  is above `max_upper_ratio` (0.5). Ordinary prose has ~3-5 %; headings and acronyms do not come
  near half. Documents with fewer than `min_letters` (200) cased letters are not judged by it:
  a short title in capitals says little.
- `too_many_exclamations`: the share of sentence ends (`.`, `!`, `?`, runs counted once) that are
  exclamation marks (`caps.exclamation_ratio`) is above `max_exclamation_ratio` (0.5), when the
  text has at least `min_sentences` (4) sentence ends.

A rule set is evaluated in one pure pass (`evaluate` returns the annotations and the drops; the
runner writes the annotations), and all rules run even after one fails, so the drop histogram
counts every rule a document broke; the document is attributed to the first.
"""

from __future__ import annotations

import re
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stages import Evaluation

_SENTENCE_END = re.compile(r"[.!?]+")


class CapsRules:
    name = "caps"
    annotates = ("caps.upper_ratio", "caps.exclamation_ratio")

    def __init__(self, max_upper_ratio: float = 0.5, min_letters: int = 200, max_exclamation_ratio: float = 0.5,
                 min_sentences: int = 4) -> None:
        self.max_upper_ratio = max_upper_ratio
        self.min_letters = min_letters
        self.max_exclamation_ratio = max_exclamation_ratio
        self.min_sentences = min_sentences

    def evaluate(self, doc: Document) -> Evaluation:
        text = doc.text
        upper = sum(1 for c in text if c.isupper())
        lower = sum(1 for c in text if c.islower())
        cased = upper + lower
        upper_ratio = round(upper / cased, 4) if cased else 0.0
        ends = _SENTENCE_END.findall(text)
        exclaimed = sum(1 for end in ends if "!" in end)
        exclamation_ratio = round(exclaimed / len(ends), 4) if ends else 0.0
        drops = []
        if cased >= self.min_letters and upper_ratio > self.max_upper_ratio:
            drops.append(Drop(self.name, "too_much_uppercase", value=upper_ratio, limit=self.max_upper_ratio))
        if len(ends) >= self.min_sentences and exclamation_ratio > self.max_exclamation_ratio:
            drops.append(Drop(self.name, "too_many_exclamations", value=exclamation_ratio,
                              limit=self.max_exclamation_ratio))
        annotations = {"caps.upper_ratio": upper_ratio, "caps.exclamation_ratio": exclamation_ratio}
        return Evaluation(annotations, drops)

    def check_all(self, doc: Document) -> list[Drop]:
        return self.evaluate(doc).drops


def caps_rule_set(config: Any, cache: Any, active: tuple[str, ...]) -> CapsRules:
    """The factory the `thresher.stages` entry point names, called with the quality settings, the
    chain's analysis cache and the active rule sets' names (this rule set needs none of them)."""
    return CapsRules()
