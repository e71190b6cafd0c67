"""The language stages: `LanguageAnnotator` (stage `lang.detect`) and `LanguageFilter` (stage `lang`).

The annotator reads a document's prose (`thresher.lang.prose`: code, URLs, math and number tables
left out) and writes:

- `lang.code`: ISO 639-1 (else 639-3), or `und` with `lang.reason`;
- `lang.label`: the canonical label, ISO 639-3 and script (`eng_Latn`, `quc_Latn`, `und_Cans`:
  `thresher.lang.labels`), which the stats, the card, routing and partitions use; `lang.code` is its
  alias;
- `lang.score`: in [0, 1] (see the detector's docstring for what it measures);
- `lang.script`: ISO 15924 code of the script the text is written in;
- `lang.alternatives`: the next-best `[code, score]` pairs (up to `top_k - 1`);
- for documents with paragraphs in more than one language, `lang.spans` (`[start, end, code]`
  character ranges of the text, consecutive paragraphs of one language merged) and `lang.share`,
  the main language's share of the prose characters.

It counts each document under `lang/<label>` in the run's stats (`stats.json` counters), each `und`
document also under `lang.und/<script>` (the script of its text: the card's `und` line), the detector
that judged it under `event/lang.detector.<name>` (the n-gram model's name carries its version), and,
with the script-only detector, `event/lang.script_only` for the documents it could not decide because
their script is shared by many languages (those need the `lang` extra or the n-gram model).

The filter drops a document whose language is not in `languages` (`not_wanted`, value the label; a
name without a script, `en` or `eng`, keeps every script of that language) or whose score is below
`min_score` (`low_score`).
"""

from __future__ import annotations

import logging

from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.core.stages import Stage
from thresher.core.stats import Stats
from thresher.lang.codes import UNDETERMINED
from thresher.lang.config import LangConfig
from thresher.lang.detection import SHARED_SCRIPT, LanguageDetector
from thresher.lang.labels import label, label_of, parse_language
from thresher.lang.prose import Paragraph, prose_paragraphs

log = logging.getLogger(__name__)

MAX_SPANS = 64


# The detectors this process has built, by the settings they are made from. A scan task builds its
# document stages anew, but never a detector: the cascade's lingua detectors and the models they
# load are the costliest objects of a build, and a process that made them per task grew with the
# corpus (issue 29). Detectors are pure functions of their settings and the text, so sharing them
# cannot change a result.
_detectors: dict[tuple[str, int, int, str | None], LanguageDetector] = {}


def make_detector(config: LangConfig) -> LanguageDetector:
    """The detector `config.detector` names, built once per process and settings; `auto` is the
    cascade when the `lang` extra is installed, else the built-in n-gram model."""
    key = (config.detector, config.max_chars, config.top_k, config.model)
    detector = _detectors.get(key)
    if detector is None:
        detector = _detectors[key] = _new_detector(config)
    return detector


def _new_detector(config: LangConfig) -> LanguageDetector:
    from thresher.lang.cascade import CascadeDetector, cld2_available
    from thresher.lang.ngram import NgramDetector
    from thresher.lang.script_only import ScriptDetector

    if config.detector == "script":
        return ScriptDetector(config.max_chars)
    if config.detector == "fasttext":
        from thresher.lang.fasttext_lid import FastTextDetector

        assert config.model is not None  # LangConfig refuses fasttext without a model
        return FastTextDetector(config.model, config.max_chars, config.top_k)
    if config.detector == "ngram":
        return NgramDetector(config.max_chars, config.top_k)
    if config.detector == "wide":
        from thresher.lang.heliport_model import available

        if not (cld2_available() and available()):
            raise ConfigError("lang.detector = wide needs the wide extra: pip install 'thresher[wide]'")
        from thresher.lang.wide import WideDetector

        return WideDetector(config.max_chars, config.top_k)
    if config.detector == "cascade" and config.model is not None and cld2_available():
        from thresher.lang.fasttext_lid import FastTextCascade

        return FastTextCascade(config.model, config.max_chars, config.top_k)
    if cld2_available():
        return CascadeDetector(config.max_chars, config.top_k)
    if config.detector == "cascade":
        raise ConfigError("lang.detector = cascade needs the lang extra: pip install 'thresher[lang]'")
    return NgramDetector(config.max_chars, config.top_k)


