"""Fetching one URL to a settled outcome: robots.txt, the safety check, politeness slots, retries
with seeded exponential back-off (Retry-After honoured), and redirects (count and loops), each hop
checked again for scheme, safety and robots."""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from thresher.fetch.config import FetchConfig
from thresher.fetch.exchange import REDIRECT_STATUSES, Exchange, Failure, perform
from thresher.fetch.politeness import GlobalSlots, HostRegistry, HostState
from thresher.fetch.robots import ALLOW_ALL, PARSED, UNREACHABLE, parse_robots, robots_verdict
from thresher.fetch.safety import PinnedResolver, ResolveFailed, TargetRefused
from thresher.fetch.urls import Rejected, host_key, normalize_url, origin

_MAX_ROBOTS_REDIRECTS = 5


@dataclass(slots=True)
class Outcome:
    """A URL's settled result: fetched (with its exchange), failed (with a cause) or skipped."""

    url: str
    status: str  # fetched | failed | skipped
    reason: str | None = None
    detail: str = ""
    http_status: int | None = None
    attempts: int = 0
    redirects: list[str] = field(default_factory=list)
    exchange: Exchange | None = None
    elapsed_s: float = 0.0
    value: float | None = None
    limit: float | None = None

    def log_entry(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"url": self.url, "outcome": self.status}
        if self.reason:
            entry["reason"] = self.reason
        if self.detail:
            entry["detail"] = self.detail
        if self.value is not None:
            entry["value"] = self.value
            entry["limit"] = self.limit
        if self.http_status is not None:
            entry["http_status"] = self.http_status
        entry["attempts"] = self.attempts
        if self.redirects:
            entry["redirects"] = self.redirects
        if self.exchange is not None:
            entry["final_url"] = self.exchange.url
            entry["ip"] = self.exchange.ip
            entry["bytes"] = len(self.exchange.body)
            entry["date"] = self.exchange.date
        entry["elapsed_s"] = round(self.elapsed_s, 3)
        return entry


def host_port(url: str) -> tuple[str, int]:
    """(host, port) of a normalised URL, the port defaulted from the scheme."""
    key = host_key(url)
    if key.endswith("]") or ":" not in key:
        host, port_text = key, ""
    else:
        host, _, port_text = key.rpartition(":")
    return host, int(port_text) if port_text else (443 if url.startswith("https:") else 80)


def backoff_s(attempt: int, base_s: float, max_s: float, rng: random.Random) -> float:
    """Wait before attempt `attempt + 1`: base * 2^(attempt-1), capped, times a jitter in [0.5, 1.5)."""
    delay: float = base_s * 2 ** (attempt - 1)
    return min(max_s, delay) * (0.5 + rng.random())


