"""Shared, script-aware splitting of a document into lines, paragraphs, tokens and words.

Every quality rule reads its inputs from one `TextAnalysis` per document text, so each split is
computed once however many rules use it. `AnalysisCache` hands the same analysis to all the rule
sets of a chain until a transform replaces the text.

Tokens follow the shape of a treebank tokenizer: a word is a run of letters, digits and combining
marks, joined across an inner apostrophe, hyphen, period, comma, slash, plus or equals sign
(`don't`, `e-mail`, `3.5`, `1,000`, `and/or`, `a+b`, `U.S`); every
other non-space character is a symbol token of its own, except that a run of periods is one token
(`...`). In scripts written without spaces (Han, Japanese, Thai, Lao, Khmer, Myanmar, Tibetan) each
letter with its combining marks is a word, so length and n-gram rules count characters there.
"""

from __future__ import annotations

import re
from functools import cached_property

from thresher.core.document import Document
from thresher.lang.script import CHARACTER_WORD_RANGES, ScriptProfile, ScriptTraits, detect_script
from thresher.quality.mark_class import mark_class


def _range_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{chr(lo)}-{chr(hi)}" if hi > lo else chr(lo) for lo, hi in ranges)


_MARKS = mark_class()
_W = r"\w" + _MARKS
_CW = _range_class(CHARACTER_WORD_RANGES)
_SYMBOL = rf"\.{{2,}}|[^\s{_W}]"
_JOIN = r"['’.,/+=\-]"
_TOKEN = re.compile(rf"[{_W}]+(?:{_JOIN}[{_W}]+)*|{_SYMBOL}")
# letters of scripts without spaces are single-character words; other words exclude them
_NW = rf"(?:[^\W{_CW}]|[{_MARKS}])"
_TOKEN_CHARWORDS_PATTERN = rf"[{_CW}][{_MARKS}]*|{_NW}+(?:{_JOIN}{_NW}+)*|{_SYMBOL}"
_TOKEN_CHARWORDS: re.Pattern[str] | None = None  # compiled on first use: ~9 ms, for CJK and Thai text only
_PARAGRAPH_BREAK = re.compile(r"\n{2,}")
_LINE_BREAKS = re.compile(r"\n+")


def tokenize(text: str, character_words: bool = False) -> list[str]:
    """Word and symbol tokens of `text` in order (see the module docstring)."""
    if not character_words:
        return _TOKEN.findall(text)
    global _TOKEN_CHARWORDS
    if _TOKEN_CHARWORDS is None:
        _TOKEN_CHARWORDS = re.compile(_TOKEN_CHARWORDS_PATTERN)
    return _TOKEN_CHARWORDS.findall(text)


class TextAnalysis:
    """Splits and counts of one document text, each computed on first use and then kept.

    `language` is the document's language code when known (from `lang.code`, or the configured
    assumption), used for stop words and bad words.
    """

    def __init__(self, text: str, language: str | None = None) -> None:
        self.text = text
        self.language = language

    @cached_property
    def script(self) -> ScriptProfile:
        return detect_script(self.text)

    @property
    def traits(self) -> ScriptTraits:
        return self.script.traits

    @cached_property
    def tokens(self) -> list[str]:
        return tokenize(self.text, self.script.has_character_words)

    @cached_property
    def token_count(self) -> int:
        """len(tokens), or, for a text a transform derived from another by removing lines, the
        other's count less the removed tokens (see `AnalysisCache.rewritten`)."""
        derived = self.__dict__.get("_derived_from")
        if derived is not None and "tokens" not in self.__dict__:
            before, lost = derived
            return int(before.token_count - lost)
        return len(self.tokens)

    @cached_property
    def words(self) -> list[str]:
        """Tokens that are words, without symbol tokens (those are single characters or `..` runs)."""
        return [t for t in self.tokens if t.isalnum() or (len(t) > 1 and t[0] != ".") or t == "_"]

    @cached_property
    def lines(self) -> list[str]:
        """All lines, blank ones included (`str.splitlines`)."""
        return self.text.splitlines()

    @cached_property
    def nonblank_lines(self) -> list[str]:
        return [line for line in self.text.split("\n") if line.strip()]

    @cached_property
    def repetition_lines(self) -> list[str]:
        """Lines as Gopher's repetition rules see them: split on runs of newlines."""
        text = self.text
        return text.split("\n") if "\n\n" not in text else _LINE_BREAKS.split(text)

    @cached_property
    def paragraphs(self) -> list[str]:
        text = self.text.strip()
        return _PARAGRAPH_BREAK.split(text) if "\n\n" in text else [text]

    @cached_property
    def lower(self) -> str:
        return self.text.lower()


class AnalysisCache:
    """Hands out one `TextAnalysis` per document text.

    Keeps only the last analysis and reuses it while the document and its text object are the same;
    a transform that rewrites `doc.text` makes a new string, so the next rule set analyses afresh.
    Owned by one chain of stages (never module-global); the result never depends on the cache.
    """

    __slots__ = ("_doc_id", "_text", "_language", "_analysis", "assume_language")

    def __init__(self, assume_language: str | None = None) -> None:
        self._doc_id: str | None = None
        self._text: str | None = None
        self._language: object = None
        self._analysis: TextAnalysis | None = None
        self.assume_language = assume_language

    def get(self, doc: Document) -> TextAnalysis:
        language = doc.annotations.get("lang.code")
        if not language or language == "und":  # undetermined: the configured assumption, if any
            language = self.assume_language
        if (self._analysis is not None and self._text is doc.text and self._doc_id == doc.id
                and self._language == language):
            return self._analysis
        analysis = TextAnalysis(doc.text, language if isinstance(language, str) else None)
        self._doc_id, self._text, self._language, self._analysis = doc.id, doc.text, language, analysis
        return analysis

    def rewritten(self, doc: Document, before: TextAnalysis, lost_tokens: int) -> None:
        """Record the analysis of a text a transform just derived from `before` by removing or
        trimming lines: same script (so the same tokenizer), and a token count of `before`'s less
        `lost_tokens` (exact: tokens never span lines)."""
        analysis = TextAnalysis(doc.text, before.language)
        analysis.__dict__["script"] = before.script
        analysis.__dict__["_derived_from"] = (before, lost_tokens)
        self._doc_id, self._text, self._analysis = doc.id, doc.text, analysis
