"""Hashed text features: word n-grams and character n-grams mapped into a fixed number of buckets.

The features of a text are a multiset of bucket ids in `[0, buckets)`:

- every word (a `\\w+` run or one punctuation character, after optional lowercasing) is a unigram,
  and so is an end-of-text word every text has (fastText's `</s>`: a learned bias);
- every run of 2..`word_ngrams` consecutive words is a word n-gram;
- with `char_ngrams=(lo, hi)`, every substring of length lo..hi of `<word>` (the word with boundary
  marks, as in fastText) is a character n-gram.

Hashing has no vocabulary, so memory does not grow with the corpus, and the ids depend only on the
text and `hash_seed` (never on Python's randomized `hash`). A word's hash is CRC-32 of its UTF-8
bytes mixed with the seed through the splitmix64 finalizer, so its bits are uniform; an n-gram's
hash folds its words' hashes (`h * P + next`, modulo 2^64) plus a salt per length, and its bucket is
that modulo the bucket count (no second mix: the words' hashes are already mixed, and three integer
operations per n-gram keep pure-Python extraction cheap). The pure-Python functions and the NumPy
batch path compute the same 64-bit integers, hence the same ids.

Extraction is bounded whatever the input: only the first `max_chars` characters are read, at most
`max_tokens` words are kept, and character n-grams are taken from at most the first
`MAX_WORD_CHARS` characters of a word, so a 10 MB text costs no more than a 100 kB one.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

MASK64 = (1 << 64) - 1
FOLD = 0x100000001B3  # the FNV-1a 64-bit prime: the multiplier that folds word hashes into n-grams
CHAR_SALT = 0x9E3779B97F4A7C15  # keeps character n-gram ids apart from word ids of the same text
NGRAM_SALT = 0xC2B2AE3D27D4EB4F  # times the n-gram length: a bigram and a trigram land apart
MAX_WORD_CHARS = 64
TOKEN_RE = re.compile(r"\w+|[^\w\s]")
TOKENIZERS = ("words", "whitespace")
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
    tokenizer: str = "words"  # "words": \w+ runs and single symbols; "whitespace": str.split, as fastText

    def __post_init__(self) -> None:
        if self.tokenizer not in TOKENIZERS:
            raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, got {self.tokenizer!r}")
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
            "tokenizer": self.tokenizer,
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
            tokenizer=str(data.get("tokenizer", "words")),
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


class _WordHashes(dict[str, int]):
    """token -> its 64-bit hash, computed on first use (a dict subclass, so `map(cache.__getitem__,
    tokens)` runs at C speed)."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        self.seed_high = seed << 32

    def __missing__(self, token: str) -> int:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        h = self[token] = mix64(self.seed_high | zlib.crc32(token.encode("utf-8", "surrogatepass")))
        return h


class _CharIds(dict[str, tuple[int, ...]]):
    """token -> the bucket ids of its character n-grams, computed on first use."""

    def __init__(self, spec: FeatureSpec) -> None:
        super().__init__()
        self.seed_high = spec.hash_seed << 32
        self.buckets = spec.buckets
        self.lengths = range(spec.char_ngrams[0], spec.char_ngrams[1] + 1) if spec.char_ngrams else range(0)

    def __missing__(self, token: str) -> tuple[int, ...]:
        if len(self) >= _CACHE_LIMIT:
            self.clear()
        marked = "<" + token[:MAX_WORD_CHARS] + ">"
        buckets, seed_high = self.buckets, self.seed_high
        ids = []
        for n in self.lengths:
            for i in range(len(marked) - n + 1):
                gram = marked[i : i + n]
                if gram == "<" or gram == ">":
                    continue
                h = zlib.crc32(gram.encode("utf-8", "surrogatepass"))
                ids.append(mix64((seed_high | h) ^ CHAR_SALT) % buckets)
        found = self[token] = tuple(ids)
        return found


SEPARATOR = "\x00"  # joins a batch's texts: a token of its own, never part of a word


