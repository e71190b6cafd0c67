"""report/svg.py: the hand-written charts of `thresher report`, their numbers and their escaping."""

from __future__ import annotations

import re

from thresher.report.svg import (
    DROPPED_COLOUR,
    KEPT_COLOUR,
    BinnedHistogram,
    Histogram,
    bar_chart,
    binned_histogram_chart,
    funnel_chart,
    histogram_chart,
)

HOSTILE = "<script>alert('x')</script>&"


def _rects(svg: str) -> list[dict[str, str]]:
    return [dict(re.findall(r"(\w+)='([^']*)'", attrs)) for attrs in re.findall(r"<rect ([^>]*)>", svg)]


def test_bar_chart_of_no_rows_is_empty():
    assert bar_chart([], "nothing") == ""
    assert funnel_chart([], "nothing") == ""


def test_bar_chart_scales_bars_to_the_largest_value_and_prints_values():
    svg = bar_chart([("a", 10.0), ("b", 5.0), ("c", 0.0), ("d", 1234567.0)], "sizes", width=640)
    assert svg.startswith("<svg ") and svg.endswith("</svg>")
    assert "role='img'" in svg and "aria-label='sizes'" in svg and "<title>sizes</title>" in svg
    widths = [float(r["width"]) for r in _rects(svg)]
    label_w = min(260, 12 + 7 * 1)
    plot_w = 640 - label_w - 70
    assert widths[3] == round(plot_w, 1)  # the largest value spans the plot
    assert widths[2] == 0.0  # a zero draws no bar
    assert widths[0] == max(1.0, round(plot_w * 10 / 1234567, 1))  # a tiny share still shows (1 px)
    # values are printed with thousands separators, integers without decimals
    assert ">1,234,567</text>" in svg and ">10</text>" in svg
    assert "<title>d: 1,234,567</title>" in svg


def test_bar_chart_formats_fractions():
    svg = bar_chart([("x", 0.012345), ("y", 2.5), ("z", 150.4)], "fractions")
    assert ">0.0123</text>" in svg and ">2.50</text>" in svg and ">150</text>" in svg


def test_bar_chart_escapes_names_and_label():
    svg = bar_chart([(HOSTILE, 3.0)], HOSTILE)
    assert "<script" not in svg
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;" in svg
    # the label sits in a single-quoted attribute: its quotes must not end it
    assert "aria-label='&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;'" in svg


def test_bar_chart_shortens_long_names_in_the_axis_but_not_in_the_tooltip():
    name = "h" * 60 + ".example"
    svg = bar_chart([(name, 1.0)], "hosts")
    assert f">{name[:40]}</text>" in svg
    assert f"<title>{name}: 1</title>" in svg


def test_funnel_chart_uses_the_kept_colour():
    svg = funnel_chart([("seen", 10), ("after quality", 4)], "funnel")
    assert [r["fill"] for r in _rects(svg)] == [KEPT_COLOUR, KEPT_COLOUR]
    assert ">10</text>" in svg and ">4</text>" in svg


def test_histogram_of_nothing_is_an_empty_unit_range():
    hist = Histogram.of([], [], bins=5)
    assert hist == Histogram(0.0, 1.0, (0, 0, 0, 0, 0), (0, 0, 0, 0, 0))
    svg = histogram_chart(hist, "empty")
    assert "<rect" not in svg and svg.endswith("</svg>")


def test_histogram_counts_every_value_and_clamps_the_tails():
    kept = [float(v) for v in range(100)] + [10_000.0]  # a far outlier
    dropped = [-500.0, 50.0]
    hist = Histogram.of(kept, dropped, bins=10)
    assert sum(hist.kept) == len(kept) and sum(hist.dropped) == len(dropped)
    # the range is the 1st..99th percentile: the outliers land in the end bins
    assert hist.hi < 10_000.0 and hist.lo > -500.0
    assert (hist.lo, hist.hi) == (0.0, 98.0)  # of all 103 values (50 twice): sorted[1], sorted[100]
    assert hist.kept[-1] == 12 and hist.dropped == (1, 0, 0, 0, 0, 1, 0, 0, 0, 0)  # 89..99 and 10,000; -500 and 50
    assert hist.width == (hist.hi - hist.lo) / 10


