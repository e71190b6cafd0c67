"""The pieces every quality rule set is made of.

A *metric* is a function of a `TextAnalysis` that returns a number, or `None` where the metric does
not apply to the document (a punctuation ratio for a script without terminal punctuation, a mean
word length for a script without spaces). A *rule* bounds one metric and names what is wrong when
the bound is crossed. A `QualityRuleSet` evaluates every rule of its set on a document: each
measured metric as the annotation `quality.<metric>`, and one `Drop` per failing rule, in rule
order; the first is the one the document is attributed to. Evaluating writes nothing: the stage
runner writes the annotations.

Measuring and deciding are also two halves (`core.stages.Decider`): `measure(doc)` returns the exact
value of every rule's metric, its bound on or off, with the script; `decide(doc, measured)` makes
`evaluate`'s comparisons over given values. `build --signals` records the first and `thresher
replay` calls the second on the recorded values (docs/signals.md); `decide(doc, measure(doc)) ==
evaluate(doc)` (tested).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from thresher.core.document import Document, Drop
from thresher.core.stages import Evaluation
from thresher.lang.script import ScriptTraits, script_traits
from thresher.quality.text import AnalysisCache, TextAnalysis

Metric = Callable[[TextAnalysis], "float | int | None"]

DIGITS = 4  # decimals kept in annotations and Drop values (decisions use the exact value)


def rounded(value: float | int) -> float | int:
    return round(value, DIGITS) if isinstance(value, float) else value


def callable_key(function: Callable[..., Any]) -> list[Any] | None:
    """A function by its module, name and captured values (None when one is not a plain value):
    two rule sets built from equal settings give equal keys."""
    cells = [cell.cell_contents for cell in getattr(function, "__closure__", None) or ()]
    if any(type(v) not in (int, float, str, bool, type(None)) for v in cells):
        return None
    return [getattr(function, "__module__", None), getattr(function, "__qualname__", None), cells]


@dataclass(frozen=True, slots=True)
class Bound:
    """Bounds one metric: below `min_value` is `too_low`, above `max_value` is `too_high`.

    A bound set to `None` is off. `min_for` lets the floor depend on the document's script (a dense
    script lowers the mean-word-length floor): given the script's traits and `min_value`, it returns
    the floor to use, or None to skip the floor. It reads the script alone, so a replay can decide
    from the recorded script code.
    """

    metric: str
    measure: Metric
    min_value: float | int | None = None
    max_value: float | int | None = None
    too_low: str = ""
    too_high: str = ""
    min_for: Callable[[ScriptTraits, float | int | None], float | int | None] | None = None
    key: str = field(init=False, default="")  # the annotation key, quality.<metric>

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", "quality." + self.metric)

    @property
    def enabled(self) -> bool:
        return self.min_value is not None or self.max_value is not None


class QualityRuleSet:
    """Runs all its rules on every document (never stopping at the first failure). Measuring and
    deciding are one pure pass, `evaluate`, which returns the measured metrics as annotations beside
    the drops; the stage runner (`thresher.core.stages.stage_runner`) writes them. `annotate` and
    `check_all` are its two halves for callers that want one. Never changes the text."""

    def __init__(self, name: str, rules: Sequence[Bound], cache: AnalysisCache | None = None) -> None:
        self.name = name
        self.all_rules = list(rules)  # measured by `measure`, bound or not
        self.rules = [r for r in rules if r.enabled]
        self.cache = cache or AnalysisCache()

    def evaluate(self, doc: Document) -> Evaluation:
        analysis = self.cache.get(doc)
        script = analysis.script
        return self._judge(doc, script.code, script.traits, ((rule, rule.measure(analysis)) for rule in self.rules))

    def measure(self, doc: Document) -> dict[str, Any]:
        """The exact value of every rule's metric (None: does not apply), bounds on or off, and the
        script (`quality.script`): all that `decide` needs."""
        analysis = self.cache.get(doc)
        measured: dict[str, Any] = {"quality.script": analysis.script.code}
        for rule in self.all_rules:
            measured[rule.key] = rule.measure(analysis)
        return measured

    def decide(self, doc: Document, measured: Mapping[str, Any]) -> Evaluation:
        """`evaluate`'s result from values `measure` returned (for this document, under any bounds)."""
        code = measured["quality.script"]
        return self._judge(doc, code, script_traits(code), ((rule, measured.get(rule.key)) for rule in self.rules))

    @cached_property
    def decided_with(self) -> str | None:
        """What `decide` depends on besides the measurements (`core.stages.DECIDED_WITH`): each
        bound rule's key, bounds, reasons and floor function (by name and captured values), and
        its metric's name; None when a floor function captures something not plainly comparable."""
        parts: list[Any] = [self.name]
        for rule in self.rules:
            floor = None if rule.min_for is None else callable_key(rule.min_for)
            if rule.min_for is not None and floor is None:
                return None
            parts.append([rule.key, rule.min_value, rule.max_value, rule.too_low, rule.too_high, floor,
                          callable_key(rule.measure)])
        return json.dumps(parts, sort_keys=True)

    def _judge(self, doc: Document, script: str, traits: ScriptTraits,
               values: Iterable[tuple[Bound, float | int | None]]) -> Evaluation:
        measured: dict[str, Any] = {}
        if "quality.script" not in doc.annotations:
            measured["quality.script"] = script
        drops: list[Drop] = []
        name = self.name
        for rule, value in values:
            if value is None:
                continue
            shown = round(value, DIGITS) if type(value) is float else value
            measured[rule.key] = shown
            lo = rule.min_value if rule.min_for is None else rule.min_for(traits, rule.min_value)
            if lo is not None and value < lo:
                drops.append(Drop(name, rule.too_low, shown, lo))
            elif rule.max_value is not None and value > rule.max_value:
                drops.append(Drop(name, rule.too_high, shown, rule.max_value))
        return Evaluation(measured, drops)

    def annotate(self, doc: Document) -> None:
        """Write the measured metrics (`quality.<metric>`) and nothing else."""
        doc.annotations.update(self.evaluate(doc).annotations)

    def check_all(self, doc: Document) -> list[Drop]:
        """Every failing rule, in rule order; writes nothing."""
        return self.evaluate(doc).drops

    def check(self, doc: Document) -> Drop | None:
        drops = self.check_all(doc)
        return drops[0] if drops else None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {len(self.rules)} rules)"
