"""Output settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputConfig:
    format: Literal["jsonl.gz"] = setting("jsonl.gz", "shard format", flag="--format")
    shard_max_records: int = setting(50_000, "at most this many documents per shard", flag="--shard-size")
    compression_level: int = setting(6, "gzip level for shards (1 fast .. 9 small)")
    include_annotations: bool = setting(True, "write annotations (language, quality metrics, dedup) into shards")

    def __post_init__(self) -> None:
        if self.shard_max_records < 1:
            raise ValueError("output.shard_max_records must be at least 1")
        if not 0 <= self.compression_level <= 9:
            raise ValueError("output.compression_level must be within 0..9")
