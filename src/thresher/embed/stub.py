"""A deterministic stand-in encoder for tests: each lower-cased word adds a pseudo-random ±1
vector derived from its blake2b digest, the sum is L2-normalised. Texts sharing most words get a
high cosine, so semantic dedup can be tested without a model. Needs NumPy only."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"\w+")


class HashingEncoder:
    name = "stub"
    version = "1"

    def __init__(self, dimension: int = 64, max_len: int = 512) -> None:
        self.dimension = dimension
        self.max_len = max_len
        self._memo: dict[str, Any] = {}

    def _words(self, text: str) -> list[str]:
        return _WORD.findall(text.lower())

    def tokenize_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(self._words(t)) for t in texts]

    def _word_vector(self, word: str) -> Any:
        import numpy as np

        vec = self._memo.get(word)
        if vec is None:
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=max(8, self.dimension // 8)).digest()
            bits = np.unpackbits(np.frombuffer(digest, dtype=np.uint8))[: self.dimension]
            vec = bits.astype(np.float32) * 2 - 1
            if len(self._memo) < 100_000:
                self._memo[word] = vec
        return vec

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in self._words(text)[: self.max_len]:  # sequential sum: independent of the batch
                out[row] += self._word_vector(word)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
