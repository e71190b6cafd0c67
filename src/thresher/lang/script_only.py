"""Language from the writing system alone: the zero-dependency detector.

Decides the languages whose script is practically theirs alone (`thresher.lang.codes.SCRIPT_LANGUAGE`:
Thai, Georgian, Greek, Armenian, Hebrew, Korean, Japanese, Chinese, most Indic scripts); text in a
script many languages share (Latin, Cyrillic, Arabic, Devanagari) is `und` with the reason
`script_shared_by_many_languages`: identifying those languages needs the `lang` extra.
The score is the script's share of the letters.
"""

from __future__ import annotations

from collections.abc import Sequence

from thresher.lang.codes import SCRIPT_LANGUAGE
from thresher.lang.detection import EMPTY, NO_LETTERS, SHARED_SCRIPT, Detection, clean_text, undetermined
from thresher.lang.script import detect_script

MAX_CHARS = 4096


def detect_by_script(text: str, max_chars: int = MAX_CHARS) -> Detection:
    text = clean_text(text, max_chars)
    if not text.strip():
        return undetermined(EMPTY)
    profile = detect_script(text)
    if profile.code == "Zyyy":
        return undetermined(NO_LETTERS)
    code = SCRIPT_LANGUAGE.get(profile.code)
    if code is None:
        return undetermined(SHARED_SCRIPT, profile.code)
    return Detection(code, round(profile.share, 4), profile.code)


class ScriptDetector:
    """`LanguageDetector` from the script alone (see the module docstring)."""

    name = "script"

    def __init__(self, max_chars: int = MAX_CHARS) -> None:
        self.max_chars = max_chars

    def detect(self, text: str) -> Detection:
        return detect_by_script(text, self.max_chars)

    def detect_paragraphs(self, paragraphs: Sequence[str]) -> tuple[Detection, list[str]]:
        whole = detect_by_script("\n".join(paragraphs), self.max_chars)
        codes = [detect_by_script(p, self.max_chars).code for p in paragraphs] if len(paragraphs) > 1 else [whole.code]
        return whole, codes
