"""Builds the quality stages the pipeline runs, from `QualityConfig`, through the rule-set registry
(`thresher.quality.rule_sets`).

Order follows FineWeb's recipe, except that Gopher quality runs before Gopher repetition: the URL
filter needs no text; Gopher quality (cheap, and its word-count bounds stop a pathological 10 MB
page before the n-gram rules see it) and Gopher repetition judge the text as extracted; C4's line
cleanup then rewrites it, and the C4 document rules, FineWeb's rules and the bad-words filter judge
the cleaned text. All rule sets of one chain share an `AnalysisCache`, so the text is split and
tokenized once per version of it.
"""

from __future__ import annotations

from thresher.core.stages import Stage
from thresher.quality.config import QualityConfig
from thresher.quality.rule_sets import RULE_SETS
from thresher.quality.text import AnalysisCache


def build_quality_stages(config: QualityConfig) -> list[Stage]:
    """The per-document quality stages, in order (see the module docstring)."""
    sets = config.active_rule_sets
    cache = AnalysisCache(config.assume_language)
    stages: list[Stage] = []
    for name in sets:
        stage = RULE_SETS.get(name)(config, cache, sets)
        if stage is not None:
            stages.append(stage)
    return stages


# -- the built-in rule sets' factories (registered in thresher.quality.rule_sets) ---------------


def url_filter(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage | None:
    from thresher.quality.urls import UrlFilter

    return UrlFilter(config.urls) if config.urls.configured else None


def gopher_quality(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.gopher import GopherQuality

    return GopherQuality(config.gopher, cache)


def gopher_repetition(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.repetition import GopherRepetition

    return GopherRepetition(config.repetition, cache)


def c4_lines(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.c4 import C4LineFilter

    return C4LineFilter(config.c4, require_terminal_punctuation="c4_terminal_punctuation" in active, cache=cache)


def c4_terminal_punctuation(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage | None:
    """C4's terminal-punctuation line rule on its own; with `c4_lines` it is part of that stage."""
    from thresher.quality.c4 import C4LineFilter

    if "c4_lines" in active:
        return None
    return C4LineFilter(config.c4, require_terminal_punctuation=True, cache=cache)


def c4_quality(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.c4 import C4Quality

    return C4Quality(config.c4, cache)


def fineweb_quality(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.fineweb import FineWebQuality

    return FineWebQuality(config.fineweb, cache)


def fineweb2_quality(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.fineweb2 import Fineweb2Quality

    return Fineweb2Quality(config.fineweb2, cache)


def statistical_quality(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage:
    from thresher.quality.statistical import StatisticalQuality

    return StatisticalQuality(config.statistical, cache)


def bad_words(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage | None:
    from thresher.quality.badwords import BadWords

    return BadWords(config.bad_words, cache) if config.bad_words.directory else None
