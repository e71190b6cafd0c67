"""Fast paths of the extractor give the answers of the code they stand for: the end-anchored searches
started near the end, the control-character share counted as bytes."""

from __future__ import annotations

import random
import re

from thresher.extract import region, scoring
from thresher.extract.stage import control_char_ratio

_PIECES = [" ", "\n", "\t", "\u00a0", "\u2028", "\u3000", ".", "...", "…", "[", "]", "(", ")", "!", "?", "。", "”",
           "»", ":", ";", '"', "a", "word", "x"]


def test_tail_searches_match_the_full_searches():
    rng = random.Random(15)
    for _ in range(50000):
        text = "".join(rng.choice(_PIECES) for _ in range(rng.randrange(0, 12)))
        assert scoring.ends_sentence(text) == bool(scoring._SENTENCE_END.search(text)), repr(text)
        assert scoring._is_truncated(text) == bool(scoring._TRUNCATED.search(text)), repr(text)


def test_control_char_ratio_matches_the_regex_count():
    binary = re.compile("[\x00-\x08\x0e-\x1f\x7f\ufffd]")
    rng = random.Random(19)
    for _ in range(20000):
        text = "".join(chr(rng.choice([rng.randrange(0, 0x100), rng.randrange(0, 0x30), 0xFFFD, 0x7F, 0x2028]))
                       for _ in range(rng.randrange(0, 30)))
        want = len(binary.findall(text)) / len(text) if text else 0.0
        assert control_char_ratio(text) == want, repr(text)


def test_colspan_test_on_ascii_attributes_matches_the_regex():
    from thresher.extract.blocks import _COLSPAN

    rng = random.Random(23)
    letters = "cCoOlLsSpPaAnN =\"'x"
    for _ in range(20000):
        raw = "".join(rng.choice(letters) for _ in range(rng.randrange(0, 12)))
        if rng.random() < 0.3:
            raw += "".join(c.upper() if rng.random() < 0.5 else c for c in "colspan")
        assert ("colspan" in raw.lower()) == bool(_COLSPAN.search(raw)), raw


def test_caption_line_test_matches_the_whole_pattern():
    from thresher.extract.hints import CAPTION_LINE, is_caption_line

    rng = random.Random(29)
    pieces = ["Foto", "photo", " ", "1a", ":", ",", " credit", "Crédit photo", "©", "AFP", ".", "x", "\n",
              "Enlarge", "fig.", "Abb.", "!", "word"]
    for _ in range(30000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(0, 8)))
        assert is_caption_line(text) == bool(CAPTION_LINE.search(text)), repr(text)


def _declared_body_inside_reference(doc):
    """The bottom-up pass `declared_body_inside` replaced (children before parents)."""
    inside = [False] * len(doc.nodes)
    for node in reversed(doc.nodes):
        i = node.index
        if not inside[i]:
            raw = node.raw_attrs
            if not (node.tag == "main" or raw and ("itemprop" in raw or "role" in raw) and region.declares_body(node)):
                continue
            inside[i] = True
        if node.parent is not None:
            inside[node.parent.index] = True
    return inside


def test_declared_body_inside_matches_the_bottom_up_pass():
    from thresher.extract.tree import parse

    rng = random.Random(31)
    opens = ["<div>", "<main>", '<div itemprop="articleBody">', '<section role="main">', '<p role="note">',
             '<span itemprop="name">', "<article>", "<ul><li>"]
    for _ in range(3000):
        html = "".join(
            rng.choice(opens + ["</div>", "</main>", "</section>", "text "]) for _ in range(rng.randrange(1, 25))
        )
        doc = parse(html)
        assert region.declared_body_inside(doc) == _declared_body_inside_reference(doc), html
