"""Hashed text features: word n-grams and character n-grams mapped into a fixed number of buckets.

The features of a text are a multiset of bucket ids in `[0, buckets)`:

- every word (a `\\w+` run or one punctuation character, after optional lowercasing) is a unigram;
- every run of 2..`word_ngrams` consecutive words is a word n-gram;
- with `char_ngrams=(lo, hi)`, every substring of length lo..hi of `<word>` (the word with boundary
  marks, as in fastText) is a character n-gram.

Hashing has no vocabulary, so memory does not grow with the corpus, and the ids depend only on the
text and `hash_seed` (never on Python's randomized `hash`). A word's hash is CRC-32 of its UTF-8
bytes mixed with the seed through the splitmix64 finalizer; an n-gram's hash folds its words'
hashes (`h * P + next`, modulo 2^64) and mixes the result with its length. The pure-Python
functions and the NumPy batch path compute the same 64-bit integers, hence the same ids.

Extraction is bounded whatever the input: only the first `max_chars` characters are read, at most
`max_tokens` words are kept, and character n-grams are taken from at most the first
`MAX_WORD_CHARS` characters of a word, so a 10 MB text costs no more than a 100 kB one.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Any

MASK64 = (1 << 64) - 1
FOLD = 0x100000001B3  # the FNV-1a 64-bit prime: the multiplier that folds word hashes into n-grams
CHAR_SALT = 0x9E3779B97F4A7C15  # keeps character n-gram ids apart from word ids of the same text
MAX_WORD_CHARS = 64
TOKEN_RE = re.compile(r"\w+|[^\w\s]")
_CACHE_LIMIT = 1 << 18  # words cached per extractor; the cache is cleared when full (ids never change)


def mix64(z: int) -> int:
    """The splitmix64 finalizer (Steele, Lea and Flood 2014): a bijection of 64-bit integers whose
    output bits each depend on every input bit."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


