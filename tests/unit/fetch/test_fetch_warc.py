"""The archive: WARC 1.1 read back by thresher's reader with provenance, resumable after a kill,
and complete up to the last logged URL when the disk fills."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fetch_helpers import FARM_ADDRESS, farm_config, write_urls

from thresher import cli
from thresher.core.document import Document, Malformed
from thresher.fetch.crawl import fetch_urls
from thresher.fetch.warc_writer import OutputFull
from thresher.read.config import InputConfig
from thresher.read.sources import iter_items
from thresher.read.warc import iter_records
from thresher.read.warc_config import WarcConfig
from thresher.read.warc_payload import RawRecord

pytest.importorskip("aiohttp")  # the fetch extra
pytest.importorskip("protego")


def records(warc_dir: Path) -> list[RawRecord | Any]:
    out: list[Any] = []
    for path in sorted(warc_dir.glob("*.warc.gz")):
        out += list(iter_records(str(path), 1 << 26, WarcConfig()))
    return out


def settled(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "fetch-log.jsonl").read_text().splitlines()]


def assert_archive_matches_log(out: Path) -> list[dict[str, Any]]:
    """Every record frames cleanly, each fetched URL has exactly one request/response/metadata triple
    at the place its log line names, and no URL is logged twice."""
    recs = records(out / "warc")
    assert not [r for r in recs if not isinstance(r, RawRecord)], "malformed regions in the archive"
    log = settled(out)
    urls = [e["url"] for e in log]
    assert len(urls) == len(set(urls))
    fetched = [e for e in log if e["outcome"] == "fetched"]
    responses = [r for r in recs if r.type == "response"]
    assert sorted(r.target_uri for r in responses) == sorted(e["final_url"] for e in fetched)
    assert sum(r.type == "request" for r in recs) == sum(r.type == "metadata" for r in recs) == len(fetched)
    assert all(recs_of_file[0].type == "warcinfo" for recs_of_file in _by_file(out / "warc"))
    for e in fetched:
        (first,) = [r for r in iter_records(str(out / "warc" / e["warc"]), 1 << 26, WarcConfig(), start=e["offset"])][
            :1
        ]
        assert first.type == "request" and first.target_uri == e["final_url"]
    return log


def _by_file(warc_dir: Path) -> list[list[RawRecord]]:
    return [list(iter_records(str(p), 1 << 26, WarcConfig())) for p in sorted(warc_dir.glob("*.warc.gz"))]


def test_the_archive_reads_back_with_provenance_and_rolls_by_size(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    urls = [f"http://{FARM_ADDRESS}:{farm.port}/page/{i}" for i in range(12)] + [
        f"http://{FARM_ADDRESS}:{farm.port}/gzip/{i}" for i in range(3)]
    out = tmp_path / "crawl"
    result = fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(warc_file_bytes=4000))
    assert result.stats.outcomes["fetched"] == 15
    assert len(list((out / "warc").glob("*.warc.gz"))) >= 3  # rolled by size, each with its warcinfo
    assert_archive_matches_log(out)
    items = list(iter_items([str(out / "warc")], InputConfig()))
    docs = [i for i in items if isinstance(i, Document)]
    assert sorted(d.url for d in docs) == sorted(urls)
    assert not [i for i in items if isinstance(i, Malformed)]
    doc = next(d for d in docs if d.url.endswith("/gzip/1"))  # decoded by the reader from the stored gzip body
    assert "Page /gzip/1" in (doc.html or doc.text)
    src = doc.source
    assert src["file"].endswith(".warc.gz")
    at = next(iter(iter_records(src["file"], 1 << 26, WarcConfig(), start=src["offset"])))
    assert at.type == "response" and at.headers["warc-record-id"] == src["record_id"]  # provenance points at the record
    stats = json.loads((out / "fetch-stats.json").read_text())
    assert stats["fetch"]["outcomes"] == {"fetched": 15} and stats["input"]["planned"] == 15


def test_a_rerun_skips_settled_urls_and_repairs_a_torn_tail(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    base = f"http://{FARM_ADDRESS}:{farm.port}"
    out = tmp_path / "crawl"
    first = [f"{base}/page/{i}" for i in range(5)] + [f"{base}/status/404"]
    fetch_urls([str(write_urls(tmp_path / "a.txt", first))], out, farm_config())
    (warc,) = list((out / "warc").glob("*.warc.gz"))
    size = warc.stat().st_size
    with open(warc, "ab") as f:
        f.write(b"\x1f\x8b\x08\x00partial member of a killed write")
    with open(out / "fetch-log.jsonl", "ab") as f:
        f.write(b'{"url": "' + base.encode() + b'/page/9", "outc')
    requests_before = farm.counts()[FARM_ADDRESS]["requests"]
    result = fetch_urls([str(write_urls(tmp_path / "b.txt", first + [f"{base}/page/9", f"{base}/page/10"]))], out,
                        farm_config())
    assert result.plan.already_done == 6 and result.stats.settled == 2
    assert farm.counts()[FARM_ADDRESS]["requests"] - requests_before == 3  # robots.txt and the two new pages
    assert warc.stat().st_size == size  # the partial member was cut
    log = assert_archive_matches_log(out)
    assert len(log) == 8


def test_a_sigkilled_fetch_resumes_without_duplicated_or_truncated_records(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    base = f"http://{FARM_ADDRESS}:{farm.port}"
    urls = [f"{base}/slow/40/{i}" for i in range(60)]
    listing = write_urls(tmp_path / "u.txt", urls)
    out = tmp_path / "crawl"
    args = [sys.executable, "-m", "thresher", "fetch", str(listing), "-o", str(out), "-q", "--contact", "t@x.invalid",
            "--allow-networks", f"{FARM_ADDRESS}/32", "--per-host-delay-s", "0", "--per-host-concurrency", "2"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    log_path = out / "fetch-log.jsonl"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (not log_path.exists() or log_path.read_bytes().count(b"\n") < 8):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    killed_at = log_path.read_bytes().count(b"\n")
    assert 8 <= killed_at < len(urls), proc.stderr.read().decode() if proc.stderr else ""
    result = fetch_urls([str(listing)], out, farm_config(per_host_concurrency=2))
    assert result.plan.already_done == killed_at
    log = assert_archive_matches_log(out)
    assert sorted(e["url"] for e in log) == sorted(urls) and all(e["outcome"] == "fetched" for e in log)


class FillingDisk:
    """An `open` whose WARC files fail with ENOSPC past a byte budget."""

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def __call__(self, path: Any, mode: str = "r") -> Any:
        f = open(path, mode)
        if not str(path).endswith(".warc.gz"):
            return f
        disk = self
        real_write = f.write

        class Full:
            def __getattr__(self, name: str) -> Any:
                return getattr(f, name)

            def write(self, data: bytes) -> int:
                if len(data) > disk.budget:
                    real_write(data[: disk.budget])  # as a real full disk: part of the write lands
                    f.flush()
                    disk.budget = 0
                    raise OSError(errno.ENOSPC, "No space left on device")
                disk.budget -= len(data)
                return real_write(data)

        return Full()


def test_a_full_disk_stops_with_a_clear_error_and_a_readable_archive(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    urls = [f"http://{FARM_ADDRESS}:{farm.port}/page/{i}" for i in range(20)]
    listing = write_urls(tmp_path / "u.txt", urls)
    out = tmp_path / "crawl"
    with pytest.raises(OutputFull, match="disk full"):
        fetch_urls([str(listing)], out, farm_config(per_host_concurrency=1), opener=FillingDisk(9000))
    partial = assert_archive_matches_log(out)
    assert 0 < len(partial) < 20
    fetch_urls([str(listing)], out, farm_config())  # space freed: the rerun completes the crawl
    assert len(assert_archive_matches_log(out)) == 20


def test_cli_fetch_then_build_end_to_end(tmp_path: Path, farm_factory: Any, capsys: pytest.CaptureFixture[str]) -> None:
    farm = farm_factory()
    base = f"http://{FARM_ADDRESS}:{farm.port}"
    listing = write_urls(
        tmp_path / "u.txt", [f"{base}/page/{i}" for i in range(6)] + ["javascript:x", "", f"{base}/page/0#dup"]
    )
    out, dataset = tmp_path / "crawl", tmp_path / "dataset"
    assert cli.main(["fetch", str(listing), "-o", str(out)]) == 1  # no --contact: a config error
    assert "fetch.contact is required" in capsys.readouterr().err
    code = cli.main(["fetch", str(listing), "-o", str(out), "--contact", "t@x.invalid",
                     "--allow-networks", f"{FARM_ADDRESS}/32", "--per-host-delay-s", "0"])
    err = capsys.readouterr().err
    assert code == 0 and "9 lines, 7 valid, 1 duplicates" in err and "blank 1, scheme 1" in err
    assert cli.main(["build", str(out / "warc"), "-o", str(dataset), "-q"]) == 0
    manifest = json.loads((dataset / "manifest.json").read_text())
    assert manifest["records"] == 6