def jitter_rng(seed: int, url: str) -> random.Random:
    """The jitter of one URL depends on the seed and the URL only, not on scheduling order."""
    digest = hashlib.blake2b(f"{seed}\x00{url}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


class Fetcher:
    """Settles URLs against one HTTP session; shared by every worker of a crawl."""

    def __init__(self, session: Any, config: FetchConfig, guard: PinnedResolver, hosts: HostRegistry) -> None:
        self.session = session
        self.config = config
        self.guard = guard
        self.hosts = hosts
        self.global_slots = GlobalSlots(config.global_concurrency)
        self.requests = 0
        self.retries = 0
        self.robots_fetches = 0

    async def _attempts(
        self, state: HostState, url: str, rng: random.Random, *, robots: bool = False
    ) -> tuple[Exchange, int]:
        """One hop with retries: (exchange, attempts) or Failure with `attempts` set on it."""
        cfg = self.config
        attempt = 0
        host, port = host_port(url)
        while True:
            attempt += 1
            try:
                await self.guard.check(host, port)
            except TargetRefused as exc:
                failure = Failure(f"refused_{exc.reason}", f"{exc.host} resolves to {exc.address}")
                failure.attempts = attempt  # type: ignore[attr-defined]
                raise failure from None
            except ResolveFailed as exc:
                failure = Failure("dns", str(exc)[:200])
                failure.attempts = attempt  # type: ignore[attr-defined]
                raise failure from None
            try:
                async with state.slot(self.global_slots) as sent:
                    self.requests += 1
                    if robots:
                        exchange = await perform(
                            self.session,
                            url,
                            cfg,
                            any_type=True,
                            on_sent=sent,
                            keep_prefix_bytes=cfg.max_robots_bytes,
                            extra_headers={"Accept": "text/plain,*/*", "Accept-Encoding": "identity"},
                        )
                    else:
                        exchange = await perform(self.session, url, cfg, on_sent=sent)
                pinned = self.guard.pinned(host, port)
                exchange.ip = pinned[0] if len(pinned) == 1 else None  # exact only when one address was allowed
                return exchange, attempt
            except Failure as failure:
                if not failure.retryable or attempt >= cfg.max_attempts:
                    failure.attempts = attempt  # type: ignore[attr-defined]
                    raise
                wait = backoff_s(attempt, cfg.backoff_base_s, cfg.backoff_max_s, rng)
                if failure.retry_after_s is not None:
                    if failure.retry_after_s > cfg.max_retry_after_s:
                        failure.attempts = attempt  # type: ignore[attr-defined]
                        failure.detail = (
                            f"Retry-After {failure.retry_after_s:.0f}s exceeds {cfg.max_retry_after_s:.0f}s"
                        )
                        raise
                    wait = max(wait, failure.retry_after_s)
                    state.pause_until(time.monotonic() + failure.retry_after_s)  # the host asked: all its requests wait
                self.retries += 1
                await asyncio.sleep(wait)

    async def ensure_robots(self, state: HostState, url: str) -> None:
        """Fetch and parse the host's robots.txt once; concurrent callers wait for the first."""
        if not self.config.respect_robots or state.robots_status is not None:
            return
        async with state.robots_lock:
            if state.robots_status is not None:
                return
            self.robots_fetches += 1
            target = origin(url) + "/robots.txt"
            rng = jitter_rng(self.config.seed, target)
            status: int | None = None
            reason: str | None = None
            body = b""
            try:
                for _ in range(_MAX_ROBOTS_REDIRECTS + 1):
                    exchange, _attempts = await self._attempts(state, target, rng, robots=True)
                    status = exchange.status
                    if status in REDIRECT_STATUSES and exchange.headers.get("location"):
                        nxt = normalize_url(urljoin(target, exchange.headers["location"]))
                        if isinstance(nxt, Rejected) or host_key(nxt) != state.key:
                            status, reason = None, "robots_redirect"  # off-host robots: treat as no rules
                            break
                        target = nxt
                        continue
                    body = exchange.body
                    break
            except Failure as failure:
                status, reason = failure.status, failure.reason
            verdict = robots_verdict(status, reason)
            if reason == "robots_redirect":
                verdict = ALLOW_ALL
            if verdict == PARSED:
                state.robots = parse_robots(body)
                if state.robots is not None:
                    state.apply_crawl_delay(state.robots.crawl_delay(self.config.agent), self.config.max_crawl_delay_s)
            state.robots_status = verdict if (verdict != PARSED or state.robots is not None) else ALLOW_ALL
            if verdict == UNREACHABLE:
                state.last_failure = reason or f"http_{status}"

    def allowed(self, state: HostState, url: str) -> bool:
        return state.robots is None or bool(state.robots.can_fetch(url, self.config.agent))

    async def fetch(self, url: str) -> Outcome:
        """Settle one planned URL."""
        cfg = self.config
        start = time.monotonic()
        rng = jitter_rng(cfg.seed, url)
        redirects: list[str] = []
        attempts = 0
        current = url
        seen = {url}
        while True:
            state = self.hosts.acquire(host_key(current))
            try:
                outcome = await self._hop(state, current, rng)
            finally:
                self.hosts.release(state)
            if isinstance(outcome, Outcome):
                outcome.url, outcome.redirects = url, redirects
                outcome.attempts += attempts
                outcome.elapsed_s = time.monotonic() - start
                return outcome
            exchange, n = outcome
            attempts += n
            if exchange.status not in REDIRECT_STATUSES:
                return Outcome(url, "fetched", http_status=exchange.status, attempts=attempts, redirects=redirects,
                               exchange=exchange, elapsed_s=time.monotonic() - start)
            failure = self._redirect_problem(current, exchange, seen, len(redirects))
            if isinstance(failure, Outcome):
                failure.url, failure.redirects, failure.attempts = url, redirects, attempts
                failure.elapsed_s = time.monotonic() - start
                return failure
            redirects.append(failure)
            seen.add(failure)
            current = failure

    def _redirect_problem(self, current: str, exchange: Exchange, seen: set[str], hops: int) -> Outcome | str:
        """The next URL of a redirect, or the failure that ends the chain."""
        location = exchange.headers.get("location")
        if not location:
            return Outcome(current, "failed", "bad_redirect", "redirect without Location", http_status=exchange.status)
        target = normalize_url(urljoin(current, location), tracking_params=self.config.tracking_params,
                               max_chars=self.config.max_url_chars)
        if isinstance(target, Rejected):
            reason = "redirect_scheme" if target.reason == "scheme" else "bad_redirect"
            return Outcome(current, "failed", reason, f"{target.reason}: {location[:200]}", http_status=exchange.status)
        if target in seen:
            return Outcome(current, "failed", "redirect_loop", f"back to {target[:200]}", http_status=exchange.status)
        if hops >= self.config.max_redirects:
            return Outcome(current, "failed", "too_many_redirects", f"more than {self.config.max_redirects}",
                           http_status=exchange.status, value=hops + 1, limit=self.config.max_redirects)
        return target

    async def _hop(self, state: HostState, url: str, rng: random.Random) -> Outcome | tuple[Exchange, int]:
        cfg = self.config
        if state.parked:
            return Outcome(url, "failed", "host_parked", state.parked)
        try:  # refused targets are refused before anything, robots.txt included, is requested
            await self.guard.check(*host_port(url))
        except TargetRefused as exc:
            return Outcome(url, "failed", f"refused_{exc.reason}", f"{exc.host} resolves to {exc.address}")
        except ResolveFailed as exc:
            state.record_failure("dns", 1, cfg.host_backoff_s)  # a name that does not resolve parks its host at once
            return Outcome(url, "failed", "dns", str(exc)[:200])
        await self.ensure_robots(state, url)
        if state.robots_status == UNREACHABLE:
            return Outcome(url, "failed", "robots_unreachable", state.last_failure or "")
        if not self.allowed(state, url):
            return Outcome(url, "skipped", "robots_disallowed")
        try:
            exchange, attempts = await self._attempts(state, url, rng)
        except Failure as failure:
            state.record_failure(failure.reason, cfg.host_max_failures, cfg.host_backoff_s)
            return Outcome(url, "failed", failure.reason, failure.detail, http_status=failure.status,
                           attempts=getattr(failure, "attempts", 1), value=failure.value, limit=failure.limit)
        state.record_success()
        return exchange, attempts
