"""report/html.py: the report page rendered from a `ReportData` built by hand, hostile strings included."""

from __future__ import annotations

import re
from collections import Counter

from thresher.report.collect import Cluster, Example, ReportData, RuleBound
from thresher.report.html import SECTIONS, _bounds_text, _table, render_report

XSS = "<script>alert('x')</script>"
ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"


def _hostile() -> ReportData:
    ex = Example(id=XSS, url=f"https://evil.example/{XSS}", text=f"text {XSS}", drop={"stage": XSS, "reason": "r"})
    stats = {
        "seen": 10, "kept": 6, "dropped": 3, "malformed": 1,
        "drops": {"quality.gopher": {"too_few_words": 2}, f"plugin{XSS}": {XSS: 1}},
        "malformed_reasons": {XSS: 1},
        "events": {"dedup.exact.clusters": 1},
        "timings_s": {"phase.scan": 2.0, "quality.gopher": 0.5},
    }
    manifest = {"thresher_version": XSS, "config_hash": XSS, "records": 6, "shards": [{}], "format": XSS,
                "inputs": [{"bytes": 1000}, {"bytes": 234}], "bytes": 4096}
    rule = RuleBound("quality.gopher", "quality.word_count", "too_few_words", "too_many_words", 50.0, None)
    data = ReportData(XSS, manifest, stats, [rule], has_rejects=True, kept_docs=6, kept_text_bytes=1234,
                      dropped_text_bytes=99)
    data.metric_values = {"quality.word_count": ([60.0, 80.0, 120.0], [10.0, 20.0])}
    data.metric_counts = {"quality.word_count": (3, 2)}
    data.length_words = ([60.0, 80.0], [10.0])
    data.languages = Counter({XSS: 5, "en": 1})
    data.language_dropped = Counter({"en": 2})
    data.cluster_sizes = Counter({3: 1})
    data.clusters = [Cluster(ex, 2, [ex])]
    data.hosts_kept = [(XSS, 6)]
    data.hosts_dropped = [("evil.example", 3)]
    data.examples = {f"quality.gopher/{XSS}": [ex]}
    data.examples_source = "rejects"
    data.kept_examples = [ex]
    return data


def _empty() -> ReportData:
    return ReportData("empty", {}, {}, [], has_rejects=False)


def test_hostile_strings_are_escaped_everywhere():
    page = render_report(_hostile())
    assert "<script" not in page.lower()
    assert "alert('x')" not in page
    assert page.count(ESCAPED) >= 15  # title, header, drops, languages, hosts, examples, clusters ...
    # the drop record is shown as JSON, escaped
    assert "{&quot;reason&quot;: &quot;r&quot;, &quot;stage&quot;: &quot;" + ESCAPED in page
    assert "default-src 'none'" in page


def test_page_is_one_document_with_the_sections_in_order():
    page = render_report(_hostile())
    assert page.startswith("<!DOCTYPE html><html lang='en'>") and page.endswith("</body></html>\n")
    anchors = re.findall(r"<section id='([^']+)'", page)
    assert anchors == [a for a, _ in SECTIONS if a != "classifiers"]
    nav = re.findall(r"<a href='#([^']+)'>", page)
    assert nav == anchors


def test_summary_numbers_and_reconciliation():
    page = render_report(_hostile())
    assert "<td class=''>kept</td><td class='n'>6</td><td class='n'>60.0%</td>" in page
    assert "<td class=''>malformed</td><td class='n'>1</td><td class='n'>10.0%</td>" in page
    assert "Counts reconcile: seen = kept + dropped + malformed." in page
    assert "2 input file(s), 1,234 bytes." in page
    assert "dropped text (UTF-8, from the rejects)" in page
    data = _hostile()
    data.stats["kept"] = 7
    assert "Counts <b>do not reconcile</b>" in render_report(data)


def test_funnel_and_drop_tables_follow_the_pipeline():
    page = render_report(_hostile())
    section = page[page.index("<section id='funnel'"):page.index("<section id='drops'")]
    funnel = re.findall(r"<td class=''>(after [^<]+|seen)</td><td class='n'>(\d+)</td>", section)
    assert funnel == [("seen", "10"), ("after reading (malformed removed)", "9"), ("after quality.gopher", "7"),
                      (f"after plugin{ESCAPED}", "6")]
    assert "quality.gopher / too_few_words" in page
    assert "Malformed input records by reason:" in page


