"""Gopher quality rules (Rae et al. 2021, "Scaling Language Models", appendix A.1.1).

Drops documents whose word count, mean word length, `#`/ellipsis-to-word ratios, bullet-line and
ellipsis-line ratios, alphabetic-word ratio or stop-word count fall outside the paper's bounds.

Writing-system aware: in scripts without spaces every letter counts as a word and the mean word
length rule does not apply; dense scripts (Hangul, Ethiopic) use the lower `dense_min_mean_word_length`
floor; the stop-word rule runs only when the document's language is known and has a list here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting
from thresher.lang.script import ScriptTraits
from thresher.lang.stop_words import FREQUENT_WORDS
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis

STAGE = "quality.gopher"

# The paper's English list; then a handful of each language's most frequent function words, chosen
# here so that ordinary prose contains at least two of them in a few sentences; then the lists
# counted from sentence frequencies (`thresher.lang.stop_words`, which says how).
STOP_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(["the", "be", "to", "of", "and", "that", "have", "with"]),
    "de": frozenset(["der", "die", "und", "das", "ist", "nicht", "mit", "den", "von", "zu"]),
    "fr": frozenset(["le", "la", "les", "de", "et", "des", "est", "une", "que", "pour"]),
    "es": frozenset(["el", "la", "de", "que", "y", "los", "las", "del", "por", "con"]),
    "it": frozenset(["il", "la", "di", "che", "e", "per", "non", "del", "della", "con"]),
    "pt": frozenset(["o", "a", "de", "que", "e", "do", "da", "para", "com", "não"]),
    "nl": frozenset(["de", "het", "een", "en", "van", "is", "dat", "op", "te", "niet"]),
    "ru": frozenset(["и", "в", "не", "на", "что", "с", "по", "это", "как", "он"]),
    **{
        code: words
        for code, words in FREQUENT_WORDS.items()
        if code not in ("en", "de", "fr", "es", "it", "pt", "nl", "ru")
    },
}

BULLETS = ("•", "-")
ELLIPSES = ("...", "…")


@dataclass(frozen=True, slots=True, kw_only=True)
class GopherQualityConfig:
    min_words: int | None = setting(50, "fewest words a document may have")
    max_words: int | None = setting(100_000, "most words a document may have")
    min_mean_word_length: float | None = setting(3.0, "shortest mean word length, in characters")
    max_mean_word_length: float | None = setting(10.0, "longest mean word length, in characters")
    dense_min_mean_word_length: float | None = setting(
        1.0, "mean word length floor for dense scripts (Hangul, Ethiopic), where a character is a syllable"
    )
    max_hash_ratio: float | None = setting(0.1, "most `#` per token")
    max_ellipsis_ratio: float | None = setting(0.1, "most ellipses (`...`, `…`) per token")
    max_bullet_line_ratio: float | None = setting(0.9, "largest share of lines starting with a bullet")
    max_ellipsis_line_ratio: float | None = setting(0.3, "largest share of lines ending with an ellipsis")
    min_alpha_word_ratio: float | None = setting(0.8, "smallest share of words containing a letter")
    alpha_ratio_denominator: Literal["words", "tokens"] = setting(
        "words", "divide by words (the paper) or by all tokens, punctuation included (datatrove)"
    )
    min_stop_words: int | None = setting(2, "fewest distinct stop words (only for languages with a list)")
    stop_words_match_case: bool = setting(False, "count only lowercase stop words (as datatrove); else any case")


def word_count(a: TextAnalysis) -> int:
    return len(a.words)


def mean_word_length(a: TextAnalysis) -> float | None:
    words = a.words
    if not words or not a.traits.space_delimited:
        return None
    return sum(map(len, words)) / len(words)


def hash_ratio(a: TextAnalysis) -> float | None:
    n = len(a.tokens)
    return a.text.count("#") / n if n else None


def ellipsis_ratio(a: TextAnalysis) -> float | None:
    n = len(a.tokens)
    return (a.text.count("...") + a.text.count("…")) / n if n else None


def bullet_line_ratio(a: TextAnalysis) -> float | None:
    lines = a.lines
    if not lines:
        return None
    return sum(1 for line in lines if line.lstrip().startswith(BULLETS)) / len(lines)


def ellipsis_line_ratio(a: TextAnalysis) -> float | None:
    lines = a.lines
    if not lines:
        return None
    return sum(1 for line in lines if line.rstrip().endswith(ELLIPSES)) / len(lines)


def _words_with_alpha(a: TextAnalysis) -> int:
    words = a.words
    # most words start with a letter; only the others need a closer look
    others = [w for w in words if not w[0].isalpha()]
    return len(words) - sum(1 for w in others if not any(c.isalpha() for c in w))


def alpha_word_ratio(a: TextAnalysis) -> float | None:
    """Share of words containing a letter (Gopher: "80% of words contain an alphabetic character")."""
    return _words_with_alpha(a) / len(a.words) if a.words else None


def alpha_token_ratio(a: TextAnalysis) -> float | None:
    """The same over all tokens, punctuation included, as datatrove computes it."""
    return _words_with_alpha(a) / len(a.tokens) if a.tokens else None


def stop_word_count(a: TextAnalysis) -> int | None:
    """Distinct stop words of the document's language present, whatever their case."""
    stop = STOP_WORDS.get((a.language or "").split("-")[0].split("_")[0].lower())
    if stop is None:
        return None
    found = stop.intersection(a.words)
    if len(found) < len(stop):
        found |= stop.intersection(w.lower() for w in a.words if not w.islower())
    return len(found)


