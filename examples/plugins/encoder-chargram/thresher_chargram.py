"""`chargram`: text vectors from hashed character trigrams, with no model to download.

Each lower-cased word is padded (`<word>`) and cut into its character trigrams; each trigram is
hashed (blake2b) to one of `dimension` buckets and a sign, and a text's vector is the signed count
of its trigrams per bucket (the hashing trick), L2-normalised. Texts that share spellings get close
vectors even where their words differ by an inflection or a typo (`colour`/`colours`/`color`), which
word-level hashing misses; no meaning is captured beyond that, so it suits near-duplicate
spotting and as a fast baseline, not semantic search.

Deterministic and independent of the batch: a text's row is an integer count per bucket, the same
bytes in any batch, on any machine. `version` changes whenever that could stop being true.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from thresher.embed.encoder import cpu_only

_WORD = re.compile(r"\w+")
_MEMO_LIMIT = 200_000


class CharGramEncoder:
    name = "chargram"

    def __init__(self, dimension: int = 256, n: int = 3, max_len: int = 512) -> None:
        self.dimension = dimension
        self.n = n
        self.max_len = max_len  # words read per text
        self.version = f"1/d{dimension}/n{n}"
        self._memo: dict[str, tuple[int, int]] = {}

    def _words(self, text: str) -> list[str]:
        return _WORD.findall(text.lower())

    def tokenize_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(self._words(text)) for text in texts]

    def _bucket(self, gram: str) -> tuple[int, int]:
        hit = self._memo.get(gram)
        if hit is None:
            h = int.from_bytes(hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest(), "little")
            hit = (h % self.dimension, 1 if h >> 63 else -1)
            if len(self._memo) < _MEMO_LIMIT:
                self._memo[gram] = hit
        return hit

    def _grams(self, word: str) -> list[str]:
        padded = f"<{word}>"
        if len(padded) <= self.n:
            return [padded]
        return [padded[i : i + self.n] for i in range(len(padded) - self.n + 1)]

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        counts = np.zeros((len(texts), self.dimension), dtype=np.int64)
        for row, text in enumerate(texts):
            for word in self._words(text)[: self.max_len]:
                for gram in self._grams(word):
                    bucket, sign = self._bucket(gram)
                    counts[row, bucket] += sign
        vectors = counts.astype(np.float64)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        np.divide(vectors, norms, out=vectors, where=norms > 0)
        return vectors.astype(np.float32)


def make_encoder(device: str) -> CharGramEncoder:
    """The factory the `thresher.encoders` entry point names, given `--device`: NumPy runs on the CPU,
    so `cuda` is refused with a message rather than ignored."""
    cpu_only("chargram", device)
    return CharGramEncoder()
