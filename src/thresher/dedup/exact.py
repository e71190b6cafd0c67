"""Exact duplicate removal at three levels, as a corpus stage.

- `raw`: byte-identical extracted text;
- `normalized`: also ignores case, punctuation, symbols and spacing;
- `structural`: also collapses every digit run, so templated pages that differ only by a price,
  date or id collide. It will merge genuinely different pages whose only difference is numeric:
  choose it deliberately.

One 16-byte key per document; the group phase keeps the first (lowest ordinal, or per keep policy)
of each key and drops the rest with a `Drop` that names the kept document.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any, Literal

from thresher.core.document import Document
from thresher.core.stages import CorpusKeys
from thresher.dedup.shingles import word_runs

_DIGIT_RUNS = re.compile(r"\d+")


def exact_key_text(
    text: str, level: Literal["raw", "normalized", "structural"], memo: dict[str, Any] | None = None
) -> str:
    if level == "raw":
        return text
    folded = unicodedata.normalize("NFKC", text).casefold()
    # keep only word characters: punctuation, symbols and spacing do not distinguish documents
    words = word_runs(folded, memo)
    if level == "structural":
        words = [_DIGIT_RUNS.sub("0", w) for w in words]
    return " ".join(words)


def exact_key(
    text: str, level: Literal["raw", "normalized", "structural"], memo: dict[str, Any] | None = None
) -> bytes:
    """The 16-byte key of `text` at `level`; `memo` is the document's scratch space, which lets
    MinHash reuse the word split (`thresher.dedup.shingles.word_runs`)."""
    if level == "normalized" and text.isascii():
        # ASCII: NFKC changes nothing and casefold is lower; the bytes runs are the str runs, and
        # they are what MinHash tokenizes next (remembered in the document's memo)
        blob = b" ".join(word_runs(text.encode("ascii").lower(), memo))
    else:
        blob = exact_key_text(text, level, memo).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(blob, digest_size=16).digest()


class ExactDedup:
    """Drops documents whose text (at the configured level) equals an earlier document's."""

    name = "dedup.exact"
    reason = "exact_duplicate"
    threshold: float | None = None  # exact: no similarity bound

    def __init__(self, level: Literal["raw", "normalized", "structural"]) -> None:
        self.level = level
        self.recorded_with = f"exact:{level}"

    def scan(self, doc: Document) -> CorpusKeys | None:
        return CorpusKeys([exact_key(doc.text, self.level, doc.derived)])

    def signals(self, scanned: CorpusKeys) -> dict[str, bytes]:
        """The exact-dedup key (16 bytes of BLAKE2b over the text at `level`), for the signals table."""
        return {"dedup.exact.key": scanned.keys[0]}

    def from_signals(self, values: Mapping[str, bytes]) -> CorpusKeys | None:
        key = values.get("dedup.exact.key")
        return None if key is None else CorpusKeys([key])

    def candidate_pairs(self, n: int) -> Iterator[tuple[int, int]]:
        # every member is identical to the first: a star, O(n) however hot the key
        return ((0, i) for i in range(1, n))

    def similarity(self, a: bytes, b: bytes) -> float | None:
        return 1.0
