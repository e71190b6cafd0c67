"""Fetch cases a hostile network or a full disk makes (issue 36): DNS rebinding, robots.txt that
answers 5xx or 429, Retry-After on 429/503, and a disk that fills while writing through a buffer."""

from __future__ import annotations

import errno
import io
import json
import time
from pathlib import Path
from typing import Any

import pytest
from fetch_helpers import FARM_ADDRESS, farm_config, write_urls

from thresher import cli
from thresher.fetch import crawl
from thresher.fetch.crawl import fetch_urls
from thresher.fetch.exchange import parse_retry_after
from thresher.fetch.farm import HostSpec
from thresher.fetch.safety import PinnedResolver, TargetRefused
from thresher.fetch.warc_writer import OutputFull
from thresher.read.warc import iter_records
from thresher.read.warc_config import WarcConfig
from thresher.read.warc_payload import RawRecord

pytest.importorskip("aiohttp")  # the fetch extra
pytest.importorskip("protego")


def log_of(out: Path) -> dict[str, dict[str, Any]]:
    entries = [json.loads(line) for line in (out / "fetch-log.jsonl").read_text().splitlines()]
    by_url = {e["url"]: e for e in entries}
    assert len(by_url) == len(entries), "a URL was logged twice"
    return by_url


class Rebinding:
    """DNS that answers the checked (exempted farm) address once, then a refused one, as a rebinding
    attacker's name server does between the check and the connection."""

    def __init__(self, second: str = "127.0.0.1") -> None:
        self.calls: list[str] = []
        self.second = second

    async def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append(host)
        return [FARM_ADDRESS] if len(self.calls) == 1 else [self.second]


# -- DNS rebinding -----------------------------------------------------------------------------------


def test_a_rebinding_name_is_connected_to_at_the_address_that_was_checked(
    tmp_path: Path, farm_factory: Any, loopback_only: Any
) -> None:
    farm = farm_factory({"rebind.test": HostSpec(robots="User-agent: *\nAllow: /\n")})
    p = farm.port
    urls = [f"http://rebind.test:{p}/page/{i}" for i in range(4)] + [f"http://rebind.test:{p}/chain/2"]
    dns = Rebinding()
    out = tmp_path / "crawl"
    result = fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(), resolve=dns)
    assert result.stats.outcomes["fetched"] == 5
    assert dns.calls == ["rebind.test"]  # resolved once: robots.txt, 5 pages and 2 redirects all used the pin
    assert {host for host, _ in loopback_only.attempts} == {FARM_ADDRESS}  # never the rebound 127.0.0.1
    assert farm.counts()["rebind.test"]["paths"]["/robots.txt"] == 1
    assert {e["ip"] for e in log_of(out).values() if "ip" in e} <= {FARM_ADDRESS}


def test_a_pin_dropped_between_checks_is_resolved_and_checked_again_not_trusted() -> None:
    pytest.importorskip("aiohttp")
    import asyncio

    async def scenario() -> None:
        dns = Rebinding(second="10.0.0.7")
        guard = PinnedResolver(dns, max_hosts=1, allow_networks=(f"{FARM_ADDRESS}/32",))
        assert await guard.check("rebind.test", 80) == [FARM_ADDRESS]
        guard._pinned.clear()  # noqa: SLF001 - the LRU dropped it (a crawl wider than its window)
        with pytest.raises(OSError, match="refused, private address 10.0.0.7"):
            await guard.for_aiohttp().resolve("rebind.test", 80)  # the client's own lookup, checked again
        with pytest.raises(TargetRefused):
            await guard.check("rebind.test", 80)

    asyncio.run(scenario())


# -- robots.txt that answers an error ------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 429])
def test_robots_txt_answering_5xx_or_429_disallows_the_whole_host(
    tmp_path: Path, farm_factory: Any, status: int
) -> None:
    farm = farm_factory({"down.test": HostSpec(robots="User-agent: *\nAllow: /\n", robots_status=status)})
    p = farm.port
    urls = [f"http://down.test:{p}/page/{i}" for i in range(3)]
    out = tmp_path / "crawl"
    result = fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(),
                        resolve=Rebinding(second=FARM_ADDRESS))
    log = log_of(out)
    assert {e["reason"] for e in log.values()} == {"robots_unreachable"}  # RFC 9309 2.3.1.4: complete disallow
    paths = farm.counts()["down.test"]["paths"]
    assert set(paths) == {"/robots.txt"} and paths["/robots.txt"] == 2  # retried (max_attempts), pages never asked
    assert result.stats.outcomes["failed"] == 3


# -- Retry-After -------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_on_429_and_503_is_waited_before_the_next_attempt(
    tmp_path: Path, farm_factory: Any, status: int
) -> None:
    farm = farm_factory()
    url = f"http://ra.test:{farm.port}/status/{status}"  # answers Retry-After: 1 every time
    out = tmp_path / "crawl"
    cfg = farm_config(backoff_base_s=0.01, backoff_max_s=0.01, max_attempts=2)
    fetch_urls([str(write_urls(tmp_path / "u.txt", [url]))], out, cfg, resolve=Rebinding(second=FARM_ADDRESS))
    entry = log_of(out)[url]
    assert (entry["reason"], entry["attempts"]) == (f"http_{status}", 2)
    assert entry["elapsed_s"] >= 1.0  # the back-off alone would have waited 0.01 s
    assert farm.counts()["ra.test"]["paths"][f"/status/{status}"] == 2


