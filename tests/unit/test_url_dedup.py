"""URL dedup (issue 31; `thresher.dedup.url_stage`): of the documents with one normalized URL the
newest by fetch date is kept, ties going to the first in input order; every other one is dropped
as dedup.url/url_duplicate with its date, the kept one's date and id; the same on any engine,
partitioning and resume."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.cli import build_parser, config_from_args, main
from thresher.core.errors import TaskError
from thresher.dedup.url_stage import plan_bucket_ranges
from thresher.dedup.urls import date_text, document_date, normalize_url, parse_date
from thresher.report.explain import explain
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.write.manifest import read_shards

# -- normalization and dates ------------------------------------------------------------------------


@pytest.mark.parametrize(("url", "normalized"), [
    ("HTTPS://Example.COM/Path?Q=A", "https://example.com/Path?Q=A"),  # scheme and host only
    ("http://example.com:80/a", "http://example.com/a"),
    ("https://example.com:443/a", "https://example.com/a"),
    ("https://example.com:8443/a", "https://example.com:8443/a"),  # not the default port
    ("http://example.com:/a", "http://example.com/a"),  # an empty port
    ("http://example.com", "http://example.com/"),
    ("http://example.com?x=1", "http://example.com/?x=1"),
    ("https://example.com/a#section-2", "https://example.com/a"),
    ("https://www.example.com/a", "https://www.example.com/a"),  # www. is another host
    ("https://example.com/a?b=2&a=1", "https://example.com/a?b=2&a=1"),  # the query as it is
    ("https://example.com/a%2fb", "https://example.com/a%2fb"),  # no decoding
    ("https://User:Pw@EXAMPLE.com:443/", "https://User:Pw@example.com/"),
    ("http://[2001:DB8::1]:80/x", "http://[2001:db8::1]/x"),
    ("  https://example.com/a  ", "https://example.com/a"),
    ("mailto:Someone@Example.com", "mailto:Someone@Example.com"),
    ("not a url#frag", "not a url"),
])
def test_normalize_url_folds_only_what_cannot_change_the_page(url, normalized):
    assert normalize_url(url) == normalized
    assert normalize_url(normalized) == normalized  # idempotent


@pytest.mark.parametrize(("value", "text"), [
    ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z"),
    ("2024-05-01T14:00:00+02:00", "2024-05-01T12:00:00Z"),
    ("2024-05-01T12:00:00", "2024-05-01T12:00:00Z"),  # no offset: UTC
    ("2024-05-01", "2024-05-01T00:00:00Z"),
    ("20240501120000", "2024-05-01T12:00:00Z"),  # WARC/ARC 14 digits
    ("20240501", "2024-05-01T00:00:00Z"),  # ISO basic, not epoch seconds
    ("Wed, 01 May 2024 12:00:00 GMT", "2024-05-01T12:00:00Z"),
    (1714564800, "2024-05-01T12:00:00Z"),  # epoch seconds
    (1714564800.5, "2024-05-01T12:00:00.500000Z"),
    ("1714564800", "2024-05-01T12:00:00Z"),
    ("yesterday", None), ("", None), (None, None), (True, None), (float("nan"), None), ([2024], None),
])
def test_parse_date_reads_iso_warc_http_and_epoch_forms_in_utc(value, text):
    assert date_text(parse_date(value)) == text


def test_document_date_takes_the_first_present_field_top_level_or_metadata():
    fields = ("fetched_at", "date", "timestamp")
    warc = {"id": "a", "fetched_at": "2024-01-01T00:00:00Z", "metadata": {"date": "2025-01-01"}}
    assert date_text(document_date(warc, fields)) == "2024-01-01T00:00:00Z"
    jsonl = {"id": "b", "metadata": {"timestamp": 0, "date": "2023-06-01"}}
    assert date_text(document_date(jsonl, fields)) == "2023-06-01T00:00:00Z"
    assert document_date({"id": "c", "metadata": {"date": "soon", "timestamp": 0}}, fields) is None
    assert document_date({"id": "d"}, fields) is None


def test_bucket_ranges_cover_every_bucket_and_respect_the_target():
    assert plan_bucket_ranges([0, 0, 0]) == []
    assert plan_bucket_ranges([2, 2, 2, 9, 1], target=4) == [(0, 2), (2, 3), (3, 4), (4, 5)]
    assert plan_bucket_ranges([1, 1, 1], target=10) == [(0, 3)]


# -- in a build ---------------------------------------------------------------------------------


def page(i: int, url: str, **fields):
    return {"url": url, "html": article_html(i), **fields}


def two_inputs(tmp_path: Path) -> list[str]:
    # the same page fetched three times across two files, plus two URLs seen once; distinct bodies
    a = write_jsonl(tmp_path / "a.jsonl", [
        page(1, "https://Example.com:443/news#top", date="2024-03-01T00:00:00Z"),
        page(2, "https://example.com/other"),
        page(3, "https://example.com/news", fetched_at="2023-12-31T23:00:00-02:00"),  # 2024-01-01T01:00Z
    ])
    b = write_jsonl(tmp_path / "b.jsonl", [
        page(4, "https://example.com/news", crawl_date="20240401000000"),  # the newest
        page(5, "https://example.com/only-once", timestamp=1),
    ])
    return [str(a), str(b)]


def rejected(rejects: Path) -> list[dict]:
    rows = []
    for path in sorted(rejects.glob("*.jsonl.gz")):
        with gzip.open(path, "rt", encoding="utf-8") as f:
            rows += [json.loads(line) for line in f]
    return sorted(rows, key=lambda r: r["id"])


def shard_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: gzip.decompress(p.read_bytes()) for p in sorted(out.glob("shard-*"))}


def test_the_newest_fetch_of_a_url_is_kept_across_input_files(tmp_path):
    result = build(two_inputs(tmp_path), tmp_path / "out", local_config(), rejects=tmp_path / "rejects")
    kept = list(read_shards(tmp_path / "out"))
    assert [r["url"] for r in kept] == ["https://example.com/other", "https://example.com/news",
                                        "https://example.com/only-once"]
    keeper = kept[1]["id"]
    assert result.stats.reconciles() and result.stats.kept == 3
    assert "url_dedup" not in result.manifest  # the stats count the drops
    drops = [(r["url"], r["drop"]) for r in rejected(tmp_path / "rejects")]
    detail = {"kept_id": keeper, "cluster": keeper, "url": "https://example.com/news", "by": "date"}
    assert sorted(drops, key=lambda d: d[1]["value"]) == [
        ("https://example.com/news", {"stage": "dedup.url", "reason": "url_duplicate",
                                      "value": "2024-01-01T01:00:00Z", "limit": "2024-04-01T00:00:00Z",
                                      "detail": detail}),
        ("https://Example.com:443/news#top", {"stage": "dedup.url", "reason": "url_duplicate",
                                              "value": "2024-03-01T00:00:00Z", "limit": "2024-04-01T00:00:00Z",
                                              "detail": detail}),
    ]
    assert result.stats.to_dict()["drops"]["dedup.url"] == {"url_duplicate": 2}


def test_equal_or_missing_dates_keep_the_first_in_input_order(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [
        page(1, "https://a.example/x"),  # no date: oldest
        page(2, "https://a.example/x", date="2024-01-01"),
        page(3, "https://a.example/x", date="2024-01-01T00:00:00Z"),  # the same instant
        page(4, "https://b.example/y", date="not a date"),
        page(5, "https://b.example/y"),
    ])
    build([str(src)], tmp_path / "out", local_config(), rejects=tmp_path / "rejects")
    kept = [(r["url"], r["metadata"].get("date")) for r in read_shards(tmp_path / "out")]
    assert kept == [("https://a.example/x", "2024-01-01"), ("https://b.example/y", "not a date")]
    drops = sorted(((r["url"], r["drop"]["value"], r["drop"]["limit"], r["drop"]["detail"]["by"])
                    for r in rejected(tmp_path / "rejects")), key=lambda d: (d[0], d[1] or ""))
    assert drops == [("https://a.example/x", None, "2024-01-01T00:00:00Z", "date"),
                     ("https://a.example/x", "2024-01-01T00:00:00Z", "2024-01-01T00:00:00Z", "input_order"),
                     ("https://b.example/y", None, None, "input_order")]


def test_the_date_fields_are_configurable(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [
        page(1, "https://a.example/x", seen="2025-01-01", date="2020-01-01"),
        page(2, "https://a.example/x", seen="2024-01-01", date="2021-01-01"),
    ])
    build([str(src)], tmp_path / "out", local_config(dedup={"url": {"date_fields": ["seen"]}}))
    assert [r["metadata"]["seen"] for r in read_shards(tmp_path / "out")] == ["2025-01-01"]


def test_no_url_dedup_keeps_every_fetch(tmp_path):
    result = build(two_inputs(tmp_path), tmp_path / "out", local_config(dedup={"url": {"enabled": False}}))
    assert result.stats.kept == 5 and "dedup.url" not in result.stats.to_dict().get("drops", {})


def test_the_flag_turns_it_off_and_on():
    def parsed(*argv):
        return config_from_args(build_parser().parse_args(["build", "in.jsonl", "-o", "out", *argv])).dedup.url

    assert parsed().enabled is True
    assert parsed("--no-url-dedup").enabled is False
    assert parsed("--url-dedup").enabled is True
    assert parsed("--url-date-fields", "seen,date").date_fields == ("seen", "date")


def test_pool_engine_and_small_partitions_give_the_local_shards(tmp_path):
    inputs = two_inputs(tmp_path)
    more = write_jsonl(tmp_path / "c.jsonl", [page(10 + i, f"https://example.com/p{i % 3}", date=f"2024-01-{1 + i:02d}")
                                              for i in range(12)])
    inputs.append(str(more))
    local = build(inputs, tmp_path / "local", local_config())
    pooled = build(inputs, tmp_path / "pool", local_config(exec={"engine": "pool", "workers": 2},
                                                           input={"partition_bytes": 4096}))
    assert pooled.stats.to_dict()["drops"] == local.stats.to_dict()["drops"]
    assert local.stats.to_dict()["drops"]["dedup.url"] == {"url_duplicate": 2 + 9}
    assert shard_bytes(tmp_path / "pool") == shard_bytes(tmp_path / "local")


def failing_decide(ctx, *args):
    raise RuntimeError("simulated crash in url_decide")


def test_a_crashed_url_phase_resumes_to_the_same_shards(tmp_path):
    inputs = two_inputs(tmp_path)
    config = local_config(exec={"retries": 0})
    build(inputs, tmp_path / "clean", config)
    with pytest.raises(TaskError, match="simulated crash"):
        build(inputs, tmp_path / "out", config, tasks=DEFAULT_TASKS.replace(url_decide=failing_decide))
    work = tmp_path / "out" / ".work"
    assert {p.name for p in work.rglob("url_groups-*")}  # the earlier phases finished
    for marker in work.rglob("url_keys-*"):  # and one is lost: run again
        marker.unlink()
        break
    build(inputs, tmp_path / "out", config)
    assert shard_bytes(tmp_path / "out") == shard_bytes(tmp_path / "clean")


def test_report_and_explain_show_the_url_drop(tmp_path, capsys):
    build(two_inputs(tmp_path), tmp_path / "out", local_config())
    found = {ex.status: ex for ex in explain(tmp_path / "out", "https://example.com/other")}
    assert set(found) == {"kept"}
    older = [ex for ex in explain(tmp_path / "out", "https://Example.com:443/news#top") if ex.status == "dropped"]
    assert len(older) == 1
    assert older[0].entry["drop"]["reason"] == "url_duplicate"
    assert older[0].kept_instead is not None and older[0].kept_instead["url"] == "https://example.com/news"
    assert "dedup.url: url_duplicate" in older[0].render()
    assert main(["report", str(tmp_path / "out"), "-o", str(tmp_path / "report.html"), "-q"]) == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "url_duplicate" in html
