"""`thresher report`: one self-contained HTML page about a finished dataset.

The page has no script and loads nothing: styles are inline, charts are inline SVG
(`report/svg.py`), and a Content-Security-Policy of `default-src 'none'` tells the browser to
refuse any request or script, so text from a crawled page (always escaped here) cannot run even if
an escaping bug let markup through.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from thresher.report.collect import Example, ReportData, ordered_stage_drops, phased_stages
from thresher.report.svg import (
    BinnedHistogram,
    Histogram,
    bar_chart,
    binned_histogram_chart,
    funnel_chart,
    histogram_chart,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:70rem;padding:0 1rem;color:#1d1d1d;line-height:1.4}
h1{font-size:1.6rem} h2{border-bottom:1px solid #ccc;padding-bottom:.2rem;margin-top:2.2rem}
table{border-collapse:collapse;margin:.6rem 0} td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
pre.doc{white-space:pre-wrap;background:#f6f6f4;border:1px solid #e2e2dc;padding:.5rem;max-height:16rem;overflow:auto}
.muted{color:#666} .legend span{display:inline-block;width:.8rem;height:.8rem;margin:0 .3rem 0 .8rem}
details{margin:.4rem 0} summary{cursor:pointer} .chart{max-width:100%;height:auto}
nav a{margin-right:.8rem}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(28rem,1fr));gap:0 1.5rem}
.grid h3{font-size:1rem;margin-bottom:.2rem}
"""

SECTIONS = [
    ("summary", "Summary"),
    ("funnel", "Funnel"),
    ("drops", "Drops by stage and rule"),
    ("metrics", "Quality metrics"),
    ("classifiers", "Classifiers"),
    ("languages", "Languages"),
    ("lengths", "Lengths"),
    ("dedup", "Duplicates"),
    ("hosts", "Hosts"),
    ("timings", "Timings"),
    ("examples", "Examples"),
]


def _n(value: float | int) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:,.4g}"


