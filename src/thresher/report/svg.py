"""Charts as hand-written inline SVG.

Why SVG by hand rather than an embedded chart library: the report must open offline, stay a few MB
at most and run no script (a crawled page's text is shown in it, so the page forbids scripts by its
Content-Security-Policy). A charting library would add hundreds of KB of JavaScript and a runtime;
three chart shapes (horizontal bars, a histogram with bounds marked, a funnel) are ~150 lines here.
Every chart carries `role="img"`, a `<title>` and an `aria-label`, and the report puts the same
numbers in a table beside it, so a screen reader (or a person copying numbers) never needs the
picture.

All text that reaches the SVG goes through `html.escape`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

KEPT_COLOUR = "#2b7a3d"
DROPPED_COLOUR = "#b8483a"
BAR_COLOUR = "#3b6ea8"
BOUND_COLOUR = "#222222"
FONT = "font-family='system-ui, sans-serif' font-size='11'"


def _fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _open(width: int, height: int, label: str) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' aria-label='{escape(label)}' "
        f"viewBox='0 0 {width} {height}' width='{width}' height='{height}' class='chart'>"
        f"<title>{escape(label)}</title>"
    )


def bar_chart(rows: Sequence[tuple[str, float]], label: str, colour: str = BAR_COLOUR, width: int = 640) -> str:
    """Horizontal bars, one row per (name, value), longest scale at the largest value."""
    if not rows:
        return ""
    label_w = min(260, 12 + 7 * max(len(name) for name, _ in rows))
    row_h = 18
    height = row_h * len(rows) + 8
    top = max(value for _, value in rows) or 1.0
    plot_w = width - label_w - 70
    parts = [_open(width, height, label)]
    for i, (name, value) in enumerate(rows):
        y = 4 + i * row_h
        w = max(1.0, plot_w * value / top) if value > 0 else 0.0
        parts.append(
            f"<text x='{label_w - 6}' y='{y + 12}' text-anchor='end' {FONT}>{escape(name[:40])}</text>"
            f"<rect x='{label_w}' y='{y + 2}' width='{w:.1f}' height='{row_h - 5}' fill='{colour}'>"
            f"<title>{escape(name)}: {_fmt(value)}</title></rect>"
            f"<text x='{label_w + w + 4:.1f}' y='{y + 12}' {FONT}>{_fmt(value)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Counts of kept and dropped values in equal-width bins over [lo, hi]; values outside are
    clamped into the first or last bin (so nothing measured is hidden)."""

    lo: float
    hi: float
    kept: tuple[int, ...]
    dropped: tuple[int, ...]

    @classmethod
    def of(
        cls, kept: Sequence[float], dropped: Sequence[float], bounds: Sequence[float] = (), bins: int = 40
    ) -> Histogram:
        values = [*kept, *dropped]
        if not values:
            return cls(0.0, 1.0, (0,) * bins, (0,) * bins)
        ordered = sorted(values)
        # the 1st..99th percentile range, widened to include the bounds: a long tail must not squash
        # the part of the distribution around the threshold into one bin
        lo = ordered[int(0.01 * (len(ordered) - 1))]
        hi = ordered[int(0.99 * (len(ordered) - 1))]
        span = max(hi - lo, abs(hi) * 0.1, 1e-9)
        for b in bounds:
            # a bound near the data widens the range so it can be drawn; a far one (100,000 words
            # beside pages of a few hundred) would squash the data into one bin, so it is only named
            if lo - span <= b <= hi + span:
                lo, hi = min(lo, b), max(hi, b)
        if hi <= lo:
            hi = lo + 1.0
        return cls(lo, hi, _bin(kept, lo, hi, bins), _bin(dropped, lo, hi, bins))

    @property
    def width(self) -> float:
        return (self.hi - self.lo) / len(self.kept)


def _bin(values: Sequence[float], lo: float, hi: float, bins: int) -> tuple[int, ...]:
    counts = [0] * bins
    scale = bins / (hi - lo)
    for v in values:
        i = int((v - lo) * scale)
        counts[min(bins - 1, max(0, i))] += 1
    return tuple(counts)


