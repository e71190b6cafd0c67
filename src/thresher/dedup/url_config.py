"""URL dedup settings (`dedup.url`; the stage is `thresher.dedup.url_stage`)."""

from __future__ import annotations

from dataclasses import dataclass

from thresher.core.config import setting

DATE_FIELDS = ("fetched_at", "date", "timestamp", "crawl_date")


@dataclass(frozen=True, slots=True, kw_only=True)
class UrlDedupConfig:
    enabled: bool = setting(
        True,
        "of the documents with the same normalized URL keep one, the newest by fetch date (ties: the first in "
        "input order); the others are dropped as url_duplicate naming the kept one",
        flag="--url-dedup",
    )
    date_fields: tuple[str, ...] = setting(
        DATE_FIELDS,
        "where a document's fetch date is read, the first present one counting: fetched_at is the WARC-Date of "
        "WARC input; other names are JSONL fields or Parquet columns (ISO 8601, YYYYMMDDhhmmss or epoch "
        "seconds; a missing or unreadable date ranks oldest)",
        flag="--url-date-fields",
    )

    def __post_init__(self) -> None:
        if not self.date_fields:
            raise ValueError("dedup.url.date_fields must name at least one field")
