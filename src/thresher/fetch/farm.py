"""A server farm on loopback for tests and benchmarks: many virtual hosts (told apart by the Host
header, resolved to 127.0.0.1 by `static_resolver`) on one port, each path a behaviour:

    /page/<n>            an HTML page              /slow/<ms>/<n>     a page after <ms> ms
    /status/<code>       that status (429 and 503 send Retry-After: 1)
    /flaky/<k>/<n>       503 for the first <k> requests of that URL, then a page
    /reset               the connection is closed without a response
    /hang                accepts and never answers (until the farm stops)
    /endless             a body that never ends       /trickle   a body sent 1 byte per 50 ms
    /image               a PNG (a media type the fetcher does not keep)
    /late                429 with Retry-After: 3600
    /bomb                a gzip bomb (a small body that decodes to 50 MB of zeros)
    /gzip/<n>            a gzip-encoded page      /chain/<k>   redirects k times, then a page
    /loop/<a|b>          a redirects to b, b to a /to-private redirects to http://127.0.0.1/
    /robots.txt          the host's robots.txt (`HostSpec.robots`, a status, or 100 MB)

The farm counts, per host, the requests in flight (the most at once), the smallest gap between two
request arrivals, and every path requested, so politeness is measured where it matters: at the
server. It binds 127.0.0.1 only, and everything it does is bounded (`/hang` and the endless bodies
end when the farm stops or the client goes away)."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

HUGE_ROBOTS_BYTES = 100 * 1024 * 1024
_BOMB = gzip.compress(b"\0" * (50 * 1024 * 1024), compresslevel=9)


def page_html(host: str, path: str, words: int = 120) -> bytes:
    seed = int.from_bytes(hashlib.blake2b(f"{host}{path}".encode(), digest_size=4).digest(), "big")
    rng = random.Random(seed)  # distinct text per page, so near-dedup keeps every page
    body = " ".join(f"word{rng.randrange(5000)}" for _ in range(words))
    return (
        f"<!doctype html><html><head><title>{host}{path}</title></head><body><article>"
        f"<h1>Page {path} on {host}</h1><p>This is a test page served by the loopback farm for {host}. "
        f"It has several sentences so that the extractor keeps it as main text.</p><p>{body}.</p>"
        f"<p>The end of the page at {path}, written for the fetch tests.</p></article></body></html>"
    ).encode()


@dataclass(slots=True)
class HostSpec:
    robots: str | None = None  # robots.txt text; None: 404
    robots_status: int = 200
    huge_robots: bool = False
    latency_s: float = 0.0  # added before every response of the host


@dataclass(slots=True)
class HostCounters:
    in_flight: int = 0
    max_in_flight: int = 0
    last_arrival: float | None = None
    min_gap_s: float | None = None
    requests: int = 0
    paths: Counter[str] = field(default_factory=Counter)
    user_agents: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {"max_in_flight": self.max_in_flight, "min_gap_s": self.min_gap_s, "requests": self.requests,
                "paths": dict(self.paths), "user_agents": dict(self.user_agents)}


class Farm:
    """Serves the virtual hosts of `specs` (others get default specs) on 127.0.0.1:`port`."""

    def __init__(self, specs: dict[str, HostSpec] | None = None, address: str = "127.0.0.1") -> None:
        if not address.startswith("127."):
            raise ValueError("the farm serves on loopback only")
        self.address = address
        self.specs = specs or {}
        self.counters: dict[str, HostCounters] = defaultdict(HostCounters)
        self.flaky: Counter[str] = Counter()
        self.port = 0
        self._runner: Any = None
        self._stopping: asyncio.Event | None = None

    def counts(self) -> dict[str, dict[str, Any]]:
        return {h: c.as_dict() for h, c in sorted(self.counters.items())}

    async def _handle(self, request: Any) -> Any:
        from aiohttp import web

        host = (request.host or "").split(":", 1)[0].lower()
        if request.path == "/__stats":
            return web.json_response(self.counts())
        c = self.counters[host]
        now = time.monotonic()
        if c.last_arrival is not None:
            gap = now - c.last_arrival
            c.min_gap_s = gap if c.min_gap_s is None else min(c.min_gap_s, gap)
        c.last_arrival = now
        c.requests += 1
        c.paths[request.path_qs] += 1
        c.user_agents[request.headers.get("User-Agent", "")] += 1
        c.in_flight += 1
        c.max_in_flight = max(c.max_in_flight, c.in_flight)
        try:
            spec = self.specs.get(host) or HostSpec()
            if spec.latency_s:
                await asyncio.sleep(spec.latency_s)
            return await self._respond(request, host, spec)
        finally:
            c.in_flight -= 1

    async def _stream(self, request: Any, chunks: Any, content_type: str = "text/html") -> Any:
        from aiohttp import web

        resp = web.StreamResponse(headers={"Content-Type": content_type})
        await resp.prepare(request)
        try:
            async for chunk in chunks:
                if self._stopping is not None and self._stopping.is_set():
                    break
                await resp.write(chunk)
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        return resp

    async def _respond(self, request: Any, host: str, spec: HostSpec) -> Any:
        from aiohttp import web

        parts = [p for p in request.path.split("/") if p]
        head = parts[0] if parts else ""
        html = "text/html; charset=utf-8"
        if request.path == "/robots.txt":
            if spec.huge_robots:
                async def huge() -> Any:
                    yield b"User-agent: *\n"
                    line = b"Disallow: /private/\n" * 4096
                    for _ in range(HUGE_ROBOTS_BYTES // len(line)):
                        yield line
                return await self._stream(request, huge(), "text/plain")
            if spec.robots is None:
                return web.Response(status=404, text="no robots")
            return web.Response(status=spec.robots_status, text=spec.robots, content_type="text/plain")
        if head in ("page", "private", "allowed") or head == "":
            return web.Response(body=page_html(host, request.path), content_type="text/html", charset="utf-8")
        if head == "slow" and len(parts) >= 2:
            await asyncio.sleep(int(parts[1]) / 1000)
            return web.Response(body=page_html(host, request.path), headers={"Content-Type": html})
        if head == "status" and len(parts) >= 2:
            code = int(parts[1])
            headers = {"Retry-After": "1"} if code in (429, 503) else {}
            return web.Response(status=code, text=f"status {code}", headers=headers)
        if head == "flaky" and len(parts) >= 2:
            self.flaky[host + request.path] += 1
            if self.flaky[host + request.path] <= int(parts[1]):
                return web.Response(status=503, text="try again", headers={"Retry-After": "0"})
            return web.Response(body=page_html(host, request.path), headers={"Content-Type": html})
        if head == "reset":
            transport = request.transport
            if transport is not None:
                transport.abort()
            await asyncio.sleep(0.05)
            return web.Response(text="never sent")
        if head == "hang":
            assert self._stopping is not None
            await self._stopping.wait()
            return web.Response(text="late")
        if head == "endless":
            async def endless() -> Any:
                chunk = b"<p>" + b"x" * 65_000 + b"</p>"
                while True:
                    yield chunk
            return await self._stream(request, endless())
        if head == "trickle":
            async def trickle() -> Any:
                while True:
                    await asyncio.sleep(0.05)
                    yield b"x"
            return await self._stream(request, trickle())
        if head == "image":
            return web.Response(body=b"\x89PNG\r\n\x1a\n" + b"\0" * 1000, headers={"Content-Type": "image/png"})
        if head == "late":  # 429 asking for a long wait
            return web.Response(status=429, text="slow down", headers={"Retry-After": "3600"})
        if head == "bomb":
            return web.Response(body=_BOMB, headers={"Content-Type": html, "Content-Encoding": "gzip"})
        if head == "gzip":
            return web.Response(body=gzip.compress(page_html(host, request.path)),
                                headers={"Content-Type": html, "Content-Encoding": "gzip"})
        if head == "chain" and len(parts) >= 2:
            k = int(parts[1])
            location = f"/chain/{k - 1}" if k > 1 else "/page/after-chain"
            raise web.HTTPFound(location)
        if head == "loop" and len(parts) >= 2:
            raise web.HTTPFound("/loop/b" if parts[1] == "a" else "/loop/a")
        if head == "to-private":
            raise web.HTTPFound("http://127.0.0.1/page/private-target")
        if head == "to-host" and len(parts) >= 2:
            raise web.HTTPFound(f"http://{parts[1]}/page/redirected")
        return web.Response(status=404, text="not found")

    async def start(self) -> int:
        from aiohttp import web

        self._stopping = asyncio.Event()
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.address, self.port, backlog=1024)
        await site.start()
        server: Any = site._server
        self.port = server.sockets[0].getsockname()[1]  # the port the OS chose
        return self.port

    async def stop(self) -> None:
        if self._stopping is not None:
            self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()


class FarmThread:
    """The farm on its own event loop in a daemon thread (for tests: the client runs `asyncio.run`)."""

    def __init__(self, specs: dict[str, HostSpec] | None = None, address: str = "127.0.0.1") -> None:
        self.farm = Farm(specs, address)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> Farm:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.farm.start(), self._loop).result(timeout=10)
        return self.farm

    def __exit__(self, *exc: object) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.farm.stop(), self._loop).result(timeout=10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()


def serve(specs_json: str, port_file: str, seconds: float, address: str = "127.0.0.1") -> None:
    """Run a farm in this process for at most `seconds` (benchmarks start it as a subprocess and
    read its counters from /__stats); writes the chosen port to `port_file`."""
    specs = {h: HostSpec(**s) for h, s in json.loads(specs_json).items()}
    farm = Farm(specs, address)

    async def main() -> None:
        port = await farm.start()
        with open(port_file, "w") as f:
            f.write(str(port))
        try:
            await asyncio.sleep(seconds)
        finally:
            await farm.stop()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # the benchmark stops the farm with SIGINT
        pass
