"""The word -> id map of a large fastText dictionary without a Python object per word.

A `dict` of the words costs ~100 bytes a word in every worker: ~200 MB for a vocabulary of two
million words (GlotLID's order). `Vocabulary` keeps the words' bytes in one blob with their offsets
and an open-addressing table of word ids (int32, load 0.7, as fastText's own `word2int`), ~22 bytes a
word plus the bytes; it is built with NumPy (the FNV-1a hashes of all words at once, the table filled
in rounds of linear probing) and looked up in Python, only for tokens the model's token cache has not
met (`thresher.classify.fasttext`).
"""

from __future__ import annotations

from array import array
from typing import Any

FNV_OFFSET = 2166136261
FNV_PRIME = 16777619
SIGNED = [b if b < 128 else b | 0xFFFFFF00 for b in range(256)]  # fastText hashes bytes as int8
LOAD = 0.7


def fnv1a(data: bytes) -> int:
    """fastText's `Dictionary::hash`: 32-bit FNV-1a over the bytes read as signed chars."""
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ SIGNED[b]) * FNV_PRIME) & 0xFFFFFFFF
    return h


class Vocabulary:
    """`get(word, default)` over the dictionary's words (ids in file order)."""

    def __init__(self, np: Any, words: list[bytes]) -> None:
        n = len(words)
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=n)
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        self.blob = b"".join(words)
        raw = np.frombuffer(self.blob, dtype=np.uint8)
        # uint32 arithmetic wraps as FNV-1a's does; bytes above 127 enter as int8 widened (0xFFFFFFxx)
        h = np.full(n, FNV_OFFSET, dtype=np.uint32)
        for i in range(int(lengths.max(initial=0))):
            live = np.nonzero(lengths > i)[0]
            byte = raw[offsets[live] + i].astype(np.uint32)
            byte[byte >= 128] |= np.uint32(0xFFFFFF00)
            h[live] = (h[live] ^ byte) * np.uint32(FNV_PRIME)
        self.size = size = max(1, int(np.ceil(n / LOAD)))
        table = np.full(size, -1, dtype=np.int32)
        pending = np.arange(n, dtype=np.int64)
        slot = (h % np.uint32(size)).astype(np.int64)
        while pending.size:
            tried = slot[pending]
            free = table[tried] == -1
            slots, first = np.unique(tried[free], return_index=True)  # one word per free slot: the first
            table[slots] = pending[free][first]
            placed = np.zeros(n, dtype=bool)
            placed[pending[free][first]] = True
            pending = pending[~placed[pending]]
            slot[pending] = (slot[pending] + 1) % size  # linear probing, as the lookup walks
        # plain arrays for the lookups: indexing them gives Python ints, ~10x faster than NumPy scalars
        self.table = array("i")
        self.table.frombytes(table.astype(np.int32).tobytes())
        self.offsets = array("q")
        self.offsets.frombytes(offsets.astype(np.int64).tobytes())

    def get(self, word: bytes, default: int = -1) -> int:
        table, offsets, blob, size = self.table, self.offsets, self.blob, self.size
        slot = fnv1a(word) % size
        while True:
            i = int(table[slot])
            if i < 0:
                return default
            if blob[offsets[i]:offsets[i + 1]] == word:
                return i
            slot = (slot + 1) % size

    def __len__(self) -> int:
        return len(self.offsets) - 1
