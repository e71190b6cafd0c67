"""One HTTP request and its response, under the caps: a content-type allow list checked before the
body is read, the body streamed and stopped at `max_body_bytes`, decompression bombs refused, and
every client error mapped to one failure kind (`timeout_read`, `connection_reset`, `http_503`...)
that says whether a retry may help."""

from __future__ import annotations

import email.utils
import errno
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from thresher.fetch.config import FetchConfig
from thresher.fetch.payload import DecodeProblem, accepted_encodings, check_decoded_size

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


@dataclass(slots=True)
class Exchange:
    """A request as sent and its response as received, ready for WARC records."""

    url: str
    request_head: bytes
    response_head: bytes
    body: bytes  # as sent (still content-encoded), de-chunked
    status: int
    headers: dict[str, str]  # lower-case names, first value
    ip: str | None
    date: str  # WARC-Date of the request, UTC
    truncated: bool = False


class Failure(Exception):
    """Why a request gave no usable response."""

    def __init__(
        self, reason: str, detail: str = "", *, retryable: bool = False, retry_after_s: float | None = None,
        status: int | None = None, value: float | None = None, limit: float | None = None,
    ) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.retryable = retryable
        self.retry_after_s = retry_after_s
        self.status = status
        self.value = value
        self.limit = limit


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


def warc_date() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _classify(exc: BaseException) -> Failure:
    import asyncio

    import aiohttp

    text = str(exc)[:200]
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return Failure("timeout_connect", text, retryable=True)
    if isinstance(exc, aiohttp.SocketTimeoutError):
        return Failure("timeout_read", text, retryable=True)
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return Failure("timeout_total", text, retryable=True)
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return Failure("dns", text)
    if isinstance(exc, aiohttp.ClientSSLError):
        return Failure("tls", text)
    if isinstance(exc, aiohttp.ClientConnectorError):
        refused = exc.os_error.errno == errno.ECONNREFUSED if exc.os_error else False
        return Failure("connection_refused" if refused else "connection_failed", text, retryable=True)
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | ConnectionResetError):
        return Failure("connection_reset", text, retryable=True)
    if isinstance(exc, aiohttp.ClientOSError):
        return Failure("connection_reset" if exc.errno in (errno.ECONNRESET, errno.EPIPE) else "connection_failed",
                       text, retryable=True)
    if isinstance(exc, aiohttp.InvalidURL):
        return Failure("bad_url", text)
    if isinstance(exc, aiohttp.ClientResponseError):
        return Failure("protocol_error", text, retryable=True)
    if isinstance(exc, aiohttp.ClientError):
        return Failure("client_error", f"{type(exc).__name__}: {text}", retryable=True)
    # anything else (a parser or library error on one odd response) fails this URL, named, rather
    # than the whole crawl; cancellation and interrupts are BaseExceptions and are not caught here
    return Failure("internal_error", f"{type(exc).__name__}: {text}")


def _request_head(resp: Any) -> bytes:
    info = resp.request_info
    target = info.url.raw_path_qs or "/"
    lines = [f"{info.method} {target} HTTP/1.1"]
    lines += [f"{k}: {v}" for k, v in info.headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")


def _response_head(resp: Any) -> bytes:
    version = f"HTTP/{resp.version.major}.{resp.version.minor}" if resp.version else "HTTP/1.1"
    out = [f"{version} {resp.status} {resp.reason or ''}".rstrip().encode("latin-1", "replace")]
    for name, value in resp.raw_headers:
        # the body is stored de-chunked, so its framing header would lie about it
        if name.lower() != b"transfer-encoding":
            out.append(name + b": " + value)
    return b"\r\n".join(out) + b"\r\n\r\n"


def _peer_ip(resp: Any) -> str | None:
    conn = resp.connection
    transport = conn.transport if conn is not None else None
    peer = transport.get_extra_info("peername") if transport is not None else None
    return str(peer[0]) if peer else None


def trace_config() -> Any:
    """An aiohttp TraceConfig that calls a request's `on_sent` once its headers are written."""
    import aiohttp

    async def headers_sent(session: Any, ctx: Any, params: Any) -> None:
        callback = (ctx.trace_request_ctx or {}).get("on_sent")
        if callback is not None:
            callback()

    config = aiohttp.TraceConfig()
    config.on_request_headers_sent.append(headers_sent)
    return config


def media_type(value: str | None) -> str:
    return (value or "").split(";", 1)[0].strip().lower()


async def perform(
    session: Any, url: str, config: FetchConfig, *, any_type: bool = False, keep_prefix_bytes: int | None = None,
    extra_headers: dict[str, str] | None = None, on_sent: Callable[[], None] | None = None,
) -> Exchange:
    """GET `url` once, without following redirects; raise `Failure` when the response is unusable.

    `keep_prefix_bytes` keeps the first bytes of a larger body instead of failing (robots.txt);
    `any_type` skips the content-type allow list."""
    import yarl

    date = warc_date()
    headers = {"Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
               "Accept-Encoding": accepted_encodings()}
    headers.update(extra_headers or {})
    try:
        async with session.get(yarl.URL(url, encoded=True), allow_redirects=False, headers=headers,
                               trace_request_ctx={"on_sent": on_sent}) as resp:
            status = resp.status
            ip = _peer_ip(resp)
            lower: dict[str, str] = {}
            for name, value in resp.headers.items():
                lower.setdefault(name.lower(), value)
            if status in REDIRECT_STATUSES:
                return Exchange(url, _request_head(resp), _response_head(resp), b"", status, lower, ip, date)
            if status == 429 or status >= 500:
                raise Failure(f"http_{status}", resp.reason or "", retryable=True, status=status,
                              retry_after_s=parse_retry_after(lower.get("retry-after")))
            if status >= 300 or status < 200:
                raise Failure(f"http_{status}", resp.reason or "", status=status)
            mime = media_type(lower.get("content-type"))
            if not any_type and mime and mime not in config.content_types:
                raise Failure("content_type", mime[:80], status=status)
            cap = keep_prefix_bytes if keep_prefix_bytes is not None else config.max_body_bytes
            declared = lower.get("content-length", "")
            if keep_prefix_bytes is None and declared.isdigit() and int(declared) > cap:
                raise Failure(
                    "body_too_large", "declared Content-Length", status=status, value=int(declared), limit=cap
                )
            chunks: list[bytes] = []
            size = 0
            truncated = False
            async for chunk in resp.content.iter_chunked(_CHUNK):
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    if keep_prefix_bytes is None:
                        raise Failure("body_too_large", "stopped reading", status=status, value=size, limit=cap)
                    truncated = True
                    break
            body = b"".join(chunks)[:cap]
            request_head, response_head = _request_head(resp), _response_head(resp)
    except Failure:
        raise
    except Exception as exc:  # aiohttp's errors and timeouts, mapped to a kind
        raise _classify(exc) from exc
    if not truncated:
        decoded = check_decoded_size(body, lower.get("content-encoding", ""), config.max_decoded_bytes,
                                     config.max_decompression_ratio)
        if isinstance(decoded, DecodeProblem):
            raise Failure(decoded.reason, decoded.detail, status=status, value=decoded.value, limit=decoded.limit)
    return Exchange(url, request_head, response_head, body, status, lower, ip, date, truncated)