def test_quality_metrics_section_marks_the_rule_bounds():
    page = render_report(_hostile())
    metrics = page[page.index("<section id='metrics'"):page.index("<section id='languages'")]
    assert "<h3>quality.word_count (quality.gopher)</h3>" in metrics
    assert "3 kept and 2 dropped documents measured; bounds: at least 50." in metrics
    assert metrics.count("class='bound'") == 1


def test_binned_histograms_take_precedence_over_samples():
    data = _hostile()
    data.binned = {"quality.word_count": {"passed": {"p17": 4}, "dropped": {"p10": 1}}}
    page = render_report(data)
    assert "4 passed and 1 dropped documents measured" in page
    assert "(log scale)" in page and "ten a decade" in page


def test_an_empty_dataset_renders_every_placeholder():
    page = render_report(_empty())
    assert "Counts reconcile" in page  # 0 = 0 + 0 + 0
    assert "<td class=''>kept</td><td class='n'>0</td><td class='n'>–</td>" in page  # no share of nothing
    for placeholder in (
        "Nothing was dropped.",
        "No quality metric was measured (quality filtering off).",
        "the language stage did not run",
        "<p>No documents.</p>",
        "<p>No duplicate clusters.</p>",
        "<p>None.</p>",
        "No timings recorded.",
        "Dropped examples need the rejects",
        "The build's rejects were not given",
    ):
        assert placeholder in page, placeholder
    assert page.count("<svg") == 1  # no chart without numbers but the funnel (bars of zero)
    assert "Top hosts dropped" not in page


def test_examples_from_the_builds_samples_say_so():
    data = _empty()
    data.examples = {"quality.c4/x": [Example("1", None, "t")]}
    data.examples_source = "samples"
    page = render_report(data)
    assert "the build's uniform sample of each rule" in page
    assert "Dropped by quality.c4/x (1 shown)" in page and "(no url)" in page


def test_classifier_section_appears_with_the_manifests_models():
    data = _empty()
    data.manifest["classifiers"] = [{"name": XSS, "labels": ["good", "bad"], "keep": ["good"], "min_score": 0.5,
                                     "sha256": "ab" * 32, "heldout": {"examples": 40, "macro_f1": 0.91234}}]
    data.stats["drops"] = {"classify": {"low_score": 7}}
    page = render_report(data)
    assert re.findall(r"<section id='([^']+)'", page)[4] == "classifiers"
    assert "<td class=''>good, bad</td>" in page and "<td class=''>abababababababab</td>" in page
    assert "<td class='n'>0.9123</td>" in page
    assert "7 documents dropped by the classifiers" in page
    assert "records no held-out calibration" in page
    assert "<script" not in page


def test_table_formats_numbers_and_escapes_cells():
    html = _table(["name", "n"], [("<b>", 1234567), ("x", 0.5), ("y", True)], [False, True])
    assert html.startswith("<table><thead><tr><th class=''>name</th><th class='n'>n</th>")
    assert "<td class=''>&lt;b&gt;</td><td class='n'>1,234,567</td>" in html
    assert "<td class='n'>0.5</td>" in html
    assert "<td class='n'>True</td>" in html  # a bool is shown as itself, not as 1


def test_bounds_text():
    assert _bounds_text(1.0, 2.5) == "from 1 to 2.5"
    assert _bounds_text(3.0, None) == "at least 3"
    assert _bounds_text(None, 1e5) == "at most 100000"
    assert _bounds_text(0.25, None) == "at least 0.25"
    assert _bounds_text(None, None) == "none"


def test_languages_section_gives_the_und_share_and_its_scripts():
    data = _hostile()
    data.languages = Counter({"en": 6, "und": 2})
    data.und_scripts = Counter({"Latn": 1, "Cans": 1})
    page = render_report(data)
    languages = page[page.index("<section id='languages'"):]
    assert "2 kept documents (25.0%) are <code>und</code>" in languages
    assert "their scripts: Cans 1, Latn 1." in languages
