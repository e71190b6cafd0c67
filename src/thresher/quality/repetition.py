"""Gopher repetition rules (Rae et al. 2021, appendix A.1.1, table A1).

Drops documents with too many duplicated lines or paragraphs (by count and by characters), a top
n-gram (n = 2..4) covering too many characters, or too many characters inside duplicated n-grams
(n = 5..10). All character fractions are over the length of the whole text.

Duplicate n-grams are counted as the reference implementations do: scanning left to right, an
n-gram already seen counts its characters and the scan jumps past it, so overlapping repeats are not
counted twice. N-grams run over the document's tokens (words and punctuation); in scripts without
spaces, over characters, with n scaled by the script's letters per word (`chars_per_word`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate, repeat
from operator import add, mul

from thresher.core.config import setting
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis

STAGE = "quality.repetition"


@dataclass(frozen=True, slots=True, kw_only=True)
class GopherRepetitionConfig:
    max_duplicate_line_fraction: float | None = setting(0.3, "largest share of lines that repeat an earlier line")
    max_duplicate_paragraph_fraction: float | None = setting(0.3, "largest share of paragraphs that repeat one")
    max_duplicate_line_char_fraction: float | None = setting(0.2, "largest share of characters in repeated lines")
    max_duplicate_paragraph_char_fraction: float | None = setting(
        0.2, "largest share of characters in repeated paragraphs"
    )
    max_top_2_gram_char_fraction: float | None = setting(0.20, "largest character share of the top 2-gram")
    max_top_3_gram_char_fraction: float | None = setting(0.18, "largest character share of the top 3-gram")
    max_top_4_gram_char_fraction: float | None = setting(0.16, "largest character share of the top 4-gram")
    max_duplicate_5_gram_char_fraction: float | None = setting(0.15, "largest character share in repeated 5-grams")
    max_duplicate_6_gram_char_fraction: float | None = setting(0.14, "largest character share in repeated 6-grams")
    max_duplicate_7_gram_char_fraction: float | None = setting(0.13, "largest character share in repeated 7-grams")
    max_duplicate_8_gram_char_fraction: float | None = setting(0.12, "largest character share in repeated 8-grams")
    max_duplicate_9_gram_char_fraction: float | None = setting(0.11, "largest character share in repeated 9-grams")
    max_duplicate_10_gram_char_fraction: float | None = setting(
        0.10, "largest character share in repeated 10-grams"
    )


def duplicates(items: list[str]) -> tuple[int, int]:
    """(number of items that repeat an earlier one, their total characters)."""
    counts = Counter(items)
    if len(counts) == len(items):
        return 0, 0
    dup_chars = sum(len(x) * (c - 1) for x, c in counts.items() if c > 1)
    return len(items) - len(counts), dup_chars


def _fraction(a: TextAnalysis, key: str) -> tuple[int, int] | None:
    cache = a.__dict__.setdefault("_repetition", {})
    if key not in cache:
        cache[key] = duplicates(a.paragraphs if key == "paragraphs" else a.repetition_lines)
    return cache[key]


def duplicate_paragraph_fraction(a: TextAnalysis) -> float | None:
    if not a.tokens:  # blank text: nothing repeats, the word-count rule names the problem
        return None
    n, _ = _fraction(a, "paragraphs")
    return n / len(a.paragraphs)


def duplicate_paragraph_char_fraction(a: TextAnalysis) -> float | None:
    if not a.tokens:
        return None
    return _fraction(a, "paragraphs")[1] / len(a.text)


def duplicate_line_fraction(a: TextAnalysis) -> float | None:
    if not a.tokens:
        return None
    n, _ = _fraction(a, "lines")
    return n / len(a.repetition_lines)


def duplicate_line_char_fraction(a: TextAnalysis) -> float | None:
    if not a.tokens:
        return None
    return _fraction(a, "lines")[1] / len(a.text)


def _prefix_lengths(a: TextAnalysis) -> list[int]:
    cached = a.__dict__.get("_prefix")
    if cached is None:
        cached = a.__dict__["_prefix"] = [0, *accumulate(map(len, a.tokens))]
    return cached


_SMALL_INT = 1 << 60


def _gram_keys(a: TextAnalysis, n: int) -> list[int]:
    """One integer per n-gram position, equal exactly when the n-grams are equal.

    Tokens get dense ids; the key of an n-gram extends the (n-1)-gram key by one more id in base
    `vocabulary size`, so keys are built level by level in C (`map`) without making tuples.
    """
    levels = a.__dict__.get("_gram_keys")
    if levels is None:
        tokens = a.tokens
        index = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
        levels = a.__dict__["_gram_keys"] = [None, list(map(index.__getitem__, tokens))]
        a.__dict__["_gram_bound"] = [len(index) or 1]
    ids = levels[1]
    base = len(set(ids)) or 1
    bound = a.__dict__["_gram_bound"]  # keys of the last level are below bound[0]
    while len(levels) <= n:
        m = len(levels)
        prev = levels[m - 1]
        if bound[0] * base >= _SMALL_INT:  # renumber to keep keys machine-sized
            index = {k: i for i, k in enumerate(dict.fromkeys(prev))}
            prev = list(map(index.__getitem__, prev))
            bound[0] = len(index) or 1
        levels.append(list(map(add, map(mul, prev[:-1], repeat(base)), ids[m - 1:])))
        bound[0] *= base
    return levels[n]


def top_ngram_chars(keys: list[int], n: int, prefix: list[int], separator_chars: int) -> int:
    """Characters covered by the most frequent n-gram (first seen wins a tie), counted as its
    length, separators included, times its count; 0 when no n-gram occurs twice."""
    if not keys:
        return 0
    key, count = Counter(keys).most_common(1)[0]
    if count < 2:
        return 0
    at = keys.index(key)
    return (prefix[at + n] - prefix[at] + separator_chars * (n - 1)) * count


def duplicate_ngram_chars(keys: list[int], n: int, prefix: list[int]) -> int:
    """Characters inside repeated n-grams, scanning left to right and jumping past each repeat.

    Equivalent to visiting every position, adding unseen n-grams to a set and jumping `n` ahead
    after a repeat, but it only visits positions whose n-gram occurred earlier: every other position
    holds a first occurrence, which is never a repeat and is in the set unless a jump skipped it.
    """
    end = len(keys)
    if end == 0 or len(set(keys)) == end:
        return 0
    first = dict(zip(reversed(keys), range(end - 1, -1, -1), strict=True))
    candidates = [i for i, k in enumerate(keys) if first[k] != i]
    added: set[int] = set()
    jump_starts: list[int] = []  # skipped positions: [start, start + n - 1) for each start
    repeated = 0
    frontier = 0
    for pos in candidates:
        if pos < frontier:
            continue
        key = keys[pos]
        f = first[key]
        j = bisect_right(jump_starts, f) - 1
        first_visited = j < 0 or f >= jump_starts[j] + n - 1
        if first_visited or key in added:
            repeated += prefix[pos + n] - prefix[pos]
            jump_starts.append(pos + 1)
            frontier = pos + n
        else:
            added.add(key)
            frontier = pos + 1
    return repeated


def top_ngram_fraction(n: int):  # noqa: ANN201
    def measure(a: TextAnalysis) -> float | None:
        m = n * a.traits.chars_per_word
        if not a.tokens or len(a.tokens) < m:
            return None
        sep = 1 if a.traits.space_delimited else 0
        return top_ngram_chars(_gram_keys(a, m), m, _prefix_lengths(a), sep) / len(a.text)

    measure.__name__ = f"top_{n}_gram_char_fraction"
    return measure


def duplicate_ngram_fraction(n: int):  # noqa: ANN201
    def measure(a: TextAnalysis) -> float | None:
        if not a.tokens:
            return None
        m = n * a.traits.chars_per_word
        if len(a.tokens) < m:
            return 0.0
        # no repeated shorter n-gram means no repeated longer one: skip the scan
        none_below = a.__dict__.setdefault("_no_dup_from", None)
        if none_below is not None and m >= none_below:
            return 0.0
        chars = duplicate_ngram_chars(_gram_keys(a, m), m, _prefix_lengths(a))
        if chars == 0:
            a.__dict__["_no_dup_from"] = m
        return chars / len(a.text)

    measure.__name__ = f"duplicate_{n}_gram_char_fraction"
    return measure


def gopher_repetition_rules(config: GopherRepetitionConfig) -> list[Bound]:
    c = config
    rules = [
        Bound("duplicate_paragraph_fraction", duplicate_paragraph_fraction, None,
              c.max_duplicate_paragraph_fraction, too_high="duplicate_paragraphs"),
        Bound("duplicate_paragraph_char_fraction", duplicate_paragraph_char_fraction, None,
              c.max_duplicate_paragraph_char_fraction, too_high="duplicate_paragraph_chars"),
        Bound("duplicate_line_fraction", duplicate_line_fraction, None,
              c.max_duplicate_line_fraction, too_high="duplicate_lines"),
        Bound("duplicate_line_char_fraction", duplicate_line_char_fraction, None,
              c.max_duplicate_line_char_fraction, too_high="duplicate_line_chars"),
    ]
    for n in (2, 3, 4):
        limit = getattr(c, f"max_top_{n}_gram_char_fraction")
        rules.append(Bound(f"top_{n}_gram_char_fraction", top_ngram_fraction(n), None, limit,
                           too_high=f"top_{n}_gram_too_frequent"))
    for n in range(5, 11):
        limit = getattr(c, f"max_duplicate_{n}_gram_char_fraction")
        rules.append(Bound(f"duplicate_{n}_gram_char_fraction", duplicate_ngram_fraction(n), None, limit,
                           too_high=f"duplicate_{n}_grams"))
    return rules


class GopherRepetition(QualityRuleSet):
    """Gopher repetition rules as one rule set, stage `quality.repetition`."""

    def __init__(self, config: GopherRepetitionConfig = GopherRepetitionConfig(), cache: AnalysisCache | None = None):
        super().__init__(STAGE, gopher_repetition_rules(config), cache)
        self.config = config
