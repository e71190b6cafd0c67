"""Bad-words filter per language (C4, Raffel et al. 2020, section 2.2, with the LDNOOBW lists).

Drops a document containing more entries of its language's bad-word list than `max_bad_words`
(C4: any at all). Lists are read from the configured directory, one file per language named by its
code (`en`, `de`, `ja`, ...), one word or phrase per line, as in the LDNOOBW repository; thresher
ships none. The language is the document's `lang.code` annotation, else `quality.assume_language`;
without a language, or without a list for it, the rule does not apply.

Matching is on whole words, case-insensitive, for languages written with spaces (a phrase matches
consecutive words); for languages written without spaces (Japanese, Chinese, Thai) an entry matches
anywhere in the text, and entries too short to be told from parts of other words (one Han
character, two Thai letters) are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from thresher.core.config import setting
from thresher.core.document import Document, Drop
from thresher.core.errors import ConfigError
from thresher.quality.text import AnalysisCache, TextAnalysis, tokenize

STAGE = "quality.bad_words"
# Languages written without spaces, and the shortest entry matched in them: without word
# segmentation a one-character entry (Chinese 性, "nature", also in 可能性 "possibility") or a
# two-letter Thai one matches inside innocent words, so such entries are left out.
UNSPACED_LANGUAGES: dict[str, int] = {"ja": 2, "zh": 2, "th": 3, "lo": 3, "km": 3, "my": 3, "bo": 3}
# Detected codes whose list is filed under another name in LDNOOBW (Norwegian as `no`, Filipino as `fil`).
LIST_ALIASES: dict[str, str] = {"nb": "no", "nn": "no", "tl": "fil"}


@dataclass(frozen=True, slots=True, kw_only=True)
class BadWordsConfig:
    directory: str | None = setting(None, "directory of bad-word lists, one file per language code")
    max_bad_words: int | None = setting(0, "most distinct bad words a document may contain")


@dataclass(frozen=True, slots=True)
class WordList:
    single: frozenset[str]
    phrases: dict[str, tuple[tuple[str, ...], ...]]  # first word -> phrases starting with it
    substrings: tuple[str, ...]  # for languages without spaces


def _compile(entries: list[str], min_unspaced_chars: int | None) -> WordList:
    if min_unspaced_chars is not None:
        kept = {e for e in entries if sum(1 for ch in e if ch.isalnum()) >= min_unspaced_chars}
        return WordList(frozenset(), {}, tuple(sorted(kept)))
    single: set[str] = set()
    phrases: dict[str, set[tuple[str, ...]]] = {}
    for entry in entries:
        words = tuple(w.lower() for w in tokenize(entry) if w[0].isalnum())
        if len(words) == 1:
            single.add(words[0])
        elif words:
            phrases.setdefault(words[0], set()).add(words)
    return WordList(frozenset(single), {k: tuple(sorted(v)) for k, v in phrases.items()}, ())


def load_bad_words(directory: str) -> dict[str, WordList]:
    if not os.path.isdir(directory):
        raise ConfigError(f"bad-words directory not found: {directory}")
    lists: dict[str, WordList] = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if not os.path.isfile(path) or "." in name or name.isupper():  # skip LICENSE, README.md
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            entries = [line.strip().lower() for line in f if line.strip() and not line.startswith("#")]
        code = name.split("-")[0].lower()
        lists[name.lower()] = _compile(entries, UNSPACED_LANGUAGES.get(code))
    return lists


def find_bad_words(a: TextAnalysis, words: WordList) -> list[str]:
    """Distinct list entries found in the text, in sorted order."""
    if words.substrings:
        low = a.lower
        return [w for w in words.substrings if w in low]
    lowered = [w.lower() for w in a.words]
    found = set(words.single.intersection(lowered))
    if words.phrases:
        starts = words.phrases
        for i, w in enumerate(lowered):
            for phrase in starts.get(w, ()):
                if tuple(lowered[i:i + len(phrase)]) == phrase:
                    found.add(" ".join(phrase))
    return sorted(found)


class BadWords:
    """Rule set `quality.bad_words` (see the module docstring)."""

    name = STAGE

    def __init__(self, config: BadWordsConfig, cache: AnalysisCache | None = None,
                 lists: dict[str, WordList] | None = None) -> None:
        self.config = config
        self.cache = cache or AnalysisCache()
        if lists is None:
            lists = load_bad_words(config.directory) if config.directory else {}
        self.lists = lists

    def list_for(self, language: str | None) -> WordList | None:
        if not language:
            return None
        code = language.lower().replace("_", "-")
        base = code.split("-")[0]
        return self.lists.get(code) or self.lists.get(base) or self.lists.get(LIST_ALIASES.get(base, ""))

    def check_all(self, doc: Document) -> list[Drop]:
        limit = self.config.max_bad_words
        if limit is None:
            return []
        a = self.cache.get(doc)
        words = self.list_for(a.language)
        if words is None:
            return []
        found = find_bad_words(a, words)
        doc.annotations["quality.bad_word_count"] = len(found)
        if len(found) > limit:
            return [Drop(self.name, "bad_words", value=len(found), limit=limit, detail={"words": found[:10]})]
        return []

    def check(self, doc: Document) -> Drop | None:
        drops = self.check_all(doc)
        return drops[0] if drops else None
