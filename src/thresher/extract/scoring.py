"""Block goodness: how much each block of a page looks like main-content text or like furniture.

Long, sentence-like, link-poor text is positive; link lists, teasers (text under a linked heading,
excerpts cut with "…") and stock phrases are negative. When the page declares an `articleBody` in
JSON-LD about as long as its text, agreement with it is the goodness instead (`hint_scores`).
Also the small text cues the other steps share: sentence ends, cut excerpts, server error output.
"""

from __future__ import annotations

import re

from thresher.extract.blocks import Block
from thresher.extract.tree import Node

_WORD = re.compile(r"\w+")
# An excerpt cut short: "... para …", "[…]", "[...]" at the end of a block.
_TRUNCATED = re.compile(r"(?:\s(?:…|\.\.\.)|[\[(](?:…|\.\.\.)[\])])\s*$")
_SENTENCE_END = re.compile(r"[.!?…。！？:;\"”»)]\s*$")
# The most characters a match of `_TRUNCATED` holds before its trailing whitespace ("[...]").
_TRUNCATED_CORE_CHARS = 5


def ends_sentence(text: str) -> bool:
    """`_SENTENCE_END.search(text)`, started where a match can start: at the last character that is
    not whitespace (`str.rstrip` strips exactly the characters that `re` calls whitespace). A search from the
    start tries the character set at every position of a paragraph."""
    return _SENTENCE_END.search(text, max(0, len(text.rstrip()) - 1)) is not None


def _is_truncated(text: str) -> bool:
    """`_TRUNCATED.search(text)`, started at the latest position a match can start: its core ends
    at the last character that is not whitespace and holds at most `_TRUNCATED_CORE_CHARS`."""
    return _TRUNCATED.search(text, max(0, len(text.rstrip()) - _TRUNCATED_CORE_CHARS)) is not None


# Error output of a server script printed into the page ("Warning: Use of undefined constant ... in
# /path/plugin.php on line 928"), often repeated once per widget: long, sentence-like and link-free,
# so it would outscore a short post, but it is never the page's text.
_SERVER_DIAGNOSTIC = re.compile(
    r"^(?:PHP )?(?:Warning|Notice|Deprecated|Fatal error|Parse error|Strict Standards|Catchable fatal error)"
    r"\s*:.*\bon line \d+\s*$", re.M)

# -- block goodness (`goodness`, `block_scores`) ---------------------------------------------------
# Each was calibrated by moving it alone to the two values in its "sweep" note and scoring AEB,
# trafilatura-eval and readability with benchmarks/extraction_eval.py's scoring (F1 change against
# the value kept; "no change" = every set within 0.0001). No value tried beats the kept one on every
# set by more than the sets' bootstrap intervals.
# A block whose links hold more than this share of its text is a link list.
_LINK_LIST_DENSITY = 0.5  # sweep: 0.4: -0.0006 on trafilatura-eval; 0.6: no change
# A "heading" longer than this many characters is a styled paragraph: it scores
# `_LONG_HEADING_WEIGHT` per extra character.
_LONG_HEADING_CHARS = 60  # sweep: 40: -0.0001 AEB, -0.0002 trafilatura-eval; 80: no change
_LONG_HEADING_WEIGHT = 0.5
# A data table's text counts at this weight (tables are kept, but should not pull the region).
_TABLE_WEIGHT = 0.3  # sweep: 0.15 and 0.6: no change on any set
# Blocks shorter than this are furniture-like (labels, buttons): they score -_SHORT_BLOCK_PENALTY each char.
_SHORT_BLOCK_CHARS = 25  # sweep: 15: -0.0008 trafilatura-eval; 40: -0.0048 readability
_SHORT_BLOCK_PENALTY = 0.5
# Each character of link text costs this many characters of plain text.
_LINK_PENALTY = 2.0  # sweep: 1.0: -0.0003 AEB; 3.0: -0.0003 trafilatura-eval
# Goodness grows with length up to this many characters (a short paragraph is weak evidence).
_FULL_WEIGHT_CHARS = 150  # sweep: 100: -0.0005 AEB; 250: -0.0010 trafilatura-eval, -0.0030 readability
# A block under this many characters that does not end like a sentence keeps this share of its score.
_FRAGMENT_CHARS = 100
_FRAGMENT_WEIGHT = 0.3  # sweep: 0.15: -0.0032 readability; 0.6: -0.0002 trafilatura-eval
# An excerpt cut with "..." scores this multiple of its goodness (negative: a teaser).
_TRUNCATED_WEIGHT = -0.5  # sweep: -0.25 and -1.0: no change
# ... when the page has at least this many of them: one excerpt alone is a paywalled article's lead
# (its only text), not a list of teasers.
_MIN_TRUNCATED = 2
# Text right after a linked heading, shorter than this, is a teaser and scores `_TEASER_WEIGHT` times
# its goodness.
_TEASER_MAX_CHARS = 500  # sweep: 300: -0.0003, 800: -0.0002 trafilatura-eval
_TEASER_WEIGHT = -0.5  # sweep: -0.25 and -1.0: no change
# Teasers come in lists: below this many linked-heading + short-text pairs on the page, the text
# under a linked title is a lone post. 2 gains 0.0003 F1 on trafilatura-eval; 3 loses 0.0005 on AEB.
_MIN_TEASERS = 2
# A link line inside a `<figure>` ("download the graphic", "enlarge", a photo credit link) is the
# figure's own furniture: it scores 0, not as a link list against the region around it. An article
# illustrated with ten graphics, each with a download link, otherwise loses to its author's bio
# (trafilatura-eval). Owners are looked up this many levels above the block.
_FIGURE_DEPTH = 6