class FeatureExtractor:
    """Turns texts into bucket ids. Keeps bounded per-word caches (a word's hash, its character
    n-gram ids); a cache only saves time, it never changes an id."""

    def __init__(self, spec: FeatureSpec) -> None:
        self.spec = spec
        self._hashes = _WordHashes(spec.hash_seed)
        self._chars = _CharIds(spec)
        # fastText's end-of-text word: every text has it, so its row acts as a learned bias (a text
        # of one or two words is otherwise scored on those alone); it has no character n-grams
        self._eos = mix64((spec.hash_seed << 32) | zlib.crc32(b"</s>"))

    @property
    def eos_hash(self) -> int:
        """The 64-bit hash of the end-of-text word."""
        return self._eos

    def word_hash(self, token: str) -> int:
        """A word's 64-bit hash (cached)."""
        return self._hashes[token]

    def tokens(self, text: str) -> list[str]:
        spec = self.spec
        text = text[: spec.max_chars]
        if spec.lowercase:
            text = text.lower()
        found = TOKEN_RE.findall(text) if spec.tokenizer == "words" else text.split()
        return found[: spec.max_tokens] if len(found) > spec.max_tokens else found

    def features(self, text: str) -> list[int]:
        """The bucket ids of one text, pure Python (the same ids as `batch_features`)."""
        ids, tokens = self.word_features(text)
        if self.spec.char_ngrams is not None:
            ids.extend(chain.from_iterable(map(self._chars.__getitem__, tokens)))
        return ids

    def char_ids(self, token: str) -> tuple[int, ...]:
        """The bucket ids of a word's character n-grams (cached)."""
        return self._chars[token]

    def word_features(self, text: str) -> tuple[list[int], list[str]]:
        """The word and word n-gram ids of one text, and its words (whose character n-grams a
        scorer may sum per word instead of per n-gram)."""
        spec = self.spec
        buckets = spec.buckets
        tokens = self.tokens(text)
        hashes = list(map(self._hashes.__getitem__, tokens))
        hashes.append(self._eos)
        ids = [h % buckets for h in hashes]
        grams = hashes
        for m in range(2, spec.word_ngrams + 1):
            # the m-gram at i folds the (m-1)-gram at i with word i+m-1
            grams = [(g * FOLD + h) & MASK64 for g, h in zip(grams, hashes[m - 1 :], strict=False)]
            salt = m * NGRAM_SALT
            ids += [((g + salt) & MASK64) % buckets for g in grams]
        return ids, tokens

    def batch_features(self, texts: Sequence[str], words_only: bool = False) -> tuple[list[tuple[Any, Any]], Any]:
        """NumPy: the ids of many texts as parts `(ids, owner)` (int64 arrays; `owner` is the text's
        position, ascending within a part), and each text's feature count. The texts are tokenized
        in one pass and the word n-grams computed for the whole batch at once. With `words_only`,
        character n-grams are left out and the last part is `(words, owner)` instead: the list of
        words, for a scorer that sums their character n-grams per word."""
        import numpy as np

        spec = self.spec
        n_texts = len(texts)
        pieces = [t[: spec.max_chars] for t in texts]
        words = spec.tokenizer == "words"
        joined = (SEPARATOR if words else " " + SEPARATOR + " ").join(pieces)
        if n_texts == 0 or joined.count(SEPARATOR) != n_texts - 1:  # a text holds the separator itself
            return self._batch_per_text(texts, words_only)
        if spec.lowercase:
            joined = joined.lower()
        tokens = TOKEN_RE.findall(joined) if words else joined.split()
        n = len(tokens)
        hashes = np.fromiter(map(self._hashes.__getitem__, tokens), dtype=np.uint64, count=n)
        # separators are the tokens with the separator's hash that are the separator (CRC-32 collides)
        is_sep = hashes == np.uint64(self._hashes[SEPARATOR])
        for i in np.flatnonzero(is_sep).tolist():
            is_sep[i] = tokens[i] == SEPARATOR
        keep = ~is_sep
        owner = np.cumsum(is_sep)[keep]
        hashes = hashes[keep]
        counts = np.bincount(owner, minlength=n_texts)
        if counts.max(initial=0) > spec.max_tokens:  # the per-text cap on words
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            within = np.arange(len(hashes)) - starts[owner] < spec.max_tokens
            hashes, owner = hashes[within], owner[within]
            kept_tokens = [t for t, k in zip((t for t in tokens if t != SEPARATOR), within.tolist(), strict=True) if k]
        else:
            kept_tokens = [t for t in tokens if t != SEPARATOR] if spec.char_ngrams else []
        buckets = np.uint64(spec.buckets)
        # each text's words, then its end-of-text word
        sequence, seq_owner = word_sequence(hashes, owner, n_texts, self._eos)
        parts = [((sequence % buckets).astype(np.int64), seq_owner)]
        parts += word_ngram_ids(sequence, seq_owner, spec.word_ngrams, spec.buckets)
        if spec.char_ngrams is not None and words_only:
            feature_counts = np.zeros(n_texts, dtype=np.int64)
            for _, part_owner in parts:
                feature_counts += np.bincount(part_owner, minlength=n_texts)
            return [*parts, (kept_tokens, owner)], feature_counts
        if spec.char_ngrams is not None:
            per_token = list(map(self._chars.__getitem__, kept_tokens))
            lengths = np.fromiter(map(len, per_token), dtype=np.int64, count=len(per_token))
            char_ids = np.fromiter(chain.from_iterable(per_token), dtype=np.int64, count=int(lengths.sum()))
            parts.append((char_ids, np.repeat(owner, lengths)))
        feature_counts = np.zeros(n_texts, dtype=np.int64)
        for _, part_owner in parts:
            feature_counts += np.bincount(part_owner, minlength=n_texts)
        return parts, feature_counts

    def _batch_per_text(self, texts: Sequence[str], words_only: bool = False) -> tuple[list[tuple[Any, Any]], Any]:
        import numpy as np

        if words_only and self.spec.char_ngrams is not None:
            pairs = [self.word_features(t) for t in texts]
            counts = np.fromiter((len(p[0]) for p in pairs), dtype=np.int64, count=len(texts))
            ids = np.fromiter(chain.from_iterable(p[0] for p in pairs), dtype=np.int64, count=int(counts.sum()))
            n_words = np.fromiter((len(p[1]) for p in pairs), dtype=np.int64, count=len(texts))
            words = [w for p in pairs for w in p[1]]
            word_owner = np.repeat(np.arange(len(texts), dtype=np.int64), n_words)
            return [(ids, np.repeat(np.arange(len(texts), dtype=np.int64), counts)), (words, word_owner)], counts

        per_text = [self.features(t) for t in texts]
        counts = np.fromiter(map(len, per_text), dtype=np.int64, count=len(texts))
        ids = np.fromiter(chain.from_iterable(per_text), dtype=np.int64, count=int(counts.sum()))
        return [(ids, np.repeat(np.arange(len(texts), dtype=np.int64), counts))], counts


