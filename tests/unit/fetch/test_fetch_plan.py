"""The plan: streamed, deduplicated, sorted by host on disk, resumable by anti-join."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from thresher.core.errors import InputError
from thresher.fetch import plan as plan_module
from thresher.fetch.config import FetchConfig
from thresher.fetch.plan import PlanReader, build_plan, iter_hosts

CFG = FetchConfig(contact="t@thresher.invalid")


def planned(work: Path) -> list[str]:
    return [line.split("\t", 1)[1].rstrip("\n") for line in (work / ".plan.tsv").read_text().splitlines(keepends=True)]


def test_bad_lines_are_counted_by_reason_and_duplicates_dropped(tmp_path: Path) -> None:
    src = tmp_path / "urls.txt"
    lines = [
        "http://b.example/2", "HTTP://A.example/1#top", "http://a.example/1", "", "   ", "garbage",
        "javascript:void(0)", "file:///etc/hosts", "http://a.example/" + "x" * 10_000, "https://\u00fc.example/",
        "http://a.example/1?utm_source=feed", "http://a.example/logo.png", "http://b.example/1",
    ]
    src.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe binary junk\n")
    summary = build_plan([str(src)], tmp_path / "work", CFG)
    assert summary.lines == 14
    assert dict(summary.rejected) == {
        "blank": 2, "no_scheme": 2, "scheme": 2, "too_long": 1, "non_page_extension": 1,
    }
    assert summary.duplicates == 2  # the fragment and the tracking parameter spell a.example/1 again
    assert planned(tmp_path / "work") == [
        "http://a.example/1", "http://b.example/1", "http://b.example/2", "https://xn--tda.example/",
    ]
    assert summary.valid == summary.planned + summary.duplicates
    assert summary.lines == summary.valid + sum(summary.rejected.values())


def test_many_runs_merge_into_one_sorted_deduplicated_plan(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_module, "RUN_LINES", 7)  # force many on-disk runs
    urls = [f"http://h{i % 5}.example/p{i % 40}" for i in range(200)]
    src = tmp_path / "urls.txt"
    src.write_text("\n".join(urls) + "\n")
    summary = build_plan([str(src)], tmp_path / "work", CFG)
    assert summary.planned == 40 and summary.duplicates == 160 and summary.hosts == 5
    hosts = list(iter_hosts(tmp_path / "work"))
    assert [h.host for h in hosts] == [f"h{i}.example" for i in range(5)] and all(h.count == 8 for h in hosts)
    reader = PlanReader(tmp_path / "work")
    got = reader.read(hosts[2], 3) + reader.read(hosts[0], 100) + reader.read(hosts[2], 100)
    reader.close()
    assert got[:3] == sorted(f"http://h2.example/p{i}" for i in range(2, 40, 5))[:3]
    assert len(got) == 16 and not list(tmp_path.glob("work/.sort/*"))


def test_urls_settled_in_the_log_are_left_out_on_resume(tmp_path: Path) -> None:
    src = tmp_path / "urls.txt"
    src.write_text("".join(f"http://h.example/{i}\n" for i in range(10)))
    log = tmp_path / "fetch-log.jsonl"
    log.write_text(
        json.dumps({"url": "http://h.example/3", "outcome": "fetched"}) + "\n"
        + json.dumps({"url": "http://h.example/7", "outcome": "failed"}) + "\n"
        + '{"url": "http://h.example/8", "outc'  # a torn last line: not settled
    )
    summary = build_plan([str(src)], tmp_path / "work", CFG, log_path=log)
    assert summary.already_done == 2 and summary.planned == 8
    assert "http://h.example/3" not in planned(tmp_path / "work") and "http://h.example/8" in planned(tmp_path / "work")


def test_url_columns_of_jsonl_csv_and_parquet(tmp_path: Path) -> None:
    jsonl = tmp_path / "list.jsonl"
    jsonl.write_text('{"url": "http://j.example/1"}\n{"other": 1}\nnot json\n\n{"url": 5}\n')
    csv_path = tmp_path / "list.csv"
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "url"])
        w.writerow([1, "http://c.example/1"])
        w.writerow([2, ""])
    summary = build_plan([str(jsonl), str(csv_path)], tmp_path / "work", CFG, column="url")
    assert planned(tmp_path / "work") == ["http://c.example/1", "http://j.example/1"]
    assert dict(summary.rejected) == {"no_url_field": 3, "blank": 2}
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({"url": ["http://p.example/1", None]}), tmp_path / "list.parquet")
    summary = build_plan([str(tmp_path / "list.parquet")], tmp_path / "work2", CFG, column="url")
    assert planned(tmp_path / "work2") == ["http://p.example/1"] and summary.rejected["no_url_field"] == 1
    with pytest.raises(InputError, match="no column"):
        build_plan([str(tmp_path / "list.parquet")], tmp_path / "work3", CFG, column="link")


def test_a_missing_list_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such URL list"):
        build_plan([str(tmp_path / "nope.txt")], tmp_path / "work", CFG)


def test_hosts_with_the_most_urls_are_planned_first(tmp_path: Path) -> None:
    src = tmp_path / "urls.txt"
    src.write_text("".join(f"http://{h}.example/{i}\n" for h, n in (("a", 1), ("m", 5), ("z", 9)) for i in range(n)))
    build_plan([str(src)], tmp_path / "work", CFG)
    assert [(h.host, h.count) for h in iter_hosts(tmp_path / "work")] == [
        ("z.example", 9),
        ("m.example", 5),
        ("a.example", 1),
    ]
