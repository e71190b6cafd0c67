"""A trained linear text classifier and its inference, in pure Python and with NumPy.

The model is fastText's (Joulin et al. 2017, "Bag of Tricks for Efficient Text Classification"):
a text's hidden vector is the mean of its features' embedding rows, the label logits are that
vector times the output matrix, and scores are a softmax over labels (one label per text) or one
sigmoid per label (one-vs-all, several labels per text).

**The two paths give the same scores, bit for bit.** Embedding rows are stored as int32 fixed point
(value × 2^-scale_bits), so a text's row sum is an exact integer sum whatever the order (pure
Python adds the rows packed into one big integer, NumPy adds integer-valued rows: float64 while
every partial sum stays below 2^53, else int64); each hidden value is that
sum divided by `n × 2^scale_bits`, one correctly rounded float64 division; the logits are
accumulated over the dimensions in the same order with separate IEEE multiplies and adds (NumPy
vectorises over texts, never over the dimension), and softmax/sigmoid run in Python on the float64
logits in both paths. Label decisions made on these scores are therefore identical too.
"""

from __future__ import annotations

import bisect
import math
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from thresher.classify.features import (
    SEPARATOR,
    TOKEN_RE,
    FeatureExtractor,
    FeatureSpec,
    word_ngram_ids,
    word_sequence,
)

LOSSES = ("softmax", "ova")
_ROW_OFFSET = 1 << 31  # makes every stored int32 non-negative inside a packed 64-bit field


class _PackedRows(dict[int, int]):
    """bucket -> packed row, built on first use (a dict subclass: `map(rows.__getitem__, ids)` runs at
    C speed). Bounded by the model's rows plus the distinct unknown buckets seen."""

    def __init__(self, make: Any, known: Any) -> None:
        super().__init__()
        self.make = make
        self.known = known
        self.zero = make(-1)

    def __missing__(self, bucket: int) -> int:
        if bucket not in self.known:
            return self.zero  # not kept: unknown buckets would grow the cache without bound
        packed = self[bucket] = self.make(bucket)
        return packed


class _WordCache(dict[str, tuple[int, int]]):
    """word -> (character n-grams, packed row sum), built on first use; cleared when full."""

    def __init__(self, make: Any) -> None:
        super().__init__()
        self.make = make

    def __missing__(self, token: str) -> tuple[int, int]:
        if len(self) >= _WORD_CACHE_LIMIT:
            self.clear()
        found = self[token] = self.make(token)
        return found


_WORD_CACHE_LIMIT = 1 << 17
_CHUNK_CHARS = 1 << 18  # characters per NumPy chunk (a scan batch of 2048 tweets is one): at most 2^17 new words


