"""The end-anchored searches started near the end give the full searches' answers."""

from __future__ import annotations

import random

from thresher.extract import builtin

_PIECES = [" ", "\n", "\t", "\u00a0", "\u2028", "\u3000", ".", "...", "…", "[", "]", "(", ")", "!", "?", "。", "”",
           "»", ":", ";", '"', "a", "word", "x"]


def test_tail_searches_match_the_full_searches():
    rng = random.Random(15)
    for _ in range(50000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 12)))
        assert builtin._ends_sentence(text) == bool(builtin._SENTENCE_END.search(text)), repr(text)
        assert builtin._is_truncated(text) == bool(builtin._TRUNCATED.search(text)), repr(text)
