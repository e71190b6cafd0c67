"""Extraction settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import setting


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtractConfig:
    # a name in the extractor registry (thresher.extract.registry): the built-ins or a plugin's
    extractor: str = setting(
        "builtin", "main-content extractor (trafilatura/resiliparse need their extras)", flag="--extractor"
    )
    text_format: Literal["text", "markdown"] = setting("text", "plain text or Markdown output", flag="--text-format")
    tables: Literal["keep", "split", "drop"] = setting(
        "keep", "tables in the text, as their own documents, or removed", flag="--tables"
    )
    comments: Literal["drop", "keep"] = setting(
        "drop", "comment threads: removed, or kept after the main content (Markdown: under a heading)",
        flag="--comments",
    )
    max_html_bytes: int | None = setting(
        16 * 1024 * 1024, "pages larger than this are dropped as too_large before parsing"
    )
    timeout_s: float | None = setting(10.0, "per-page extraction time limit in CPU seconds (of the extracting thread)")
    min_text_chars: int | None = setting(1, "drop pages whose extracted text is shorter (empty_text)")
    max_control_char_ratio: float | None = setting(
        0.05, "pages whose first 8 KiB has a larger share of control characters are dropped as binary_content"
    )

    def __post_init__(self) -> None:
        from thresher.extract.registry import EXTRACTORS

        if self.extractor not in EXTRACTORS:
            raise ValueError(f"unknown extractor {self.extractor!r} (known: {', '.join(EXTRACTORS.names())})")