def goodness(b: Block) -> float:
    """How much a block looks like main-content text (positive) or furniture (negative)."""
    n = b.text_len
    ld = b.link_density
    if ld > _LINK_LIST_DENSITY:
        return -float(n)
    if b.kind == "heading":
        return _LONG_HEADING_WEIGHT * (n - _LONG_HEADING_CHARS) if n > _LONG_HEADING_CHARS else 0.0
    if b.kind == "table":
        return _TABLE_WEIGHT * n * (1.0 - ld)
    if " on line " in b.text and is_server_diagnostic(b.text):
        return -float(n)
    if n < _SHORT_BLOCK_CHARS:
        return -_SHORT_BLOCK_PENALTY * n
    score = n * (1.0 - _LINK_PENALTY * ld)
    if n < _FULL_WEIGHT_CHARS:
        score *= n / _FULL_WEIGHT_CHARS
    if not ends_sentence(b.text) and n < _FRAGMENT_CHARS:
        score *= _FRAGMENT_WEIGHT
    return score


def is_server_diagnostic(text: str) -> bool:
    """Every line of the block is a script's error message (`_SERVER_DIAGNOSTIC`)."""
    lines = [line for line in text.split("\n") if line.strip()]
    return bool(lines) and len(_SERVER_DIAGNOSTIC.findall(text)) >= len(lines)


def _in_figure(node: Node) -> bool:
    """`node` is a `<figure>` or lies within `_FIGURE_DEPTH` levels below one."""
    for _ in range(_FIGURE_DEPTH):
        if node.tag == "figure":
            return True
        parent = node.parent
        if parent is None:
            return False
        node = parent
    return False


def block_scores(blocks: list[Block]) -> list[float]:
    """Goodness of every block, in context: text right after a linked heading is a teaser, when
    the page has a list of them (a lone post under its linked title is the post)."""
    scores = [goodness(b) for b in blocks]
    for i, s in enumerate(scores):
        if s < 0 and _in_figure(blocks[i].owner):
            scores[i] = 0.0
    # excerpts cut with "...": teasers when the page lists several, a paywalled article's lead alone
    cut = [
        i
        for i, b in enumerate(blocks)
        if scores[i] > 0 and b.kind not in ("table", "heading") and _is_truncated(b.text)
    ]
    if len(cut) >= _MIN_TRUNCATED:
        for i in cut:
            scores[i] *= _TRUNCATED_WEIGHT
    teasers = []
    after_linked_heading = False
    for i, b in enumerate(blocks):
        if b.kind == "heading":
            after_linked_heading = b.link_density > _LINK_LIST_DENSITY
        elif after_linked_heading:
            if b.text_len < _TEASER_MAX_CHARS and scores[i] > 0:
                teasers.append(i)
            after_linked_heading = False
    if len(teasers) >= _MIN_TEASERS:
        for i in teasers:
            scores[i] *= _TEASER_WEIGHT
    return scores


def word_tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def hint_scores(blocks: list[Block], hint: str) -> tuple[list[float], list[float]]:
    """Per block: goodness from agreement with the declared article body, and the agreeing share."""
    vocab = set(word_tokens(hint))
    scores: list[float] = []
    shares: list[float] = []
    for b in blocks:
        toks = word_tokens(b.text)
        if not toks:
            scores.append(0.0)
            shares.append(0.0)
            continue
        hit = sum(1 for t in toks if t in vocab)
        share = hit / len(toks)
        shares.append(share)
        scores.append(hit - 2.0 * (len(toks) - hit) if b.kind != "heading" else 0.0)
    return scores, shares
