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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from thresher.classify.batch import WordTable, exp_array, segment_sums
from thresher.classify.features import FeatureExtractor, FeatureSpec, word_ngram_ids, word_sequence

LOSSES = ("softmax", "ova")
_ROW_OFFSET = 1 << 31  # makes every stored int32 non-negative inside a packed 64-bit field


class _PackedRows(dict[int, int]):
    """bucket -> packed row, built on first use (a dict subclass: `map(rows.__getitem__, ids)` runs at
    C speed). Bounded by the model's rows plus the distinct unknown buckets seen."""

    def __init__(self, make: Callable[[int], int], known: frozenset[int]) -> None:
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

    def __init__(self, make: Callable[[str], tuple[int, int]]) -> None:
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
    row_ids: array[int]  # 'I', sorted bucket ids
    rows: array[int]  # 'i', len(row_ids) * dim fixed-point values
    output: array[float]  # 'f', len(labels) * dim
    info: dict[str, Any] = field(default_factory=dict)
    sha256: str = ""  # of the model file's bytes (set by save/load, or of the serialization)
    _extractor: FeatureExtractor | None = field(default=None, repr=False)
    _packed: _PackedRows = field(default=None, repr=False)  # type: ignore[assignment]
    _chars: _WordCache = field(default=None, repr=False)  # type: ignore[assignment]
    _np_table: WordTable | None = field(default=None, repr=False)
    _out_rows: list[list[float]] = field(default_factory=list, repr=False)
    _np: tuple[Any, Any, Any] | None = field(default=None, repr=False)

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
            index[np.frombuffer(self.row_ids, dtype=np.uint32).astype(np.int64)] = np.arange(
                len(self.row_ids), dtype=np.int32
            )
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
        slot in a table (`WordTable`) holding its hash and the sum of its own row and its character
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
            self._np_table = WordTable(self)
        table = self._np_table
        slots, owner = table.slots_of(texts)
        sums = np.zeros((n, self.dim), dtype=rows.dtype)
        counts = np.bincount(owner, weights=table.counts[slots], minlength=n).astype(np.int64) + 1  # + </s>
        sums += segment_sums(table.rows[: table.size], slots, owner, n)
        sums += table.eos_row
        if spec.word_ngrams > 1:
            # each text's words, then its end-of-text word: the sequence n-grams are taken from
            sequence, seq_owner = word_sequence(table.hashes[slots], owner, n, self.extractor.eos_hash)
            for ids, gram_owner in word_ngram_ids(sequence, seq_owner, spec.word_ngrams, spec.buckets):
                counts += np.bincount(gram_owner, minlength=n)
                sums += segment_sums(rows, index[ids], gram_owner, n)
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
            e = exp_array(np.where(positive, -logits, logits))
            return np.where(positive, 1.0 / (1.0 + e), e / (1.0 + e))
        e = exp_array(logits - logits.max(axis=1, keepdims=True))
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


def numpy_available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True
