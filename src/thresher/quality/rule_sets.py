"""The registry of quality rule sets (and third-party per-document stages) by name.

`quality.rule_sets` / `--rule-sets` and the presets name entries here. Each entry is a factory
`(config: QualityConfig, cache: AnalysisCache, active: tuple[str, ...]) -> Stage | None`: it builds
the stage from its own config section (None: not configured, e.g. no block list), given the analysis
cache the chain shares and every active rule set's name. A rule set is one module (its rules, its
config) plus one line in the table below; a third-party package registers a factory through an entry
point in the `thresher.stages` group and is then selected by name like a built-in. Built-ins run in
the table's order; plugins after them, in the order given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from thresher.registry import Registry

RuleSetFactory = Callable[[Any, Any, tuple[str, ...]], Any]

RULE_SETS: Registry[RuleSetFactory] = Registry(
    "quality rule set",
    "thresher.stages",
    {
        "urls": "thresher.quality.stages:url_filter",
        "gopher": "thresher.quality.stages:gopher_quality",
        "repetition": "thresher.quality.stages:gopher_repetition",
        "c4_lines": "thresher.quality.stages:c4_lines",
        "c4_terminal_punctuation": "thresher.quality.stages:c4_terminal_punctuation",
        "c4": "thresher.quality.stages:c4_quality",
        "fineweb": "thresher.quality.stages:fineweb_quality",
        "fineweb2": "thresher.quality.stages:fineweb2_quality",
        "statistical": "thresher.quality.stages:statistical_quality",
        "bad_words": "thresher.quality.stages:bad_words",
    },
)
