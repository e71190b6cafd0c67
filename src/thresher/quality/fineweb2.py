"""FineWeb-2's per-language filters (Penedo et al. 2025, "FineWeb2", section 4; pipeline script
`fineweb-2-pipeline.py`), as one rule set, stage `quality.fineweb2`.

FineWeb-2 runs three datatrove filters per language-script pair, with thresholds from that pair's
config (`thresher.quality.fineweb2_table`) and these fixed arguments:

1. Gopher repetition: `dup_line_frac` from the config; paragraph and line-character fractions off;
   `top_n_grams` (n = 2..4) and `dup_n_grams` (n = 5..10) from the config.
2. FineWeb quality: `line_punct_thr` and `new_line_ratio` from the config; the short-line rule off
   (`short_line_thr=999`); duplicated-line characters at most 0.1 (FineWeb English used 0.01);
   a line is punctuated when it ends in a Unicode Sentence_Terminal character.
3. Gopher quality: 50..100,000 words; mean word length within `min/max_avg_word_length` (0: no
   bound); `#` and ellipses at most 0.1 per token; bullet lines at most 0.9, ellipsis lines at most
   0.3; at least `max_non_alpha_words_ratio` of tokens with a letter; at least 2 of the pair's
   stop words.

The definitions follow the filters', not thresher's Gopher/FineWeb rule sets where those differ:
ratios over all tokens (punctuation included), word counts and lengths over tokens holding a
character outside datatrove's punctuation set, stop words matched case-sensitively, the top
n-gram counted even when it occurs once, punctuation checked in every script. The n-gram rules,
the word count, the share of tokens with a letter, the newline, `#` and ellipsis ratios (whose
denominator is the token count) and the stop words are counted over the tokens the pair's spaCy
pipeline would make (`thresher.quality.fineweb2_words`: documents cross those bounds on the shapes
where spaCy's and thresher's tokenizers differ); the mean word length over thresher's tokens
(`thresher.quality.text`). In scripts written without spaces each character is a word, n-grams are
scaled by the script's characters per word, a stop word counts when it occurs in the text, and
the mean-word-length bounds do not apply.

Routing: the document's `lang.code` and script give the pair (`thresher.quality.fineweb2_codes`);
a pair without a config takes `fallback` (a pair key), or, by default, is not judged and is
annotated `quality.fineweb2.config = "none"`. GlotLID's `language_score` bound is not applied
(thresher's detector scores are on another scale, see docs/quality.md). No per-document state: a
rule set per pair is built on first use and kept by the stage.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from thresher.core.config import setting
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.core.stages import Evaluation
from thresher.lang.script import CHARACTER_WORD_RANGES
from thresher.quality.fineweb import duplicate_line_char_ratio, newline_ratio
from thresher.quality.fineweb2_codes import config_key
from thresher.quality.fineweb2_table import Fineweb2Table, LanguageThresholds, load_table
from thresher.quality.fineweb2_words import WordRules, spacy_like_tokens, word_rules
from thresher.quality.gopher import bullet_line_ratio, ellipsis_line_ratio, ellipsis_ratio, hash_ratio
from thresher.quality.repetition import duplicate_line_fraction, duplicate_ngram_fraction, top_ngram_fraction
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis

STAGE = "quality.fineweb2"
PREFIX = "fineweb2."

# Fixed arguments of FineWeb-2's pipeline (the same for every pair).
MAX_DUPLICATE_LINE_CHAR_RATIO = 0.1
MIN_WORDS, MAX_WORDS = 50, 100_000
MAX_SYMBOL_RATIO = 0.1
MAX_BULLET_LINE_RATIO, MAX_ELLIPSIS_LINE_RATIO = 0.9, 0.3
MIN_STOP_WORDS = 2

# Characters datatrove's Gopher quality filter treats as symbols: a token made only of these is not a
# word (ASCII punctuation, common CJK and typographic punctuation, control characters; the fullwidth
# digit one is among them in datatrove too) ...
SYMBOLS = frozenset(
    string.punctuation
    + "—”％１〈、━【「」，】；“《„’∶´．（–？！：～«〉》）。…►»"
    + "".join(map(chr, [*range(0, 9), 11, 12, *range(13, 32), *range(127, 160)]))
)
# ... and every sentence terminal, in every script (the Devanagari danda `।`, Urdu's `۔`, Armenian
# `։`): Unicode's Sentence_Terminal list as the shipped table holds it, plus three Khmer signs
# datatrove's copy of that list also has (its copy lacks 16 characters of later Unicode versions,
# which are symbols here too)
_KHMER_SIGNS = "\u17d6\u17d9\u17da"


@cache
def word_symbols() -> frozenset[str]:
    return SYMBOLS | frozenset(load_table(None).sentence_terminal + _KHMER_SIGNS)


_CHAR_WORD = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CHARACTER_WORD_RANGES) + "]")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fineweb2Config:
    configs: str | None = setting(
        None, "folder of FineWeb-2 configs (<iso639-3>_<Script>.yml) to use instead of the shipped table"
    )
    fallback: str | None = setting(
        None, "config (e.g. nob_Latn) for documents whose language-script pair has none; unset: not judged"
    )


def _is_word(token: str) -> bool:
    return not word_symbols().issuperset(token)


def _word_lengths(a: TextAnalysis) -> list[int]:
    cached: list[int] | None = a.__dict__.get("_fw2_words")
    if cached is None:
        cached = a.__dict__["_fw2_words"] = [len(t) for t in a.tokens if _is_word(t)]
    return cached


def word_count(a: TextAnalysis) -> int:
    return len(_word_lengths(a))


def mean_word_length(a: TextAnalysis) -> float | None:
    """Over words; not measured in scripts without spaces, where thresher's words are characters and a
    segmenter's words (which the bounds were tuned on) are longer."""
    if not a.traits.space_delimited:
        return None
    lengths = _word_lengths(a)
    return sum(lengths) / len(lengths) if lengths else None


