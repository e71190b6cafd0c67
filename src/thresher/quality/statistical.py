"""The statistical gate of the OpenWebText reproduction in `../shared/seeds/` (section 3.3, layer 2):
character entropy and mean sentence length.

- `char_entropy`: Shannon entropy, in bits, of the distribution of the text's characters
  (whitespace excluded). Degenerate text (one character repeated, a keyboard run) has little;
  prose in an alphabet has about 4 bits, in a syllabary or in Han characters far more.
- `mean_sentence_words`: words per sentence, sentences split at the script's terminal punctuation
  and at line breaks (a line without a stop is a sentence). In scripts without spaces a word is a
  character (see `quality.text`), so the bound counts characters there. It does not apply to a
  script without sentence-final punctuation (Thai, Lao).

The seed states its gate as `char_entropy < 3.2` (to exclude garbled text) and `8 < avg_sentence_len
< 85`. Taken literally, the entropy bound drops all prose: ordinary text in every one of 75 languages
measures 3.6 to 10 bits (benchmarks/quality_languages.py), garble is high-entropy, repetition is low.
So 3.2 is used as the floor (drop below), which is what separates degenerate text, and no ceiling
is set by default (Han prose reaches 9+ bits, random bytes in an alphabet script about as much). The
sentence bounds are the seed's: 8 and 85 words, checked to keep >= 97% of prose documents in all 75
languages (tests/unit/quality/test_quality_statistical.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from thresher.core.config import setting
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis

STAGE = "quality.statistical"
_SPLITTERS: dict[str, re.Pattern[str]] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class StatisticalConfig:
    min_char_entropy: float | None = setting(3.2, "least character entropy, bits (the seed's 3.2: degenerate text)")
    max_char_entropy: float | None = setting(None, "most character entropy, bits")
    min_mean_sentence_words: float | None = setting(8.0, "fewest words per sentence on average (seed: 8)")
    max_mean_sentence_words: float | None = setting(85.0, "most words per sentence on average (seed: 85)")


def char_entropy(a: TextAnalysis) -> float | None:
    counts = Counter(a.text)
    for space in (" ", "\n", "\t", "\r", "\u00a0", "\u3000"):
        counts.pop(space, None)
    total = sum(counts.values())
    if total == 0:
        return None
    log2 = math.log2
    return -math.fsum(n / total * log2(n / total) for n in counts.values())


def _splitter(stops: str) -> re.Pattern[str]:
    pattern = _SPLITTERS.get(stops)
    if pattern is None:
        pattern = _SPLITTERS[stops] = re.compile("[" + re.escape(stops) + "]+|\n")
    return pattern


def mean_sentence_words(a: TextAnalysis) -> float | None:
    traits = a.traits
    if not traits.has_terminal_punctuation or not a.words:
        return None
    sentences = sum(1 for part in _splitter(traits.terminal_punctuation).split(a.text) if _has_word(part))
    return len(a.words) / sentences if sentences else None


_WORD_CHAR = re.compile(r"\w")


def _has_word(part: str) -> bool:
    return _WORD_CHAR.search(part) is not None


def statistical_rules(config: StatisticalConfig) -> list[Bound]:
    c = config
    return [
        Bound("char_entropy", char_entropy, c.min_char_entropy, c.max_char_entropy,
              "low_char_entropy", "high_char_entropy"),
        Bound("mean_sentence_words", mean_sentence_words, c.min_mean_sentence_words, c.max_mean_sentence_words,
              "short_sentences", "long_sentences"),
    ]


class StatisticalQuality(QualityRuleSet):
    """The seed's statistical gate as one rule set, stage `quality.statistical`."""

    def __init__(self, config: StatisticalConfig = StatisticalConfig(), cache: AnalysisCache | None = None) -> None:
        super().__init__(STAGE, statistical_rules(config), cache)
        self.config = config
