"""The compiled repetition kernel gives exactly what the pure-Python reference gives.

`thresher.quality._repetition.ngram_levels` replaces `repeat_groups` + `top_ngram_chars` +
`duplicate_ngram_chars` when it is built; every measured number must be the same integer, so the
same float, the same annotation and the same keep/drop decision. Compared here on seeded random
token sequences (small alphabets, periodic runs, all-identical), real extracted and gold texts, and
scripts without spaces (n scaled by chars_per_word).
"""

from __future__ import annotations

import gzip
import json
import random
import sys
import tracemalloc
from pathlib import Path

import pytest

from thresher.core.document import Document
from thresher.quality import repetition
from thresher.quality.repetition import (
    GopherRepetition,
    GopherRepetitionConfig,
    _prefix_lengths,
    duplicate_ngram_chars,
    repeat_groups,
    top_ngram_chars,
)
from thresher.quality.text import TextAnalysis

try:
    from thresher.quality import _repetition as kernel
except ImportError:
    pytest.skip("the compiled repetition kernel is not built (python setup.py build_ext --inplace)",
                allow_module_level=True)

SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"
LEVELS = 12  # beyond the Gopher rules' 10, to cover the levels past them as well
SEQUENCES = 300  # seeded random sequences compared


def reference_levels(tokens: list[str], max_n: int, separator: int, min_count: int) -> list[tuple[int, int]]:
    """(top n-gram characters, duplicated n-gram characters) per n, from the Python reference."""
    a = TextAnalysis(" ".join(tokens))
    a.__dict__["tokens"] = tokens
    prefix = _prefix_lengths(a)
    out = []
    for n in range(2, min(max_n, len(tokens)) + 1):
        groups = repeat_groups(a, n)
        out.append((top_ngram_chars(groups, n, prefix, separator, min_count), duplicate_ngram_chars(groups, n, prefix)))
    return out


def kernel_levels(tokens: list[str], max_n: int, separator: int, min_count: int) -> list[tuple[int, int]]:
    """The same numbers from the kernel, combined as the dispatch in repetition.py combines them."""
    counts, chars, duplicated = kernel.ngram_levels(tokens, max_n)
    out = []
    for n in range(2, min(max_n, len(tokens)) + 1):
        top = (chars[n] + separator * (n - 1)) * counts[n] if counts[n] >= min_count else 0
        out.append((top, duplicated[n]))
    return out


def assert_same_levels(tokens: list[str], max_n: int = LEVELS) -> None:
    for separator in (0, 1):
        for min_count in (1, 2):
            assert kernel_levels(tokens, max_n, separator, min_count) == \
                reference_levels(tokens, max_n, separator, min_count), (len(tokens), separator, min_count)