def spacy_tokens(a: TextAnalysis, rules: WordRules) -> list[str]:
    """The pair's spaCy-like tokens of a space-delimited text, split once per document and pair."""
    cached: tuple[WordRules, list[str]] | None = a.__dict__.get("_fw2_spacy")
    if cached is None or cached[0] != rules:
        cached = a.__dict__["_fw2_spacy"] = (rules, spacy_like_tokens(a.text, rules))
    return cached[1]


def _spacy_analysis(a: TextAnalysis, rules: WordRules) -> TextAnalysis:
    """An analysis of the same text whose tokens are the pair's spaCy-like ones, for the n-gram
    measures (`thresher.quality.repetition` reads `tokens`); made once per document and pair."""
    cached: tuple[WordRules, TextAnalysis] | None = a.__dict__.get("_fw2_spacy_analysis")
    if cached is None or cached[0] != rules:
        other = TextAnalysis(a.text, a.language)
        other.__dict__["script"] = a.script
        other.__dict__["tokens"] = spacy_tokens(a, rules)
        cached = a.__dict__["_fw2_spacy_analysis"] = (rules, other)
    return cached[1]


def over_spacy_tokens(measure: Callable[[TextAnalysis], float | None],
                      rules: WordRules) -> Callable[[TextAnalysis], float | None]:
    """`measure` (an n-gram fraction) over the pair's spaCy-like tokens, in space-delimited text."""

    def over(a: TextAnalysis) -> float | None:
        return measure(_spacy_analysis(a, rules) if a.traits.space_delimited else a)

    over.__name__ = getattr(measure, "__name__", "measure")
    return over


def pair_mean_word_length(rules: WordRules) -> Callable[[TextAnalysis], float | None]:
    """Over the words of the pair's tokens (datatrove's `non_symbol_words`); not measured in scripts
    without spaces (`mean_word_length`)."""

    def measure(a: TextAnalysis) -> float | None:
        if not a.traits.space_delimited:
            return None
        lengths = [len(t) for t in spacy_tokens(a, rules) if _is_word(t)]
        return sum(lengths) / len(lengths) if lengths else None

    return measure


def spacy_word_count(rules: WordRules) -> Callable[[TextAnalysis], int]:
    def measure(a: TextAnalysis) -> int:
        if not a.traits.space_delimited:
            return word_count(a)
        return sum(1 for t in spacy_tokens(a, rules) if _is_word(t))

    return measure


def spacy_newline_ratio(rules: WordRules) -> Callable[[TextAnalysis], float | None]:
    def measure(a: TextAnalysis) -> float | None:
        if not a.traits.space_delimited:
            return newline_ratio(a)
        n = len(spacy_tokens(a, rules))
        return a.text.count("\n") / n if n else None

    return measure


