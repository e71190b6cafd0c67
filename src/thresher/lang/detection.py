"""The result of language identification, the detector protocol, and the input clean-up every
detector shares.

A `Detection` is a code (ISO 639-1, else 639-3, or `und`), a score in [0, 1], the dominant script,
the next-best languages, and for `und` the reason. Detectors never raise on text: empty input, text
without letters, invalid surrogates or a 10 MB run of one character get `und` with a reason, in
time bounded by `max_chars` (the text is cut first).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from thresher.lang.codes import UNDETERMINED

# Reasons for `und`.
EMPTY = "empty"
NO_LETTERS = "no_letters"
SHARED_SCRIPT = "script_shared_by_many_languages"  # the core without the `lang` extra
UNKNOWN_LANGUAGE = "unknown_language"  # the detector found no language it knows
TOO_SHORT = "too_short"  # too few (distinct) letters to tell languages apart
LOW_CONFIDENCE = "low_confidence"  # the best language is not likely enough
DETECTOR_ERROR = "detector_error"


class Detection(NamedTuple):
    """A named tuple rather than a dataclass: one is made per text, and a frozen dataclass costs
    ~1 µs more to build, a tenth of a CLD2 call on a sentence."""

    code: str
    score: float
    script: str
    alternatives: tuple[tuple[str, float], ...] = ()
    reason: str | None = None  # why the code is `und`
    method: str = "script"  # what decided: script, cld2, lingua, ngram

    @property
    def decided(self) -> bool:
        return self.code != UNDETERMINED

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"code": self.code, "score": self.score, "script": self.script,
                                  "method": self.method}
        if self.alternatives:
            out["alternatives"] = [[c, s] for c, s in self.alternatives]
        if self.reason:
            out["reason"] = self.reason
        return out


def undetermined(reason: str, script: str = "Zyyy", method: str = "script") -> Detection:
    return Detection(UNDETERMINED, 0.0, script, reason=reason, method=method)


class LanguageDetector(Protocol):
    """Identifies the language of a text, and of each of a document's paragraphs."""

    name: str

    def detect(self, text: str) -> Detection: ...

    def detect_paragraphs(self, paragraphs: Sequence[str]) -> tuple[Detection, list[str]]:
        """The language of the paragraphs taken together, and each paragraph's code."""
        ...


_C1 = re.compile("[\x80-\x9f]")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _cp1252(match: re.Match[str]) -> str:
    # C1 controls in text are almost always Windows-1252 bytes decoded as Latin-1 (œ, curly quotes)
    return match.group().encode("latin-1").decode("cp1252", "replace").replace("\ufffd", " ")


def clean_text(text: str, max_chars: int) -> str:
    """`text` cut to `max_chars`, with lone surrogates removed and C1 controls read as
    Windows-1252 (the C detectors refuse both as invalid UTF-8)."""
    if len(text) > max_chars:
        text = text[:max_chars]
    if not text.isascii():
        if _C1.search(text):
            text = _C1.sub(_cp1252, text)
        if _SURROGATES.search(text):
            text = _SURROGATES.sub("", text)
    return text


def read_paragraphs(paragraphs: Sequence[str], max_chars: int) -> list[str]:
    """The paragraphs a detector reads: each cleaned (`clean_text`), up to `max_chars` characters in
    all counting one separator after each; the paragraphs past that are not read."""
    texts: list[str] = []
    total = 0
    for p in paragraphs:
        if total >= max_chars:
            break
        p = clean_text(p, max_chars - total)
        texts.append(p)
        total += len(p) + 1
    return texts
