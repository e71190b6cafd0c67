"""Quality settings: which rule sets run (the preset) and every rule's thresholds.

Presets choose rule sets; they never change a threshold, so each threshold has one default,
declared in its rule set's config beside the rules. `None` switches a single rule off.

| preset    | rule sets, in order                                                              |
|-----------|----------------------------------------------------------------------------------|
| `default` | urls, gopher, repetition, c4_lines, c4, fineweb, bad_words (FineWeb's recipe)    |
| `gopher`  | gopher, repetition                                                               |
| `c4`      | urls, c4_lines + c4_terminal_punctuation, c4, bad_words                          |
| `fineweb` | urls, gopher, repetition, c4_lines, c4, fineweb                                  |
| `all`     | every rule set, c4_terminal_punctuation included                                 |

`urls` runs only when a block list or URL word list is configured, `bad_words` only when
`bad_words.directory` is set: thresher ships no list and downloads none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from thresher.core.config import section, setting
from thresher.quality.badwords import BadWordsConfig
from thresher.quality.c4 import C4Config
from thresher.quality.fineweb import FineWebConfig
from thresher.quality.gopher import GopherQualityConfig
from thresher.quality.repetition import GopherRepetitionConfig
from thresher.quality.urls import UrlFilterConfig

RULE_SETS = ("urls", "gopher", "repetition", "c4_lines", "c4_terminal_punctuation", "c4", "fineweb", "bad_words")

PRESETS: dict[str, tuple[str, ...]] = {
    "default": ("urls", "gopher", "repetition", "c4_lines", "c4", "fineweb", "bad_words"),
    "gopher": ("gopher", "repetition"),
    "c4": ("urls", "c4_lines", "c4_terminal_punctuation", "c4", "bad_words"),
    "fineweb": ("urls", "gopher", "repetition", "c4_lines", "c4", "fineweb"),
    "all": RULE_SETS,
}

Preset = Literal["default", "gopher", "c4", "fineweb", "all"]


@dataclass(frozen=True, slots=True, kw_only=True)
class QualityConfig:
    preset: Preset | None = setting(
        "default", "quality rule preset: default, gopher, c4, fineweb, all (none disables quality filtering)",
        flag="--quality",
    )
    rule_sets: tuple[str, ...] | None = setting(
        None, f"run exactly these rule sets instead of the preset's ({', '.join(RULE_SETS)})"
    )
    assume_language: str | None = setting(
        None, "language code assumed for stop words and bad words when a document has no lang.code"
    )
    gopher: GopherQualityConfig = section(GopherQualityConfig, "Gopher quality rules")
    repetition: GopherRepetitionConfig = section(GopherRepetitionConfig, "Gopher repetition rules")
    c4: C4Config = section(C4Config, "C4 line cleanup and document rules")
    fineweb: FineWebConfig = section(FineWebConfig, "FineWeb quality rules")
    urls: UrlFilterConfig = section(UrlFilterConfig, "URL block lists and banned URL words")
    bad_words: BadWordsConfig = section(BadWordsConfig, "per-language bad-word lists (LDNOOBW format)")

    def __post_init__(self) -> None:
        if self.rule_sets is not None:
            from thresher.quality.rule_sets import RULE_SETS as REGISTRY  # built-ins and plugins

            unknown = [s for s in self.rule_sets if s not in REGISTRY]
            if unknown:
                raise ValueError(f"unknown quality rule set {unknown[0]!r} (known: {', '.join(REGISTRY.names())})")

    @property
    def active_rule_sets(self) -> tuple[str, ...]:
        """The rule sets to run, in pipeline order."""
        if self.rule_sets is not None:
            chosen = set(self.rule_sets)
            plugins = tuple(dict.fromkeys(s for s in self.rule_sets if s not in RULE_SETS))  # after the built-ins
            return tuple(s for s in RULE_SETS if s in chosen) + plugins
        if self.preset is None:
            return ()
        return PRESETS[self.preset]