@dataclass(frozen=True, slots=True, kw_only=True)
class FeatureSpec:
    """Everything that decides a text's features; stored in the model file's header."""

    buckets: int = 1 << 20
    word_ngrams: int = 2
    char_ngrams: tuple[int, int] | None = None
    lowercase: bool = True
    max_chars: int = 100_000
    max_tokens: int = 10_000
    hash_seed: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.buckets <= 1 << 31:
            raise ValueError(f"buckets must be in [1, 2^31], got {self.buckets}")
        if not 1 <= self.word_ngrams <= 8:
            raise ValueError(f"word n-grams must be in [1, 8], got {self.word_ngrams}")
        if self.char_ngrams is not None:
            lo, hi = self.char_ngrams
            if not 1 <= lo <= hi <= 16:
                raise ValueError(f"character n-gram lengths must satisfy 1 <= min <= max <= 16, got {lo}..{hi}")
        if self.max_chars < 1 or self.max_tokens < 1:
            raise ValueError("max_chars and max_tokens must be positive")
        if not 0 <= self.hash_seed < 1 << 32:
            raise ValueError(f"hash seed must be in [0, 2^32), got {self.hash_seed}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "buckets": self.buckets,
            "word_ngrams": self.word_ngrams,
            "char_ngrams": list(self.char_ngrams) if self.char_ngrams else None,
            "lowercase": self.lowercase,
            "max_chars": self.max_chars,
            "max_tokens": self.max_tokens,
            "hash_seed": self.hash_seed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FeatureSpec:
        chars = data.get("char_ngrams")
        return cls(
            buckets=int(data["buckets"]),
            word_ngrams=int(data["word_ngrams"]),
            char_ngrams=(int(chars[0]), int(chars[1])) if chars else None,
            lowercase=bool(data["lowercase"]),
            max_chars=int(data["max_chars"]),
            max_tokens=int(data["max_tokens"]),
            hash_seed=int(data["hash_seed"]),
        )

    @property
    def max_features(self) -> int:
        """An upper bound on the features of one text (what makes exact integer sums safe)."""
        n = self.max_tokens * self.word_ngrams
        if self.char_ngrams:
            lo, hi = self.char_ngrams
            per_word = sum(max(0, MAX_WORD_CHARS + 2 - k + 1) for k in range(lo, hi + 1))
            n += self.max_tokens * per_word
        return n


class FeatureExtractor:
    """Turns texts into bucket ids. Keeps a bounded per-word cache (a word's hash, unigram id and
    character n-gram ids); the cache only saves time, it never changes an id."""

    def __init__(self, spec: FeatureSpec) -> None:
        self.spec = spec
        self._seed_high = spec.hash_seed << 32
        self._cache: dict[str, tuple[int, tuple[int, ...]]] = {}

    def tokens(self, text: str) -> list[str]:
        spec = self.spec
        text = text[: spec.max_chars]
        if spec.lowercase:
            text = text.lower()
        found = TOKEN_RE.findall(text)
        return found[: spec.max_tokens] if len(found) > spec.max_tokens else found

    def word(self, token: str) -> tuple[int, tuple[int, ...]]:
        """(the word's 64-bit hash, its character n-gram ids), cached."""
        entry = self._cache.get(token)
        if entry is None:
            if len(self._cache) >= _CACHE_LIMIT:
                self._cache.clear()
            h = mix64(self._seed_high | zlib.crc32(token.encode("utf-8", "surrogatepass")))
            entry = self._cache[token] = (h, self._char_ids(token))
        return entry

    def _char_ids(self, token: str) -> tuple[int, ...]:
        spec = self.spec
        if spec.char_ngrams is None:
            return ()
        lo, hi = spec.char_ngrams
        marked = "<" + token[:MAX_WORD_CHARS] + ">"
        buckets, seed_high = spec.buckets, self._seed_high
        ids = []
        for n in range(lo, hi + 1):
            for i in range(len(marked) - n + 1):
                gram = marked[i : i + n]
                if gram == "<" or gram == ">":
                    continue
                h = zlib.crc32(gram.encode("utf-8", "surrogatepass"))
                ids.append(mix64((seed_high | h) ^ CHAR_SALT) % buckets)
        return tuple(ids)

    def features(self, text: str) -> list[int]:
        """The bucket ids of one text, pure Python (same ids as `batch_features`)."""
        spec = self.spec
        buckets = spec.buckets
        words = [self.word(t) for t in self.tokens(text)]
        hashes = [w[0] for w in words]
        ids = [h % buckets for h in hashes]
        n = len(hashes)
        for m in range(2, spec.word_ngrams + 1):
            for i in range(n - m + 1):
                g = hashes[i]
                for t in range(1, m):
                    g = (g * FOLD + hashes[i + t]) & MASK64
                ids.append(mix64(g ^ m) % buckets)
        if spec.char_ngrams is not None:
            for w in words:
                ids.extend(w[1])
        return ids

    def batch_features(self, texts: list[str]) -> tuple[Any, Any]:
        """NumPy: the ids of many texts as one int64 array and each text's start offset (length
        len(texts) + 1). The word n-grams are computed for the whole batch at once."""
        import numpy as np

        spec = self.spec
        buckets = np.uint64(spec.buckets)
        all_words = [[self.word(t) for t in self.tokens(text)] for text in texts]
        counts = np.fromiter((len(w) for w in all_words), dtype=np.int64, count=len(texts))
        hashes = np.fromiter((w[0] for ws in all_words for w in ws), dtype=np.uint64, count=int(counts.sum()))
        starts = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(counts, out=starts[1:])
        doc_of = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
        parts = [(hashes % buckets).astype(np.int64)]
        owners = [doc_of]
        total = len(hashes)
        for m in range(2, spec.word_ngrams + 1):
            if total < m:
                break
            g = hashes[: total - m + 1].copy()
            for t in range(1, m):
                g = g * np.uint64(FOLD) + hashes[t : total - m + 1 + t]  # uint64 arithmetic wraps mod 2^64
            # an n-gram must not span two texts: keep those whose first and last word share a text
            inside = doc_of[: total - m + 1] == doc_of[m - 1 :]
            parts.append((_mix64_array(g[inside] ^ np.uint64(m)) % buckets).astype(np.int64))
            owners.append(doc_of[: total - m + 1][inside])
        if spec.char_ngrams is not None:
            char_counts = [sum(len(w[1]) for w in ws) for ws in all_words]
            n_chars = sum(char_counts)
            parts.append(np.fromiter((i for ws in all_words for w in ws for i in w[1]), dtype=np.int64, count=n_chars))
            owners.append(np.repeat(np.arange(len(texts), dtype=np.int64), char_counts))
        ids = np.concatenate(parts)
        owner = np.concatenate(owners)
        order = np.argsort(owner, kind="stable")
        per_doc = np.bincount(owner, minlength=len(texts))
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum(per_doc, out=offsets[1:])
        return ids[order], offsets


def _mix64_array(z: Any) -> Any:
    import numpy as np

    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))
