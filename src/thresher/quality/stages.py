"""Builds the quality stages the pipeline runs, from `QualityConfig`.

Order follows FineWeb's recipe, except that Gopher quality runs before Gopher repetition: the URL
filter needs no text; Gopher quality (cheap, and its word-count bounds stop a pathological 10 MB
page before the n-gram rules see it) and Gopher repetition judge the text as extracted; C4's line
cleanup then rewrites it, and the C4 document rules, FineWeb's rules and the bad-words filter judge
the cleaned text. All rule sets
of one chain share an `AnalysisCache`, so the text is split and tokenized once per version of it.
"""

from __future__ import annotations

from thresher.core.stages import Stage
from thresher.quality.badwords import BadWords
from thresher.quality.c4 import C4LineFilter, C4Quality
from thresher.quality.config import QualityConfig
from thresher.quality.fineweb import FineWebQuality
from thresher.quality.gopher import GopherQuality
from thresher.quality.repetition import GopherRepetition
from thresher.quality.statistical import StatisticalQuality
from thresher.quality.text import AnalysisCache
from thresher.quality.urls import UrlFilter


def build_quality_stages(config: QualityConfig) -> list[Stage]:
    """The per-document quality stages, in order (see the module docstring)."""
    sets = config.active_rule_sets
    cache = AnalysisCache(config.assume_language)
    stages: list[Stage] = []
    for name in sets:
        if name == "urls" and config.urls.configured:
            stages.append(UrlFilter(config.urls))
        elif name == "repetition":
            stages.append(GopherRepetition(config.repetition, cache))
        elif name == "gopher":
            stages.append(GopherQuality(config.gopher, cache))
        elif name == "c4_lines":
            stages.append(C4LineFilter(config.c4, require_terminal_punctuation="c4_terminal_punctuation" in sets,
                                       cache=cache))
        elif name == "c4_terminal_punctuation" and "c4_lines" not in sets:
            stages.append(C4LineFilter(config.c4, require_terminal_punctuation=True, cache=cache))
        elif name == "c4":
            stages.append(C4Quality(config.c4, cache))
        elif name == "fineweb":
            stages.append(FineWebQuality(config.fineweb, cache))
        elif name == "statistical":
            stages.append(StatisticalQuality(config.statistical, cache))
        elif name == "bad_words" and config.bad_words.directory:
            stages.append(BadWords(config.bad_words, cache))
    return stages
