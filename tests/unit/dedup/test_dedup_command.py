"""`thresher dedup`: duplicate clusters reported, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from thresher.cli import main

BASE = (
    "The city council met on Tuesday evening to discuss the new budget for the coming year. Members "
    "argued for more than three hours about the cost of repairing the old bridge over the river, "
    "which engineers say is no longer safe for heavy traffic. The mayor proposed raising parking "
    "fees in the centre to pay for the work, while the opposition wanted to delay the project until "
    "a federal grant is approved. A final vote is expected next month after a public hearing."
)
OTHER = (
    "Researchers at the university have developed a battery that charges in under five minutes and "
    "keeps most of its capacity after thousands of cycles. The team used a new electrode material "
    "made from layered carbon sheets and tiny silicon particles, the lead author said on Friday."
)


def write_input(tmp_path: Path) -> Path:
    rows = [
        {"url": "https://a.example/1", "text": BASE},
        {"url": "https://b.example/2", "text": OTHER},
        {"url": "https://c.example/3", "text": BASE.replace("three hours", "four hours") + " Share this article."},
        {"url": "https://d.example/4", "text": BASE},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_dedup_reports_one_cluster_with_urls_and_similarities_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_input(tmp_path)
    assert main(["dedup", str(path), "--json", "-q", "--quality", "none", "--engine", "local"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["clusters"] == 1 and report["duplicates"] == 2
    (cluster,) = report["clusters_detail"]
    assert [m["url"] for m in cluster["members"]] == [
        "https://a.example/1",
        "https://c.example/3",
        "https://d.example/4",
    ]
    assert cluster["kept"]["url"] == "https://a.example/1"
    assert any(p["similarity"] == 1.0 for p in cluster["pairs"])  # the identical pair
    assert all(0.8 <= p["similarity"] <= 1.0 for p in cluster["pairs"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]  # no dataset, no work dir left


def test_dedup_text_report_marks_kept_and_dropped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_input(tmp_path)
    assert main(["dedup", str(path), "-q", "--quality", "none", "--engine", "local", "--keep", "longest"]) == 0
    out = capsys.readouterr().out
    assert "1 duplicate clusters, 2 duplicates (keep: longest)" in out
    assert "[keep]" in out and out.count("[drop]") == 2
    assert "https://c.example/3" in out.split("[keep]")[1].splitlines()[0]  # the longest member is kept


def test_clusters_do_not_depend_on_the_key_partition_count(tmp_path: Path) -> None:
    from thresher.commands.dedup import find_clusters
    from thresher.config import RunConfig

    path = write_input(tmp_path)
    reports = []
    for parts in (1, 3, 8):
        config = RunConfig.from_dict(
            {"quality": {"preset": None}, "exec": {"engine": "local", "key_partitions": parts}}
        )
        reports.append(find_clusters([str(path)], config, tmp_path / f"work{parts}"))
    assert reports[0]["cluster_list"] == reports[1]["cluster_list"] == reports[2]["cluster_list"]
    assert reports[0]["clusters"] == 1