def stop_word_count_exact_case(a: TextAnalysis) -> int | None:
    stop = STOP_WORDS.get((a.language or "").split("-")[0].split("_")[0].lower())
    return None if stop is None else len(stop.intersection(a.words))


def _dense_floor(min_value: float | None) -> object:
    def floor(traits: ScriptTraits, default: float | int | None) -> float | int | None:
        return min_value if traits.dense else default

    return floor


def gopher_quality_rules(config: GopherQualityConfig) -> list[Bound]:
    c = config
    return [
        Bound("word_count", word_count, c.min_words, c.max_words, "too_few_words", "too_many_words"),
        Bound(
            "mean_word_length", mean_word_length, c.min_mean_word_length, c.max_mean_word_length,
            "mean_word_too_short", "mean_word_too_long", min_for=_dense_floor(c.dense_min_mean_word_length),  # type: ignore[arg-type]
        ),
        Bound("hash_ratio", hash_ratio, None, c.max_hash_ratio, too_high="too_many_hashes"),
        Bound("ellipsis_ratio", ellipsis_ratio, None, c.max_ellipsis_ratio, too_high="too_many_ellipses"),
        Bound("bullet_line_ratio", bullet_line_ratio, None, c.max_bullet_line_ratio, too_high="too_many_bullet_lines"),
        Bound(
            "ellipsis_line_ratio", ellipsis_line_ratio, None, c.max_ellipsis_line_ratio,
            too_high="too_many_ellipsis_lines",
        ),
        Bound(
            "alpha_word_ratio", alpha_word_ratio if c.alpha_ratio_denominator == "words" else alpha_token_ratio,
            c.min_alpha_word_ratio, None, "too_few_alphabetic_words",
        ),
        Bound("stop_word_count", stop_word_count_exact_case if c.stop_words_match_case else stop_word_count,
              c.min_stop_words, None, "too_few_stop_words"),
    ]


class GopherQuality(QualityRuleSet):
    """Gopher quality rules as one rule set, stage `quality.gopher`."""

    def __init__(self, config: GopherQualityConfig = GopherQualityConfig(), cache: AnalysisCache | None = None):
        super().__init__(STAGE, gopher_quality_rules(config), cache)
        self.config = config