def id_tokens(ids: list[int]) -> list[str]:
    # token lengths differ by id, so a wrong n-gram or position shows in the character counts
    return [chr(ord("a") + i % 26) * (1 + i % 4) + str(i // 26) for i in ids]


def measured(text: str, use_kernel: bool, min_count: int, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """Every repetition measure (unrounded) and the rule set's annotations and drops."""
    monkeypatch.setattr(repetition, "_KERNEL", kernel if use_kernel else None)
    rules = GopherRepetition(GopherRepetitionConfig(min_top_ngram_count=min_count))
    analysis = TextAnalysis(text)
    values = [rule.measure(analysis) for rule in rules.rules]
    evaluation = rules.evaluate(Document(id="d", text=text))
    return values, evaluation.annotations, evaluation.drops


def assert_same_measures(texts: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    for text in texts:
        for min_count in (1, 2):
            assert measured(text, True, min_count, monkeypatch) == measured(text, False, min_count, monkeypatch)


def test_seeded_random_sequences_with_small_alphabets():
    rng = random.Random(15)
    for _ in range(SEQUENCES):
        length = rng.choice([0, 1, 2, 3, 4, 7, 12, 30, 100, 400, 1500, 5000])
        alphabet = rng.randint(1, 50)
        assert_same_levels(id_tokens([rng.randrange(alphabet) for _ in range(length)]))


def test_periodic_runs_and_identical_tokens():
    rng = random.Random(16)
    for period in (1, 2, 3, 5, 7, 11, 13):
        for length in (period, 2 * period + 1, 97, 5000):
            unit = [rng.randrange(50) for _ in range(period)]
            assert_same_levels(id_tokens((unit * (length // period + 1))[:length]))
    # a periodic run inside noise, and the same run twice
    noise = [rng.randrange(1000) for _ in range(300)]
    run = [1, 2, 3, 4] * 40
    assert_same_levels(id_tokens(noise[:100] + run + noise[100:200] + run + noise[200:]))
    assert_same_levels(["x"] * 5000, 40)


def test_levels_past_the_gopher_sizes_and_short_inputs():
    rng = random.Random(17)
    tokens = id_tokens([rng.randrange(3) for _ in range(600)])
    assert_same_levels(tokens, 40)  # Thai's 10-grams are 40 characters
    for max_n in (-1, 0, 1):
        counts, chars, duplicated = kernel.ngram_levels(tokens, max_n)
        assert counts == chars == duplicated == [0, 0]
    assert kernel.ngram_levels([], 10) == ([0, 0], [0, 0], [0, 0])
    assert kernel.ngram_levels(["a", "b"], 10) == ([0, 0, 1], [0, 0, 2], [0, 0, 0])


def test_earliest_most_frequent_ngram_wins_a_tie():
    # (a, b) at 0 and 6 and (zz, qq) at 2 and 4 both occur twice: the earliest, (a, b), is the top one
    tokens = "a b zz qq zz qq a b".split()
    counts, chars, _ = kernel.ngram_levels(tokens, 2)
    assert (counts[2], chars[2]) == (2, 2)
    assert kernel_levels(tokens, 2, 1, 2) == reference_levels(tokens, 2, 1, 2) == [(6, 6)]
    # a later n-gram that occurs more often displaces it
    tokens = "a b zz qq zz qq zz qq a b".split()
    assert kernel.ngram_levels(tokens, 2)[:2] == ([0, 0, 3], [0, 0, 4])
    # no repeat: with min_count 1 the first n-gram is the most frequent (datatrove), with 2 none is
    tokens = "one two three four".split()
    assert kernel_levels(tokens, 3, 1, 1) == reference_levels(tokens, 3, 1, 1) == [(7, 0), (13, 0)]
    assert kernel_levels(tokens, 3, 1, 2) == reference_levels(tokens, 3, 1, 2) == [(0, 0), (0, 0)]


def test_equal_strings_that_are_different_objects_are_one_token():
    made = ["".join(["ab", "c"]) for _ in range(4)]  # four distinct str objects, equal text
    assert len({id(t) for t in made}) == 4
    tokens = [made[0], "x", made[1], "x", made[2], "é", made[3], "é"]
    assert_same_levels(tokens)
    assert kernel.ngram_levels(tokens, 2)[0][2] == 2


def test_rejects_what_is_not_a_list_of_str():
    with pytest.raises(TypeError):
        kernel.ngram_levels(("a", "b"), 3)
    with pytest.raises(TypeError):
        kernel.ngram_levels(["a", 1], 3)
    with pytest.raises(TypeError):
        kernel.ngram_levels(["a"])


def test_memory_and_references_stay_flat_over_passes():
    rng = random.Random(18)
    tokens = id_tokens([rng.randrange(20) for _ in range(3000)])
    references = [sys.getrefcount(t) for t in tokens[:50]]
    kernel.ngram_levels(tokens, 40)
    tracemalloc.start()
    try:
        kernel.ngram_levels(tokens, 40)
        first, _ = tracemalloc.get_traced_memory()
        for _ in range(20):
            kernel.ngram_levels(tokens, 40)
        last, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert last - first < 1024  # nothing kept per call (the lists returned are freed)
    assert [sys.getrefcount(t) for t in tokens[:50]] == references


def _shared(*parts: str) -> Path:
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"evaluation data missing: {path}")
    return path


def test_real_gold_and_extracted_texts(monkeypatch):
    aeb = _shared("extraction", "aeb")
    truth = json.loads((aeb / "ground-truth.json").read_text(encoding="utf-8"))
    from thresher.extract.builtin import BuiltinExtractor

    extractor = BuiltinExtractor()
    texts = []
    for page_id in sorted(truth):
        texts.append(truth[page_id]["articleBody"])
        html = gzip.decompress((aeb / "html" / f"{page_id}.html.gz").read_bytes()).decode("utf-8", "replace")
        texts.append(extractor.extract(html).text)
    assert_same_measures(texts, monkeypatch)


def test_scripts_without_spaces(monkeypatch):
    """Han, Japanese and Thai: tokens are characters and n is scaled by chars_per_word."""
    sentences = _shared("language", "lingua", "sentences")
    texts = []
    for code in ("zh", "ja", "th"):
        lines = (sentences / f"{code}.txt").read_text(encoding="utf-8").splitlines()
        texts.append("\n".join(lines[:60]))
        # repeated lines and paragraphs so that every n-gram rule finds repeats
        texts.append("\n\n".join(lines[:5] * 4 + lines[5:20]))
    cpws = {TextAnalysis(text).traits.chars_per_word for text in texts}
    assert max(cpws) > 1
    assert_same_measures(texts, monkeypatch)
    for text in texts:
        a = TextAnalysis(text)
        assert_same_levels(a.tokens, 10 * a.traits.chars_per_word)
