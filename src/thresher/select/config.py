"""The settings of a token budget (`select.budget`)."""

from __future__ import annotations

from dataclasses import dataclass

from thresher.core.config import setting
from thresher.core.errors import ConfigError


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectConfig:
    target_tokens: int | None = setting(
        None, "keep the documents that pass every other setting in descending order of --by until this many "
        "whitespace tokens; the rest are dropped as select.budget/over_budget (docs/signals.md)",
        flag="--target-tokens",
    )
    by: tuple[str, ...] = setting(
        (), "the numeric signal --target-tokens ranks by, highest first: an annotation key or its column name "
        "(quality.word_count, quality_fineweb_line_punct_ratio, a classifier's score) or words, text_chars, "
        "text_bytes; repeat it to break ties (then input order)",
        flag="--by",
    )

    def __post_init__(self) -> None:
        if self.target_tokens is not None:
            if self.target_tokens < 1:
                raise ConfigError(f"select.target_tokens: expected at least 1, got {self.target_tokens}")
            if not self.by:
                raise ConfigError("--target-tokens needs --by COLUMN: the signal to rank the documents by")
        elif self.by:
            raise ConfigError("--by ranks documents for --target-tokens N, which is not set")
