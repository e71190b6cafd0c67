"""Tokenization for near-duplicate detection: text -> a sequence of 32-bit token values.

Two kinds of token, chosen per document:

- **word** tokens: maximal runs of Unicode word characters (`\\w+`) of the lower-cased text, each
  hashed with CRC-32 of its UTF-8 bytes. Punctuation and spacing never matter.
- **char** tokens: every word character of the lower-cased text (spaces and punctuation removed),
  valued by its code point. Used for scripts written without spaces between words (Chinese,
  Japanese, Thai, Lao, Khmer, Myanmar, Tibetan), where a "word" would be a whole clause.

`shingle_kind="auto"` looks at a bounded prefix of the text and picks char tokens when at least
`NO_SPACE_SCRIPT_RATIO` of its word characters belong to those scripts. Korean (Hangul) is written
with spaces and stays on word tokens.

Shingles (k consecutive tokens) are formed by the kernels (`thresher.dedup.kernels`), which hash a
window of token values directly; this module only produces the token values, so the pure and the
NumPy kernels start from the same integers. Everything here is deterministic: no `hash()`, no
process state.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any, Literal

ShingleKind = Literal["auto", "word", "char"]

_WORD = re.compile(r"\w+")
_WORD_BYTES = re.compile(rb"\w+")
_NOT_WORD = re.compile(r"[\W_]+")
_WORD_CHAR = re.compile(r"\w")
# Scripts written without spaces between words: Thai, Lao, Tibetan, Myanmar, Khmer, CJK
# punctuation/kana, CJK unified ideographs (+ extension A and compatibility), half-width kana.
_NO_SPACE_CHAR = re.compile(
    "[\u0e00-\u0e7f\u0e80-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]"
)

#: How many leading characters `detect_kind` inspects (bounded cost on 10 MB documents).
DETECT_SAMPLE_CHARS = 2048
#: Share of word characters from space-less scripts above which char tokens are used. A Chinese or
#: Japanese page with Latin navigation words still scores > 0.5; an English page quoting a few CJK
#: names stays < 0.05.
NO_SPACE_SCRIPT_RATIO = 0.3


def detect_kind(text: str) -> Literal["word", "char"]:
    """`"char"` when the text is mostly written in a script without spaces, else `"word"`."""
    sample = text[:DETECT_SAMPLE_CHARS]
    if sample.isascii() or _NO_SPACE_CHAR.search(sample) is None:
        return "word"
    n_nospace = len(_NO_SPACE_CHAR.findall(sample))
    n_word = len(_WORD_CHAR.findall(sample))
    return "char" if n_nospace >= NO_SPACE_SCRIPT_RATIO * max(n_word, 1) else "word"


def word_runs(folded: Any, memo: dict[str, Any] | None = None) -> list[Any]:
    """The `\\w+` runs of an already lower-cased (or case-folded) str, or of ASCII bytes.

    `memo` is a document's own scratch space (`Document.derived`): exact dedup (on the case-folded
    text) and MinHash (on the lower-cased text) split the same document one after the other, and the
    two texts are equal for almost every document, so with the document's memo the second split
    (~40% of a stage's cost) is a string comparison. Callers must not modify the list."""
    if memo is not None:
        hit = memo.get("word_runs")
        if hit is not None and type(folded) is type(hit[0]) and folded == hit[0]:
            runs: list[Any] = hit[1]
            return runs
    runs = (_WORD_BYTES if isinstance(folded, bytes) else _WORD).findall(folded)
    if memo is not None:
        memo["word_runs"] = (folded, runs)
    return runs


def word_tokens(text: str) -> list[str]:
    """The word tokens of `text` as strings (for tests, ground truth and reports)."""
    return _WORD.findall(text.lower())


def char_tokens(text: str) -> str:
    """The char tokens of `text`: its lower-cased word characters, spaces and punctuation removed."""
    return _NOT_WORD.sub("", text.lower())


def word_token_values(text: str, memo: dict[str, Any] | None = None) -> list[int]:
    """CRC-32 of each word token's UTF-8 bytes (lone surrogates kept, never an error)."""
    if text.isascii():  # bytes \w is str \w on ASCII: the tokens come out as bytes directly
        return list(map(zlib.crc32, word_runs(text.encode("ascii").lower(), memo)))
    words = word_runs(text.lower(), memo)
    if not words:
        return []
    # One encode of the joined tokens is faster than one encode per token; \x00 is never in \w.
    blob = "\x00".join(words).encode("utf-8", "surrogatepass")
    return list(map(zlib.crc32, blob.split(b"\x00")))


def word_token_array(text: str, memo: dict[str, Any] | None = None) -> Any:
    """`word_token_values` as a NumPy uint64 array, without the intermediate list (NumPy kernel)."""
    import numpy

    if text.isascii():  # bytes \w is str \w on ASCII: the tokens come out as bytes directly
        tokens = word_runs(text.encode("ascii").lower(), memo)
        return numpy.fromiter(map(zlib.crc32, tokens), dtype=numpy.uint64, count=len(tokens))
    words = word_runs(text.lower(), memo)
    if not words:
        return numpy.empty(0, dtype=numpy.uint64)
    blob = "\x00".join(words).encode("utf-8", "surrogatepass")
    return numpy.fromiter(map(zlib.crc32, blob.split(b"\x00")), dtype=numpy.uint64, count=len(words))


def char_token_values(text: str) -> list[int]:
    """The code point of each char token."""
    return list(map(ord, char_tokens(text)))


@dataclass(frozen=True, slots=True)
class Tokens:
    """A document's token values and how they were made."""

    kind: Literal["word", "char"]
    values: Any  # list[int], or a NumPy uint64 array from tokenize(..., array=True)


def tokenize(
    text: str, kind: ShingleKind = "auto", *, array: bool = False, memo: dict[str, Any] | None = None
) -> Tokens:
    """Token values of `text` for shingling; `kind="auto"` decides by script (see module doc).
    `array=True` returns them as a NumPy uint64 array (same values); `memo`: see `word_runs`."""
    resolved = detect_kind(text) if kind == "auto" else kind
    if resolved == "char":
        values = char_token_values(text)
        if array:
            import numpy

            return Tokens("char", numpy.asarray(values, dtype=numpy.uint64))
        return Tokens("char", values)
    return Tokens("word", word_token_array(text, memo) if array else word_token_values(text, memo))


def shingle_set(text: str, size: int, kind: ShingleKind = "auto") -> set[tuple[str, ...]]:
    """The exact set of `size`-token shingles as string tuples: the reference definition that the
    hashed kernels approximate and that benchmarks use as ground truth. A document with fewer than
    `size` tokens has no shingles."""
    resolved = detect_kind(text) if kind == "auto" else kind
    toks: list[str] | str = char_tokens(text) if resolved == "char" else word_tokens(text)
    return {tuple(toks[i : i + size]) for i in range(len(toks) - size + 1)}
