"""The per-document chain of `thresher replay`: a build whose input is a `--signals` build's table
(`thresher.read.signals`) decides each row again from what the first build recorded, so that the
documents entering the corpus stages are those a fresh build with the new settings would judge.

For each row (docs/signals.md, "Replay"):

- a document stage before quality (consent, extraction, normalization, language) keeps its
  recorded outcome: a row one of them dropped stays dropped with its drop, and the annotations
  they wrote are the row's (the replay refuses settings that would change them);
- a row dropped by an error, a timeout or a worker death keeps that drop;
- each quality rule set that measures and decides in two halves (`core.stages.Decider`) decides
  from the row's exact measurements, under the new bounds;
- a stage the first build ran on this row and that does not decide from measurements (C4's line
  cleanup, a URL list, a classifier) keeps its recorded outcome and annotations: the replay refuses
  changes to such stages, and their input text is the row's;
- a stage the first build did not run on this row (the row was dropped before it) runs on the
  text, as in a build: the row's text is the text the dropping stage judged.

Annotations are rebuilt in chain order, each stage's keys taken from the row's annotations by the
stage's mark (`core.stages.MARKS`) or from the new decision, so a kept document's record is the one
a fresh build writes.
"""

from __future__ import annotations

import json
from typing import Any

from thresher.config import RunConfig
from thresher.core.document import Document, Drop
from thresher.core.stages import RECORDED, Decider, Stage
from thresher.pipeline import DocumentChain, Outcome, document_stages_by_row

# the document rows the replay runs; the rows before them keep their recorded outcome
REPLAYED_ROWS = ("quality", "decontam", "classify", "pii")
# drops that are not a stage's decision: the replay keeps them as recorded
FAILURE_REASONS = frozenset({"error", "timeout", "worker_died"})
SCRIPT_KEY = "quality.script"  # written by the first rule set that runs (`quality.rules.QualityRuleSet`)


