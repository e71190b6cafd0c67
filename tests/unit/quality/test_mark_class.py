"""The stored combining-mark class equals the one computed from unicodedata."""

from __future__ import annotations

import re
import unicodedata

import pytest

from thresher.quality.mark_class import BMP_MARK_CLASS, compute_mark_class, mark_class


def test_stored_class_for_this_unicode_version_equals_the_computed_one() -> None:
    if unicodedata.unidata_version not in BMP_MARK_CLASS:
        pytest.skip(f"no stored class for Unicode {unicodedata.unidata_version} (it is computed)")
    assert BMP_MARK_CLASS[unicodedata.unidata_version] == compute_mark_class()
    assert mark_class() == compute_mark_class()


def test_class_matches_exactly_the_marks() -> None:
    marks = re.compile(f"[{mark_class()}]")
    for ch in ("\u0301", "\u0670", "\u093f", "\u20dd"):  # Mn, Mn, Mc, Me
        assert marks.fullmatch(ch), hex(ord(ch))
    for ch in ("a", "\u00e9", "\u0915", " ", "1"):
        assert not marks.fullmatch(ch), hex(ord(ch))