@dataclass(slots=True, kw_only=True)
class Model:
    """A classifier: feature spec, labels, fixed-point embedding rows and a float32 output matrix.

    `row_ids` are the bucket ids that have a trained row (sorted); a feature without one adds a
    zero vector but still counts in the mean. `info` holds the training record (hyper-parameters,
    examples per label, the trainer) that the file header stores.
    """

    labels: tuple[str, ...]
    loss: str
    dim: int
    spec: FeatureSpec
    scale_bits: int
    row_ids: array  # 'I', sorted bucket ids
    rows: array  # 'i', len(row_ids) * dim fixed-point values
    output: array  # 'f', len(labels) * dim
    info: dict[str, Any] = field(default_factory=dict)
    sha256: str = ""  # of the model file's bytes (set by save/load, or of the serialization)
    _extractor: FeatureExtractor | None = field(default=None, repr=False)
    _packed: _PackedRows = field(default=None, repr=False)  # type: ignore[assignment]
    _chars: _WordCache = field(default=None, repr=False)  # type: ignore[assignment]
    _np_table: _WordTable | None = field(default=None, repr=False)
    _out_rows: list[list[float]] = field(default_factory=list, repr=False)
    _np: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if len(self.rows) != len(self.row_ids) * self.dim or len(self.output) != len(self.labels) * self.dim:
            raise ValueError("model weights do not match the number of rows, labels and dimensions")
        if self.spec.max_features << self.scale_bits >= 1 << 52:
            raise ValueError("too many features per text for exact sums: lower max_tokens or the n-gram range")
        self._packed = _PackedRows(self._packed_row, frozenset(self.row_ids))
        self._chars = _WordCache(self._word_chars)
        d = self.dim
        self._out_rows = [list(self.output[k * d : (k + 1) * d]) for k in range(len(self.labels))]

    @property
    def extractor(self) -> FeatureExtractor:
        if self._extractor is None:
            self._extractor = FeatureExtractor(self.spec)
        return self._extractor

    # -- pure Python -------------------------------------------------------------------------

    def _packed_row(self, bucket: int) -> int:
        """Row `bucket` as one integer: dimension j in bits 64j..64j+63, offset to be non-negative,
        so the sum of n packed rows holds the n-row sum of every dimension (no carries: each field
        stays below n × 2^32 < 2^64)."""
        d = self.dim
        i = bisect.bisect_left(self.row_ids, bucket)
        if i < len(self.row_ids) and self.row_ids[i] == bucket:
            values = [v + _ROW_OFFSET for v in self.rows[i * d : (i + 1) * d]]
        else:
            values = [_ROW_OFFSET] * d
        return int.from_bytes(struct.pack(f"<{d}Q", *values), "little")

    def _word_chars(self, token: str) -> tuple[int, int]:
        """(number of character n-grams of a word, the packed sum of their rows): a word's
        character n-grams are summed once, then reused wherever the word occurs."""
        ids = self.extractor.char_ids(token)
        return len(ids), sum(map(self._packed.__getitem__, ids))

    def _text_hidden(self, text: str) -> list[float]:
        ids, tokens = self.extractor.word_features(text)
        n = len(ids)
        total = sum(map(self._packed.__getitem__, ids))  # integers: exact in any order
        if self.spec.char_ngrams is not None:
            per_word = list(map(self._chars.__getitem__, tokens))
            n += sum(c for c, _ in per_word)
            total += sum(p for _, p in per_word)
        return self._unpack(total, n)

    def _hidden(self, ids: Sequence[int]) -> list[float]:
        return self._unpack(sum(map(self._packed.__getitem__, ids)), len(ids))

    def _unpack(self, total: int, n: int) -> list[float]:
        d = self.dim
        if n == 0:
            return [0.0] * d
        sums = struct.unpack(f"<{d}Q", total.to_bytes(8 * d, "little"))
        bias = n * _ROW_OFFSET
        denom = float(n << self.scale_bits)
        return [float(s - bias) / denom for s in sums]

    def _logits(self, hidden: Sequence[float]) -> list[float]:
        logits = []
        for out in self._out_rows:
            acc = 0.0
            for h, w in zip(hidden, out, strict=True):  # sequential, unfused: the NumPy path adds in this order
                acc += h * w
            logits.append(acc)
        return logits

    def score_list(self, text: str) -> list[float]:
        """Score of every label for one text, in label order (pure Python)."""
        return self.normalize(self._logits(self._text_hidden(text)))

    def scores(self, text: str) -> dict[str, float]:
        """Score of every label for one text (pure Python)."""
        return dict(zip(self.labels, self.score_list(text), strict=True))

    def normalize(self, logits: Sequence[float]) -> list[float]:
        """Logits to scores: softmax, or one sigmoid per label for one-vs-all."""
        if self.loss == "ova":
            return [1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x)) for x in logits]
        top = max(logits)
        exps = [math.exp(x - top) for x in logits]
        total = 0.0
        for e in exps:
            total += e
        return [e / total for e in exps]

    def predict(self, text: str, k: int = 1, threshold: float = 0.0) -> list[tuple[str, float]]:
        """The `k` best labels with their scores, best first, keeping only scores >= threshold."""
        ranked = sorted(self.scores(text).items(), key=lambda kv: (-kv[1], self.labels.index(kv[0])))
        return [(label, score) for label, score in ranked[:k] if score >= threshold]

    # -- NumPy ---------------------------------------------------------------------------------

    def _numpy_tables(self) -> tuple[Any, Any, Any]:
        if self._np is None:
            import numpy as np

            d = self.dim
            index = np.full(self.spec.buckets, len(self.row_ids), dtype=np.int32)
            index[np.frombuffer(self.row_ids, dtype=np.uint32).astype(np.int64)] = np.arange(len(self.row_ids), dtype=np.int32)
            rows = np.zeros((len(self.row_ids) + 1, d), dtype=self._sum_dtype())  # the last row: features without one
            rows[:-1] = np.frombuffer(self.rows, dtype=np.int32).reshape(-1, d)
            out = np.frombuffer(self.output, dtype=np.float32).astype(np.float64).reshape(len(self.labels), d)
            self._np = (index, rows, out)
        return self._np

    def _sum_dtype(self) -> Any:
        """The dtype NumPy sums rows in: float64 when every sum of a text's rows is an integer
        below 2^53 in magnitude (stored values are int32, so up to 2^22 features a text), where
        float64 adds integers exactly in any order and SciPy's float kernel is ~1.6x faster than its
        int64 one; int64 otherwise. Either way the sums are the exact integers. (2^21, not 2^22:
        `max_features` leaves out the end-of-text word and its n-grams.)"""
        import numpy as np

        return np.float64 if self.spec.max_features < 1 << 21 else np.int64

    def logits_batch(self, texts: Sequence[str]) -> Any:
        """NumPy: the float64 logits of many texts, shape (len(texts), labels).

        The texts are tokenized in one pass (joined by a separator word). Each distinct word gets a
        slot in a table (`_WordTable`) holding its hash and the sum of its own row and its character
        n-gram rows, so a word's rows are gathered from a small table that stays in cache, and its
        character n-grams are hashed once per table lifetime, not once per occurrence. Word n-grams
        are hashed for the whole batch at once from the words' hashes. All sums are of integers: exact.
        Texts go in chunks of at most `_CHUNK_CHARS` characters (or one text), which bounds how many
        words one chunk can add to the table."""
        import numpy as np

        if sum(map(len, texts)) <= _CHUNK_CHARS:  # the whole batch is one chunk (a batch of short texts)
            return self._chunk_logits(texts)
        chunks: list[Any] = []
        chunk: list[str] = []
        chars = 0
        for text in texts:
            size = min(len(text), self.spec.max_chars)
            if chunk and chars + size > _CHUNK_CHARS:
                chunks.append(self._chunk_logits(chunk))
                chunk, chars = [], 0
            chunk.append(text)
            chars += size
        if chunk or not chunks:
            chunks.append(self._chunk_logits(chunk))
        return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)

    def _chunk_logits(self, texts: Sequence[str]) -> Any:
        import numpy as np

        index, rows, out = self._numpy_tables()
        spec = self.spec
        n = len(texts)
        if self._np_table is None or max(self._np_table.size, len(self._np_table.chunks)) > _WORD_CACHE_LIMIT:
            self._np_table = _WordTable(self)
        table = self._np_table
        slots, owner = table.slots_of(texts)
        sums = np.zeros((n, self.dim), dtype=rows.dtype)
        counts = np.bincount(owner, weights=table.counts[slots], minlength=n).astype(np.int64) + 1  # + </s>
        sums += _segment_sums(table.rows[: table.size], slots, owner, n)
        sums += table.eos_row
        if spec.word_ngrams > 1:
            # each text's words, then its end-of-text word: the sequence n-grams are taken from
            sequence, seq_owner = word_sequence(table.hashes[slots], owner, n, self.extractor.eos_hash)
            for ids, gram_owner in word_ngram_ids(sequence, seq_owner, spec.word_ngrams, spec.buckets):
                counts += np.bincount(gram_owner, minlength=n)
                sums += _segment_sums(rows, index[ids], gram_owner, n)
        denom = (counts << np.int64(self.scale_bits)).astype(np.float64)
        hidden = sums.astype(np.float64) / denom[:, None]
        logits = np.zeros((n, len(self.labels)), dtype=np.float64)
        for j in range(self.dim):  # the pure-Python order: one dimension at a time
            logits += hidden[:, j : j + 1] * out[None, :, j]
        return logits

    def normalize_batch(self, logits: Any) -> Any:
        """`normalize` of every row, vectorised with the same operations in the same order
        (`math.exp` itself, mapped over the array), hence the same bits."""
        import numpy as np

        if self.loss == "ova":
            positive = logits >= 0
            e = _exp_array(np.where(positive, -logits, logits))
            return np.where(positive, 1.0 / (1.0 + e), e / (1.0 + e))
        e = _exp_array(logits - logits.max(axis=1, keepdims=True))
        total = np.zeros(len(logits), dtype=np.float64)
        for c in range(e.shape[1]):  # sequential, as the pure-Python sum
            total = total + e[:, c]
        return e / total[:, None]

    def scores_batch(self, texts: Sequence[str], use_numpy: bool | None = None) -> list[list[float]]:
        """Scores of many texts, one list per text in label order. NumPy when available (or when
        `use_numpy`), else pure Python: the same numbers either way."""
        if use_numpy is None:
            use_numpy = numpy_available()
        if not use_numpy:
            return [self.score_list(t) for t in texts]
        if not texts:
            return []
        scores: list[list[float]] = self.normalize_batch(self.logits_batch(texts)).tolist()
        return scores

    def scores_array(self, texts: Sequence[str]) -> Any:
        """NumPy: the scores of many texts as a float64 array (len(texts), labels), the numbers of
        `scores_batch`."""
        import numpy as np

        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        return self.normalize_batch(self.logits_batch(texts))