def _pct(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "–"


def _table(head: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    numeric = numeric or [False] * len(head)
    out = ["<table><thead><tr>"]
    out += [f"<th class='{'n' if num else ''}'>{escape(h)}</th>" for h, num in zip(head, numeric, strict=True)]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>")
        for cell, num in zip(row, numeric, strict=True):
            text = _n(cell) if isinstance(cell, int | float) and not isinstance(cell, bool) else str(cell)
            out.append(f"<td class='{'n' if num else ''}'>{escape(text)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _line_dedup_body(section: Any) -> str:
    """Line dedup's totals and its most removed lines (the manifest's `line_dedup`)."""
    if not isinstance(section, dict):
        return ""
    body = (
        f"<h3>Repeated lines removed</h3><p>{_n(int(section.get('spans_removed', 0)))} spans "
        f"({_n(int(section.get('chars_removed', 0)))} characters) removed from "
        f"{_n(int(section.get('documents_edited', 0)))} kept documents; "
        f"{_n(int(section.get('documents_dropped', 0)))} dropped once their repeated lines were gone. A "
        f"{escape(str(section.get('unit', 'line')))} counts as repeated on at least "
        f"{section.get('min_documents')} documents, or {section.get('min_host_pages')} pages of one host.</p>"
    )
    rows = [(str(t.get("text", ""))[:160], t.get("documents", 0), t.get("hosts", 0), t.get("removed", 0))
            for t in section.get("top_lines", []) if isinstance(t, dict)]
    if rows:
        body += _table(["most removed lines", "documents", "hosts", "removed"], rows, [False, True, True, True])
    return body


def _section(anchor: str, title: str, body: str) -> str:
    return f"<section id='{anchor}' class='chart-section'><h2>{escape(title)}</h2>{body}</section>"


def _doc(example: Example) -> str:
    head = f"<b>{escape(example.id)}</b> <span class='muted'>{escape(example.url or '(no url)')}</span>"
    drop = ""
    if example.drop:
        drop = f"<div><code>{escape(json.dumps(example.drop, ensure_ascii=False, sort_keys=True))}</code></div>"
    return f"<div class='doc-sample'>{head}{drop}<pre class='doc'>{escape(example.text)}</pre></div>"


def render_report(data: ReportData) -> str:
    stats, manifest = data.stats, data.manifest
    seen = int(stats.get("seen", 0))
    parts: list[str] = []

    # summary
    rows = [
        ("seen", seen, ""),
        ("kept", int(stats.get("kept", 0)), _pct(int(stats.get("kept", 0)), seen)),
        ("dropped", int(stats.get("dropped", 0)), _pct(int(stats.get("dropped", 0)), seen)),
        ("malformed", int(stats.get("malformed", 0)), _pct(int(stats.get("malformed", 0)), seen)),
    ]
    summary = _table(["documents", "count", "share"], rows, [False, True, True])
    reconciles = seen == sum(int(stats.get(k, 0)) for k in ("kept", "dropped", "malformed"))
    summary += (
        f"<p>Counts {'reconcile' if reconciles else '<b>do not reconcile</b>'}: seen = kept + dropped + malformed.</p>"
    )
    byte_rows = [("kept text (UTF-8)", data.kept_text_bytes), ("shards on disk", int(manifest.get("bytes", 0)))]
    if data.has_rejects:
        byte_rows.append(("dropped text (UTF-8, from the rejects)", data.dropped_text_bytes))
    summary += _table(["bytes", "count"], byte_rows, [False, True])
    inputs = manifest.get("inputs", [])
    summary += f"<p>{len(inputs)} input file(s), {_n(sum(int(i.get('bytes', 0)) for i in inputs))} bytes.</p>"
    if not data.has_rejects:
        summary += (
            "<p class='muted'>The build's rejects were not given (<code>--rejects DIR</code>), so dropped "
            "documents appear only as counts: no dropped values in the histograms and no dropped examples.</p>"
        )
    parts.append(_section("summary", "Summary", summary))

    # funnel
    steps = data.funnel()
    body = funnel_chart(steps, "Documents left after each stage")
    body += _table(
        ["step", "documents", "share of seen"], [(s, n, _pct(n, seen)) for s, n in steps], [False, True, True]
    )
    parts.append(_section("funnel", "Funnel", body))

    # drops per stage and rule
    drops = stats.get("drops", {}) or {}
    ordered = ordered_stage_drops(stats, phased_stages(data.manifest))
    rule_rows = [(f"{stage} / {reason}", n) for stage, _ in ordered for reason, n in drops[stage].items()]
    body = (
        bar_chart([(name, float(n)) for name, n in rule_rows], "Documents dropped per stage and rule")
        or "<p>Nothing was dropped.</p>"
    )
    body += _table(["stage / reason", "documents"], rule_rows, [False, True])
    failures = stats.get("rule_failures", {}) or {}
    if failures:
        body += "<p>Rule failures (a document can fail several rules of one set; it is attributed to the first):</p>"
        body += _table(
            ["stage / rule", "failures"],
            [(f"{s} / {r}", n) for s, rs in failures.items() for r, n in rs.items()],
            [False, True],
        )
    malformed = stats.get("malformed_reasons", {}) or {}
    if malformed:
        body += "<p>Malformed input records by reason:</p>" + _table(
            ["reason", "records"], sorted(malformed.items()), [False, True]
        )
    parts.append(_section("drops", "Drops by stage and rule", body))

    # quality metric histograms
    if data.binned:
        body = (
            "<p class='legend'>Values measured by each quality rule, over every document that reached it: "
            "<span style='background:#2b7a3d'></span>passed the per-document stages "
            "<span style='background:#b8483a'></span>dropped by them; dashed lines at the rule's bounds; "
            "bins are ten a decade (log scale), counted by the build.</p>"
        )
    else:
        body = (
            "<p class='legend'>Values measured by each quality rule: <span style='background:#2b7a3d'></span>kept "
            "<span style='background:#b8483a'></span>dropped (by any stage), dashed lines at the rule's bounds. "
            "Histograms are of a uniform sample of at most 20,000 values per side.</p>"
        )
    shown = 0
    cells = []
    for rule in data.rules:
        sides = data.binned.get(rule.metric)
        label = f"{rule.metric} ({rule.stage})"
        if sides:
            shown += 1
            binned = BinnedHistogram.of(sides)
            n_pass, n_drop = sum(binned.kept), sum(binned.dropped)
            cells.append(
                f"<div><h3>{escape(label)}</h3>{binned_histogram_chart(binned, label, rule.bounds)}"
                f"<p class='muted'>{_n(n_pass)} passed and {_n(n_drop)} dropped documents measured; bounds: "
                f"{escape(_bounds_text(rule.min_value, rule.max_value))}.</p></div>"
            )
            continue
        kept, dropped = data.metric_values.get(rule.metric, ([], []))
        if not kept and not dropped:
            continue
        shown += 1
        hist = Histogram.of(kept, dropped, rule.bounds)
        n_kept, n_dropped = data.metric_counts.get(rule.metric, (0, 0))
        cells.append(
            f"<div><h3>{escape(label)}</h3>{histogram_chart(hist, label, rule.bounds, width=460, height=140)}"
            f"<p class='muted'>{_n(n_kept)} kept and {_n(n_dropped)} dropped documents measured; bounds: "
            f"{escape(_bounds_text(rule.min_value, rule.max_value))}.</p></div>"
        )
    body += f"<div class='grid'>{''.join(cells)}</div>"
    if not shown:
        body += "<p>No quality metric was measured (quality filtering off).</p>"
    parts.append(_section("metrics", "Quality metrics", body))

    classifiers = manifest.get("classifiers") or []
    if classifiers:
        parts.append(_section("classifiers", "Classifiers", _classifiers_body(classifiers, stats)))

    # languages
    if data.languages or data.language_dropped:
        langs = sorted(set(data.languages) | set(data.language_dropped), key=lambda c: (-data.languages[c], c))
        body = bar_chart([(c, float(data.languages[c])) for c in langs[:30]], "Kept documents per language")
        body += _table(
            ["language", "kept", "dropped"],
            [(c, data.languages[c], data.language_dropped[c]) for c in langs],
            [False, True, True],
        )
        labelled = sum(data.languages.values())
        if data.languages["und"] and labelled:
            scripts = ", ".join(f"{s} {n}" for s, n in sorted(data.und_scripts.items(), key=lambda kv: (-kv[1], kv[0])))
            und = data.languages["und"]
            body += (f"<p>{_n(und)} kept documents ({100 * und / labelled:.1f}%) are"
                     " <code>und</code>: no language decided, or a language the detector does not know"
                     + (f"; their scripts: {escape(scripts)}" if scripts else "") + ".</p>")
    else:
        body = "<p>No language annotations (`lang.code`) in this dataset: the language stage did not run.</p>"
    parts.append(_section("languages", "Languages", body))

    # lengths
    kept_w, dropped_w = data.length_words
    if kept_w or dropped_w:
        hist = Histogram.of(kept_w, dropped_w)
        body = histogram_chart(hist, "Words per document, kept and dropped")
    else:
        body = "<p>No documents.</p>"
    parts.append(_section("lengths", "Lengths", body))

    # duplicates
    if data.cluster_sizes:
        sizes = sorted(data.cluster_sizes.items())
        body = bar_chart([(f"{size} documents", float(n)) for size, n in sizes[:40]], "Duplicate clusters by size")
        body += _table(["cluster size", "clusters"], sizes, [True, True])
        body += "<h3>Largest clusters</h3>"
        for cluster in data.clusters:
            body += (
                f"<details><summary>{escape(cluster.keeper.id)} kept, {cluster.duplicates} duplicate(s) removed"
                f" — {escape((cluster.keeper.url or '')[:120])}</summary>{_doc(cluster.keeper)}"
            )
            if cluster.members:
                body += "<p>Removed members (a sample):</p>" + "".join(_doc(m) for m in cluster.members)
            elif not data.has_rejects:
                body += "<p class='muted'>Members are in the rejects (not given).</p>"
            body += "</details>"
    else:
        body = "<p>No duplicate clusters.</p>"
    body += _line_dedup_body(manifest.get("line_dedup"))
    events = stats.get("events", {}) or {}
    dedup_events = [(k, v) for k, v in sorted(events.items()) if k.startswith("dedup.")]
    if dedup_events:
        body += "<p>Dedup counters:</p>" + _table(["counter", "value"], dedup_events, [False, True])
    parts.append(_section("dedup", "Duplicates", body))

    # hosts
    body = "<h3>Top hosts kept</h3>" + (
        bar_chart([(h, float(n)) for h, n in data.hosts_kept], "Top hosts kept") or "<p>None.</p>"
    )
    if data.has_rejects:
        body += "<h3>Top hosts dropped</h3>" + (
            bar_chart([(h, float(n)) for h, n in data.hosts_dropped], "Top hosts dropped") or "<p>None.</p>"
        )
    parts.append(_section("hosts", "Hosts", body))
    if data.consent:
        parts.append(_section("consent", "Consent", _consent_body(data.consent)))

    # timings
    timings = stats.get("timings_s", {}) or {}
    phases = [(k.removeprefix("phase."), float(v)) for k, v in timings.items() if k.startswith("phase.")]
    stages = [(k, float(v)) for k, v in timings.items() if not k.startswith("phase.")]
    body = ""
    if phases:
        wall = sum(v for _, v in phases)
        body += bar_chart(phases, "Wall seconds per phase")
        body += f"<p>{_n(wall)} s of phase wall time; {_n(seen / wall if wall else 0.0)} documents per second seen.</p>"
    if stages:
        body += "<h3>CPU seconds per stage (summed over workers)</h3>" + bar_chart(stages, "CPU seconds per stage")
    parts.append(_section("timings", "Timings", body or "<p>No timings recorded.</p>"))

    # examples
    body = ""
    for rule_name, examples in data.examples.items():
        body += (
            f"<details><summary>Dropped by {escape(rule_name)} ({len(examples)} shown)</summary>"
            f"{''.join(_doc(e) for e in examples)}</details>"
        )
    if data.examples_source == "samples":
        body = (
            "<p class='muted'>Dropped examples: the build's uniform sample of each rule "
            "(<code>samples.jsonl.gz</code>).</p>"
            + body
        )
    elif not data.examples:
        body += (
            "<p class='muted'>Dropped examples need the rejects (<code>thresher build … --rejects DIR</code>, "
            "then <code>thresher report DATASET --rejects DIR</code>) or a build that wrote "
            "<code>samples.jsonl.gz</code>.</p>"
        )
    body += (
        f"<details><summary>Kept documents ({len(data.kept_examples)} shown)</summary>"
        f"{''.join(_doc(e) for e in data.kept_examples)}</details>"
    )
    parts.append(_section("examples", "Examples", body))

    sections = [(a, t) for a, t in SECTIONS if a != "classifiers" or classifiers]
    nav = "".join(f"<a href='#{a}'>{escape(t)}</a>" for a, t in sections)
    title = f"thresher report — {data.dataset}"
    header = (
        f"<h1>{escape(title)}</h1><p class='muted'>thresher {escape(str(manifest.get('thresher_version', '?')))}, "
        f"config hash <code>{escape(str(manifest.get('config_hash', '?')))}</code>, "
        f"{_n(int(manifest.get('records', 0)))} documents in {len(manifest.get('shards', []))} shard(s) of "
        f"<code>{escape(str(manifest.get('format', '?')))}</code>.</p><nav>{nav}</nav>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"{header}{''.join(parts)}</body></html>\n"
    )


def _classifiers_body(classifiers: list[dict[str, Any]], stats: dict[str, Any]) -> str:
    """The models a build ran (from the manifest), the documents each dropped, and the calibration
    of each model's scores on its held-out split (recorded in the model file by `classify train`)."""
    from thresher.classify.calibration import calibration_svg, expected_calibration_error

    dropped = (stats.get("drops", {}) or {}).get("classify", {}).get("low_score", 0)
    rows = []
    for c in classifiers:
        held = c.get("heldout") or {}
        rows.append(
            (
                c.get("name", "?"),
                ", ".join(c.get("labels", [])),
                ", ".join(c.get("keep", [])) or "(annotates only)",
                c.get("min_score", ""),
                str(c.get("sha256", ""))[:16],
                held.get("examples", "-"),
                f"{held['macro_f1']:.4f}" if "macro_f1" in held else "-",
            )
        )
    body = _table(["model", "labels", "keep", "min score", "sha256", "held-out texts", "held-out macro F1"], rows,
                  [False, False, False, True, False, True, True])
    body += f"<p>{_n(int(dropped))} documents dropped by the classifiers (<code>classify / low_score</code>).</p>"
    cells = []
    for c in classifiers:
        curves = (c.get("heldout") or {}).get("calibration") or {}
        name = str(c.get("name", "?"))
        if not curves:
            cells.append(f"<div><h3>{escape(name)}</h3><p class='muted'>The model file records no held-out "
                         "calibration (train it with <code>thresher classify train --holdout F</code>).</p></div>")
            continue
        label = f"Calibration of {name} on its held-out split"
        table = _table(
            ["label", "bins", "ECE"],
            [
                (lab, sum(1 for b in bins if b["count"]), f"{expected_calibration_error(bins):.4f}")
                for lab, bins in curves.items()
            ],
            [False, True, True],
        )
        cells.append(f"<div><h3>{escape(name)}</h3>{calibration_svg(curves, label)}{table}</div>")
    body += ("<p class='legend'>Reliability diagrams: per label, the share of held-out texts that carry the label "
             "against their mean score, in ten score bins (point area: texts in the bin); the dashed diagonal is "
             "perfect calibration; ECE is the count-weighted mean gap.</p>")
    return body + f"<div class='grid'>{''.join(cells)}</div>"


def _consent_body(ledger: dict[str, Any]) -> str:
    """The kept pages' opt-out signals (`thresher.report.consent`; `thresher consent` prints the same)."""
    kept = int(ledger["documents"])
    body = _table(["signal", "documents", "share", "words", "hosts"],
                  [(name, t["documents"], _pct(t["documents"], kept), t["words"], t["hosts"])
                   for name, t in ledger["signals"].items()], [False, True, True, True, True])
    agents = ledger["robots_disallow_by_agent"]
    if agents:
        body += "<h3>robots.txt disallows, by agent</h3>" + _table(
            ["agent", "documents", "words", "hosts"],
            [(a, t["documents"], t["words"], t["hosts"]) for a, t in agents.items()], [False, True, True, True])
    if ledger["top_opted_out_hosts"]:
        body += "<h3>Hosts that opt out, most kept words first</h3>" + _table(
            ["host", "words"], [(h["host"], h["words"]) for h in ledger["top_opted_out_hosts"]], [False, True])
    e = ledger["enforce_would_remove"]
    body += (f"<p><code>--consent enforce</code> ({escape(','.join(e['signals']))}) would remove {_n(e['documents'])}"
             f" documents ({_pct(e['documents'], kept)}), {_n(e['words'])} words, {_n(e['hosts'])} hosts.</p>")
    return body


def _bounds_text(lo: float | None, hi: float | None) -> str:
    if lo is not None and hi is not None:
        return f"from {lo:g} to {hi:g}"
    if lo is not None:
        return f"at least {lo:g}"
    if hi is not None:
        return f"at most {hi:g}"
    return "none"


def write_report(dataset: str, out: str, rejects: str | None = None) -> ReportData:
    """Collect and render the report of `dataset` into the file `out`."""
    from thresher.report.collect import collect
    from thresher.write.atomic import atomic_open

    data = collect(dataset, rejects)
    with atomic_open(out, "w") as f:
        f.write(render_report(data))
    return data
