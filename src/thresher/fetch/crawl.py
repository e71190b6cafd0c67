"""`fetch_urls`: plan the URL list, then fetch host by host into WARC, resumably.

Hosts are taken from the plan (sorted by host) into a bounded window of active hosts; each active
host runs `per_host_concurrency` lanes that pull its URLs in small batches, so memory depends on the
window, not on the number of URLs. The library never prints: progress goes to `on_progress`."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError, InputError
from thresher.fetch.config import FetchConfig
from thresher.fetch.exchange import trace_config
from thresher.fetch.fetcher import Fetcher, Outcome
from thresher.fetch.marker import MARKER, marker_record
from thresher.fetch.plan import HostEntry, PlanReader, PlanSummary, build_plan, iter_hosts
from thresher.fetch.politeness import HostRegistry
from thresher.fetch.safety import PinnedResolver, Resolve
from thresher.fetch.stats import FetchStats
from thresher.fetch.warc_writer import LOG_NAME, WARC_DIR, OutputFull, WarcLog, is_disk_full
from thresher.write.atomic import write_json_atomic

WORK_DIR = ".fetch-plan"
STATS_NAME = "fetch-stats.json"
_BATCH = 16


@dataclass(slots=True)
class FetchResult:
    output: Path
    plan: PlanSummary
    stats: FetchStats
    warc_dir: Path


def _require_extra() -> None:
    missing = []
    for module in ("aiohttp", "protego"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise InputError(f"thresher fetch needs {' and '.join(missing)}: pip install 'thresher[fetch]'")


class _Crawl:
    def __init__(self, work: Path, writer: WarcLog, config: FetchConfig, stats: FetchStats,
                 resolve: Resolve | None, on_progress: Callable[[FetchStats], None] | None) -> None:
        self.work = work
        self.writer = writer
        self.config = config
        self.stats = stats
        self.resolve = resolve
        self.on_progress = on_progress

    def settle(self, outcome: Outcome) -> None:
        entry = outcome.log_entry()
        exchange = outcome.exchange if outcome.status == "fetched" else None
        self.writer.write(entry, exchange)
        self.stats.add(outcome.status, outcome.reason, len(exchange.body) if exchange else 0)

    async def host(self, entry: HostEntry, fetcher: Fetcher, reader: PlanReader, hosts: HostRegistry) -> None:
        state = hosts.acquire(entry.host)
        pending: deque[str] = deque()
        try:
            async def lane() -> None:
                while True:
                    if not pending:
                        pending.extend(reader.read(entry, _BATCH))
                        if not pending:
                            return
                    url = pending.popleft()
                    state.backlog = entry.count + len(pending)
                    self.settle(await fetcher.fetch(url))

            lanes = min(self.config.per_host_concurrency, entry.count)  # a host of one URL needs one lane
            await asyncio.gather(*(lane() for _ in range(lanes)))
            if state.parked:
                self.stats.hosts_parked += 1
        finally:
            hosts.release(state)

    async def report(self, fetcher: Fetcher, hosts: HostRegistry, guard: PinnedResolver) -> None:
        while True:
            await asyncio.sleep(self.config.progress_every_s)
            self.sync_counters(fetcher, hosts, guard)
            if self.on_progress is not None:
                self.on_progress(self.stats)

    def sync_counters(self, fetcher: Fetcher, hosts: HostRegistry, guard: PinnedResolver) -> None:
        self.stats.requests = fetcher.requests
        self.stats.retries = fetcher.retries
        self.stats.robots_fetches = fetcher.robots_fetches
        self.stats.refused_targets = guard.refused
        self.stats.hosts_active = hosts.counts()[0]

    async def run(self) -> None:
        import aiohttp

        cfg = self.config
        guard = PinnedResolver(self.resolve, allow_private=cfg.allow_private, max_hosts=2 * cfg.host_window,
                               allow_networks=cfg.allow_networks)
        connector = aiohttp.TCPConnector(
            resolver=guard.for_aiohttp(), use_dns_cache=False, limit=cfg.global_concurrency, limit_per_host=0,
        )
        timeout = aiohttp.ClientTimeout(total=cfg.total_timeout_s, sock_connect=cfg.connect_timeout_s,
                                        sock_read=cfg.read_timeout_s)
        async with aiohttp.ClientSession(
            connector=connector, timeout=timeout, auto_decompress=False, cookie_jar=aiohttp.DummyCookieJar(),
            headers={"User-Agent": cfg.user_agent}, trust_env=False, trace_configs=[trace_config()],
        ) as session:
            # aiohttp silently resends a request once when a reused connection drops; that resend
            # would bypass the host's slot and delay, so retries are left to the fetcher alone
            session._retry_connection = False
            hosts = HostRegistry(cfg.per_host_concurrency, cfg.per_host_delay_s, max_idle=cfg.host_window)
            fetcher = Fetcher(session, cfg, guard, hosts)
            reader = PlanReader(self.work)
            entries = iter_hosts(self.work)
            tasks: set[asyncio.Task[None]] = set()
            reporter = asyncio.create_task(self.report(fetcher, hosts, guard))
            try:
                while True:
                    while len(tasks) < cfg.host_window:
                        entry = next(entries, None)
                        if entry is None:
                            break
                        tasks.add(asyncio.create_task(self.host(entry, fetcher, reader, hosts)))
                    if not tasks:
                        break
                    done, tasks = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                    for task in done:
                        task.result()  # a full disk or a bug stops the run here
            finally:
                for task in (*tasks, reporter):
                    task.cancel()
                for task in (*tasks, reporter):
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
                reader.close()
                self.sync_counters(fetcher, hosts, guard)


def fetch_urls(
    inputs: Sequence[str], output: str | Path, config: FetchConfig, *, urls_column: str | None = None,
    resolve: Resolve | None = None, on_progress: Callable[[FetchStats], None] | None = None, opener: Any = open,
) -> FetchResult:
    """Fetch every URL of `inputs` into `output/warc/*.warc.gz`, logging each outcome to
    `output/fetch-log.jsonl`; a rerun resumes. `resolve` replaces DNS (tests: virtual hosts)."""
    if not config.contact.strip():
        raise ConfigError("fetch.contact is required: say how a site owner reaches you (--contact you@example.org)")
    _require_extra()
    output = Path(output)
    output.mkdir(parents=True, exist_ok=True)
    # first: a reader given this folder takes its WARC files only, even of a crawl still running
    write_json_atomic(output / MARKER, marker_record(WARC_DIR))
    from thresher.version import __version__

    writer = WarcLog(output, config, f"thresher/{__version__}", opener=opener)
    summary: PlanSummary | None = None
    stats = FetchStats()
    finished = False
    try:
        work = output / WORK_DIR
        try:
            summary = build_plan(inputs, work, config, column=urls_column, log_path=output / LOG_NAME)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            raise OutputFull(f"disk full writing the fetch plan in {work}: free space and rerun to resume") from exc
        stats.planned = summary.planned
        asyncio.run(_Crawl(work, writer, config, stats, resolve, on_progress).run())
        finished = True
        shutil.rmtree(work, ignore_errors=True)  # a rerun plans again from the list and the log
    except BaseException:
        # the first error is the one to report: closing on a full disk fails again, and must not hide it
        with contextlib.suppress(OSError):
            writer.close()
        raise
    else:
        writer.close()
    finally:
        if summary is not None:  # also after an interrupt or a full disk: what this run did so far
            with contextlib.suppress(OSError):
                write_json_atomic(output / STATS_NAME, {
                    "finished": finished, "input": summary.as_dict(), "fetch": stats.as_dict(),
                    "recovered": writer.recovered, "warc_files": writer.files_written,
                })
    return FetchResult(output, summary, stats, output / WARC_DIR)