def round_array(x: Any, digits: int) -> list[list[float]]:
    """NumPy: `round(v, digits)` of every value, as nested lists of Python floats, bit for bit.

    Python rounds the exact binary value to `digits` decimals (half to even) and returns the double
    nearest that decimal. `rint(v * 10^digits) / 10^digits` gives the same double unless `v * 10^digits`
    lies within rounding error of a half (its integer k is then exact, and an IEEE division of k by
    the exact power of ten is the double nearest k / 10^digits): those few values are rounded by
    Python itself."""
    import numpy as np

    scale = 10.0**digits
    scaled = x * scale
    out = np.rint(scaled) / scale
    near_half = np.abs(scaled - np.floor(scaled) - 0.5) < 1e-6
    rows: list[list[float]] = out.tolist()
    if near_half.any():
        values = x.tolist()
        for i, j in zip(*np.nonzero(near_half), strict=True):
            rows[i][j] = round(values[i][j], digits)
    return rows


class _Slots(dict[str, int]):
    """word -> its slot in a `_WordTable`; a new word gets the next slot and is queued for `fill`."""

    def __init__(self) -> None:
        super().__init__()
        self.new: list[str] = []

    def __missing__(self, token: str) -> int:
        slot = self[token] = len(self)
        self.new.append(token)
        return slot


class _Chunks(dict[str, int]):
    """whitespace-free chunk -> its id; a new chunk's words (`findall`, or the chunk itself for the
    whitespace tokenizer) get their slots and are queued for `_WordTable.fill`. A chunk's id, not
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


class _WordTable:
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
            slots = self.chunk_slots[np.repeat(starts - (ends - lengths), lengths) + np.arange(int(ends[-1]), dtype=np.int64)]
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
            self.rows = np.concatenate([self.rows, np.zeros((capacity - len(self.rows), model.dim), dtype=self.rows.dtype)])
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


def _segment_sums(table: Any, idx: Any, owner: Any, n: int) -> Any:
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


def _exp_array(x: Any) -> Any:
    import numpy as np

    return np.fromiter(map(math.exp, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)


def numpy_available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True