def test_retry_after_is_read_as_seconds_or_a_date_and_garbage_is_ignored() -> None:
    now = 1_445_412_480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:30:00 GMT", now=now) == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now=now) == 0.0  # in the past: no wait
    assert parse_retry_after("-5") is None and parse_retry_after("soon") is None and parse_retry_after("") is None


def test_a_retry_after_beyond_the_bound_fails_at_once_instead_of_waiting(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    url = f"http://late.test:{farm.port}/late"  # 429, Retry-After: 3600
    out = tmp_path / "crawl"
    start = time.monotonic()
    fetch_urls([str(write_urls(tmp_path / "u.txt", [url]))], out, farm_config(max_retry_after_s=5.0),
               resolve=Rebinding(second=FARM_ADDRESS))
    assert time.monotonic() - start < 5
    entry = log_of(out)[url]
    assert entry["attempts"] == 1 and "Retry-After 3600s exceeds 5s" in entry["detail"]


# -- a full disk -------------------------------------------------------------------------------------


class _Disk:
    def __init__(self, budget: int) -> None:
        self.budget = budget


class _FillingRaw(io.RawIOBase):
    """A file on a disk with `budget` bytes free: writes land until it is spent, then ENOSPC."""

    def __init__(self, path: Any, mode: str, disk: _Disk) -> None:
        self.f = io.FileIO(path, mode.replace("b", ""))
        self.disk = disk

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.f.seek(pos, whence)

    def tell(self) -> int:
        return self.f.tell()

    def truncate(self, size: int | None = None) -> int:
        return self.f.truncate(size)

    def fileno(self) -> int:
        return self.f.fileno()

    def write(self, b: Any) -> int:
        if self.disk.budget <= 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        n = min(len(b), self.disk.budget)
        self.disk.budget -= n
        return self.f.write(bytes(b[:n]))

    def close(self) -> None:
        self.f.close()
        super().close()


def filling_disk(budget: int) -> Any:
    """An `open` for the archive and the log as the default one gives them (buffered), on a disk
    that fills: the buffer keeps what did not fit and tries again on flush and close."""
    disk = _Disk(budget)

    def opener(path: Any, mode: str = "r") -> Any:
        if "a" in mode or "w" in mode:
            return io.BufferedWriter(_FillingRaw(path, mode, disk), 8192)
        return open(path, mode)  # noqa: SIM115 - returned to the writer, which closes it

    return opener


def _records(out: Path) -> list[Any]:
    return [r for p in sorted((out / "warc").glob("*.warc.gz")) for r in iter_records(str(p), 1 << 26, WarcConfig())]


@pytest.mark.parametrize("budget", [300, 20_000])
def test_a_disk_filling_through_a_buffer_is_output_full_and_a_rerun_completes(
    tmp_path: Path, farm_factory: Any, budget: int
) -> None:
    farm = farm_factory()
    urls = [f"http://{FARM_ADDRESS}:{farm.port}/page/{i}" for i in range(30)]
    listing = write_urls(tmp_path / "u.txt", urls)
    out = tmp_path / "crawl"
    with pytest.raises(OutputFull, match="free space and rerun"):
        fetch_urls([str(listing)], out, farm_config(per_host_concurrency=1), opener=filling_disk(budget))
    fetch_urls([str(listing)], out, farm_config())
    log = log_of(out)
    assert len(log) == 30 and all(e["outcome"] == "fetched" for e in log.values())
    recs = _records(out)
    assert all(isinstance(r, RawRecord) for r in recs)  # no torn or duplicated record in the archive
    assert sorted(r.target_uri for r in recs if r.type == "response") == sorted(urls)


def test_the_cli_reports_a_full_disk_in_one_line_and_the_rerun_resumes(
    tmp_path: Path, farm_factory: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    farm = farm_factory()
    urls = [f"http://{FARM_ADDRESS}:{farm.port}/page/{i}" for i in range(12)]
    listing = write_urls(tmp_path / "u.txt", urls)
    out = tmp_path / "crawl"
    argv = ["fetch", str(listing), "-o", str(out), "--contact", "t@x.invalid", "--allow-networks",
            f"{FARM_ADDRESS}/32", "--per-host-delay-s", "0", "--per-host-concurrency", "1"]
    monkeypatch.setitem(crawl.fetch_urls.__kwdefaults__, "opener", filling_disk(9000))
    code = cli.main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("thresher: error")]
    assert code != 0 and "Traceback" not in err
    assert len(lines) == 1 and "disk full" in lines[0] and "rerun" in lines[0]
    monkeypatch.setitem(crawl.fetch_urls.__kwdefaults__, "opener", open)
    assert cli.main(argv) == 0
    log = log_of(out)
    assert len(log) == 12 and all(e["outcome"] == "fetched" for e in log.values())
