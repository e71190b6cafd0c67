"""Settings of `thresher fetch`. Defaults are polite: two connections and one second between
requests per host, robots.txt honoured, private targets refused."""

from __future__ import annotations

from dataclasses import dataclass

from thresher.core.config import setting

# Query parameters that only track the click, never select content (configurable).
TRACKING_PARAMS = (
    "utm_*", "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "mc_cid", "mc_eid", "yclid",
    "_ga", "_gl", "igshid", "mkt_tok", "ref_src", "ref_url", "spm", "vero_id", "oly_anon_id", "oly_enc_id",
)

# Path extensions that are obviously not pages: skipped without a request.
NON_PAGE_EXTENSIONS = (
    ".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".ico", ".svg", ".tif", ".tiff",
    ".mp3", ".mp4", ".m4a", ".m4v", ".avi", ".mov", ".mkv", ".webm", ".wav", ".flac", ".ogg",
    ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".tar", ".iso", ".dmg", ".exe", ".msi", ".apk", ".bin",
    ".css", ".js", ".woff", ".woff2", ".ttf", ".otf", ".eot",
    ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".csv", ".json", ".xml", ".rss",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchConfig:
    contact: str = setting("", "how a site owner reaches you (an email or a URL); sent in the User-Agent; required")
    agent: str = setting("thresher-fetch", "the product token of the User-Agent (robots.txt groups are matched on it)")
    global_concurrency: int = setting(64, "requests in flight at once over all hosts")
    per_host_concurrency: int = setting(
        2, "requests in flight at once to one host (1 while robots.txt sets a Crawl-delay)"
    )
    per_host_delay_s: float = setting(1.0, "minimum seconds between the starts of two requests to one host")
    max_crawl_delay_s: float = setting(30.0, "robots.txt Crawl-delay values above this are capped to it")
    active_hosts: int = setting(0, "hosts being fetched at once (0: eight times the global concurrency); bounds memory")
    respect_robots: bool = setting(True, "fetch robots.txt once per host and skip what it disallows")
    max_robots_bytes: int = setting(
        512 * 1024, "robots.txt bytes read; the rest is ignored (RFC 9309 allows >= 500 KiB)"
    )
    allow_private: bool = setting(
        False, "allow loopback, private, link-local and reserved targets (only for a farm of your own)"
    )
    allow_networks: tuple[str, ...] = setting(
        (),
        "networks (CIDR) allowed despite the policy, e.g. 127.0.0.2/32 for a local test farm; narrower than "
        "--allow-private",
    )
    connect_timeout_s: float = setting(10.0, "seconds to connect")
    read_timeout_s: float = setting(20.0, "seconds without a byte from the server")
    total_timeout_s: float = setting(60.0, "seconds for one request from connect to last byte")
    max_body_bytes: int = setting(5 * 1024 * 1024, "response bodies larger than this (as sent) are stopped and failed")
    max_decoded_bytes: int = setting(20 * 1024 * 1024, "bodies larger than this once decompressed are failed")
    max_decompression_ratio: float = setting(100.0, "decompressed/compressed size above this is a decompression bomb")
    max_redirects: int = setting(5, "redirects followed per URL; more, or a loop, fails the URL")
    content_types: tuple[str, ...] = setting(
        ("text/html", "application/xhtml+xml", "text/plain"),
        "media types kept (a response without Content-Type is kept and sniffed by the reader)",
    )
    max_attempts: int = setting(3, "attempts per URL on timeouts, resets, 429 and 5xx")
    backoff_base_s: float = setting(1.0, "first retry waits about this long, doubling each attempt (with jitter)")
    backoff_max_s: float = setting(60.0, "longest wait between two attempts")
    max_retry_after_s: float = setting(300.0, "Retry-After values above this fail the URL instead of waiting")
    seed: int = setting(0, "seed of the retry jitter")
    host_max_failures: int = setting(
        5, "consecutive failed URLs after which a host is parked (its URLs fail unfetched)"
    )
    host_backoff_s: float = setting(5.0, "a failing host waits this long, doubling per consecutive failure")
    tracking_params: tuple[str, ...] = setting(
        TRACKING_PARAMS, "query parameters removed (a trailing * matches a prefix)"
    )
    skip_extensions: tuple[str, ...] = setting(NON_PAGE_EXTENSIONS, "URL path extensions skipped as non-pages")
    max_url_chars: int = setting(2048, "longer URLs are rejected")
    warc_file_bytes: int = setting(1024**3, "a WARC file is closed and the next one started past this size")
    fsync_every_s: float = setting(
        2.0, "seconds between fsyncs of the WARC and the log (a kill loses nothing either way)"
    )
    progress_every_s: float = setting(2.0, "seconds between progress lines", flag=None)

    def __post_init__(self) -> None:
        positive = {
            "global_concurrency": self.global_concurrency, "per_host_concurrency": self.per_host_concurrency,
            "max_attempts": self.max_attempts, "max_body_bytes": self.max_body_bytes,
            "max_url_chars": self.max_url_chars, "warc_file_bytes": self.warc_file_bytes,
            "host_max_failures": self.host_max_failures, "max_robots_bytes": self.max_robots_bytes,
        }
        for name, value in positive.items():
            if value < 1:
                raise ValueError(f"fetch.{name} must be at least 1, got {value}")
        if self.per_host_delay_s < 0 or self.max_redirects < 0 or self.active_hosts < 0:
            raise ValueError("fetch delays, active_hosts and max_redirects cannot be negative")
        import ipaddress

        for net in self.allow_networks:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError as exc:
                raise ValueError(f"fetch.allow_networks: {exc}") from None
        if self.max_decompression_ratio < 1:
            raise ValueError("fetch.max_decompression_ratio must be at least 1")

    @property
    def user_agent(self) -> str:
        from thresher.version import __version__

        return f"{self.agent}/{__version__} (+{self.contact})"

    @property
    def host_window(self) -> int:
        return self.active_hosts or 8 * self.global_concurrency