def word_sequence(hashes: Any, owner: Any, n_texts: int, eos_hash: int) -> tuple[Any, Any]:
    """The word hashes of a batch as one sequence, each text's words followed by its end-of-text
    word, and the text each position belongs to (NumPy arrays; `owner` is sorted)."""
    import numpy as np

    per_text = np.bincount(owner, minlength=n_texts) + 1
    eos_at = np.cumsum(per_text) - 1
    sequence = np.empty(int(per_text.sum()), dtype=np.uint64)
    is_word = np.ones(len(sequence), dtype=bool)
    is_word[eos_at] = False
    sequence[is_word] = hashes
    sequence[eos_at] = np.uint64(eos_hash)
    return sequence, np.repeat(np.arange(n_texts, dtype=np.int64), per_text)


def word_ngram_ids(sequence: Any, seq_owner: Any, word_ngrams: int, buckets: int) -> list[tuple[Any, Any]]:
    """(bucket ids, owning text) of the word 2..`word_ngrams`-grams of `word_sequence`'s output,
    hashed as `FeatureExtractor` hashes them one text at a time (never across two texts)."""
    import numpy as np

    parts = []
    nb = np.uint64(buckets)
    grams, total = sequence, len(sequence)
    for m in range(2, word_ngrams + 1):
        if total < m:
            break
        grams = grams[:-1] * np.uint64(FOLD) + sequence[m - 1 :]  # uint64 arithmetic wraps mod 2^64
        inside = seq_owner[: total - m + 1] == seq_owner[m - 1 :]
        ids = ((grams[inside] + np.uint64(m * NGRAM_SALT & MASK64)) % nb).astype(np.int64)
        parts.append((ids, seq_owner[: total - m + 1][inside]))
    return parts