def per_spacy_token(count: Callable[[str], int], rules: WordRules,
                    fallback: Callable[[TextAnalysis], float | None]) -> Callable[[TextAnalysis], float | None]:
    """`count(text)` per token of the pair's spaCy-like tokens (datatrove's `n_words`)."""

    def measure(a: TextAnalysis) -> float | None:
        if not a.traits.space_delimited:
            return fallback(a)
        n = len(spacy_tokens(a, rules))
        return count(a.text) / n if n else None

    return measure


def _has_letter(token: str) -> bool:
    return token[0].isalpha() or any(c.isalpha() for c in token)


def alpha_token_ratio(rules: WordRules) -> Callable[[TextAnalysis], float | None]:
    """The share of tokens holding a letter, over the tokens the pair's spaCy pipeline would make
    (`thresher.quality.fineweb2_words`). In scripts without spaces, where the filters' segmenter
    makes words of several letters, thresher's one-letter words count `chars_per_word` to a word."""

    def measure(a: TextAnalysis) -> float | None:
        if a.traits.space_delimited:
            tokens = spacy_tokens(a, rules)
            return sum(1 for t in tokens if _has_letter(t)) / len(tokens) if tokens else None
        tokens = a.tokens
        if not tokens:
            return None
        letters = others = other_words = 0
        for t in tokens:
            if len(t) <= 2 and _CHAR_WORD.match(t):
                letters += 1
            elif _has_letter(t):
                other_words += 1
            else:
                others += 1
        words = letters / a.traits.chars_per_word + other_words
        return words / (words + others) if words + others else None

    return measure


def nonblank_line_count(a: TextAnalysis) -> int:
    return len(a.nonblank_lines)


def line_punct_ratio(stop_chars: tuple[str, ...]) -> Callable[[TextAnalysis], float | None]:
    def measure(a: TextAnalysis) -> float | None:
        lines = a.nonblank_lines
        return sum(1 for line in lines if line.endswith(stop_chars)) / len(lines) if lines else None

    return measure


def stop_word_count(stop_words: frozenset[str], rules: WordRules) -> Callable[[TextAnalysis], int]:
    def measure(a: TextAnalysis) -> int:
        if a.traits.space_delimited:
            return len(stop_words.intersection(spacy_tokens(a, rules)))
        text = a.text
        return sum(1 for w in stop_words if w in text)

    return measure


def _on(bound: float) -> float | None:
    """A config bound of 0 switches the rule off (the filters test `if bound and ...`)."""
    return bound if bound else None


def _hashes(text: str) -> int:
    return text.count("#")


def _ellipses(text: str) -> int:
    return text.count("...") + text.count("…")


def fineweb2_rules(t: LanguageThresholds, stop_chars: tuple[str, ...]) -> list[Bound]:
    p = PREFIX
    words = word_rules(t.key)  # how the pair's spaCy pipeline splits words (datatrove's `n_words`)
    rules = [
        Bound(p + "line_count", nonblank_line_count, 1, None, "no_text"),
        # 1. Gopher repetition
        Bound(p + "duplicate_line_fraction", duplicate_line_fraction, None, _on(t.dup_line_frac),
              too_high="duplicate_lines"),
    ]
    for n, bound in t.top_n_grams:
        top = over_spacy_tokens(top_ngram_fraction(n, min_count=1), words)
        rules.append(Bound(f"{p}top_{n}_gram_char_fraction", top, None, _on(bound),
                           too_high=f"top_{n}_gram_too_frequent"))
    for n, bound in t.dup_n_grams:
        duplicated = over_spacy_tokens(duplicate_ngram_fraction(n), words)
        rules.append(Bound(f"{p}duplicate_{n}_gram_char_fraction", duplicated, None, _on(bound),
                           too_high=f"duplicate_{n}_grams"))
    rules += [
        # 2. FineWeb quality
        Bound(p + "line_punct_ratio", line_punct_ratio(stop_chars), _on(t.line_punct_thr), None,
              "too_few_punctuated_lines"),
        Bound(p + "duplicate_line_char_ratio", duplicate_line_char_ratio, None, MAX_DUPLICATE_LINE_CHAR_RATIO,
              too_high="duplicate_line_chars"),
        Bound(p + "newline_ratio", spacy_newline_ratio(words), None, _on(t.new_line_ratio),
              too_high="too_many_newlines"),
        # 3. Gopher quality
        Bound(p + "word_count", spacy_word_count(words), MIN_WORDS, MAX_WORDS, "too_few_words", "too_many_words"),
        Bound(p + "mean_word_length", pair_mean_word_length(words), _on(t.min_avg_word_length),
              _on(t.max_avg_word_length),
              "mean_word_too_short", "mean_word_too_long"),
        Bound(p + "hash_ratio", per_spacy_token(_hashes, words, hash_ratio), None, MAX_SYMBOL_RATIO,
              too_high="too_many_hashes"),
        Bound(p + "ellipsis_ratio", per_spacy_token(_ellipses, words, ellipsis_ratio), None, MAX_SYMBOL_RATIO,
              too_high="too_many_ellipses"),
        Bound(p + "bullet_line_ratio", bullet_line_ratio, None, MAX_BULLET_LINE_RATIO,
              too_high="too_many_bullet_lines"),
        Bound(p + "ellipsis_line_ratio", ellipsis_line_ratio, None, MAX_ELLIPSIS_LINE_RATIO,
              too_high="too_many_ellipsis_lines"),
        Bound(p + "alpha_token_ratio", alpha_token_ratio(words), _on(t.max_non_alpha_words_ratio), None,
              "too_few_alphabetic_words"),
        Bound(p + "stop_word_count", stop_word_count(t.stopwords, words), MIN_STOP_WORDS if t.stopwords else None, None,
              "too_few_stop_words"),
    ]
    return rules


