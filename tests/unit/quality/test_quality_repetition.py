from quality_helpers import doc, only

from thresher.core import Drop
from thresher.quality.repetition import GopherRepetition, GopherRepetitionConfig, duplicate_ngram_chars

S = "quality.repetition"


def run(text: str, **enabled):
    return GopherRepetition(only(GopherRepetitionConfig, **enabled)).check_all(doc(text))


def test_duplicate_lines_by_count_and_by_characters():
    text = "a\na\nb\nc"
    assert run(text, max_duplicate_line_fraction=0.2) == [Drop(S, "duplicate_lines", value=0.25, limit=0.2)]
    assert run(text, max_duplicate_line_char_fraction=0.1) == [
        Drop(S, "duplicate_line_chars", value=round(1 / 7, 4), limit=0.1)
    ]


def test_duplicate_paragraphs_by_count_and_by_characters():
    text = "x y\n\nx y\n\nz"
    assert run(text, max_duplicate_paragraph_fraction=0.3) == [
        Drop(S, "duplicate_paragraphs", value=round(1 / 3, 4), limit=0.3)
    ]
    assert run(text, max_duplicate_paragraph_char_fraction=0.2) == [
        Drop(S, "duplicate_paragraph_chars", value=round(3 / 11, 4), limit=0.2)
    ]


def test_top_ngram_counts_its_characters_with_separators():
    # (a, b) occurs 3 times: 3 characters each ("a b") over 13 characters
    assert run("a b a b a b c", max_top_2_gram_char_fraction=0.2) == [
        Drop(S, "top_2_gram_too_frequent", value=round(9 / 13, 4), limit=0.2)
    ]


def test_duplicate_ngrams_jump_past_each_repeat():
    assert run("a b c d e a b c d e", max_duplicate_5_gram_char_fraction=0.15) == [
        Drop(S, "duplicate_5_grams", value=round(5 / 19, 4), limit=0.15)
    ]
    # twelve equal words: 5-grams at 0 (new), 1 (repeat, jump to 6), 6 (repeat, jump past the end)
    same = [list(range(8))]  # the 8 five-grams of 12 one-letter tokens are all one n-gram
    assert duplicate_ngram_chars(same, 5, list(range(13))) == 10


def test_unique_text_passes_all_rules():
    assert run("one two three four five six seven eight nine ten eleven twelve", **{
        f.name: f.default for f in __import__("dataclasses").fields(GopherRepetitionConfig)
    }) == []


def test_every_failing_rule_is_reported():
    drops = GopherRepetition().check_all(doc("spam spam\n" * 20))
    reasons = [d.reason for d in drops]
    assert reasons[:4] == [
        "duplicate_paragraphs",
        "duplicate_paragraph_chars",
        "duplicate_lines",
        "duplicate_line_chars",
    ] or reasons[:2] == ["duplicate_lines", "duplicate_line_chars"]
    assert "top_2_gram_too_frequent" in reasons and "duplicate_10_grams" in reasons


def test_fast_ngram_counts_equal_the_reference_definitions():
    """The grouped n-gram search and the candidate-only scan give exactly what the textbook
    definitions give (most common n-gram via Counter; left-to-right scan with a set and jumps)."""
    import random
    from collections import Counter

    from thresher.quality.repetition import _prefix_lengths, repeat_groups, top_ngram_chars
    from thresher.quality.text import TextAnalysis

    def reference_duplicates(words, n):
        seen, repeated, idx = set(), 0, 0
        while idx < len(words) - n + 1:
            gram = tuple(words[idx:idx + n])
            if gram in seen:
                repeated += len("".join(gram))
                idx += n
            else:
                seen.add(gram)
                idx += 1
        return repeated

    def reference_top(words, n):
        grams = Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))
        if not grams:
            return 0
        gram, count = grams.most_common(1)[0]
        return (len("".join(gram)) + n - 1) * count if count >= 2 else 0

    rng = random.Random(5)
    for _ in range(2000):
        words = [rng.choice(["a", "bb", "ccc", "dddd"][: rng.randint(1, 4)]) for _ in range(rng.randint(0, 30))]
        a = TextAnalysis(" ".join(words))
        prefix = _prefix_lengths(a)
        for n in range(2, 7):
            if len(words) >= n:
                assert duplicate_ngram_chars(repeat_groups(a, n), n, prefix) == reference_duplicates(words, n)
                assert top_ngram_chars(repeat_groups(a, n), n, prefix, 1) == reference_top(words, n)
