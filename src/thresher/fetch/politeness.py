"""Per-host politeness: at most N requests in flight to a host, a minimum gap between the starts of
two requests to it (the larger of the configured delay and robots.txt's Crawl-delay), a host-wide
pause after a 429/503 with Retry-After, exponential back-off for a failing host, then parking.

Starts on one host are serialised by a gate held until the request holds its global slot too, so
the gap is measured from when a request really starts, not from when it began to wait."""

from __future__ import annotations

import asyncio
import heapq
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

# Failures that say the host (not the page) is in trouble: they count toward parking.
HOST_FAILURES = frozenset(
    {"timeout_connect", "timeout_read", "timeout_total", "connection_reset", "connection_refused",
     "connection_failed", "dns", "http_429", "tls", "protocol_error"}
)


def is_host_failure(reason: str) -> bool:
    return reason in HOST_FAILURES or reason.startswith("http_5")


class GlobalSlots:
    """The global concurrency limit, handed out largest backlog first.

    A FIFO semaphore gives every waiting host one request per round; a host with many URLs then
    finishes last, one slot per round, long after the others (its per-host delay already makes it
    the slowest). Serving the waiter whose host has the most URLs left keeps such hosts at their
    politeness limit while the small ones fill the rest."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: list[tuple[int, int, asyncio.Future[None]]] = []
        self._order = 0

    async def acquire(self, backlog: int = 0) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._order += 1
        heapq.heappush(self._waiters, (-backlog, self._order, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed a slot while being cancelled: pass it on
            raise

    def release(self) -> None:
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1


class HostState:
    """What the fetcher knows about one host:port."""

    __slots__ = (
        "key",
        "capacity",
        "delay_s",
        "in_flight",
        "next_start",
        "_gate",
        "_waiters",
        "robots",
        "robots_lock",
        "robots_status",
        "consecutive_failures",
        "last_start",
        "backlog",
        "parked",
        "last_failure",
        "users",
        "crawl_delay_s",
    )

    def __init__(self, key: str, capacity: int, delay_s: float) -> None:
        self.key = key
        self.capacity = capacity
        self.delay_s = delay_s
        self.in_flight = 0
        self.next_start = 0.0
        self.last_start = 0.0
        self.backlog = 0  # URLs of this host not yet started (the scheduler's priority)
        self._gate = asyncio.Lock()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.robots: Any = None  # a parsed robots.txt (protego), or None: everything allowed
        self.robots_lock = asyncio.Lock()
        self.robots_status: str | None = None  # None until fetched: parsed | allow_all | unreachable
        self.crawl_delay_s: float | None = None
        self.consecutive_failures = 0
        self.parked: str | None = None  # why the host's URLs are no longer requested
        self.last_failure: str | None = None
        self.users = 0  # workers and redirects holding this state (not evicted while > 0)

    def apply_crawl_delay(self, crawl_delay_s: float | None, cap_s: float) -> None:
        if crawl_delay_s is None:
            return
        self.crawl_delay_s = min(float(crawl_delay_s), cap_s)
        self.delay_s = max(self.delay_s, self.crawl_delay_s)
        self.capacity = 1  # a Crawl-delay asks for one request at a time
        self.pause_until(self.last_start + self.delay_s)  # counted from the robots.txt request too

    def pause_until(self, when: float) -> None:
        self.next_start = max(self.next_start, when)

    @asynccontextmanager
    async def slot(self, global_slots: GlobalSlots) -> AsyncIterator[Callable[[], None]]:
        """Hold one of the host's request slots and one global slot for one request.

        Yields `sent`, to call when the request has gone out (its headers written): the host's gate
        stays closed until then, and the delay counts from then, so a request that waited for its
        connection cannot reach the server right before the next one."""
        await self._gate.acquire()
        try:
            while self.in_flight >= self.capacity:
                waiter = asyncio.get_running_loop().create_future()
                self._waiters.append(waiter)
                await waiter
            while (wait := self.next_start - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            await global_slots.acquire(self.backlog)
        except BaseException:
            self._gate.release()
            raise
        self.in_flight += 1
        gate_open = False

        def sent() -> None:
            nonlocal gate_open
            if not gate_open:
                gate_open = True
                self.last_start = time.monotonic()
                self.next_start = self.last_start + self.delay_s
                self._gate.release()

        try:
            yield sent
        finally:
            sent()  # a request that failed before going out still spaces the next one
            self.in_flight -= 1
            global_slots.release()
            while self._waiters:
                waiter = self._waiters.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    break

    def record_success(self) -> None:
        self.consecutive_failures = 0

    def record_failure(self, reason: str, max_failures: int, backoff_s: float) -> None:
        """Count a URL's final failure; a host failure backs the host off, and parks it at the limit."""
        if not is_host_failure(reason):
            self.consecutive_failures = 0  # the host answered: the page, not the host, is the problem
            return
        self.consecutive_failures += 1
        self.last_failure = reason
        self.pause_until(time.monotonic() + min(backoff_s * 2 ** (self.consecutive_failures - 1), 300.0))
        if self.consecutive_failures >= max_failures and self.parked is None:
            self.parked = f"{self.consecutive_failures} consecutive failures, last {reason}"


class HostRegistry:
    """The states of the hosts in use; unused ones are evicted oldest first past `max_idle`."""

    def __init__(self, capacity: int, delay_s: float, max_idle: int = 1024) -> None:
        self._capacity = capacity
        self._delay_s = delay_s
        self._max_idle = max_idle
        self._states: dict[str, HostState] = {}
        # states no worker holds, oldest first: kept a while for redirects and late URLs of a host
        # (its robots.txt, its failures), then forgotten, so memory follows the window, not the list
        self._idle: dict[str, None] = {}

    def acquire(self, key: str) -> HostState:
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = HostState(key, self._capacity, self._delay_s)
        self._idle.pop(key, None)
        state.users += 1
        return state

    def release(self, state: HostState) -> None:
        state.users -= 1
        if state.users > 0:
            return
        self._idle[state.key] = None
        while len(self._idle) > self._max_idle:
            oldest = next(iter(self._idle))
            del self._idle[oldest]
            del self._states[oldest]

    def counts(self) -> tuple[int, int]:
        """(hosts with a request in flight, hosts parked among those known)."""
        active = sum(1 for s in self._states.values() if s.in_flight > 0)
        parked = sum(1 for s in self._states.values() if s.parked)
        return active, parked
