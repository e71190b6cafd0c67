"""Gopher repetition rules (Rae et al. 2021, appendix A.1.1, table A1).

Drops documents with too many duplicated lines or paragraphs (by count and by characters), a top
n-gram (n = 2..4) covering too many characters, or too many characters inside duplicated n-grams
(n = 5..10). All character fractions are over the length of the whole text.

Duplicate n-grams are counted as the reference implementations do: scanning left to right, an
n-gram already seen counts its characters and the scan jumps past it, so overlapping repeats are not
counted twice. N-grams run over the document's tokens (words and punctuation); in scripts without
spaces, over characters, with n scaled by the script's letters per word (`chars_per_word`).

The n-gram measures run in a compiled kernel (`thresher.quality._repetition`, built where a C
compiler is present, optional) that gives the same integers as the Python code below, which stays
the reference and runs where the kernel is absent or `THRESHER_PURE_PYTHON=1` is set.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import add, mul
from typing import Any

from thresher.compiled import compiled_module
from thresher.core.config import setting
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis

STAGE = "quality.repetition"
TOP_NGRAM_SIZES = (2, 3, 4)  # Gopher's top n-gram rules
DUPLICATE_NGRAM_SIZES = tuple(range(5, 11))  # Gopher's duplicated n-gram rules


_KERNEL: Any = compiled_module("thresher.quality._repetition")  # typed by its callers


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
    min_top_ngram_count: int = setting(2, "a top n-gram counts only if it occurs this often (1: as datatrove)")


def duplicates(items: list[str]) -> tuple[int, int]:
    """(number of items that repeat an earlier one, their total characters)."""
    counts = Counter(items)
    if len(counts) == len(items):
        return 0, 0
    dup_chars = sum(len(x) * (c - 1) for x, c in counts.items() if c > 1)
    return len(items) - len(counts), dup_chars


def _fraction(a: TextAnalysis, key: str) -> tuple[int, int]:
    cache: dict[str, tuple[int, int]] = a.__dict__.setdefault("_repetition", {})
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


def _token_ids(a: TextAnalysis) -> list[int]:
    ids = a.__dict__.get("_ids")
    if ids is None:
        tokens = a.tokens
        index = {t: i for i, t in enumerate(dict.fromkeys(tokens))}
        ids = a.__dict__["_ids"] = list(map(index.__getitem__, tokens))
        a.__dict__["_base"] = len(index) or 1
    return ids


def repeat_groups(a: TextAnalysis, n: int) -> list[list[int]]:
    """The positions of every n-gram that occurs more than once, one ascending list per n-gram.

    2-grams are found in C (integer keys, a first-occurrence dict); each longer level refines the
    groups of the level below by the next token, so the work shrinks with the repetition and
    positions whose shorter n-gram is unique are never looked at again.
    """
    cache: dict[int, list[list[int]]] = a.__dict__.setdefault("_groups", {})
    if n in cache:
        return cache[n]
    ids = _token_ids(a)
    end = len(ids)
    if n == 2:
        keys = list(map(add, map(mul, ids[:-1], repeat(a.__dict__["_base"])), ids[1:]))
        counts = Counter(keys)  # counted in C: only keys seen twice or more get a group
        groups = []
        if len(counts) < len(keys):
            by_key: dict[int, list[int]] = {k: [] for k, c in counts.items() if c > 1}
            for pos in compress(range(len(keys)), map(by_key.__contains__, keys)):
                by_key[keys[pos]].append(pos)
            groups = list(by_key.values())
    else:
        groups = []
        shift = n - 1
        get = ids.__getitem__
        for parent in repeat_groups(a, n - 1):
            if parent[-1] + shift >= end:
                parent = [pos for pos in parent if pos + shift < end]
                if len(parent) < 2:
                    continue
            following = list(map(get, map(add, parent, repeat(shift))))
            if len(parent) == 2:  # most repeated n-grams occur twice
                if following[0] == following[1]:
                    groups.append(parent)
                continue
            distinct = len(set(following))
            if distinct == len(following):
                continue
            if distinct == 1:
                groups.append(parent)
                continue
            split: dict[int, list[int]] = {}
            for pos, nxt in zip(parent, following, strict=True):
                members = split.get(nxt)
                if members is None:
                    split[nxt] = [pos]
                else:
                    members.append(pos)
            groups.extend([g for g in split.values() if len(g) > 1])
    cache[n] = groups
    return groups


def top_ngram_chars(groups: list[list[int]], n: int, prefix: list[int], separator_chars: int,
                    min_count: int = 2) -> int:
    """Characters covered by the most frequent n-gram (the earliest wins a tie), counted as its
    length, separators included, times its count; 0 when no n-gram occurs `min_count` times
    (with `min_count` 1 and no repeat, the first n-gram is the most frequent, as in datatrove)."""
    if not groups:
        if min_count <= 1 and len(prefix) > n:
            return prefix[n] + separator_chars * (n - 1)
        return 0
    sizes = list(map(len, groups))
    count = max(sizes)
    if count < min_count:
        return 0
    at = min(g[0] for g, size in zip(groups, sizes, strict=True) if size == count)
    return (prefix[at + n] - prefix[at] + separator_chars * (n - 1)) * count


def duplicate_ngram_chars(groups: list[list[int]], n: int, prefix: list[int]) -> int:
    """Characters inside repeated n-grams, scanning left to right and jumping past each repeat.

    Equivalent to visiting every position, adding unseen n-grams to a set and jumping `n` ahead
    after a repeat, but it only visits later occurrences of repeated n-grams: every other position
    holds a first occurrence, which is never a repeat and is in the set unless a jump skipped it.
    An n-gram is named by the position of its first occurrence.
    """
    if not groups:
        return 0
    first_of = {pos: g[0] for g in groups for pos in g[1:]}
    added: set[int] = set()
    jump_starts: list[int] = []  # skipped positions: [start, start + n - 1) for each start
    repeated = 0
    frontier = 0
    for pos in sorted(first_of):
        if pos < frontier:
            continue
        f = first_of[pos]
        j = bisect_right(jump_starts, f) - 1
        first_visited = j < 0 or f >= jump_starts[j] + n - 1
        if first_visited or f in added:
            repeated += prefix[pos + n] - prefix[pos]
            jump_starts.append(pos + 1)
            frontier = pos + n
        else:
            added.add(f)
            frontier = pos + 1
    return repeated


def _kernel_levels(a: TextAnalysis, m: int) -> tuple[list[int], list[int], list[int]]:
    """The kernel's (top counts, top characters, duplicated characters) per n, up to at least `m`.

    One call covers every n the Gopher rules measure (up to 10 x chars_per_word), so the nine
    n-gram rules of a document share one pass over its tokens.
    """
    cached = a.__dict__.get("_levels")
    if cached is None or cached[0] < m:
        upto = max(m, DUPLICATE_NGRAM_SIZES[-1] * a.traits.chars_per_word)
        cached = a.__dict__["_levels"] = (upto, *_KERNEL.ngram_levels(a.tokens, upto))
    return cached[1], cached[2], cached[3]


def top_ngram_fraction(n: int, min_count: int = 2) -> Callable[[TextAnalysis], float | None]:
    def measure(a: TextAnalysis) -> float | None:
        m = n * a.traits.chars_per_word
        if not a.tokens or len(a.tokens) < m:
            return None
        sep = 1 if a.traits.space_delimited else 0
        if _KERNEL is None or m < 2:
            return top_ngram_chars(repeat_groups(a, m), m, _prefix_lengths(a), sep, min_count) / len(a.text)
        # the kernel counts 1 where no n-gram repeats: the first n-gram is then the most frequent
        counts, chars, _ = _kernel_levels(a, m)
        count = counts[m]
        return ((chars[m] + sep * (m - 1)) * count if count >= min_count else 0) / len(a.text)

    measure.__name__ = f"top_{n}_gram_char_fraction"
    return measure


def duplicate_ngram_fraction(n: int) -> Callable[[TextAnalysis], float | None]:
    def measure(a: TextAnalysis) -> float | None:
        if not a.tokens:
            return None
        m = n * a.traits.chars_per_word
        if len(a.tokens) < m:
            return 0.0
        if _KERNEL is None or m < 2:
            return duplicate_ngram_chars(repeat_groups(a, m), m, _prefix_lengths(a)) / len(a.text)
        return _kernel_levels(a, m)[2][m] / len(a.text)

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
    for n in TOP_NGRAM_SIZES:
        limit = getattr(c, f"max_top_{n}_gram_char_fraction")
        rules.append(Bound(f"top_{n}_gram_char_fraction", top_ngram_fraction(n, c.min_top_ngram_count), None, limit,
                           too_high=f"top_{n}_gram_too_frequent"))
    for n in DUPLICATE_NGRAM_SIZES:
        limit = getattr(c, f"max_duplicate_{n}_gram_char_fraction")
        rules.append(Bound(f"duplicate_{n}_gram_char_fraction", duplicate_ngram_fraction(n), None, limit,
                           too_high=f"duplicate_{n}_grams"))
    return rules


class GopherRepetition(QualityRuleSet):
    """Gopher repetition rules as one rule set, stage `quality.repetition`."""

    def __init__(self, config: GopherRepetitionConfig = GopherRepetitionConfig(), cache: AnalysisCache | None = None):
        super().__init__(STAGE, gopher_repetition_rules(config), cache)
        self.config = config