class LanguageAnnotator:
    """Stage `lang.detect` (see the module docstring)."""

    name = "lang.detect"
    annotates: tuple[str, ...] = (
        "lang.code",
        "lang.label",
        "lang.score",
        "lang.script",
        "lang.alternatives",
        "lang.reason",
        "lang.spans",
        "lang.share",
    )

    def __init__(self, config: LangConfig = LangConfig(), detector: LanguageDetector | None = None) -> None:
        self.config = config
        self.detector = detector if detector is not None else make_detector(config)
        self.stats: Stats | None = None

    def bind_stats(self, stats: Stats) -> None:
        """Count languages into the stats of the chain that runs this stage."""
        self.stats = stats

    def annotate(self, doc: Document) -> None:
        annotations = doc.annotations
        paragraphs = prose_paragraphs(doc.text, self.config.max_chars)
        if not paragraphs:
            detection, codes = self.detector.detect_paragraphs([doc.text[: self.config.max_chars]])
        else:
            detection, codes = self.detector.detect_paragraphs([p.text for p in paragraphs])
        annotations["lang.code"] = detection.code
        annotations["lang.label"] = canonical = label(detection.code, detection.script)
        annotations["lang.score"] = detection.score
        annotations["lang.script"] = detection.script
        if detection.alternatives:
            annotations["lang.alternatives"] = [[c, s] for c, s in detection.alternatives]
        if detection.reason:
            annotations["lang.reason"] = detection.reason
        if self.config.spans and len(paragraphs) > 1 and len(set(codes)) > 1:
            self._write_spans(doc, paragraphs, codes, detection.code)
        if self.stats is not None:
            self.stats.count(f"lang/{canonical}")
            if detection.code == UNDETERMINED:
                self.stats.count(f"lang.und/{detection.script}")
            self.stats.count(f"event/lang.detector.{self.detector.name}")
            if detection.reason == SHARED_SCRIPT:
                self.stats.count("event/lang.script_only")

    def _write_spans(self, doc: Document, paragraphs: list[Paragraph], codes: list[str], main: str) -> None:
        spans: list[list[object]] = []
        total = main_chars = 0
        for p, code in zip(paragraphs, codes, strict=False):
            n = len(p.text)
            total += n
            main_chars += n if code == main else 0
            if spans and spans[-1][2] == code:
                spans[-1][1] = p.end
            else:
                spans.append([p.start, p.end, code])
        if len(spans) > 1:
            doc.annotations["lang.spans"] = spans[:MAX_SPANS]
            doc.annotations["lang.share"] = round(main_chars / total, 4) if total else 0.0


class LanguageFilter:
    """Stage `lang`: keeps the wanted languages and scores (see the module docstring)."""

    name = "lang"

    def __init__(self, config: LangConfig) -> None:
        self.config = config
        # the config holds canonical keys (`eng`, `srp_Latn`: `LangConfig`)
        self.wanted = tuple(parse_language(k, "lang.languages") for k in config.languages or ())
        self._limit = ",".join(config.languages or ())

    def check(self, doc: Document) -> Drop | None:
        code = doc.annotations.get("lang.code", UNDETERMINED)
        score = doc.annotations.get("lang.score", 0.0)
        if self.wanted:
            doc_label = label_of(doc.annotations)
            if not any(w.matches(doc_label) for w in self.wanted) and not (
                    code == UNDETERMINED and self.config.keep_undetermined):
                return Drop(self.name, "not_wanted", value=doc_label, limit=self._limit)
        limit = self.config.min_score
        if limit is not None and score < limit and not (code == UNDETERMINED and self.config.keep_undetermined):
            return Drop(self.name, "low_score", value=score, limit=limit)
        return None


def build_lang_stages(config: LangConfig) -> list[Stage]:
    if not config.enabled:
        return []
    stages: list[Stage] = [LanguageAnnotator(config)]
    if config.filters:
        stages.append(LanguageFilter(config))
    return stages
