"""FineWeb quality rules (Penedo et al. 2024, "The FineWeb Datasets", section 3.3).

Drops documents where too few lines end in terminal punctuation, too many lines are short, too many
characters sit in duplicated lines, or there are too many line breaks per token (list-like pages).
Lines are the non-blank lines of the text.

Writing-system aware: terminal punctuation is that of every script we know (a line ending in `。`
or `।` is punctuated); for a document whose script does not mark sentence ends (Thai, Lao) the
punctuation rule does not apply; in dense scripts (Han, Japanese, Hangul, Ethiopic) a short line is
measured against `dense_short_line_chars`, since each character carries more text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from thresher.core.config import setting
from thresher.lang.script import TRAITS
from thresher.quality.repetition import duplicates
from thresher.quality.rules import Bound, QualityRuleSet
from thresher.quality.text import AnalysisCache, TextAnalysis

STAGE = "quality.fineweb"

TERMINAL_PUNCTUATION: tuple[str, ...] = tuple(sorted({ch for t in TRAITS.values() for ch in t.terminal_punctuation}))


@dataclass(frozen=True, slots=True, kw_only=True)
class FineWebConfig:
    min_line_punct_ratio: float | None = setting(0.12, "smallest share of lines ending in terminal punctuation")
    max_short_line_ratio: float | None = setting(0.67, "largest share of short lines")
    short_line_chars: int = setting(30, "a line this long or shorter is short")
    dense_short_line_chars: int = setting(10, "the same, for dense scripts (Han, Japanese, Hangul, Ethiopic)")
    max_duplicate_line_char_ratio: float | None = setting(
        0.01, "largest share of characters (line breaks excluded) in repeated lines"
    )
    max_newline_ratio: float | None = setting(0.3, "most line breaks per token")


def line_punct_ratio(a: TextAnalysis) -> float | None:
    lines = a.nonblank_lines
    if not lines or not a.traits.has_terminal_punctuation:
        return None
    return sum(1 for line in lines if line.endswith(TERMINAL_PUNCTUATION)) / len(lines)


def short_line_ratio(short_chars: int, dense_short_chars: int) -> Callable[[TextAnalysis], float | None]:
    def measure(a: TextAnalysis) -> float | None:
        lines = a.nonblank_lines
        if not lines:
            return None
        limit = dense_short_chars if a.traits.dense else short_chars
        return sum(1 for line in lines if len(line) <= limit) / len(lines)

    return measure


def duplicate_line_char_ratio(a: TextAnalysis) -> float | None:
    lines = a.nonblank_lines
    if not lines:
        return None
    chars = len(a.text) - a.text.count("\n")
    return duplicates(lines)[1] / chars if chars else None


def newline_ratio(a: TextAnalysis) -> float | None:
    n = a.token_count
    return a.text.count("\n") / n if n else None


def line_count(a: TextAnalysis) -> int:
    return len(a.nonblank_lines)


def fineweb_rules(config: FineWebConfig) -> list[Bound]:
    c = config
    return [
        Bound("line_count", line_count, 1, None, "no_text"),
        Bound("line_punct_ratio", line_punct_ratio, c.min_line_punct_ratio, None, "too_few_punctuated_lines"),
        Bound("short_line_ratio", short_line_ratio(c.short_line_chars, c.dense_short_line_chars), None,
              c.max_short_line_ratio, too_high="too_many_short_lines"),
        Bound("fineweb_duplicate_line_char_ratio", duplicate_line_char_ratio, None,
              c.max_duplicate_line_char_ratio, too_high="duplicate_line_chars"),
        Bound("newline_ratio", newline_ratio, None, c.max_newline_ratio, too_high="too_many_newlines"),
    ]


class FineWebQuality(QualityRuleSet):
    """FineWeb quality rules as one rule set, stage `quality.fineweb`."""

    def __init__(self, config: FineWebConfig = FineWebConfig(), cache: AnalysisCache | None = None) -> None:
        super().__init__(STAGE, fineweb_rules(config), cache)
        self.config = config
