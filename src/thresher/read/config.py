"""Input settings: how records are recognised and split into partitions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import section, setting
from thresher.read.warc_config import WarcConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class InputConfig:
    # "auto" or a reader kind registered in thresher.read.readers (the built-ins or a plugin's)
    format: str = setting(
        "auto", "input format; auto sniffs magic bytes and file names", flag="--input-format"
    )
    url_field: str = setting("url", "JSONL field or Parquet column holding the page URL", flag="--url-column")
    html_field: str = setting("html", "JSONL field or Parquet column holding raw HTML", flag="--html-column")
    text_field: str = setting(
        "text", "JSONL field or Parquet column holding already extracted text (used when html is absent)",
        flag="--text-column",
    )
    require_url: bool = setting(True, "JSONL records without a URL are malformed (missing_url)")
    id_field: str | None = setting(
        None,
        "JSONL field or Parquet column holding a caller-supplied id (kept as metadata.source_id)",
        flag="--id-column",
    )
    non_finite: Literal["null", "refuse"] = setting(
        "null",
        "NaN/Infinity in JSON input (not JSON: many loaders reject them): null writes them as null, refuse makes "
        "the record malformed (non_finite_number); both are counted",
    )
    max_bad_lines_per_input: int | None = setting(
        100_000,
        "malformed records and empty lines of one input reported one by one; past it, each run of bad lines (a line "
        "bomb: a small compressed file of a billion blank or junk lines) is skipped and counted once as "
        "malformed/too_many_bad_lines, and reading resumes at the next record (an ARC file stops there)",
    )
    max_work_bytes_per_input_byte: float | None = setting(
        200.0,
        "stop reading one input once the scan has written this many work-dir bytes per byte of it (and at least "
        "256 MiB): a decompression bomb cannot fill the disk; counted as malformed/work_bytes_cap",
    )
    max_record_bytes: int = setting(64 * 1024 * 1024, "input lines/records larger than this are malformed (too_large)")
    # 16 MiB: a scan task's buffers (its dedup keys before they spill, its counters) follow its
    # partition's size up to their caps; at 64 MiB they reached the caps and a worker's peak grew by
    # ~15 MiB from 50k to 200k documents (issue 29). ~30 ms of fixed cost per task stays < 1% of it.
    partition_bytes: int = setting(
        16 * 1024 * 1024, "uncompressed JSONL files larger than this are split into byte ranges", hashed=False
    )
    html_files_per_partition: int = setting(512, "HTML files grouped into one scan task", hashed=False)
    warc: WarcConfig = section(WarcConfig, "web archives (WARC, ARC, WET)")

    def __post_init__(self) -> None:
        from thresher.read.readers import READERS

        if self.format != "auto" and self.format not in READERS:
            raise ValueError(f"unknown input format {self.format!r} (known: auto, {', '.join(READERS.names())})")
