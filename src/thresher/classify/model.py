"""A trained linear text classifier and its inference, in pure Python and with NumPy.

The model is fastText's (Joulin et al. 2017, "Bag of Tricks for Efficient Text Classification"):
a text's hidden vector is the mean of its features' embedding rows, the label logits are that
vector times the output matrix, and scores are a softmax over labels (one label per text) or one
sigmoid per label (one-vs-all, several labels per text).

**The two paths give the same scores, bit for bit.** Embedding rows are stored as int32 fixed point
(value × 2^-scale_bits), so a text's row sum is an exact integer sum whatever the order (pure
Python adds the rows packed into one big integer, NumPy adds int64 rows); each hidden value is that
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

from thresher.classify.features import FeatureExtractor, FeatureSpec

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
    _np_words: dict[str, int] = field(default_factory=dict, repr=False)
    _np_word_rows: Any = field(default=None, repr=False)
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
            rows = np.zeros((len(self.row_ids) + 1, d), dtype=np.int64)  # the last row: features without one
            rows[:-1] = np.frombuffer(self.rows, dtype=np.int32).reshape(-1, d)
            out = np.frombuffer(self.output, dtype=np.float32).astype(np.float64).reshape(len(self.labels), d)
            self._np = (index, rows, out)
        return self._np

    def logits_batch(self, texts: Sequence[str]) -> Any:
        """NumPy: the float64 logits of many texts, shape (len(texts), labels)."""
        import numpy as np

        index, rows, out = self._numpy_tables()
        parts, counts = self.extractor.batch_features(texts, words_only=True)
        n = len(texts)
        sums = np.zeros((n, self.dim), dtype=np.int64)
        if self.spec.char_ngrams is not None:  # the last part is (words, owner): per-word sums
            words, word_owner = parts.pop()
            slots = self._word_slots(words)
            table, char_counts = self._np_word_rows
            counts = counts + np.bincount(word_owner, weights=char_counts[slots], minlength=n).astype(np.int64)
            parts.append((slots, word_owner))
            rows_of = [rows[index[ids]] for ids, _ in parts[:-1]] + [table[slots]]
        else:
            rows_of = [rows[index[ids]] for ids, _ in parts]
        for (ids, owner), gathered in zip(parts, rows_of, strict=True):  # each part's owners ascend: one segment per text
            if len(ids) == 0:
                continue
            per_text = np.bincount(owner, minlength=n)
            present = per_text > 0
            starts = (np.cumsum(per_text) - per_text)[present]
            sums[present] += np.add.reduceat(gathered, starts, axis=0)  # exact: integer sums
        denom = (np.maximum(counts, 1) << np.int64(self.scale_bits)).astype(np.float64)
        hidden = sums.astype(np.float64) / denom[:, None]
        logits = np.zeros((n, len(self.labels)), dtype=np.float64)
        for j in range(self.dim):  # the pure-Python order: one dimension at a time
            logits += hidden[:, j : j + 1] * out[None, :, j]
        return logits

    def _word_slots(self, words: list[str]) -> Any:
        """NumPy: each word's slot in a table of per-word character n-gram row sums (int64) and
        counts, filled for words not seen before; the table is rebuilt when it reaches its limit."""
        import numpy as np

        index, rows, _ = self._numpy_tables()
        slots_of = self._np_words
        new = [w for w in dict.fromkeys(words) if w not in slots_of]
        if self._np_word_rows is None or len(slots_of) + len(new) > _WORD_CACHE_LIMIT:
            slots_of.clear()
            new = list(dict.fromkeys(words))
            self._np_word_rows = (np.zeros((0, self.dim), dtype=np.int64), np.zeros(0, dtype=np.int64))
        if new:
            table, char_counts = self._np_word_rows
            per_word = [self.extractor.char_ids(w) for w in new]
            lengths = np.fromiter(map(len, per_word), dtype=np.int64, count=len(new))
            ids = np.fromiter(chain.from_iterable(per_word), dtype=np.int64, count=int(lengths.sum()))
            added = np.zeros((len(new), self.dim), dtype=np.int64)
            present = lengths > 0
            if ids.size:
                starts = (np.cumsum(lengths) - lengths)[present]
                added[present] = np.add.reduceat(rows[index[ids]], starts, axis=0)
            base = len(table)
            self._np_word_rows = (np.concatenate([table, added]), np.concatenate([char_counts, lengths]))
            slots_of.update(zip(new, range(base, base + len(new)), strict=True))
        return np.fromiter(map(slots_of.__getitem__, words), dtype=np.int64, count=len(words))

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


def _exp_array(x: Any) -> Any:
    import numpy as np

    return np.fromiter(map(math.exp, x.ravel().tolist()), dtype=np.float64, count=x.size).reshape(x.shape)


def numpy_available() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True
