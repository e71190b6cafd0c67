"""PII detection invariants on arbitrary text: matches are in bounds, ordered and disjoint; the
result does not depend on detector order; typed-token redaction is idempotent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from thresher.pii.config import PiiConfig
from thresher.pii.detection import TYPES, detect, fold_lookalikes, resolve_overlaps
from thresher.pii.redact import RedactPii

# Text built from the characters identifiers are made of, so that near-matches are frequent.
pieces = st.sampled_from(
    ["a", "Z", "0", "1", "4", "9", "@", ".", "-", " ", "+", "(", ")", ":", "/", "DE", "89", "＠", "at", "dot", "[at]",
     "4111 1111 1111 1111", "8.8.8.8", "2a00:1450::1", "+44 20 7946 0958", "x@y.com", "GB82WEST12345698765432", "\n"]
)
texts = st.lists(pieces, max_size=60).map("".join)
# the same, pieces delimited: identifiers are not glued to each other or to stray digits
spaced = st.lists(pieces, max_size=60).map(" ; ".join)

REDACT = RedactPii(PiiConfig(types=TYPES))


@settings(max_examples=300, deadline=None)
@given(text=texts)
def test_matches_are_in_bounds_ordered_and_disjoint(text):
    matches = detect(text, TYPES)
    end = 0
    for m in matches:
        assert end <= m.start < m.end <= len(text)
        end = m.end
    assert resolve_overlaps(list(reversed(matches))) == matches


@settings(max_examples=300, deadline=None)
@given(text=spaced)
def test_token_redaction_is_idempotent(text):
    # (glued ones are not: "4111 1111 1111 1111 8.8.8.8" may be a 17-digit number and is no card,
    # but "4111 1111 1111 1111 <IP>" has one)
    once, _ = REDACT.redact(text)
    assert REDACT.redact(once) == (once, {})


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_fold_keeps_length(text):
    assert len(fold_lookalikes(text)) == len(text)
