"""`thresher check`: estimate a dataset's quality from a uniform sample, with 95% intervals, and
pass or fail it against bounds the user sets — the verification step of corpus recipes, as a
command a CI pipeline can gate on.

Measures (each over a `BottomK` sample of the kept documents: uniform and the same on every run):
- `language_share`: share of sampled documents whose `lang.code` is the target language (Wilson
  interval). Needs the language stage's annotations, or the language detector when installed.
- `duplicate_paragraph_rate`: share of the sample's paragraphs (≥ 30 characters, compared after
  case folding and whitespace collapsing) that repeat a paragraph seen elsewhere in the sample.
- `boilerplate_line_rate`: share of lines that are site furniture (cookie, privacy and terms
  notices, "all rights reserved", share/subscribe/log-in prompts, "javascript").
- `mean_words`: mean words per document; `mean_char_entropy`: mean Shannon entropy of each
  document's characters, in bits (the seed recipe bounds it to [3.8, 4.5] for English).

Paragraphs and lines cluster within documents, so their rates are ratio estimators over
documents, with the delta-method interval (not a binomial one, which would be too narrow).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.report.sample import BottomK, mean_ci, wilson_ci

MIN_PARAGRAPH_CHARS = 30
BOILERPLATE = re.compile(
    r"cookie|privacy policy|terms of (?:use|service)|all rights reserved|\bsubscribe\b|\blog ?in\b|\bsign (?:in|up)\b"
    r"|\bshare (?:on|this)\b|javascript|click here|\bread more\b|newsletter",
    re.IGNORECASE,
)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Bounds:
    """What `check` gates on; None: the measure is reported but not checked."""

    language: str | None = None
    min_language_share: float | None = None
    max_duplicate_paragraph_rate: float | None = None
    max_boilerplate_line_rate: float | None = None
    min_mean_words: float | None = None
    max_mean_words: float | None = None
    min_mean_char_entropy: float | None = None
    max_mean_char_entropy: float | None = None

    @classmethod
    def from_mapping(cls, data: dict[str, Any]) -> Bounds:
        from thresher.core.errors import ConfigError

        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"[check]: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key == "language":
                if value is not None and not isinstance(value, str):
                    raise ConfigError("[check] language: expected a language code such as 'en'")
                values[key] = value
            else:
                if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
                    raise ConfigError(f"[check] {key}: expected a number, got {value!r}")
                values[key] = None if value is None else float(value)
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Measure:
    name: str
    value: float
    low: float
    high: float
    n: int  # sample units the estimate rests on (documents, paragraphs or lines)
    min_bound: float | None = None
    max_bound: float | None = None

    @property
    def checked(self) -> bool:
        return self.min_bound is not None or self.max_bound is not None

    @property
    def passed(self) -> bool:
        if math.isnan(self.value):
            return not self.checked
        if self.min_bound is not None and self.value < self.min_bound:
            return False
        return not (self.max_bound is not None and self.value > self.max_bound)

    @property
    def conclusive(self) -> bool:
        """False when the 95% interval straddles a bound: a bigger sample could change the verdict."""
        for b in (self.min_bound, self.max_bound):
            if b is not None and self.low <= b <= self.high:
                return False
        return True

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "value": _num(self.value), "ci95": [_num(self.low), _num(self.high)], "n": self.n,
            "min": self.min_bound, "max": self.max_bound, "checked": self.checked, "passed": self.passed,
            "conclusive": self.conclusive,
        }


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


@dataclass
class CheckResult:
    dataset: str
    sampled: int
    documents: int
    measures: list[Measure] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(m.passed for m in self.measures)

    def to_dict(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "sampled": self.sampled, "documents": self.documents,
                "passed": self.passed, "measures": [m.to_dict() for m in self.measures]}

    def render(self) -> str:
        lines = [f"{self.dataset}: {self.sampled:,} of {self.documents:,} documents sampled"]
        for m in self.measures:
            bound = []
            if m.min_bound is not None:
                bound.append(f">= {m.min_bound:g}")
            if m.max_bound is not None:
                bound.append(f"<= {m.max_bound:g}")
            verdict = ("pass" if m.passed else "FAIL") + ("" if m.conclusive else " (interval straddles the bound)")
            shown = "n/a" if math.isnan(m.value) else f"{m.value:.4g} [{m.low:.4g}, {m.high:.4g}]"
            lines.append(f"  {m.name:<26} {shown:<32} {' '.join(bound) or '-':<12} {verdict if m.checked else ''}")
        lines.append("result: " + ("pass" if self.passed else "FAIL"))
        return "\n".join(lines)


def ratio_ci(numerators: list[int], denominators: list[int], z: float = 1.96) -> tuple[float, float, float]:
    """Ratio estimator sum(num)/sum(den) over sampled documents and its delta-method interval."""
    n = len(numerators)
    total = sum(denominators)
    if n == 0 or total == 0:
        return (float("nan"), float("nan"), float("nan"))
    r = sum(numerators) / total
    if n == 1:
        return (r, r, r)
    mean_den = total / n
    resid = [a - r * b for a, b in zip(numerators, denominators, strict=True)]
    var = sum(e * e for e in resid) / (n - 1) / (n * mean_den * mean_den)
    half = z * math.sqrt(var)
    return (r, max(0.0, r - half), min(1.0, r + half))


def char_entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def _paragraphs(text: str) -> list[str]:
    out = []
    for block in text.split("\n"):
        p = _SPACE.sub(" ", block).strip().casefold()
        if len(p) >= MIN_PARAGRAPH_CHARS:
            out.append(p)
    return out


def sample_documents(dataset: str | Path, size: int) -> tuple[list[dict[str, Any]], int]:
    """A uniform sample of `size` kept records (by a hash of their id) and the number of records."""
    from thresher.write.manifest import read_shards

    sample = BottomK[dict[str, Any]](size)
    n = 0
    for record in read_shards(dataset):
        n += 1
        text = record.get("text") or ""
        sample.add(str(record.get("id")), {"id": record.get("id"), "url": record.get("url"), "text": text,
                                           "lang": (record.get("annotations") or {}).get("lang.code")})
    return sample.items(), n


def language_of(record: dict[str, Any], detect: Callable[[str], str | None] | None) -> str | None:
    code = record.get("lang")
    if isinstance(code, str):
        return code
    return detect(record["text"]) if detect is not None else None


def _detector() -> Callable[[str], str | None] | None:
    """thresher's language detector, when this build has one (else the annotations must say)."""
    try:
        from thresher.lang import detect_language  # type: ignore[attr-defined]
    except ImportError:
        return None

    def detect(text: str) -> str | None:
        result = detect_language(text)
        code = getattr(result, "code", result)
        return code if isinstance(code, str) and code != "und" else None

    return detect


