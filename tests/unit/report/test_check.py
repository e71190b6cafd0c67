"""report/check.py: the measures of `thresher check`, their intervals, bounds and verdicts."""

from __future__ import annotations

import math

import pytest

from thresher.core.errors import ConfigError
from thresher.report.check import (
    Bounds,
    CheckResult,
    Measure,
    char_entropy,
    language_of,
    measure,
    ratio_ci,
)

NAN = float("nan")
PARA = "This paragraph is long enough to be counted by the check."  # >= 30 characters


def _doc(text: str, lang: str | None = None) -> dict:
    return {"id": text[:8], "url": None, "text": text, "lang": lang}


def test_bounds_from_mapping_converts_numbers_and_keeps_the_language():
    b = Bounds.from_mapping({"language": "en", "min_language_share": 1, "max_mean_words": 2.5})
    assert b == Bounds(language="en", min_language_share=1.0, max_mean_words=2.5)
    assert isinstance(b.min_language_share, float)


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"min_words": 3}, "unknown key(s) min_words"),
        ({"max_mean_words": True}, "expected a number, got True"),
        ({"max_mean_words": "10"}, "expected a number, got '10'"),
        ({"language": 7}, "expected a language code"),
    ],
)
def test_bounds_from_mapping_rejects_wrong_keys_and_types(mapping, message):
    with pytest.raises(ConfigError) as raised:
        Bounds.from_mapping(mapping)
    assert message in str(raised.value)


def test_measure_verdicts_against_bounds_and_intervals():
    inside = Measure("m", 0.5, 0.4, 0.6, 10, min_bound=0.1, max_bound=0.9)
    assert inside.checked and inside.passed and inside.conclusive
    straddles = Measure("m", 0.5, 0.3, 0.7, 10, max_bound=0.6)
    assert straddles.passed and not straddles.conclusive
    below = Measure("m", 0.05, 0.01, 0.09, 10, min_bound=0.1)
    assert not below.passed and below.conclusive
    unchecked = Measure("m", 5.0, 4.0, 6.0, 10)
    assert not unchecked.checked and unchecked.passed


def test_a_measure_with_no_value_fails_only_when_checked():
    assert Measure("m", NAN, NAN, NAN, 0).passed
    assert not Measure("m", NAN, NAN, NAN, 0, max_bound=1.0).passed
    assert Measure("m", NAN, NAN, NAN, 0).to_dict() == {
        "name": "m", "value": None, "ci95": [None, None], "n": 0, "min": None, "max": None,
        "checked": False, "passed": True, "conclusive": True,
    }


def test_ratio_ci_is_the_ratio_estimator_with_a_delta_method_interval():
    r, lo, hi = ratio_ci([1, 3], [2, 2])
    assert r == 1.0
    # residuals 1 - 2 = -1 and 3 - 2 = 1: variance 2 / 1 / (2 * 2 * 2) = 0.25, half-width 1.96 * 0.5
    assert (lo, hi) == (max(0.0, 1.0 - 0.98), 1.0)  # clamped to [0, 1]
    r, lo, hi = ratio_ci([1, 1, 0, 0], [4, 4, 4, 4])
    assert r == 0.125 and 0.0 <= lo < r < hi <= 1.0
    assert ratio_ci([2], [5]) == (0.4, 0.4, 0.4)


def test_ratio_ci_of_nothing_is_nan():
    for value in ratio_ci([], []) + ratio_ci([0, 0], [0, 0]):
        assert math.isnan(value)


def test_char_entropy_in_bits():
    assert char_entropy("") == 0.0
    assert char_entropy("aaaa") == 0.0
    assert char_entropy("abab") == 1.0
    assert char_entropy("abcd") == 2.0


def test_language_of_prefers_the_annotation_then_the_detector():
    assert language_of({"lang": "de", "text": "x"}, lambda t: "en") == "de"
    assert language_of({"lang": None, "text": "x"}, lambda t: "en") == "en"
    assert language_of({"lang": None, "text": "x"}, None) is None


def test_measure_counts_repeated_paragraphs_boilerplate_lines_words_and_entropy():
    docs = [
        _doc(f"{PARA}\nshort line\nAccept all cookies"),
        _doc(f"{PARA}\nA different paragraph that is also long enough to count."),
    ]
    got = {m.name: m for m in measure(docs, Bounds(max_boilerplate_line_rate=0.1))}
    assert list(got) == ["duplicate_paragraph_rate", "boilerplate_line_rate", "mean_words", "mean_char_entropy"]
    dup = got["duplicate_paragraph_rate"]
    assert (dup.value, dup.n) == (2 / 3, 3)  # PARA twice of three counted paragraphs ("short line" is too short)
    bp = got["boilerplate_line_rate"]
    assert (bp.value, bp.n) == (1 / 5, 5) and bp.max_bound == 0.1 and not bp.passed
    words = [len(d["text"].split()) for d in docs]
    assert got["mean_words"].value == sum(words) / 2 and got["mean_words"].n == 2
    assert got["mean_char_entropy"].value == pytest.approx(sum(char_entropy(d["text"]) for d in docs) / 2)


def test_paragraphs_match_after_case_folding_and_whitespace():
    docs = [_doc(PARA), _doc("  " + PARA.upper().replace(" ", "   "))]
    dup = measure(docs, Bounds())[0]
    assert dup.value == 1.0


def test_language_share_uses_annotations_and_needs_some():
    docs = [_doc("one", "en"), _doc("two", "en"), _doc("three", "fr"), _doc("four")]
    share = measure(docs, Bounds(language="en", min_language_share=0.5))[0]
    assert share.name == "language_share[en]"
    assert (share.value, share.n) == (2 / 3, 3)  # the document without a code is not counted
    assert share.low < share.value < share.high and share.passed
    none_known = measure([_doc("four")], Bounds(language="en", min_language_share=0.5))[0]
    assert math.isnan(none_known.value) and none_known.n == 0 and not none_known.passed


def test_measure_of_no_documents_reports_nothing_and_passes_unchecked():
    result = CheckResult("empty", 0, 0, measure([], Bounds()))
    assert all(math.isnan(m.value) for m in result.measures)
    assert result.passed
    text = result.render()
    assert text.splitlines()[0] == "empty: 0 of 0 documents sampled"
    assert text.count("n/a") == 4 and text.endswith("result: pass")


def test_check_result_render_and_dict_show_bounds_and_verdicts():
    result = CheckResult("ds", 10, 1_000, [
        Measure("mean_words", 120.0, 100.0, 140.0, 10, min_bound=50.0, max_bound=130.0),
        Measure("boilerplate_line_rate", 0.3, 0.2, 0.4, 40, max_bound=0.1),
    ])
    assert not result.passed
    lines = result.render().splitlines()
    assert lines[0] == "ds: 10 of 1,000 documents sampled"
    assert ">= 50 <= 130" in lines[1] and "pass (interval straddles the bound)" in lines[1]
    assert "<= 0.1" in lines[2] and lines[2].rstrip().endswith("FAIL")
    assert lines[-1] == "result: FAIL"
    as_dict = result.to_dict()
    assert as_dict["passed"] is False and as_dict["documents"] == 1_000
    assert [m["passed"] for m in as_dict["measures"]] == [True, False]
