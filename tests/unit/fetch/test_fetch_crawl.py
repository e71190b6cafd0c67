"""Fetching against the loopback farm: politeness measured at the server, robots.txt, retries,
caps, redirects, parking, and refused targets that are never connected to."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from fetch_helpers import FARM_ADDRESS, farm_config, write_urls

from thresher import __version__
from thresher.fetch.crawl import fetch_urls
from thresher.fetch.farm import HostSpec
from thresher.fetch.safety import static_resolver

pytest.importorskip("aiohttp")  # the fetch extra
pytest.importorskip("protego")


def log_of(out: Path) -> dict[str, dict[str, Any]]:
    entries = [json.loads(line) for line in (out / "fetch-log.jsonl").read_text().splitlines()]
    by_url = {e["url"]: e for e in entries}
    assert len(by_url) == len(entries), "a URL was logged twice"
    return by_url


def resolver(*hosts: str, **extra: str) -> Any:
    table: dict[str, str | list[str]] = {h: FARM_ADDRESS for h in hosts}
    table.update(extra)
    return static_resolver(table)


def test_per_host_concurrency_and_delay_hold_at_the_server(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory({"gap.test": HostSpec(), "cd.test": HostSpec(robots="User-agent: *\nCrawl-delay: 0.25\n")})
    p = farm.port
    urls = [f"http://busy{h}.test:{p}/slow/80/{i}" for h in range(3) for i in range(8)]
    urls += [f"http://gap.test:{p}/page/{i}" for i in range(4)] + [f"http://cd.test:{p}/page/{i}" for i in range(3)]
    hosts = [f"busy{h}.test" for h in range(3)] + ["gap.test", "cd.test"]
    out = tmp_path / "crawl"
    cfg = farm_config(per_host_concurrency=2, global_concurrency=4)
    result = fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, cfg, resolve=resolver(*hosts))
    assert result.stats.outcomes["fetched"] == len(urls)
    counts = farm.counts()
    assert max(counts[f"busy{h}.test"]["max_in_flight"] for h in range(3)) == 2  # used, never exceeded
    assert (
        counts["cd.test"]["max_in_flight"] == 1 and counts["cd.test"]["min_gap_s"] >= 0.15
    )  # Crawl-delay 0.25, less the farm thread's own jitter
    assert counts["gap.test"]["max_in_flight"] <= 2
    delayed = fetch_urls([str(write_urls(tmp_path / "g.txt", [f"http://gap2.test:{p}/page/x{i}" for i in range(3)]))],
                         tmp_path / "crawl2", farm_config(per_host_delay_s=0.25), resolve=resolver("gap2.test"))
    assert delayed.stats.outcomes["fetched"] == 3
    assert farm.counts()["gap2.test"]["min_gap_s"] >= 0.15  # robots.txt and three pages, 0.25 s apart (less jitter)


def test_robots_disallow_is_honoured_and_fetched_once_per_host(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory({
        "r.test": HostSpec(robots="User-agent: *\nDisallow: /private/\n"),
        # the group naming our agent replaces the * group (RFC 9309 2.2.1)
        "r2.test": HostSpec(robots="User-agent: *\nDisallow: /\n\nUser-agent: thresher-fetch\nDisallow: /page/no\n"),
        "huge.test": HostSpec(huge_robots=True),
        "down.test": HostSpec(robots="oops", robots_status=503),
    })
    p = farm.port
    urls = [f"http://r.test:{p}/page/{i}" for i in range(4)] + [f"http://r.test:{p}/private/{i}" for i in range(3)]
    urls += [f"http://r2.test:{p}/page/no", f"http://r2.test:{p}/page/yes", f"http://huge.test:{p}/page/1", f"http://huge.test:{p}/private/1",
             f"http://down.test:{p}/page/1"]
    out = tmp_path / "crawl"
    start = time.monotonic()
    fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(),
               resolve=resolver("r.test", "r2.test", "huge.test", "down.test"))
    assert time.monotonic() - start < 15  # the 100 MB robots.txt was cut at max_robots_bytes
    counts = farm.counts()
    assert counts["r.test"]["paths"]["/robots.txt"] == 1
    agents = {ua for host in counts.values() for ua in host["user_agents"]}
    assert agents == {f"thresher-fetch/{__version__} (+tests@thresher.invalid)"}  # the contact the user set
    assert not [
        path for host in counts.values() for path in host["paths"] if path.startswith(("/private/", "/page/no"))
    ]
    log = log_of(out)
    assert log[f"http://r.test:{p}/private/0"]["reason"] == "robots_disallowed"
    assert log[f"http://r2.test:{p}/page/no"]["reason"] == "robots_disallowed"  # the group for our agent
    assert log[f"http://r2.test:{p}/page/yes"]["outcome"] == "fetched"
    assert log[f"http://huge.test:{p}/page/1"]["outcome"] == "fetched"
    assert log[f"http://huge.test:{p}/private/1"]["reason"] == "robots_disallowed"  # rules within the cap apply
    assert log[f"http://down.test:{p}/page/1"]["reason"] == "robots_unreachable"  # RFC 9309: 5xx disallows all
    assert "/page/1" not in counts["down.test"]["paths"]


def test_failures_are_retried_bounded_and_recorded_with_their_cause(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    p = farm.port
    paths = ["/status/404", "/status/403", "/status/503", "/flaky/1/a", "/reset", "/hang", "/endless", "/bomb",
             "/chain/3", "/chain/9", "/loop/a", "/gzip/1", "/trickle"]
    hosts = {path: f"f{i}.test" for i, path in enumerate(paths)}  # one host each: no back-off crosstalk
    urls = [f"http://{hosts[path]}:{p}{path}" for path in paths]
    out = tmp_path / "crawl"
    cfg = farm_config(max_body_bytes=1 << 20, total_timeout_s=1.5, read_timeout_s=0.5, max_redirects=5)
    fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, cfg, resolve=resolver(*hosts.values()))
    log = {e["url"].split(f":{p}", 1)[1]: e for e in log_of(out).values()}
    expect = {
        "/status/404": ("failed", "http_404", 1), "/status/403": ("failed", "http_403", 1),
        "/status/503": ("failed", "http_503", 2), "/flaky/1/a": ("fetched", None, 2),
        "/reset": ("failed", "connection_reset", 2), "/hang": ("failed", "timeout_read", 2),
        "/endless": ("failed", "body_too_large", 1), "/bomb": ("failed", "decompression_bomb", 1),
        "/chain/3": ("fetched", None, 4), "/chain/9": ("failed", "too_many_redirects", 6),
        "/loop/a": ("failed", "redirect_loop", 2), "/gzip/1": ("fetched", None, 1),
        "/trickle": ("failed", "timeout_total", 2),
    }
    got = {path: (e["outcome"], e.get("reason"), e["attempts"]) for path, e in log.items()}
    assert got == expect
    assert log["/status/503"]["elapsed_s"] >= 1.0  # Retry-After: 1 was honoured
    assert log["/chain/3"]["final_url"].endswith("/page/after-chain") and len(log["/chain/3"]["redirects"]) == 3
    assert log["/endless"]["limit"] == 1 << 20 and log["/bomb"]["limit"] == 100.0
    counts = farm.counts()
    assert counts[hosts["/reset"]]["paths"]["/reset"] == 2  # our two attempts, no hidden client resend


def test_media_types_and_long_retry_after_fail_without_waiting(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    p = farm.port
    urls = [f"http://img.test:{p}/image", f"http://late.test:{p}/late"]
    out = tmp_path / "crawl"
    start = time.monotonic()
    fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(max_retry_after_s=60.0),
               resolve=resolver("img.test", "late.test"))
    assert time.monotonic() - start < 5
    log = log_of(out)
    assert (log[urls[0]]["reason"], log[urls[0]]["detail"]) == ("content_type", "image/png")
    late = log[urls[1]]
    assert (late["reason"], late["attempts"]) == ("http_429", 1) and "Retry-After 3600s exceeds 60s" in late["detail"]


def test_a_redirect_to_another_host_takes_that_hosts_robots_and_slots(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory({"other.test": HostSpec(robots="User-agent: *\nDisallow: /page/private\n")})
    p = farm.port
    urls = [f"http://from.test:{p}/to-host/other.test:{p}", f"http://from.test:{p}/page/stay"]
    out = tmp_path / "crawl"
    fetch_urls(
        [str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(), resolve=resolver("from.test", "other.test")
    )
    moved = log_of(out)[urls[0]]
    assert moved["outcome"] == "fetched" and moved["final_url"] == f"http://other.test:{p}/page/redirected"
    assert farm.counts()["other.test"]["paths"] == {"/robots.txt": 1, "/page/redirected": 1}


def test_a_failing_host_is_parked_and_its_other_urls_fail_unrequested(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    p = farm.port
    urls = [f"http://bad.test:{p}/reset?n={i}" for i in range(10)] + [f"http://ok.test:{p}/page/1"]
    out = tmp_path / "crawl"
    result = fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out,
                        farm_config(host_max_failures=3, max_attempts=1, per_host_concurrency=1),
                        resolve=resolver("bad.test", "ok.test"))
    reasons = [e.get("reason") for e in log_of(out).values() if "bad.test" in e["url"]]
    assert reasons.count("connection_reset") == 3 and reasons.count("host_parked") == 7
    assert farm.counts()["bad.test"]["requests"] == 1 + 3  # robots.txt and three resets
    assert result.stats.hosts_parked == 1 and result.stats.outcomes["fetched"] == 1


def test_private_targets_are_refused_before_any_connection(
    tmp_path: Path, farm_factory: Any, loopback_only: Any
) -> None:
    farm = farm_factory()
    p = farm.port
    urls = [
        f"http://intranet.test:{p}/page/1", f"http://metadata.test:{p}/latest/meta-data/", f"http://mapped.test:{p}/page/1",
        f"http://v6.test:{p}/page/1", f"http://rebind.test:{p}/page/1", f"http://2130706433:{p}/page/1",
        f"http://0x7f.1:{p}/page/2", f"http://[::ffff:127.0.0.1]:{p}/page/3", f"http://[::1]:{p}/page/4",
        f"http://ok.test:{p}/to-private", f"http://ok.test:{p}/page/fine",
    ]
    out = tmp_path / "crawl"
    resolve = resolver("ok.test", **{
        "intranet.test": "10.0.0.5", "metadata.test": "169.254.169.254", "mapped.test": "::ffff:10.1.1.1",
        "v6.test": "fd00::1", "rebind.test": "192.168.0.10",
    })
    result = fetch_urls([str(write_urls(tmp_path / "u.txt", urls))], out, farm_config(), resolve=resolve)
    log = log_of(out)
    reasons = {url.split(f":{p}")[0].split("//")[1]: e.get("reason") for url, e in log.items() if "ok.test" not in url}
    assert reasons == {
        "intranet.test": "refused_private", "metadata.test": "refused_link_local", "mapped.test": "refused_private",
        "v6.test": "refused_private", "rebind.test": "refused_private", "127.0.0.1": "refused_loopback",
        "[::ffff:7f00:1]": "refused_loopback", "[::1]": "refused_loopback",
    }
    redirected = log[f"http://ok.test:{p}/to-private"]
    assert redirected["reason"] == "refused_loopback" and redirected["redirects"] == ["http://127.0.0.1/page/private-target"]
    assert log[f"http://ok.test:{p}/page/fine"]["outcome"] == "fetched"
    assert loopback_only.refused == []  # no socket was ever pointed at a private address
    assert {host for host, _ in loopback_only.attempts} == {FARM_ADDRESS}  # nor at the refused loopback ones
    assert result.stats.refused_targets >= 8


def test_allow_private_opts_in(tmp_path: Path, farm_factory: Any) -> None:
    farm = farm_factory()
    url = f"http://{FARM_ADDRESS}:{farm.port}/page/1"
    out = tmp_path / "crawl"
    refused = fetch_urls([str(write_urls(tmp_path / "u.txt", [url]))], out, farm_config(allow_networks=()))
    assert refused.stats.reasons == {"refused_loopback": 1}
    allowed = fetch_urls([str(write_urls(tmp_path / "v.txt", [url + "?x"]))], tmp_path / "c2",
                         farm_config(allow_networks=(), allow_private=True))
    assert allowed.stats.outcomes["fetched"] == 1