class ReplayChain(DocumentChain):
    """`DocumentChain` over a signals table's rows (see the module doc). A document without a
    recording (not from a signals table) runs the replayed rows as a build would."""

    def __init__(self, config: RunConfig, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.disable_batches()  # a reused classifier outcome needs no batch; a revived document is rare
        self.deciders = [stage if isinstance(stage, Decider) else None for stage in self.stages]
        # what each rule set's decisions depend on besides the measurements (None: not known, so
        # always decided again); a table recorded under the same reuses its decisions (`replay`)
        self.decided_with = [getattr(stage, "decided_with", None) if isinstance(stage, Decider) else None
                             for stage in self.stages]
        self._decided: dict[str, str] | None = None
        self._same: list[bool] = []
        self._marks: list[list[Any]] | None = None
        self._marks_layout: tuple[frozenset[str], dict[str, tuple[int, int]], int] = (frozenset(), {}, 0)

    def _stages_by_row(self, config: RunConfig) -> list[tuple[str, Stage]]:
        return document_stages_by_row(config, REPLAYED_ROWS)

    def run_batch(self, docs: Any) -> list[Outcome]:
        return [self.run(doc) for doc in docs]

    def run(self, doc: Document) -> Outcome:
        recorded = doc.derived.pop(RECORDED, None)
        if recorded is None:
            return super().run(doc)
        return self.replay(doc, recorded)

    def replay(self, doc: Document, recorded: dict[str, Any]) -> Outcome:
        marks: list[list[Any]] = recorded["marks"]
        drop_record = recorded["drop"]
        drop = Drop.from_record(drop_record) if drop_record is not None else None
        before, slices, prefix = self._layout(marks)
        if drop is not None and (drop.reason in FAILURE_REASONS or drop.stage in before or not marks):
            return drop, _failures(recorded)
        recorded_annotations = doc.annotations
        items = list(recorded_annotations.items())
        doc.annotations = dict(items[:prefix])
        measured: dict[str, Any] | None = None
        same = self._same_bounds(recorded.get("decided") or {})
        # where the script key is among the recorded annotations (-1: none)
        script_at = (list(recorded_annotations).index(SCRIPT_KEY)
                     if any(same) and SCRIPT_KEY in recorded_annotations else -1)
        dropped_at = drop.stage if drop is not None else None
        for index, (name, _, _) in enumerate(self.runners):
            decider = self.deciders[index]
            span = slices.get(name)
            # a rule set the first build ran on this row under the same bounds keeps its recorded
            # decision, unless the script key it writes only when no earlier rule set did moved
            # (an earlier rule set added or removed): its annotations and drop are the recorded ones
            if decider is not None and not (
                span is not None and same[index]
                and (span[0] <= script_at < span[1]) == (SCRIPT_KEY not in doc.annotations)
            ):
                if measured is None:
                    measured = _measured(recorded["measured"])
                if name in measured:
                    evaluation = decider.decide(doc, measured[name])
                    doc.annotations.update(evaluation.annotations)
                    if evaluation.drops:
                        return evaluation.drops[0], evaluation.drops
                    continue
            if span is not None:  # the first build ran this stage on this text: the same outcome
                doc.annotations.update(items[span[0]:span[1]])
                if name == dropped_at and drop is not None:
                    return drop, _failures(recorded)
                continue
            outcome = self._run_span(doc, index, index + 1)  # not reached in the first build: run it
            if outcome is not None:
                return outcome
        return None

    def _layout(self, marks: list[list[Any]]) -> tuple[frozenset[str], dict[str, tuple[int, int]], int]:
        """(the stages before the replayed rows, each replayed stage's slice of the annotations
        between its mark and the one before, where the replayed stages' keys begin) of a row's
        marks; worked out once for a run of rows sharing them (the reader shares equal marks)."""
        if self._marks is not marks:
            before = frozenset(name for row, name, _ in marks if row not in REPLAYED_ROWS)
            slices: dict[str, tuple[int, int]] = {}
            start = prefix = 0
            for row, name, end in marks:
                if row in REPLAYED_ROWS:
                    slices[name] = (start, end)
                else:
                    prefix = end
                start = end
            self._marks, self._marks_layout = marks, (before, slices, prefix)
        return self._marks_layout

    def _same_bounds(self, decided: dict[str, str]) -> list[bool]:
        """Per stage, whether it is a rule set whose decisions depend on what the table says they
        were recorded with (`decided_with`); worked out once per table (the reader shares the dict)."""
        if self._decided is not decided:
            self._decided = decided
            self._same = [key is not None and decided.get(name) == key
                          for (name, _, _), key in zip(self.runners, self.decided_with, strict=True)]
        return self._same


def _failures(recorded: dict[str, Any]) -> list[Drop]:
    """The recorded drop's failures (every failing rule of a rule set), made only for a row that
    keeps its recorded drop."""
    return [Drop.from_record(f) for f in recorded["failures"] or ()]


def _measured(raw: Any) -> dict[str, Any]:
    """A row's `measured` (JSON text, as the reader leaves it; a mapping from a caller that built one)."""
    if raw is None or raw == "":
        return {}
    return raw if isinstance(raw, dict) else json.loads(raw)


# Settings a replay cannot change, by dotted prefix: they change what the chain recorded before
# the quality rules decide (the text, the language, the consent signals), or the text of the rows
# the first build kept (PII redaction, decontamination cuts), or a score the table holds only for
# the model that made it
REFUSED = (
    ("input.", "reading"),
    ("extract.", "extraction"),
    ("normalize.", "normalization"),
    ("consent.", "consent signals"),
    ("lang.", "language identification"),
    ("pii.", "PII redaction"),
    ("decontam.", "decontamination"),
    ("classify.", "classifiers"),
    ("quality.assume_language", "the language quality metrics are measured in"),
    ("quality.fineweb2.configs", "FineWeb-2's metric tables"),
)
# C4's line cleanup rewrites the text the later rules measure (the table holds its result)
C4_LINE_SETTINGS = ("min_words_per_line", "max_word_chars", "remove_citations", "remove_javascript_lines",
                    "remove_policy_lines")


def _value(config: Any, path: tuple[str, ...]) -> Any:
    for name in path:
        config = getattr(config, name)
    return config


def refused_settings(old: RunConfig, new: RunConfig) -> list[str]:
    """Each setting `new` changes from the build `old` that a replay cannot honour, with why."""
    from thresher.core.config import flat_fields

    found = []
    for ff in flat_fields(RunConfig):
        dotted = ff.dotted
        if dotted in ("input.format", "output.signals"):
            continue  # the replay's own input; a replay writes no signals table (`run.replay`)
        why = next((why for prefix, why in REFUSED if dotted.startswith(prefix)), None)
        if dotted.startswith("quality.c4.") and ff.path[-1] in C4_LINE_SETTINGS:
            why = "C4's line cleanup"
        if why is not None and _value(old, ff.path) != _value(new, ff.path):
            found.append(f"{dotted} ({why})")
    for code in sorted(set(old.quality.by_language or {}) | set(new.quality.by_language or {})):
        before, after = old.quality.for_language(code).c4, new.quality.for_language(code).c4
        for name in C4_LINE_SETTINGS:
            if getattr(before, name) != getattr(after, name):
                found.append(f"quality.by_language.{code}.c4.{name} (C4's line cleanup)")
    found += _refused_rule_sets(old, new)
    return found


def _refused_rule_sets(old: RunConfig, new: RunConfig) -> list[str]:
    """A change of the rule sets that rewrite the text (C4's line cleanup), or a rule set added
    before one: the table holds texts after the first build's cleanup."""
    from thresher.core.stages import Transform
    from thresher.quality.stages import build_quality_stages

    def shape(config: RunConfig) -> tuple[list[str], list[tuple[str, Any]]]:
        stages = build_quality_stages(config.quality)
        names = [s.name for s in stages]
        transforms = [(s.name, getattr(s, "require_terminal_punctuation", None)) for s in stages
                      if isinstance(s, Transform)]
        return names, transforms

    old_names, old_transforms = shape(old)
    new_names, new_transforms = shape(new)
    if old_transforms != new_transforms:
        return [f"quality.rule_sets (the text-rewriting rule sets {[n for n, _ in old_transforms]} "
                f"would become {[n for n, _ in new_transforms]})"]
    last_transform = max((i for i, n in enumerate(new_names) if n in dict(new_transforms)), default=-1)
    added = [n for i, n in enumerate(new_names) if n not in old_names and i < last_transform]
    return [f"quality.rule_sets ({n} added before the line cleanup, which already rewrote the texts)" for n in added]


def check_replayable(old: RunConfig, new: RunConfig) -> None:
    """Raise a one-line ConfigError naming every setting of `new` a replay of `old` cannot honour."""
    from thresher.core.errors import ConfigError

    refused = refused_settings(old, new)
    if refused:
        raise ConfigError("thresher replay cannot change " + "; ".join(refused)
                          + ": they change what the first build recorded; run thresher build with them")
    if old.pii.enabled or old.decontam.enabled:
        raise ConfigError("thresher replay of a build with PII redaction or decontamination is not supported: "
                          "their text edits and counts are not in the signals table; run thresher build")
