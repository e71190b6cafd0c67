"""Output settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputConfig:
    # a name in the format registry (thresher.write.formats): the built-ins or a plugin's
    format: str = setting(
        "jsonl.gz",
        "shard format: jsonl.gz, jsonl.zst (zstd extra) or parquet (parquet extra; Hugging Face layout)",
        flag="--format",
    )
    shard_max_records: int = setting(50_000, "at most this many documents per shard", flag="--shard-size")
    compression_level: int = setting(
        6, "gzip or zstd level for JSONL shards (gzip 1..9, zstd 1..19; parquet uses zstd 3)"
    )
    include_annotations: bool = setting(True, "write annotations (language, quality metrics, dedup) into shards")
    signals: bool = setting(
        False,
        "also write the signals table (signals/part-NNNNNN.parquet: every document's measured values, "
        "dedup signatures, decision and text; parquet extra; docs/signals.md)",
        flag="--signals",
    )
    partition_by: Literal["language"] | None = setting(
        None,
        "also write one complete dataset per language-script under by-language/ (de_Latn/, und_Cans/: shards,"
        " manifest, card; the documents are stored twice); needs the language stage and annotations",
        flag="--partition-by",
        hashed=False,  # derived from the shards, which it does not change
    )
    card_tokenizer: Literal["llama2"] | None = setting(
        None,
        "also count the kept text in this tokenizer's tokens for the dataset card: llama2 (the LLaMA-2 "
        "32k BPE vocabulary the embed extra's wordllama package ships; costs CPU in the scan)",
    )

    def __post_init__(self) -> None:
        from thresher.write.formats import FORMATS

        if self.format not in FORMATS:
            raise ValueError(f"unknown output format {self.format!r} (known: {', '.join(FORMATS.names())})")
        if self.shard_max_records < 1:
            raise ValueError("output.shard_max_records must be at least 1")
        top = 19 if self.format == "jsonl.zst" else 9
        if not 0 <= self.compression_level <= top:
            raise ValueError(f"output.compression_level must be within 0..{top} for {self.format}")
