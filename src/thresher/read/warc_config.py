"""Settings of the web-archive reader (WARC, ARC, WET)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class WarcConfig:
    html_types: tuple[str, ...] = setting(
        ("text/html", "application/xhtml+xml"),
        "media types of response payloads that are read as HTML; others are dropped as not_html",
    )
    http_statuses: tuple[int, ...] = setting((200,), "HTTP statuses whose responses become documents")
    sniff_untyped: bool = setting(
        True,
        "read a payload with no or a generic media type (application/octet-stream) as HTML when it starts like HTML",
    )
    max_header_bytes: int = setting(64 * 1024, "WARC/ARC/HTTP header blocks larger than this are malformed")
    engine: Literal["auto", "pure", "fast"] = setting(
        "auto",
        "archive parser: pure (standard library), fast (FastWARC, the fast extra) or auto (fast when installed);"
        " both give identical documents",
        hashed=False,
    )

    def __post_init__(self) -> None:
        if not self.html_types:
            raise ValueError("warc.html_types must name at least one media type")
        if self.max_header_bytes < 256:
            raise ValueError("warc.max_header_bytes must be at least 256")