def measure(
    records: Iterable[dict[str, Any]], bounds: Bounds, detect: Callable[[str], str | None] | None = None
) -> list[Measure]:
    docs = list(records)
    words = [float(len(r["text"].split())) for r in docs]
    entropy = [char_entropy(r["text"]) for r in docs]
    seen: Counter[str] = Counter()
    paragraphs = [_paragraphs(r["text"]) for r in docs]
    for ps in paragraphs:
        seen.update(ps)
    dup_num = [sum(1 for p in ps if seen[p] > 1) for ps in paragraphs]
    dup_den = [len(ps) for ps in paragraphs]
    line_lists = [[ln for ln in r["text"].split("\n") if ln.strip()] for r in docs]
    bp_num = [sum(1 for ln in lines if BOILERPLATE.search(ln)) for lines in line_lists]
    bp_den = [len(lines) for lines in line_lists]

    out: list[Measure] = []
    if bounds.language is not None:
        codes = [language_of(r, detect) for r in docs]
        known = [c for c in codes if c is not None]
        if known:
            p, lo, hi = wilson_ci(sum(1 for c in known if c == bounds.language), len(known))
        else:
            p = lo = hi = float("nan")
        out.append(
            Measure(f"language_share[{bounds.language}]", p, lo, hi, len(known), bounds.min_language_share, None)
        )
    r, lo, hi = ratio_ci(dup_num, dup_den)
    out.append(Measure("duplicate_paragraph_rate", r, lo, hi, sum(dup_den), None, bounds.max_duplicate_paragraph_rate))
    r, lo, hi = ratio_ci(bp_num, bp_den)
    out.append(Measure("boilerplate_line_rate", r, lo, hi, sum(bp_den), None, bounds.max_boilerplate_line_rate))
    m, lo, hi = mean_ci(words)
    out.append(Measure("mean_words", m, lo, hi, len(words), bounds.min_mean_words, bounds.max_mean_words))
    m, lo, hi = mean_ci(entropy)
    out.append(
        Measure(
            "mean_char_entropy", m, lo, hi, len(entropy), bounds.min_mean_char_entropy, bounds.max_mean_char_entropy
        )
    )
    return out


def check_dataset(dataset: str | Path, bounds: Bounds, sample: int = 10_000) -> CheckResult:
    records, n = sample_documents(dataset, sample)
    detect = _detector() if bounds.language is not None and any(r["lang"] is None for r in records) else None
    return CheckResult(str(dataset), len(records), n, measure(records, bounds, detect))
