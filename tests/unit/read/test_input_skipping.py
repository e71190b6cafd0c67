"""Files of an input folder that are not data (a LICENSE, a README, a JSON document beside JSON Lines) are
skipped, each counted once with its reason, never read as thousands of malformed records; a file named on
the command line is read as asked (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.core.document import Document, Malformed
from thresher.read.base import Event
from thresher.read.config import InputConfig
from thresher.read.skip import is_json_document, skip_by_name
from thresher.read.sources import iter_items, plan_partitions
from thresher.run.build import build

GROUND_TRUTH = {f"page-{i}": {"url": f"https://g.example/{i}", "text": f"gold {i}"} for i in range(300)}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    data = tmp_path / "in"
    data.mkdir()
    write_jsonl(data / "crawl.jsonl", [{"url": f"https://d.example/{i}", "html": article_html(i)} for i in range(6)])
    (data / "LICENSE").write_text("MIT License\n\nPermission is hereby granted, free of charge, ...\n")
    # a README that opens with HTML: by its bytes alone it would be read as a page
    (data / "README.md").write_text('<p align="center"><img src="logo.png"></p>\n\n# The crawl\n\nSix pages.\n')
    (data / "ground-truth.json").write_text(json.dumps(GROUND_TRUTH, indent=2))
    return data


def test_a_folders_non_data_files_are_each_skipped_once_with_a_reason(folder: Path, tmp_path: Path) -> None:
    result = build([str(folder)], tmp_path / "out", local_config())
    stats = result.stats.to_dict()
    assert (stats["seen"], stats["malformed"], result.manifest["records"]) == (6, 0, 6)
    assert {k: v for k, v in stats["events"].items() if k.startswith("skipped_")} == {
        "skipped_documentation": 2,
        "skipped_json_document": 1,
    }


def test_the_plan_names_each_skipped_file_and_the_read_gives_one_event_each(folder: Path) -> None:
    kinds = {Path(p.path).name: p.kind for p in plan_partitions([str(folder)], InputConfig())}
    assert kinds == {
        "LICENSE": "skipped/documentation",
        "README.md": "skipped/documentation",
        "crawl.jsonl": "jsonl",
        "ground-truth.json": "skipped/json_document",
    }
    items = list(iter_items([str(folder)], InputConfig()))
    events = [(i.name, Path(i.location).name) for i in items if isinstance(i, Event)]
    assert events == [
        ("skipped_documentation", "LICENSE"),
        ("skipped_documentation", "README.md"),
        ("skipped_json_document", "ground-truth.json"),
    ]
    assert sum(isinstance(i, Document) for i in items) == 6 and not any(isinstance(i, Malformed) for i in items)


def test_a_file_named_on_the_command_line_is_read_as_asked(folder: Path) -> None:
    items = list(iter_items([str(folder / "ground-truth.json")], InputConfig()))
    assert items and all(isinstance(i, Malformed) for i in items)  # its lines are not records: reported
    assert {i.reason for i in items if isinstance(i, Malformed)} == {"invalid_json"}


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("LICENSE", "documentation"),
        ("LICENSE-MIT", "documentation"),
        ("licence.txt", "documentation"),
        ("README.md", "documentation"),
        ("NOTICE", "documentation"),
        ("notes.md", "documentation"),
        ("docs/guide.rst", "documentation"),
        ("history.warc.gz", None),
        ("license.jsonl", None),
        ("crawl.jsonl.gz", None),
        ("page.html", None),
    ],
)
def test_skip_by_name(name: str, reason: str | None) -> None:
    assert skip_by_name(f"/data/{name}") == reason


@pytest.mark.parametrize(
    ("name", "head", "document"),
    [
        ("truth.json", json.dumps({"a": {"b": 1}, "c": [1, 2]}, indent=2).encode(), True),
        ("list.json", json.dumps([{"a": 1}, {"a": 2}], indent=1).encode(), True),
        ("c.json", b'{"url": "u", "html": "<p>1</p>"}\n{"url": "v", "html": "<p>2</p>"}\n', False),
        ("c.json", b'{"url": "u", "html": "<p>1</p\n{"url": "v", "html": "<p>2</p>"}\n', False),  # a cut line
        ("one.json", b'{"a": 1, "b": 2}', False),  # one line: a record (or a document read as one)
        ("c.jsonl", json.dumps({"a": {"b": 1}}, indent=2).encode(), False),  # named JSON Lines: read
    ],
)
def test_is_json_document(name: str, head: bytes, document: bool) -> None:
    assert is_json_document(name, head) is document