def test_histogram_widens_to_a_near_bound_but_not_to_a_far_one():
    values = [float(v) for v in range(10, 110)]
    near = Histogram.of(values, [], bounds=[5.0])
    assert near.lo == 5.0
    far = Histogram.of(values, [], bounds=[100_000.0])
    assert far.hi < 200.0


def test_histogram_of_one_repeated_value_has_a_positive_width():
    hist = Histogram.of([3.0] * 4, [], bins=4)
    assert hist.hi > hist.lo and sum(hist.kept) == 4


def test_histogram_chart_stacks_kept_under_dropped_and_marks_bounds_in_range():
    hist = Histogram(0.0, 10.0, (2, 0), (1, 3))
    svg = histogram_chart(hist, "metric", bounds=[5.0, 50.0])
    fills = [r["fill"] for r in _rects(svg)]
    assert fills == [KEPT_COLOUR, DROPPED_COLOUR, DROPPED_COLOUR]  # bin 1 has no kept bar
    assert "<title>0 to 5: 2 kept, 1 dropped</title>" in svg
    assert svg.count("class='bound'") == 1  # 50 lies outside the range: named elsewhere, not drawn
    assert "bound 5</text>" in svg and "bound 50" not in svg
    # the tallest stack (3) is the axis maximum
    assert ">3</text>" in svg


def test_histogram_chart_escapes_bin_labels_and_axis_text():
    hist = Histogram(0.0, 1.0, (1,), (0,))
    svg = histogram_chart(hist, "m", bin_labels=[HOSTILE], axis=(HOSTILE, "<b>"))
    assert "<script" not in svg and "<b>" not in svg
    assert "&lt;b&gt;" in svg and "&lt;script&gt;" in svg


def test_binned_histogram_fills_gaps_between_occupied_bins_in_order():
    hist = BinnedHistogram.of({"passed": {"p10": 3, "z": 1}, "dropped": {"p13": 2}})
    # zero bin first, then p10..p13 with the gaps filled
    assert len(hist.edges) == 5
    assert hist.edges[0] == (0.0, 0.0)
    assert hist.kept == (1, 3, 0, 0, 0) and hist.dropped == (0, 0, 0, 0, 2)
    lows = [lo for lo, _ in hist.edges[1:]]
    assert lows == sorted(lows) and abs(lows[0] - 10.0) < 1e-9
    for (_, high), (next_low, _) in zip(hist.edges[1:], hist.edges[2:], strict=False):
        assert high == next_low  # contiguous bins: the x axis has no hole


def test_binned_histogram_position_interpolates_in_log_scale():
    hist = BinnedHistogram.of({"passed": {"z": 1, "p10": 1}})
    lo, hi = hist.edges[1]
    assert hist.position(0.0) == 0.5
    assert hist.position(lo) == 1.0
    mid = (lo * hi) ** 0.5  # geometric middle of the bin
    assert abs(hist.position(mid) - 1.5) < 1e-9  # type: ignore[operator]
    assert hist.position(hi * 10) is None


def test_binned_histogram_chart_of_nothing_is_empty_and_bounds_are_drawn_when_inside():
    assert binned_histogram_chart(BinnedHistogram.of({}), "none") == ""
    hist = BinnedHistogram.of({"passed": {"p10": 4}, "dropped": {"p12": 1}})
    svg = binned_histogram_chart(hist, "words", bounds=[hist.edges[1][0], 1e9])
    assert svg.count("class='bound'") == 1
    assert "(log scale)" in svg and svg.endswith("</svg>")
    assert len(_rects(svg)) == 2