class Fineweb2Quality:
    """FineWeb-2's filters with the thresholds of each document's language-script pair."""

    name = STAGE

    def __init__(self, config: Fineweb2Config = Fineweb2Config(), cache: AnalysisCache | None = None) -> None:
        self.config = config
        self.cache = cache or AnalysisCache()
        self.table: Fineweb2Table = load_table(config.configs)
        self._stop_chars = tuple(self.table.sentence_terminal)
        self._sets: dict[str, QualityRuleSet] = {}
        self.fallback: str | None = None
        if config.fallback is not None:
            if config.fallback in self.table.pairs:
                self.fallback = config.fallback
            else:  # a fallback read from the shipped table when the folder lacks it
                shipped = load_table(None)
                if config.fallback not in shipped.pairs:
                    raise ConfigError(f"quality.fineweb2.fallback: no FineWeb-2 config {config.fallback!r}")
                self.fallback = config.fallback
                self._sets[config.fallback] = self._rule_set(shipped.pairs[config.fallback])

    def _rule_set(self, thresholds: LanguageThresholds) -> QualityRuleSet:
        return QualityRuleSet(STAGE, fineweb2_rules(thresholds, self._stop_chars), self.cache)

    def pair(self, doc: Document, analysis: TextAnalysis) -> str | None:
        """The config this document is judged by (None: not judged)."""
        script = doc.annotations.get("lang.script") or analysis.script.code
        return config_key(analysis.language, str(script), self.table.pairs) or self.fallback

    def evaluate(self, doc: Document) -> Evaluation:
        analysis = self.cache.get(doc)
        key = self.pair(doc, analysis)
        if key is None:
            return Evaluation({"quality.fineweb2.config": "none"}, [])
        rules = self._sets.get(key)
        if rules is None:
            rules = self._sets[key] = self._rule_set(self.table.pairs[key])
        evaluation = rules.evaluate(doc)
        return Evaluation({"quality.fineweb2.config": key, **evaluation.annotations}, evaluation.drops)

    def measure(self, doc: Document) -> dict[str, Any]:
        """The config this document is judged by and every rule's exact value under it
        (`QualityRuleSet.measure`)."""
        analysis = self.cache.get(doc)
        key = self.pair(doc, analysis)
        if key is None:
            return {"quality.fineweb2.config": None}
        return {"quality.fineweb2.config": key, **self._rules_of(key).measure(doc)}

    def decide(self, doc: Document, measured: Mapping[str, Any]) -> Evaluation:
        key = measured.get("quality.fineweb2.config")
        if key is None:
            return Evaluation({"quality.fineweb2.config": "none"}, [])
        evaluation = self._rules_of(key).decide(doc, measured)
        return Evaluation({"quality.fineweb2.config": key, **evaluation.annotations}, evaluation.drops)

    def _rules_of(self, key: str) -> QualityRuleSet:
        rules = self._sets.get(key)
        if rules is None:
            rules = self._sets[key] = self._rule_set(self.table.pairs[key])
        return rules

    def check_all(self, doc: Document) -> list[Drop]:
        return self.evaluate(doc).drops

    def check(self, doc: Document) -> Drop | None:
        drops = self.check_all(doc)
        return drops[0] if drops else None
