"""NumPy batch scoring of a `Model`: the per-word table, exact per-text row sums, `math.exp` mapped.

`Model.logits_batch` tokenizes a batch in one pass and looks each whitespace-free chunk up in a
`WordTable`, which holds every distinct word's hash and the integer sum of its rows; the per-text
sums (`segment_sums`) are of integers, so they are exact in any order and equal the pure-Python
path's (`thresher.classify.model` says why the scores are the same bit for bit). NumPy and SciPy
are imported inside the functions: this module loads without them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from thresher.classify.features import SEPARATOR, TOKEN_RE

if TYPE_CHECKING:
    from thresher.classify.model import Model


class _Slots(dict[str, int]):
    """word -> its slot in a `WordTable`; a new word gets the next slot and is queued for `fill`."""

    def __init__(self) -> None:
        super().__init__()
        self.new: list[str] = []

    def __missing__(self, token: str) -> int:
        slot = self[token] = len(self)
        self.new.append(token)
        return slot


class _Chunks(dict[str, int]):
    """whitespace-free chunk -> its id; a new chunk's words (`findall`, or the chunk itself for the
    whitespace tokenizer) get their slots and are queued for `WordTable.fill`. A chunk's id, not
    its words, is what the batch maps at C speed: one integer per chunk, expanded to its words'
    slots by NumPy."""

    def __init__(self, slots: _Slots, findall: Any) -> None:
        super().__init__()
        self.slots = slots
        self.findall = findall
        self.new_slots: list[int] = []  # the words' slots of the chunks queued, in order
        self.new_lengths: list[int] = []  # words per chunk queued

    def __missing__(self, chunk: str) -> int:
        words = self.findall(chunk) if self.findall is not None else (chunk,)
        self.new_slots += map(self.slots.__getitem__, words)
        self.new_lengths.append(len(words))
        found = self[chunk] = len(self)
        return found


class WordTable:
    """NumPy: per-word values by slot: the word's 64-bit hash, the int64 sum of its row and its
    character n-gram rows, and how many features that is (1 + its character n-grams). A cache only:
    emptying it never changes a score. Capacity doubles as words arrive."""

    def __init__(self, model: Model) -> None:
        import numpy as np

        self.model = model
        self.slot = _Slots()
        extractor = model.extractor
        self.separator = self.slot[SEPARATOR]  # slot 0: the word that joins a batch's texts
        self.chunks = _Chunks(self.slot, TOKEN_RE.findall if model.spec.tokenizer == "words" else None)
        capacity = 1024
        self.hashes = np.zeros(capacity, dtype=np.uint64)
        self.rows = np.zeros((capacity, model.dim), dtype=model._sum_dtype())
        self.counts = np.zeros(capacity, dtype=np.int64)
        self.size = 0
        # by chunk id: where its words' slots start in `chunk_slots`, and how many words it has
        self.chunk_starts = np.zeros(capacity, dtype=np.int64)
        self.chunk_lengths = np.zeros(capacity, dtype=np.int64)
        self.chunk_slots = np.zeros(capacity, dtype=np.int64)
        self.n_chunks = self.n_chunk_slots = 0
        self.separator_chunk = self.chunks[SEPARATOR]  # chunk 0: the separator alone
        index, rows, _ = model._numpy_tables()
        self.eos_row = rows[index[extractor.eos_hash % model.spec.buckets]]
        self.fill()

    def slots_of(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """Every kept word's slot, and its text's position (ascending), for a batch of texts.

        The batch is split at whitespace (`str.split`, C speed) and each whitespace-free chunk is
        looked up in a cache of its words' slots: no word contains whitespace and none spans two
        chunks, so the words of a text are the words of its chunks in order (the tokenizer's own
        result, tested), and a chunk seen before ("the", "it's", "http://...") costs one lookup."""
        import numpy as np

        spec = self.model.spec
        pieces = [t[: spec.max_chars] for t in texts]
        joined = (" " + SEPARATOR + " ").join(pieces)
        n_texts = len(texts)
        if joined.count(SEPARATOR) != n_texts - 1:  # a text holds the separator itself: one at a time
            per_text = [self.model.extractor.tokens(t) for t in texts]
            tokens = list(chain.from_iterable(per_text))
            slots = np.fromiter(map(self.slot.__getitem__, tokens), dtype=np.int64, count=len(tokens))
            owner = np.repeat(np.arange(n_texts, dtype=np.int64), [len(p) for p in per_text])
            self.fill()
            return slots, owner
        if spec.lowercase:
            joined = joined.lower()
        parts = joined.split()
        codes = np.fromiter(map(self.chunks.__getitem__, parts), dtype=np.int64, count=len(parts))
        self.fill()
        is_sep = codes == self.separator_chunk
        keep = ~is_sep
        chunk_owner = np.cumsum(is_sep)[keep]
        codes = codes[keep]
        lengths = self.chunk_lengths[codes]
        starts = self.chunk_starts[codes]
        if lengths.max(initial=1) == 1:  # every chunk one word (most batches of prose)
            slots, owner = self.chunk_slots[starts], chunk_owner
        else:  # chunk c's words are chunk_slots[starts[c] : starts[c] + lengths[c]]
            ends = np.cumsum(lengths)
            slots = self.chunk_slots[
                np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]), dtype=np.int64)
            ]
            owner = np.repeat(chunk_owner, lengths)
        counts = np.bincount(owner, minlength=n_texts)
        if len(counts) and counts.max() > spec.max_tokens:  # the per-text cap on words
            starts = np.cumsum(counts) - counts
            within = np.arange(len(slots)) - starts[owner] < spec.max_tokens
            slots, owner = slots[within], owner[within]
        return slots, owner

    def fill(self) -> None:
        """Compute the values of the words and chunks queued since the last call."""
        import numpy as np

        chunks = self.chunks
        if chunks.new_lengths:
            lengths = np.array(chunks.new_lengths, dtype=np.int64)
            start, end = self.n_chunks, self.n_chunks + len(lengths)
            slot_start, slot_end = self.n_chunk_slots, self.n_chunk_slots + len(chunks.new_slots)
            self.chunk_starts = _grown(self.chunk_starts, end)
            self.chunk_lengths = _grown(self.chunk_lengths, end)
            self.chunk_slots = _grown(self.chunk_slots, slot_end)
            self.chunk_lengths[start:end] = lengths
            self.chunk_starts[start:end] = slot_start + np.cumsum(lengths) - lengths
            self.chunk_slots[slot_start:slot_end] = chunks.new_slots
            self.n_chunks, self.n_chunk_slots = end, slot_end
            chunks.new_lengths.clear()
            chunks.new_slots.clear()
        new = self.slot.new
        if not new:
            return
        model = self.model
        extractor = model.extractor
        index, rows, _ = model._numpy_tables()
        start, end = self.size, self.size + len(new)
        if end > len(self.hashes):
            capacity = max(end, 2 * len(self.hashes))
            self.hashes = np.concatenate([self.hashes, np.zeros(capacity - len(self.hashes), dtype=np.uint64)])
            self.rows = np.concatenate(
                [self.rows, np.zeros((capacity - len(self.rows), model.dim), dtype=self.rows.dtype)]
            )
            self.counts = np.concatenate([self.counts, np.zeros(capacity - len(self.counts), dtype=np.int64)])
        hashes = np.fromiter(map(extractor.word_hash, new), dtype=np.uint64, count=len(new))
        self.hashes[start:end] = hashes
        self.rows[start:end] = rows[index[(hashes % np.uint64(model.spec.buckets)).astype(np.int64)]]
        self.counts[start:end] = 1
        if model.spec.char_ngrams is not None:
            per_word = [extractor.char_ids(w) for w in new]
            lengths = np.fromiter(map(len, per_word), dtype=np.int64, count=len(new))
            ids = np.fromiter(chain.from_iterable(per_word), dtype=np.int64, count=int(lengths.sum()))
            self.counts[start:end] += lengths
            present = lengths > 0
            if ids.size:
                starts = (np.cumsum(lengths) - lengths)[present]
                self.rows[start:end][present] += np.add.reduceat(rows[index[ids]], starts, axis=0)
        self.size = end
        new.clear()


def _grown(values: Any, size: int) -> Any:
    """NumPy: `values`, or a copy with at least twice its capacity when `size` does not fit."""
    import numpy as np

    if size <= len(values):
        return values
    out = np.zeros(max(size, 2 * len(values)), dtype=values.dtype)
    out[: len(values)] = values
    return out


def segment_sums(table: Any, idx: Any, owner: Any, n: int) -> Any:
    """NumPy: per text, the exact sum of the integer-valued rows `table[idx]` it owns (`owner`
    ascending), shape (n, dim). With SciPy, one sparse product (rows gathered and added in one C
    loop, ~5x faster than a gather and `np.add.reduceat`, the path without SciPy).

    The product calls SciPy's CSR kernel (`_sparsetools.csr_matvecs`, what `csr_matrix @ dense`
    runs) directly: the public operator's dispatch cost about 1 ms a call, 2 µs a tweet in
    batches of 512. When the kernel is not there or refuses the arguments (another SciPy), the
    public operator computes the same sums; the tests compare both with pure Python."""
    import numpy as np

    per_text = np.bincount(owner, minlength=n)
    sparse = _scipy_sparse()
    if sparse is not None:
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(per_text, out=indptr[1:])
        idx = idx.astype(np.int64, copy=False)
        data = np.ones(len(idx), dtype=table.dtype)
        kernel = getattr(getattr(sparse, "_sparsetools", None), "csr_matvecs", None)
        if kernel is not None and table.flags.c_contiguous:
            sums = np.zeros((n, table.shape[1]), dtype=table.dtype)
            try:
                kernel(n, len(table), table.shape[1], indptr, idx, data, table.ravel(), sums.ravel())
            except (TypeError, ValueError):
                pass
            else:
                return sums
        counts = sparse.csr_matrix((data, idx, indptr), shape=(n, len(table)))
        return np.asarray(counts @ table)
    sums = np.zeros((n, table.shape[1]), dtype=table.dtype)
    if len(idx):
        present = per_text > 0
        starts = (np.cumsum(per_text) - per_text)[present]
        sums[present] = np.add.reduceat(table[idx], starts, axis=0)
    return sums


_SCIPY: list[Any] = []


def _scipy_sparse() -> Any:
    """`scipy.sparse` when installed (the `fast` extra), else None; looked up once."""
    if not _SCIPY:
        try:
            import scipy.sparse as sparse
        except ImportError:
            sparse = None
        _SCIPY.append(sparse)
    return _SCIPY[0]


def exp_array(x: Any) -> Any:
    import numpy as np

    return np.fromiter(map(math.exp, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)
