"""`thresher build` over a crawl folder (only its WARC files, recognised by the fetcher's marker) and
`thresher build --fetch` (fetch, then build; a rerun resumes both)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fetch_helpers import FARM_ADDRESS, write_urls

from thresher import cli
from thresher.core.errors import InputError
from thresher.fetch.marker import MARKER, archive_of, marker_record
from thresher.read.sources import expand_inputs
from thresher.run.build import build


def fake_crawl(root: Path, archive: str = "warc", marker: str | None = None) -> Path:
    (root / archive).mkdir(parents=True)
    (root / archive / "a.warc.gz").write_bytes(b"x")
    (root / "fetch-log.jsonl").write_text('{"url": "http://a/"}\n')
    (root / "fetch-stats.json").write_text("{}")
    (root / ".fetch-plan").mkdir()
    (root / ".fetch-plan" / "hosts.jsonl").write_text("{}\n")
    (root / MARKER).write_text(marker if marker is not None else json.dumps(marker_record(archive)))
    return root


def names(paths: list[str]) -> list[str]:
    return sorted(Path(p).name for p in paths)


def test_a_marked_crawl_folder_gives_its_warc_files_only(tmp_path: Path) -> None:
    crawl = fake_crawl(tmp_path / "crawl")
    assert names(expand_inputs([str(crawl)])) == ["a.warc.gz"]
    # the marker names the archive: another layout is read as well, whatever the names
    other = fake_crawl(tmp_path / "other", archive="records")
    (other / "records" / "notes.jsonl").write_text("{}\n")
    assert names(expand_inputs([str(other)])) == ["a.warc.gz", "notes.jsonl"]


def test_crawls_below_a_folder_are_recognised_and_other_files_kept(tmp_path: Path) -> None:
    fake_crawl(tmp_path / "all" / "crawl1")
    (tmp_path / "all" / "docs.jsonl").write_text('{"text": "x"}\n')
    assert names(expand_inputs([str(tmp_path / "all")])) == ["a.warc.gz", "docs.jsonl"]


def test_without_the_marker_or_with_a_foreign_one_a_folder_is_read_whole(tmp_path: Path) -> None:
    crawl = fake_crawl(tmp_path / "crawl", marker='{"format": "something-else"}')
    assert names(expand_inputs([str(crawl)])) == ["a.warc.gz", "fetch-log.jsonl", "fetch-stats.json", "hosts.jsonl"]
    assert archive_of("not json") is None and archive_of('{"format": "thresher-crawl", "archive": "../x"}') is None


def test_a_crawl_with_no_warc_yet_is_a_clear_error(tmp_path: Path) -> None:
    crawl = fake_crawl(tmp_path / "crawl")
    (crawl / "warc" / "a.warc.gz").unlink()
    with pytest.raises(InputError, match="no WARC file yet"):
        expand_inputs([str(crawl)])


def test_build_reads_a_fetched_folder_directly(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    base = f"http://{FARM_ADDRESS}:{farm.port}"
    listing = write_urls(tmp_path / "u.txt", [f"{base}/page/{i}" for i in range(5)])
    crawl, dataset = tmp_path / "crawl", tmp_path / "dataset"
    flags = ["--contact", "t@x.invalid", "--allow-networks", f"{FARM_ADDRESS}/32", "--per-host-delay-s", "0"]
    assert cli.main(["fetch", str(listing), "-o", str(crawl), "-q", *flags]) == 0
    assert (crawl / MARKER).is_file() and (crawl / "fetch-log.jsonl").is_file()
    assert cli.main(["build", str(crawl), "-o", str(dataset), "-q"]) == 0
    assert json.loads((dataset / "manifest.json").read_text())["records"] == 5
    # the library path: the same folder, every record a document, nothing malformed (no log lines read)
    result = build([str(crawl)], tmp_path / "dataset2")
    assert result.stats.seen == 5 and result.stats.malformed == 0 and result.manifest["records"] == 5


def test_build_fetch_fetches_then_builds_and_a_rerun_resumes(tmp_path: Path, farm_factory: Any,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    farm = farm_factory()
    base = f"http://{FARM_ADDRESS}:{farm.port}"
    listing = write_urls(tmp_path / "u.txt", [f"{base}/page/{i}" for i in range(6)] + ["javascript:x"])
    out = tmp_path / "out"
    flags = ["--contact", "t@x.invalid", "--allow-networks", f"{FARM_ADDRESS}/32", "--per-host-delay-s", "0"]
    assert cli.main(["build", "--fetch", str(listing), "-o", str(out), *flags]) == 0
    err = capsys.readouterr().err
    crawl = tmp_path / "out.crawl"
    assert f"fetched into {crawl}/" in err
    assert json.loads((out / "manifest.json").read_text())["records"] == 6
    log = (crawl / "fetch-log.jsonl").read_text().splitlines()
    assert len(log) == 6
    # a rerun fetches nothing again (every URL is settled) and finds the finished dataset
    requests_before = sum(c.requests for c in farm.counters.values())
    assert cli.main(["build", "--fetch", str(listing), "-o", str(out), "--overwrite", "-q", *flags]) == 0
    assert (crawl / "fetch-log.jsonl").read_text().splitlines() == log
    assert sum(c.requests for c in farm.counters.values()) == requests_before
    # a named crawl folder, and no input at all is an error
    assert cli.main(["build", "--fetch", str(listing), "--crawl", str(tmp_path / "named"), "-o", str(tmp_path / "o2"),
                     "-q", *flags]) == 0
    assert (tmp_path / "named" / MARKER).is_file()
    assert cli.main(["build", "-o", str(tmp_path / "o3")]) == 1
    assert "no input" in capsys.readouterr().err
