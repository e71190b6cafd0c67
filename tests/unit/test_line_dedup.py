"""Line dedup (`--line-dedup`): boilerplate lines that many pages of a host or of the corpus repeat are
removed, every removed span is written to the rejects with its offsets and counts, content under the
thresholds stays, the edited text is judged again by the quality rules, and the result is the same on
every engine and after a resume."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.core.errors import TaskError
from thresher.dedup.line_stage import plan_count_ranges
from thresher.dedup.lines import unit_key, unit_spans, without_spans
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.write.manifest import read_shards

HOSTS = ("alpha", "beta", "gamma")
PAGES = 6
CROSS = "Subscribe to our newsletter for weekly updates"  # on every page of every host: 18 >= 10
QUOTED = "To be or not to be, that is the question he asked"  # on 2 pages of 2 hosts: stays


NOUNS = ("river", "garden", "window", "engine", "market", "letter", "bridge", "forest", "station", "kitchen",
         "harbor", "meadow", "castle", "ladder", "pencil", "mirror", "island", "tunnel", "valley", "canvas")


def sentence(h: int, i: int, k: int) -> str:
    # words drawn per page and paragraph (no two pages near-duplicates), with the stop words Gopher needs
    rng = random.Random(f"{h}-{i}-{k}")
    return " ".join(f"the {rng.choice(NOUNS)}{rng.randrange(1000)} and {rng.choice(NOUNS)} of a {rng.choice(NOUNS)}"
                    for _ in range(5)) + "."


def page_text(h: int, i: int) -> str:
    lines = [f"Home | {HOSTS[h].title()} news | Contact"]  # per host: on its 6 pages
    lines += [sentence(h, i, k) for k in range(5)]
    if (h, i) in ((0, 1), (2, 3)):
        lines.append(QUOTED)
    lines += [CROSS, f"Copyright 2024 {HOSTS[h]} media, page {i + 1} of {PAGES}"]  # digits vary: structural
    return "\n".join(lines)


def crawl(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    records = [{"id": f"{HOSTS[h]}-{i}", "url": f"https://www.{HOSTS[h]}.example/p{i}", "text": page_text(h, i)}
               for i in range(PAGES) for h in range(len(HOSTS))]
    return write_jsonl(tmp_path / "crawl.jsonl", records), {r["url"]: r["text"] for r in records}


def line_config(**extra):
    dedup = {"lines": {"enabled": True, "level": "structural"}, **extra.pop("dedup", {})}
    return local_config(dedup=dedup, **extra)


def spans_of(rejects: Path) -> list[dict]:
    with gzip.open(rejects / "spans.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_units_keys_and_removal():
    text = "Menu\n\nFirst paragraph line one\nline two\n\n\nLast\n"
    assert [text[s:e] for s, e, _ in unit_spans(text, "line")] == [
        "Menu", "First paragraph line one", "line two", "Last"]
    assert [text[s:e] for s, e, _ in unit_spans(text, "paragraph")] == [
        "Menu", "First paragraph line one\nline two", "Last\n"]
    assert unit_key("Page 1 of 9", "structural") == unit_key("page 12 of 3!", "structural")
    assert unit_key("Page 1 of 9", "normalized") != unit_key("Page 2 of 9", "normalized")
    assert unit_key(" -- | -- ", "normalized") is None  # nothing left to compare
    spans = [(s, a) for s, _, a in unit_spans(text, "line")]
    assert without_spans(text, [spans[0], spans[3]]) == "First paragraph line one\nline two"
    assert plan_count_ranges([5, 5, 5, 5], target=10) == [(0, 2), (2, 4)]
    assert plan_count_ranges([0, 0], target=10) == [(0, 2)]


def test_boilerplate_is_removed_every_span_attributed_and_unique_text_kept(tmp_path):
    src, texts = crawl(tmp_path)
    result = build([str(src)], tmp_path / "out", line_config(), rejects=tmp_path / "rejects")
    kept = {r["url"]: r for r in read_shards(tmp_path / "out")}
    assert len(kept) == len(texts) and result.stats.reconciles()
    for url, record in kept.items():
        h, i = HOSTS.index(url.split(".")[1]), int(url.rsplit("/p", 1)[1])
        for k in range(5):
            assert sentence(h, i, k) in record["text"]  # unique content is never lost
        assert CROSS not in record["text"] and "Copyright" not in record["text"] and "Home |" not in record["text"]
        assert (QUOTED in record["text"]) == ((h, i) in ((0, 1), (2, 3)))  # under both thresholds: stays
        assert record["annotations"]["dedup.lines"]["spans"] == 3
    spans = spans_of(tmp_path / "rejects")
    assert len(spans) == 3 * len(texts)  # one record per removed occurrence
    for span in spans:
        original = texts[span["url"]]
        assert original[span["start"]:span["end"]] == span["text"]  # offsets into the text before the edit
        assert span["stage"] == "dedup.lines" and span["id"] == kept[span["url"]]["id"]
    cross = [s for s in spans if s["text"].startswith(CROSS)]
    assert len(cross) == 18 and all(s["documents"] == 18 and s["hosts"] == 3 for s in cross)
    footer = [s for s in spans if s["text"].startswith("Copyright")]
    assert all(s["documents"] == PAGES and s["hosts"] == 1 and s["host_pages"] == PAGES for s in footer)
    section = result.manifest["line_dedup"]
    assert section["documents_edited"] == 18 and section["spans_removed"] == 54
    assert section["top_lines"][0] == {"text": CROSS, "documents": 18, "hosts": 3, "removed": 18}


def test_off_by_default_and_thresholds_decide(tmp_path):
    src, texts = crawl(tmp_path)
    plain = build([str(src)], tmp_path / "plain", local_config())
    assert "line_dedup" not in plain.manifest
    assert sorted(r["text"] for r in read_shards(tmp_path / "plain")) == sorted(texts.values())
    # a per-host bound above the pages a host has, and a corpus bound above 18: nothing is boilerplate
    build([str(src)], tmp_path / "high", line_config(dedup={"lines": {"enabled": True, "min_host_pages": 7,
                                                                      "min_documents": 19}}))
    assert sorted(r["text"] for r in read_shards(tmp_path / "high")) == sorted(texts.values())


def test_a_page_that_was_mostly_boilerplate_is_dropped_by_the_rule_it_now_fails(tmp_path):
    src, texts = crawl(tmp_path)
    records = [json.loads(line) for line in src.read_text(encoding="utf-8").splitlines()]
    # a short page: its own text alone is under Gopher's 50 words once the shared lines are gone
    short = "\n".join([f"Home | {HOSTS[0].title()} news | Contact", "the short note of a page in the story.",
                       *[CROSS] * 1, f"Copyright 2024 {HOSTS[0]} media, page 9 of {PAGES}"]
                      + [sentence(0, 99, k) for k in range(2)])
    records.append({"id": "alpha-short", "url": "https://www.alpha.example/short", "text": short})
    src = write_jsonl(tmp_path / "crawl2.jsonl", records)
    config = line_config(quality={"preset": "default"})
    result = build([str(src)], tmp_path / "out", config, rejects=tmp_path / "rejects")
    with gzip.open(tmp_path / "rejects" / "rejects.jsonl.gz", "rt", encoding="utf-8") as f:
        rejected = {r["url"]: r for r in map(json.loads, f)}
    drop = rejected["https://www.alpha.example/short"]["drop"]
    assert drop["stage"].startswith("quality.") and drop["detail"]["after"] == "dedup.lines"
    assert drop["detail"]["line_dedup"]["spans"] == 3
    assert result.stats.reconciles()
    assert result.manifest["line_dedup"]["documents_dropped"] == 1


def failing_edit(ctx, *args):
    raise RuntimeError("simulated crash in line_edit")


def test_engines_worker_counts_and_a_resume_give_the_same_bytes(tmp_path):
    src, _ = crawl(tmp_path)
    local = build([str(src)], tmp_path / "local", line_config())
    pool = build([str(src)], tmp_path / "pool", line_config(exec={"engine": "pool", "workers": 2}))
    assert pool.manifest["shards"] == local.manifest["shards"]
    config = line_config(exec={"retries": 0})
    with pytest.raises(TaskError, match="simulated crash"):
        build([str(src)], tmp_path / "resumed", config, tasks=DEFAULT_TASKS.replace(line_edit=failing_edit))
    assert list((tmp_path / "resumed" / ".work").rglob("line_count-*"))  # counted before the crash
    resumed = build([str(src)], tmp_path / "resumed", config)
    assert resumed.manifest["shards"] == local.manifest["shards"]


def test_explain_and_the_report_show_the_removed_lines(tmp_path):
    from thresher.report.explain import explain
    from thresher.report.html import _line_dedup_body

    src, _ = crawl(tmp_path)
    result = build([str(src)], tmp_path / "out", line_config())
    [ex] = explain(tmp_path / "out", "https://www.beta.example/p2")
    assert ex.status == "kept"
    assert ex.notes[0].startswith("line dedup removed 3 repeated span(s)")
    assert any("on 18 documents of 3 host(s)" in n for n in ex.notes)
    body = _line_dedup_body(result.manifest["line_dedup"])
    assert "54 spans" in body and CROSS in body
