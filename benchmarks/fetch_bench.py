"""Fetching a URL list: thresher fetch vs the seed's approach, on a server farm on loopback.

The farm (`thresher.fetch.farm`, its own process) serves many virtual hosts on 127.0.0.2, told apart
by the Host header; both clients resolve every `*.test` name to 127.0.0.2 through a test resolver,
so no traffic leaves loopback. The farm mixes latencies, 403/404/429/503, connection resets,
redirect chains and loops, an endless body, a gzip bomb, robots.txt disallows and Crawl-delays,
and counts per host the most requests in flight at once, the smallest gap between two request
arrivals, and each path requested.

Contenders, each in its own process (peak RSS from wait4, CPU time user + sys), at the same global
concurrency:
- thresher: `fetch_urls` with per-host concurrency 2 and delay `--delay`, robots.txt honoured,
  WARC output;
- baseline: the seed's approach, written here: aiohttp + asyncio.Semaphore(100) + tenacity retries
  (exponential back-off on timeouts, 429 and 503), every URL a task from the start, pages written as
  JSONL. It needs tenacity (`pip install tenacity`; a benchmark-only package, no thresher dependency).

Scenarios:
- `farm`: throughput and politeness on the mixed farm, interleaved repeats;
- `memory`: peak RSS with 10k, 100k and 1M URLs in the list (10k hosts of fast 404s), each run
  stopped after `--memory-seconds` (the baseline only up to 100k: it holds every URL as a task);
- `safety`: names resolving to private addresses and a redirect to 127.0.0.1, without
  --allow-private: connection attempts outside the farm's address are counted by a socket guard
  (which refuses them before they happen) and must be 0.

Usage: python benchmarks/fetch_bench.py [--repeats 2] [--hosts 400] [--skip-memory]
Writes benchmarks/results/fetch_bench.json.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import platform
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
FARM_ADDRESS = "127.0.0.2"
CONCURRENCY = 100
# the clean-farm comparison: thresher as configured, without robots.txt (per-host limits kept), with
# politeness off, and the seed's approach
# (and, as a diagnostic, thresher at a global concurrency of 40: the farm's queue at 100 in flight is
# what slows the hosts that per-host concurrency holds at 2 requests)
CLEAN_ROLES = ("thresher", "thresher-no-robots", "thresher-unthrottled", "thresher-c40", "baseline")


# -- the farm ----------------------------------------------------------------------------------------
def farm_specs(hosts: int) -> dict[str, dict[str, Any]]:
    specs: dict[str, dict[str, Any]] = {}
    for i in range(hosts):
        spec: dict[str, Any] = {}
        if i % 20 == 0:
            spec["robots"] = "User-agent: *\nDisallow: /private/\n"
        if i % 50 == 7:
            spec["robots"] = "User-agent: *\nCrawl-delay: 0.5\n"
        if i % 10 == 3:
            spec["latency_s"] = 0.05
        specs[f"h{i}.test"] = spec
    return specs


def farm_urls(hosts: int, port: int, pathological: bool = True) -> list[str]:
    """Three URLs on most hosts, 40 on each of four big hosts; about 10% errors of every kind.
    Without `pathological`: only pages (with latencies), 404s and 403s, to compare throughput where
    neither client is held up by endless bodies, bombs, resets or retries."""
    urls: list[str] = []
    for i in range(hosts):
        base = f"http://h{i}.test:{port}"
        for j in range(40 if i >= hosts - 4 else 3):  # the big hosts: not first by name
            k = i * 41 + j
            if k % 97 == 5:
                path = "/status/404"
            elif k % 97 == 11:
                path = "/status/403"
            elif k % 97 == 17:
                path = "/status/503"
            elif k % 97 == 23:
                path = "/status/429"
            elif k % 97 == 29:
                path = "/reset"
            elif k % 97 == 31:
                path = "/chain/3"
            elif k % 97 == 37:
                path = "/loop/a"
            elif k % 97 == 41:
                path = f"/flaky/1/{k}"
            elif k % 97 == 43:
                path = f"/gzip/{k}"
            elif i % 20 == 0 and j == 0:
                path = f"/private/{k}"  # disallowed by this host's robots.txt
            else:
                path = f"/slow/{10 + k % 40}/{k}"
            if not pathological and not path.startswith(("/slow/", "/status/404", "/status/403", "/private/")):
                path = f"/slow/{10 + k % 40}/{k}"
            urls.append(base + path + (f"?k={k}" if path.startswith("/status") or path in ("/reset",) else ""))
    if pathological:
        urls += [f"http://h1.test:{port}/endless", f"http://h2.test:{port}/bomb"]
    return urls


class FarmProcess:
    def __init__(self, specs: dict[str, dict[str, Any]], seconds: float) -> None:
        self.port_file = tempfile.mktemp(prefix="farm-port-")
        code = ("import sys; from thresher.fetch.farm import serve; "
                f"serve(sys.argv[1], {self.port_file!r}, {seconds}, {FARM_ADDRESS!r})")
        self.proc = subprocess.Popen([sys.executable, "-c", code, json.dumps(specs)], env=_env())
        deadline = time.monotonic() + 30
        while not os.path.exists(self.port_file) or not open(self.port_file).read().strip():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the farm did not start")
            time.sleep(0.05)
        time.sleep(0.1)
        self.port = int(open(self.port_file).read())

    def counts(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://{FARM_ADDRESS}:{self.port}/__stats", timeout=30) as resp:
            data: dict[str, Any] = json.load(resp)
            return data

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.unlink(self.port_file)


def politeness(counts: dict[str, Any], hosts_with_delay: set[str] | None = None) -> dict[str, Any]:
    hosts = {h: c for h, c in counts.items() if h.endswith(".test")}
    gaps = [c["min_gap_s"] for c in hosts.values() if c["min_gap_s"] is not None]
    crawl_delay_gaps = [
        hosts[h]["min_gap_s"] for h in (hosts_with_delay or set()) if h in hosts and hosts[h]["min_gap_s"] is not None
    ]
    return {
        "requests": sum(c["requests"] for c in hosts.values()),
        "max_in_flight_per_host": max((c["max_in_flight"] for c in hosts.values()), default=0),
        "min_gap_s": round(min(gaps), 4) if gaps else None,
        "min_gap_s_on_crawl_delay_hosts": round(min(crawl_delay_gaps), 4) if crawl_delay_gaps else None,
        "requests_to_disallowed_paths": sum(
            n for c in hosts.values() for p, n in c["paths"].items() if p.startswith("/private/")
        ),
        "robots_requests": sum(c["paths"].get("/robots.txt", 0) for c in hosts.values()),
    }


# -- the contenders (run in a child process) ---------------------------------------------------------
def suffix_resolver() -> Any:
    async def resolve(host: str, port: int) -> list[str]:
        if host.endswith(".test"):
            return [FARM_ADDRESS]
        if host.endswith(".private-test"):  # the safety scenario: names that resolve to private addresses
            return [{"a": "10.0.0.5", "b": "192.168.1.20", "c": "169.254.169.254"}.get(host[0], "fd00::5")]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    return resolve


def install_connect_guard() -> list[str]:
    """Refuse (and count) any connection attempt outside the farm's address, before it happens."""
    blocked: list[str] = []
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] != FARM_ADDRESS:
            blocked.append(str(address[0]))
            if not ipaddress.ip_address(str(address[0]).split("%")[0]).is_loopback:
                raise ConnectionRefusedError(f"benchmark guard: {address[0]} is not the farm")
        return real(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    return blocked


def run_thresher(urls_file: str, out: str, delay: float, seconds: float | None, unthrottled: bool = False,
                 robots: bool = True) -> dict[str, Any]:
    """thresher fetch as configured for the farm; `unthrottled` switches politeness off (no robots.txt,
    no delay, per-host concurrency = global) to show what the machinery itself costs; `robots=False`
    keeps the per-host limits and delay but fetches no robots.txt (what its requests cost)."""
    from thresher.fetch.config import FetchConfig
    from thresher.fetch.crawl import fetch_urls

    cfg = FetchConfig(
        contact="bench@thresher.invalid", allow_networks=(f"{FARM_ADDRESS}/32",), global_concurrency=CONCURRENCY,
        per_host_concurrency=CONCURRENCY if unthrottled else 2, per_host_delay_s=0.0 if unthrottled else delay,
        respect_robots=robots and not unthrottled, read_timeout_s=2.0, total_timeout_s=5.0, max_attempts=3,
        backoff_base_s=0.2, backoff_max_s=2.0, host_backoff_s=0.2, progress_every_s=3600, max_body_bytes=2 << 20,
    )
    if seconds:
        signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        result = fetch_urls([urls_file], out, cfg, resolve=suffix_resolver())
        stats = result.stats
        fetched, settled = stats.outcomes["fetched"], stats.settled
        reasons = dict(stats.reasons)
    except KeyboardInterrupt:
        log = Path(out) / "fetch-log.jsonl"
        lines = log.read_text().splitlines() if log.exists() else []
        fetched = sum('"outcome": "fetched"' in line for line in lines)
        settled, reasons = len(lines), {}
    return {"wall_s": time.monotonic() - started, "fetched": fetched, "settled": settled, "reasons": reasons}


def run_baseline(urls_file: str, out: str, seconds: float | None) -> dict[str, Any]:
    """The seed's approach: a semaphore of 100 over one task per URL, tenacity for retries."""
    import aiohttp
    from aiohttp.abc import AbstractResolver
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

    class Retryable(Exception):
        pass

    class TestResolver(AbstractResolver):
        async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[Any]:
            addrs = await suffix_resolver()(host, port)
            return [{"hostname": host, "host": a, "port": port, "family": socket.AF_INET, "proto": 0,
                     "flags": socket.AI_NUMERICHOST} for a in addrs]

        async def close(self) -> None:
            return None

    urls = [line.strip() for line in open(urls_file) if line.strip()]
    counts = {"fetched": 0, "failed": 0}
    started = time.monotonic()

    async def main() -> None:
        sem = asyncio.Semaphore(CONCURRENCY)
        timeout = aiohttp.ClientTimeout(total=5.0, sock_read=2.0)
        connector = aiohttp.TCPConnector(resolver=TestResolver(), limit=CONCURRENCY)
        with open(Path(out) / "pages.jsonl", "w") as sink:
            async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
                async def get(url: str) -> None:
                    async with sem:
                        try:
                            async for attempt in AsyncRetrying(
                                stop=stop_after_attempt(3),
                                wait=wait_exponential(multiplier=0.2, max=2.0),
                                retry=retry_if_exception(
                                    lambda e: isinstance(e, Retryable | asyncio.TimeoutError | aiohttp.ClientError)
                                ),
                                reraise=True,
                            ):
                                with attempt:
                                    async with session.get(url) as resp:
                                        if resp.status in (429, 503):
                                            raise Retryable(str(resp.status))
                                        body = await resp.read()
                                        if resp.status == 200:
                                            sink.write(
                                                json.dumps({"url": url, "html": body.decode("utf-8", "replace")}) + "\n"
                                            )
                                            counts["fetched"] += 1
                                        else:
                                            counts["failed"] += 1
                        except Exception:
                            counts["failed"] += 1

                await asyncio.gather(*(get(u) for u in urls))

    try:
        if seconds:
            asyncio.run(asyncio.wait_for(main(), seconds))
        else:
            asyncio.run(main())
    except TimeoutError:
        pass
    return {"wall_s": time.monotonic() - started, "fetched": counts["fetched"], "settled": sum(counts.values())}


def child_main(args: argparse.Namespace) -> None:
    blocked = install_connect_guard()
    os.makedirs(args.out, exist_ok=True)
    seconds = args.seconds or None
    global CONCURRENCY
    if args.role.startswith("thresher-c"):  # a diagnostic: thresher at another global concurrency
        CONCURRENCY = int(args.role[len("thresher-c"):])
    if args.role.startswith("thresher"):
        result = run_thresher(args.urls, args.out, args.delay, seconds, unthrottled=args.role == "thresher-unthrottled",
                              robots=args.role != "thresher-no-robots")
    else:
        result = run_baseline(args.urls, args.out, seconds)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result.update(cpu_s=usage.ru_utime + usage.ru_stime, peak_rss_mib=usage.ru_maxrss / 1024,
                  blocked_connects=blocked)
    print("RESULT " + json.dumps(result))


def _env() -> dict[str, str]:
    src = str(ROOT.parent / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def contender(role: str, urls: str, delay: float = 0.1, seconds: float = 0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"fetch-bench-{role}-") as out:
        cmd = [sys.executable, __file__, "--child", role, "--urls", urls, "--out", out, "--delay", str(delay),
               "--seconds", str(seconds)]
        proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=900)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")), None)
        if line is None:
            raise RuntimeError(f"{role} failed: {proc.stderr[-3000:]}")
        result: dict[str, Any] = json.loads(line[7:])
        result["pages_per_s"] = round(result["fetched"] / result["wall_s"], 1)
        result["wall_s"] = round(result["wall_s"], 2)
        result["cpu_s"] = round(result["cpu_s"], 2)
        result["peak_rss_mib"] = round(result["peak_rss_mib"], 1)
        return result


# -- scenarios ----------------------------------------------------------------------------------------
def scenario_farm(
    hosts: int, repeats: int, delay: float, tmp: Path, pathological: bool = True,
    roles: tuple[str, ...] = ("thresher", "baseline"),
) -> dict[str, Any]:
    specs = farm_specs(hosts)
    crawl_delay_hosts = {h for h, s in specs.items() if "Crawl-delay" in (s.get("robots") or "")}
    runs: dict[str, list[dict[str, Any]]] = {role: [] for role in roles}
    for _ in range(repeats):
        for role in roles:  # interleaved, a fresh farm each run
            farm = FarmProcess(specs, seconds=600)
            try:
                urls = tmp / f"farm-{farm.port}.txt"
                listing = farm_urls(hosts, farm.port, pathological)
                urls.write_text("\n".join(listing) + "\n")
                result = contender(role, str(urls), delay)
                result["politeness"] = politeness(farm.counts(), crawl_delay_hosts)
                result["urls"] = len(listing)
            finally:
                farm.stop()
            runs[role].append(result)
            print(role, {k: v for k, v in result.items() if k != "reasons"}, file=sys.stderr)

    def med(role: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[role])

    summary = {
        role: {"pages_per_s": med(role, "pages_per_s"), "wall_s": med(role, "wall_s"), "cpu_s": med(role, "cpu_s"),
               "peak_rss_mib": med(role, "peak_rss_mib"), "fetched": med(role, "fetched"),
               "max_in_flight_per_host": max(r["politeness"]["max_in_flight_per_host"] for r in runs[role]),
               "min_gap_s": min((r["politeness"]["min_gap_s"] or 0) for r in runs[role]),
               "requests_to_disallowed_paths": max(r["politeness"]["requests_to_disallowed_paths"] for r in runs[role])}
        for role in runs
    }
    for role in runs:
        if role != "baseline":  # each repeat's ratio against the baseline run next to it, then the median
            ratios = [
                t["pages_per_s"] / max(b["pages_per_s"], 1e-9)
                for t, b in zip(runs[role], runs["baseline"], strict=True)
            ]
            summary[f"pages_per_s_ratio_{role}_over_baseline"] = round(statistics.median(ratios), 3)
    return {"hosts": hosts, "pathological": pathological, "per_host_delay_s": delay, "global_concurrency": CONCURRENCY,
            "runs": runs, "summary": summary}


def scenario_memory(sizes: list[int], baseline_max: int, seconds: float, tmp: Path) -> dict[str, Any]:
    farm = FarmProcess({}, seconds=1800)
    out: dict[str, Any] = {"seconds_per_run": seconds, "thresher": {}, "baseline": {}}
    try:
        for n in sizes:
            urls = tmp / f"mem-{n}.txt"
            with open(urls, "w") as f:
                for i in range(n):
                    f.write(f"http://m{i % 10_000}.test:{farm.port}/status/404?i={i}\n")
            # planning sorts the whole list first (about 10 us a URL): the bound leaves time to fetch after it
            out["thresher"][n] = contender("thresher", str(urls), 0.0, seconds + n / 20_000)
            print("memory thresher", n, out["thresher"][n]["peak_rss_mib"], file=sys.stderr)
            if n <= baseline_max:
                out["baseline"][n] = contender("baseline", str(urls), 0.0, seconds)
                print("memory baseline", n, out["baseline"][n]["peak_rss_mib"], file=sys.stderr)
            urls.unlink()
    finally:
        farm.stop()
    return out


def scenario_safety(tmp: Path) -> dict[str, Any]:
    farm = FarmProcess({}, seconds=300)
    try:
        p = farm.port
        urls = [f"http://{c}.private-test:{p}/page/1" for c in "abcd"] + [
            f"http://redir{i}.test:{p}/to-private" for i in range(5)] + [
            f"http://2130706433:{p}/page/x", f"http://[::ffff:127.0.0.1]:{p}/page/y", f"http://ok.test:{p}/page/ok"]
        listing = tmp / "safety.txt"
        listing.write_text("\n".join(urls) + "\n")
        result = contender("thresher", str(listing), 0.0)
        counts = farm.counts()
    finally:
        farm.stop()
    return {"urls": len(urls), "fetched": result["fetched"], "reasons": result["reasons"],
            "connection_attempts_outside_farm": len(result["blocked_connects"]),
            "farm_requests": sum(c["requests"] for c in counts.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--urls", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--delay", type=float, default=0.1, help="thresher's per-host delay on the farm (s)")
    parser.add_argument("--hosts", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument(
        "--only-clean", action="store_true", help="run only the clean-farm comparison (merged into the results file)"
    )
    parser.add_argument("--memory-seconds", type=float, default=20.0)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    args = parser.parse_args()
    if args.child:
        args.role = args.child
        child_main(args)
        return
    path = ROOT / "results" / "fetch_bench.json"
    if args.only_clean:
        with tempfile.TemporaryDirectory(prefix="fetch-bench-") as tmp_name:
            results = json.loads(path.read_text()) if path.exists() else {}
            results["farm_clean"] = scenario_farm(
                args.hosts, args.repeats, args.delay, Path(tmp_name), pathological=False, roles=CLEAN_ROLES
            )
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(json.dumps(results["farm_clean"]["summary"], indent=2))
        return
    with tempfile.TemporaryDirectory(prefix="fetch-bench-") as tmp_name:
        tmp = Path(tmp_name)
        results: dict[str, Any] = {
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()},
            "safety": scenario_safety(tmp),
        }
        print("safety", results["safety"], file=sys.stderr)
        results["farm"] = scenario_farm(args.hosts, args.repeats, args.delay, tmp)
        results["farm_clean"] = scenario_farm(args.hosts, args.repeats, args.delay, tmp, pathological=False,
                                              roles=CLEAN_ROLES)
        if not args.skip_memory:
            results["memory"] = scenario_memory(
                [int(s) for s in args.sizes.split(",")], 100_000, args.memory_seconds, tmp
            )
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps({k: results[k]["summary"] for k in ("farm", "farm_clean")}, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
