"""Quality stages routed by language: `[quality.by_language.<name>]` thresholds for documents of that
language, the build's thresholds for the others.

Names are canonical keys (`thresher.lang.labels`; the config turns `en` into `eng`): `eng_Latn`
routes the documents labelled `eng_Latn`, `eng` those of any script whose label's code is `eng`, and a
script-specific key wins over the language's. So `en` and `eng` route identically.

Each language with overrides gets its own instance of every quality stage (and its own analysis
cache); a routed stage has the name and role of the stages it routes between, so drops, failure
histograms and timings read as without routing. Without `by_language` the plain stages are used.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.core.stages import Decider, Evaluation, Evaluator, Filter, RuleSet, Stage, Transform
from thresher.lang.labels import label_of
from thresher.quality.config import QualityConfig


def _language(doc: Document, by_code: Mapping[str, object]) -> str:
    """The key of `by_code` that routes this document ("" for none): its label, else its language."""
    annotations = doc.annotations
    if "lang.code" not in annotations:
        return ""
    doc_label = label_of(annotations)
    if doc_label in by_code:
        return doc_label
    return doc_label.partition("_")[0]


class RoutedEvaluator:
    def __init__(self, default: Evaluator, by_code: dict[str, Evaluator]) -> None:
        self.name = default.name
        self.default, self.by_code = default, by_code

    def evaluate(self, doc: Document) -> Evaluation:
        return self.by_code.get(_language(doc, self.by_code), self.default).evaluate(doc)

    def check_all(self, doc: Document) -> list[Drop]:
        return self.by_code.get(_language(doc, self.by_code), self.default).check_all(doc)


class RoutedDecider(RoutedEvaluator):
    """A routed evaluator whose stages measure and decide in two halves (`core.stages.Decider`)."""

    def measure(self, doc: Document) -> dict[str, Any]:
        return self.by_code.get(_language(doc, self.by_code), self.default).measure(doc)  # type: ignore[attr-defined,no-any-return]

    def decide(self, doc: Document, measured: Mapping[str, Any]) -> Evaluation:
        return self.by_code.get(_language(doc, self.by_code), self.default).decide(doc, measured)  # type: ignore[attr-defined,no-any-return]

    @property
    def decided_with(self) -> str | None:
        """The routed stages' `decided_with` by language (None if one of them has none)."""
        keys = {code: getattr(stage, "decided_with", None) for code, stage in sorted(self.by_code.items())}
        keys[""] = getattr(self.default, "decided_with", None)
        if any(key is None for key in keys.values()):
            return None
        return json.dumps(keys, sort_keys=True)


class RoutedRuleSet:
    def __init__(self, default: RuleSet, by_code: dict[str, RuleSet]) -> None:
        self.name = default.name
        self.default, self.by_code = default, by_code

    def check_all(self, doc: Document) -> list[Drop]:
        return self.by_code.get(_language(doc, self.by_code), self.default).check_all(doc)


class RoutedFilter:
    def __init__(self, default: Filter, by_code: dict[str, Filter]) -> None:
        self.name = default.name
        self.default, self.by_code = default, by_code

    def check(self, doc: Document) -> Drop | None:
        return self.by_code.get(_language(doc, self.by_code), self.default).check(doc)


class RoutedTransform:
    def __init__(self, default: Transform, by_code: dict[str, Transform]) -> None:
        self.name = default.name
        self.default, self.by_code = default, by_code

    def transform(self, doc: Document) -> Drop | None:
        return self.by_code.get(_language(doc, self.by_code), self.default).transform(doc)


def build_routed_quality_stages(config: QualityConfig) -> list[Stage]:
    """The quality stages, routed by language when `config.by_language` has overrides."""
    from thresher.quality.stages import build_quality_stages

    default = build_quality_stages(config)
    if not config.by_language:
        return default
    per_code = {code: build_quality_stages(config.for_language(code)) for code in sorted(config.by_language)}
    names = [s.name for s in default]
    for code, stages in per_code.items():
        if [s.name for s in stages] != names:  # cannot happen with threshold-only overrides; guards changes
            raise ConfigError(f"quality.by_language.{code}: overrides may not change which rule sets run")
    routed: list[Stage] = []
    for i, stage in enumerate(default):
        if isinstance(stage, Decider):
            routed.append(RoutedDecider(stage, {c: s[i] for c, s in per_code.items()}))  # type: ignore[misc,arg-type]
        elif isinstance(stage, Evaluator):
            routed.append(RoutedEvaluator(stage, {c: s[i] for c, s in per_code.items()}))  # type: ignore[misc]
        elif isinstance(stage, RuleSet):
            routed.append(RoutedRuleSet(stage, {c: s[i] for c, s in per_code.items()}))  # type: ignore[misc]
        elif isinstance(stage, Filter):
            routed.append(RoutedFilter(stage, {c: s[i] for c, s in per_code.items()}))  # type: ignore[misc]
        else:
            routed.append(RoutedTransform(stage, {c: s[i] for c, s in per_code.items()}))  # type: ignore[misc,arg-type]
    return routed