def histogram_chart(
    hist: Histogram,
    label: str,
    bounds: Sequence[float] = (),
    width: int = 640,
    height: int = 170,
    bin_labels: Sequence[str] | None = None,
    axis: tuple[str, str] | None = None,
) -> str:
    """Stacked kept/dropped bars per bin, each bound drawn as a dashed vertical line."""
    left, right, top_pad, bottom = 46, 10, 14, 30
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    totals = [k + d for k, d in zip(hist.kept, hist.dropped, strict=True)]
    top = max(totals) or 1
    n = len(totals)
    bar_w = plot_w / n
    parts = [_open(width, height, label)]
    parts.append(
        f"<line x1='{left}' y1='{top_pad + plot_h}' x2='{left + plot_w}' y2='{top_pad + plot_h}' stroke='#888'/>"
        f"<text x='{left - 4}' y='{top_pad + 8}' text-anchor='end' {FONT}>{_fmt(top)}</text>"
        f"<text x='{left - 4}' y='{top_pad + plot_h}' text-anchor='end' {FONT}>0</text>"
    )
    for i, (k, d) in enumerate(zip(hist.kept, hist.dropped, strict=True)):
        x = left + i * bar_w
        lo = hist.lo + i * hist.width
        where = bin_labels[i] if bin_labels is not None else f"{_fmt(lo)} to {_fmt(lo + hist.width)}"
        tip = f"{where}: {k} kept, {d} dropped"
        kh = plot_h * k / top
        dh = plot_h * d / top
        if k:
            parts.append(
                f"<rect x='{x:.1f}' y='{top_pad + plot_h - kh:.1f}' width='{max(bar_w - 1, 1):.1f}' "
                f"height='{kh:.1f}' fill='{KEPT_COLOUR}'><title>{escape(tip)}</title></rect>"
            )
        if d:
            parts.append(
                f"<rect x='{x:.1f}' y='{top_pad + plot_h - kh - dh:.1f}' width='{max(bar_w - 1, 1):.1f}' "
                f"height='{dh:.1f}' fill='{DROPPED_COLOUR}'><title>{escape(tip)}</title></rect>"
            )
    for b in bounds:
        if not hist.lo <= b <= hist.hi:
            continue  # named in the text under the chart
        x = left + plot_w * (b - hist.lo) / (hist.hi - hist.lo)
        anchor, dx = ("end", -3) if x > left + plot_w * 0.8 else ("start", 3)
        parts.append(
            f"<line class='bound' x1='{x:.1f}' y1='{top_pad - 6}' x2='{x:.1f}' y2='{top_pad + plot_h}' "
            f"stroke='{BOUND_COLOUR}' stroke-dasharray='4 3'/>"
            f"<text x='{x + dx:.1f}' y='{top_pad + 2}' text-anchor='{anchor}' {FONT}>bound {_fmt(b)}</text>"
        )
    first, last = axis if axis is not None else (_fmt(hist.lo), _fmt(hist.hi))
    parts.append(
        f"<text x='{left}' y='{height - 10}' {FONT}>{escape(first)}</text>"
        f"<text x='{left + plot_w}' y='{height - 10}' text-anchor='end' {FONT}>{escape(last)}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


def funnel_chart(steps: Sequence[tuple[str, int]], label: str, width: int = 640) -> str:
    """One bar per step, each as wide as the documents still in the corpus after it."""
    return bar_chart([(name, float(n)) for name, n in steps], label, colour=KEPT_COLOUR, width=width)


@dataclass(frozen=True, slots=True)
class BinnedHistogram:
    """Counts in the build's fixed log bins (`thresher.run.histograms.value_bin`), over every document
    rather than a sample. `edges[i]` is bin i's (low, high); a zero bin has (0, 0)."""

    edges: tuple[tuple[float, float], ...]
    kept: tuple[int, ...]
    dropped: tuple[int, ...]

    @classmethod
    def of(cls, sides: dict[str, dict[str, int]]) -> BinnedHistogram:
        from thresher.run.histograms import bin_range

        names = sorted(set(sides.get("passed", {})) | set(sides.get("dropped", {})), key=lambda n: bin_range(n))
        # fill the gaps between occupied bins, so the x axis is continuous in log scale
        edges = [bin_range(n) for n in names]
        full: list[str] = []
        for name in names:
            if full and full[-1][0] == "p" and name[0] == "p":
                for k in range(int(full[-1][1:]) + 1, int(name[1:])):
                    full.append(f"p{k}")
            full.append(name)
        edges = [bin_range(n) for n in full]
        passed, dropped = sides.get("passed", {}), sides.get("dropped", {})
        return cls(tuple(edges), tuple(passed.get(n, 0) for n in full), tuple(dropped.get(n, 0) for n in full))

    def position(self, value: float) -> float | None:
        """Where `value` falls on the x axis, in bins (log interpolation inside a bin)."""
        import math

        for i, (lo, hi) in enumerate(self.edges):
            if lo == hi == 0.0:
                if value == 0.0:
                    return i + 0.5
                continue
            if lo <= value < hi:
                if lo > 0:
                    return i + (math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo))
                return i + (value - lo) / (hi - lo)
        return None


def binned_histogram_chart(
    hist: BinnedHistogram, label: str, bounds: Sequence[float] = (), width: int = 460, height: int = 140
) -> str:
    """Stacked kept/dropped bars per log bin; each bound inside the range as a dashed line."""
    if not hist.edges:
        return ""
    as_linear = Histogram(0.0, float(len(hist.edges)), hist.kept, hist.dropped)
    labels = ["0" if lo == hi == 0.0 else f"{_fmt(lo)} to {_fmt(hi)}" for lo, hi in hist.edges]
    lo, hi = hist.edges[0][0], hist.edges[-1][1]
    svg = histogram_chart(as_linear, label, (), width, height, labels, (_fmt(lo), f"{_fmt(hi)} (log scale)"))
    left, right, top_pad, bottom = 46, 10, 14, 30
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    n = len(hist.edges)
    extra = []
    for b in bounds:
        pos = hist.position(b)
        if pos is None:
            continue
        x = left + plot_w * pos / n
        anchor, dx = ("end", -3) if x > left + plot_w * 0.8 else ("start", 3)
        extra.append(
            f"<line class='bound' x1='{x:.1f}' y1='{top_pad - 6}' x2='{x:.1f}' y2='{top_pad + plot_h}' "
            f"stroke='{BOUND_COLOUR}' stroke-dasharray='4 3'/>"
            f"<text x='{x + dx:.1f}' y='{top_pad + 2}' text-anchor='{anchor}' {FONT}>bound {_fmt(b)}</text>"
        )
    return svg.replace("</svg>", "".join(extra) + "</svg>")
