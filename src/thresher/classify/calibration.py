"""Calibration of a classifier's scores: does a score of 0.8 mean right four times in five?

Per label, the held-out scores are put into equal-width bins over [0, 1]; each bin reports how many
texts fell in it, their mean score and the share that carry the label (a reliability diagram,
DeGroot and Fienberg 1983). The expected calibration error is the count-weighted mean of
|share - mean score| over the bins (Naeini et al. 2015).

`classify eval` reports the bins; `classify train` stores those of its held-out split in the model
file's header (`info["heldout"]`), the build copies them into the manifest's classifier record,
and the HTML report draws them (`calibration_svg`: hand-written SVG like the report's other charts,
no script).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

BINS = 10
COLOURS = ("#3b6ea8", "#b8483a", "#2b7a3d", "#8a5a9e", "#c08a1e", "#3a8f8f", "#666666")


def calibration_bins(scores: Sequence[float], positive: Sequence[bool], bins: int = BINS) -> list[dict[str, Any]]:
    """Equal-width bins of `scores` (the last one closed at 1.0): lo, hi, count, mean score, and the
    share of positives (None for an empty bin)."""
    counts = [0] * bins
    sums = [0.0] * bins
    hits = [0] * bins
    for score, is_positive in zip(scores, positive, strict=True):
        b = min(bins - 1, max(0, int(score * bins)))
        counts[b] += 1
        sums[b] += score
        hits[b] += bool(is_positive)
    return [
        {"lo": round(b / bins, 6), "hi": round((b + 1) / bins, 6), "count": counts[b],
         "mean_score": round(sums[b] / counts[b], 6) if counts[b] else None,
         "positive_rate": round(hits[b] / counts[b], 6) if counts[b] else None}
        for b in range(bins)
    ]


def expected_calibration_error(table: Sequence[Mapping[str, Any]]) -> float:
    total = sum(int(b["count"]) for b in table)
    if not total:
        return 0.0
    return sum(int(b["count"]) * abs(float(b["positive_rate"]) - float(b["mean_score"]))
               for b in table if b["count"]) / total


def calibration_svg(curves: Mapping[str, Sequence[Mapping[str, Any]]], label: str, size: int = 300) -> str:
    """A reliability diagram: per label, the positive share against the mean score of each
    non-empty bin (a point's area grows with its count), and the diagonal of perfect calibration."""
    pad, legend_w = 36, 150
    plot = size - 2 * pad
    width = size + legend_w
    font = "font-family='system-ui, sans-serif' font-size='11'"
    total = max(1, max((int(b["count"]) for bins in curves.values() for b in bins), default=1))

    def x(v: float) -> float:
        return pad + plot * v

    def y(v: float) -> float:
        return pad + plot * (1.0 - v)

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' role='img' aria-label='{escape(label)}' "
        f"viewBox='0 0 {width} {size}' width='{width}' height='{size}' class='chart'><title>{escape(label)}</title>",
        f"<rect x='{pad}' y='{pad}' width='{plot}' height='{plot}' fill='none' stroke='#999999'/>",
        f"<line x1='{x(0):.1f}' y1='{y(0):.1f}' x2='{x(1):.1f}' y2='{y(1):.1f}' stroke='#999999' stroke-dasharray='4 "
        f"3'/>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f"<text x='{x(tick):.1f}' y='{size - pad + 14}' text-anchor='middle' {font}>{tick:g}</text>")
        parts.append(f"<text x='{pad - 4}' y='{y(tick) + 4:.1f}' text-anchor='end' {font}>{tick:g}</text>")
    parts.append(f"<text x='{x(0.5):.1f}' y='{size - 4}' text-anchor='middle' {font}>mean score in the bin</text>")
    parts.append(f"<text x='10' y='{y(0.5):.1f}' text-anchor='middle' transform='rotate(-90 10 {y(0.5):.1f})' {font}>"
                 "share with the label</text>")
    for i, (name, bins) in enumerate(curves.items()):
        colour = COLOURS[i % len(COLOURS)]
        points = [(float(b["mean_score"]), float(b["positive_rate"]), int(b["count"])) for b in bins if b["count"]]
        if len(points) > 1:
            path = " ".join(f"{x(s):.1f},{y(r):.1f}" for s, r, _ in points)
            parts.append(f"<polyline points='{path}' fill='none' stroke='{colour}' stroke-width='1.5'/>")
        for s, r, n in points:
            radius = 2.0 + 4.0 * (n / total) ** 0.5
            parts.append(f"<circle cx='{x(s):.1f}' cy='{y(r):.1f}' r='{radius:.1f}' fill='{colour}'>"
                         f"<title>{escape(name)}: {n} texts, mean score {s:.3f}, share {r:.3f}</title></circle>")
        ece = expected_calibration_error(bins)
        ly = pad + 16 * i + 6
        parts.append(f"<rect x='{size + 4}' y='{ly - 8}' width='10' height='10' fill='{colour}'/>"
                     f"<text x='{size + 18}' y='{ly + 1}' {font}>{escape(name[:18])} (ECE {ece:.3f})</text>")
    parts.append("</svg>")
    return "".join(parts)


def heldout_record(report: Mapping[str, Any], holdout: float, seed: int) -> dict[str, Any]:
    """What `classify train` stores in the model header about its held-out split."""
    return {"examples": report["examples"], "fraction": holdout, "seed": seed,
            "macro_f1": round(float(report["macro_f1"]), 6),
            "calibration": {label: v["calibration"] for label, v in report["labels"].items()}}
