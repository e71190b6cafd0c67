"""fastText supervised models, read and run by thresher itself: the `fasttext` classifier kind.

A `.bin` or `.ftz` file (`thresher.classify.fasttext_file`) is scored as fastText 0.9's `predict`
scores a line, to within float rounding (the tests compare every label's probability with the
`fasttext` package's, to 1e-6):

- **Tokens**: the line's bytes split on ASCII whitespace (space, tab, CR, LF, VT, FF, NUL) and a
  final `</s>` (fastText's end of line: `predict` reads the text as one line). A document's
  newlines are read as spaces first, as the published pipelines replace them before calling
  `predict` (datatrove's fastText filters: `newline_replacement`): fastText itself stops at the
  first newline. No other normalization: a recipe that lowercases or strips punctuation before
  `predict` needs that done to the text first.
- **Features**: each in-vocabulary word's row and, for every word, its character n-grams (minn..maxn
  characters of `<word>`, hashed with 32-bit FNV-1a over signed bytes, modulo `bucket`), then the
  hashes of the word n-grams up to `wordNgrams`; a token starting with `__label__` is not read. A
  quantized model's pruned dictionary keeps only some buckets (`pruneidx`).
- **Scores**: the hidden vector is the mean of the feature rows (summed in float32, in order, as
  fastText sums them); softmax (`softmax` loss), one sigmoid per label (`ova`, `ns`: fastText's
  512-step sigmoid table), or the product of the sigmoids along each label's path in the Huffman
  tree of the label counts (`hs`). fastText reports `exp(log(p + 1e-5))` (its `std_log`; for
  `hs` added at each node of the path), so a label's score can exceed 1 by 1e-5; thresher reports
  the same number, so a bound a recipe publishes means the same here.

The model loads once per process (`thresher.classify.stage.load_cached`); its matrices stay views
of the memory-mapped file, and the word dictionary is the only per-process copy. Scoring needs
NumPy (the `fasttext` extra).
"""

from __future__ import annotations

import dataclasses
import hashlib
from array import array
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from thresher.classify.fasttext_file import KSUB, FastTextFile, QuantizedMatrix, read_fasttext
from thresher.classify.fasttext_vocab import FNV_OFFSET, FNV_PRIME, SIGNED, Vocabulary, fnv1a
from thresher.core.errors import ConfigError

LABEL_PREFIX = "__label__"
EOS = b"</s>"
WORD_NGRAM_PRIME = 116049371
LOG_EPSILON = 1e-5  # fastText's std_log(x) = log(x + 1e-5)
# tokens whose input rows are kept per model: ~250 bytes each with lid.176's ~20 n-grams a word, so
# at most ~25 MiB a worker; a corpus's frequent words stay (the cache starts over when full)
FEATURE_CACHE_MAX = 100_000
COMPACT_VOCABULARY_MIN = 200_000  # dictionary entries above which the word -> id map is a Vocabulary
_MISSING = object()
_SPLIT = bytes.maketrans(b"\t\n\v\f\r\0", b"      ")
_MASK64 = (1 << 64) - 1


def _require_numpy() -> Any:
    try:
        import numpy as np
    except ImportError:
        raise ConfigError("fastText models need NumPy: pip install 'thresher[fasttext]'") from None
    return np


def _huffman_paths(counts: Sequence[int]) -> tuple[list[list[int]], list[list[bool]]]:
    """Each label's path from the root of fastText's Huffman tree (`HierarchicalSoftmaxLoss::buildTree`):
    the internal nodes (as output rows) and the branch taken at each (True: right)."""
    osz = len(counts)
    count = [int(c) for c in counts] + [10**15] * (osz - 1)
    parent = [-1] * (2 * osz - 1)
    right = [False] * (2 * osz - 1)
    leaf, node = osz - 1, osz
    for i in range(osz, 2 * osz - 1):
        mini = [0, 0]
        for j in range(2):
            if leaf >= 0 and count[leaf] < count[node]:
                mini[j] = leaf
                leaf -= 1
            else:
                mini[j] = node
                node += 1
        count[i] = count[mini[0]] + count[mini[1]]
        parent[mini[0]] = parent[mini[1]] = i
        right[mini[1]] = True
    nodes: list[list[int]] = []
    branches: list[list[bool]] = []
    for label in range(osz):
        path, turns = [], []
        n = label
        while parent[n] != -1:
            path.append(parent[n] - osz)
            turns.append(right[n])
            n = parent[n]
        nodes.append(path[::-1])
        branches.append(turns[::-1])
    return nodes, branches


class FastTextModel:
    """A fastText supervised model (see the module docstring); `ClassifierModel` of the `fasttext` kind."""

    def __init__(self, path: str) -> None:
        np = self._np = _require_numpy()
        model, self._map = read_fasttext(path)
        self.path = path
        self.file: FastTextFile = model
        self.args = args = model.args
        if args.model != "supervised":
            raise ConfigError(f"{path}: a fastText {args.model} model (word vectors), not a classifier: "
                              "only supervised models have labels")
        if model.nlabels < 1:
            raise ConfigError(f"{path}: a fastText model without labels")
        self.quantized = model.quantized
        self.raw_labels = tuple(w.decode("utf-8", "replace") for w in model.words[model.nwords:])
        self.labels = tuple(label.removeprefix(LABEL_PREFIX) for label in self.raw_labels)
        self.sha256 = _sha256(self._map)
        # words and labels -> ids, as fastText's word2int: a dict, or for a large dictionary a Vocabulary
        # (~22 bytes a word instead of ~100)
        self._ids: Any = (Vocabulary(np, model.words) if len(model.words) > COMPACT_VOCABULARY_MIN
                          else {w: i for i, w in enumerate(model.words)})
        # the dictionary's list and counts are not kept beyond the labels' (the dict above holds the words)
        self.file = dataclasses.replace(model, words=model.words[model.nwords:], counts=model.counts[model.nwords:])
        self._nwords = model.nwords
        # token -> (its input rows, its hash for word n-grams), or None for a label token
        self._features: dict[bytes, tuple[array[int], int] | None] = {}
        self._dense_output: Any = None
        self._quantized_input: Any = None
        if isinstance(model.input, QuantizedMatrix):
            q = model.input
            # the centroid table flattened to (nsubq * 256) x width rows; row m * 256 + code
            self._quantized_input = (q.centroids.reshape(-1, q.centroids.shape[2]),
                                     np.arange(q.codes.shape[1], dtype=np.intp) * KSUB)
        if args.loss == "hs":
            nodes, branches = _huffman_paths(self.file.counts)
            # every label's path as one flat run of (internal node, branch), labels one after another
            self._hs_nodes = np.asarray([n for p in nodes for n in p], dtype=np.intp)
            self._hs_right = np.asarray([b for p in branches for b in p], dtype=bool)
            self._hs_starts = np.cumsum([0] + [len(p) for p in nodes[:-1]]).astype(np.intp)
            self._hs_empty = np.asarray([not p for p in nodes], dtype=bool)  # a one-label tree
        elif args.loss not in ("softmax", "ova", "ns"):
            raise ConfigError(f"{path}: fastText loss {args.loss!r} is not one thresher scores")

    # -- features -----------------------------------------------------------------------------

    def _char_ngrams(self, word: bytes, out: list[int]) -> None:
        """`Dictionary::computeSubwords` of `<word>`: n-grams of minn..maxn UTF-8 characters."""
        minn, maxn, bucket = self.args.minn, self.args.maxn, self.args.bucket
        if maxn <= 0 or bucket <= 0:
            return
        w = b"<" + word + b">"
        size = len(w)
        starts = [i for i, b in enumerate(w) if b & 0xC0 != 0x80]
        starts.append(size)
        nchars = len(starts) - 1
        signed = SIGNED
        buckets = []
        for a in range(nchars):
            h = FNV_OFFSET
            for n in range(1, min(maxn, nchars - a) + 1):
                end = starts[a + n]
                for b in w[starts[a + n - 1]:end]:
                    h = ((h ^ signed[b]) * FNV_PRIME) & 0xFFFFFFFF
                if n >= minn and not (n == 1 and (a == 0 or end == size)):
                    buckets.append(h % bucket)
        self._push_all(out, buckets)

    def _feature(self, token: bytes) -> tuple[array[int], int] | None:
        """A token's input rows (`Dictionary::addSubwords`: its own row if in the vocabulary, then its
        character n-grams) and its hash, or None for a label token; computed once per token and kept
        (at most `FEATURE_CACHE_MAX` tokens, then the cache starts over: the ids are the same)."""
        cache = self._features
        found = cache.get(token, _MISSING)
        if found is not _MISSING:
            return found  # type: ignore[return-value]
        wid = self._ids.get(token, -1)
        if wid >= self._nwords or (wid < 0 and token.startswith(b"__label__")):
            value = None
        else:
            out = [wid] if wid >= 0 else []
            if token != EOS and (wid < 0 or self.args.maxn > 0):
                self._char_ngrams(token, out)
            value = (array("i", out), fnv1a(token) if self.args.word_ngrams > 1 else 0)  # int32: 4 bytes an id
        if len(cache) >= FEATURE_CACHE_MAX:
            cache.clear()
        cache[token] = value
        return value

    def _tokens(self, text: str) -> tuple[list[int], list[int]]:
        """The input rows of the words of `text` (newlines read as spaces; no `</s>`), and the word
        hashes the word n-grams need (empty for a model without them)."""
        ids: list[int] = []
        hashes: list[int] = []
        extend, ngrams = ids.extend, self.args.word_ngrams > 1
        cache, feature = self._features, self._feature
        for token in text.encode("utf-8", "replace").translate(_SPLIT).split(b" "):
            if not token:
                continue
            found = cache.get(token) or feature(token)
            if found is None:
                continue  # a label
            extend(found[0])
            if ngrams:
                hashes.append(found[1])
        return ids, hashes

    def _line(self, ids: list[int], hashes: list[int]) -> list[int]:
        """The rows of a line's words followed by `</s>`, then its word n-grams (`Dictionary::getLine`)."""
        eos = self._feature(EOS)
        assert eos is not None
        line = ids + list(eos[0])
        n = self.args.word_ngrams
        if n > 1:
            self._word_ngrams([*hashes, eos[1]], n, line)
        return line

    def feature_ids(self, text: str) -> list[int]:
        """The input rows fastText's `Dictionary::getLine` reads for `text` as one line (newlines
        read as spaces), followed by `</s>`, as `predict` reads it."""
        return self._line(*self._tokens(text))

    def _word_ngrams(self, hashes: list[int], n: int, out: list[int]) -> None:
        """`Dictionary::addWordNgrams`: the hashes are int32 widened to uint64 (sign-extended)."""
        bucket = self.args.bucket
        wide = [h | 0xFFFFFFFF00000000 if h & 0x80000000 else h for h in hashes]
        if n == 2:
            buckets = [((a * WORD_NGRAM_PRIME + b) & _MASK64) % bucket for a, b in pairwise(wide)]
        else:
            buckets = []
            for i in range(len(wide)):
                h = wide[i]
                for j in range(i + 1, min(len(wide), i + n)):
                    h = (h * WORD_NGRAM_PRIME + wide[j]) & _MASK64
                    buckets.append(h % bucket)
        self._push_all(out, buckets)

    def _push_all(self, out: list[int], buckets: list[int]) -> None:
        """`Dictionary::pushHash` of each bucket: its input row (a pruned model keeps only some)."""
        nwords, prune = self._nwords, self.file.pruneidx
        if prune is None:
            out.extend([nwords + b for b in buckets])
        else:
            out.extend([nwords + prune[b] for b in buckets if b in prune])

    # -- scores -------------------------------------------------------------------------------

    def _rows(self, ids: Any) -> Any:
        """The input rows of `ids` (int64 array), float32, len(ids) x dim."""
        m = self.file.input
        if not isinstance(m, QuantizedMatrix):
            return m[ids]
        table, offsets = self._quantized_input
        rows = table[m.codes[ids] + offsets]  # len(ids) x nsubq x width
        if m.dsub != m.lastdsub:
            np = self._np
            nsubq = len(offsets)
            flat = np.concatenate([rows[:, : nsubq - 1, : m.dsub].reshape(len(ids), -1),
                                   rows[:, nsubq - 1, : m.lastdsub]], axis=1)
        else:
            flat = rows.reshape(len(ids), -1)
        if m.norms is not None:
            flat = flat * m.norms[ids][:, None]
        return flat

    def hidden(self, lines: Sequence[list[int]]) -> Any:
        """The hidden vector of each line's feature rows (lines x dim, float32): their mean, summed in
        order in float32 as fastText's `Model::computeHidden` sums them (not NumPy's pairwise order);
        zero for a line without features (fastText then predicts nothing)."""
        np = self._np
        out = np.zeros((len(lines), self.args.dim), dtype=np.float32)
        for i, ids in enumerate(lines):
            if ids:
                rows = self._rows(np.asarray(ids, dtype=np.intp))
                # NumPy reduces a C-contiguous 2-D array over axis 0 row after row (fastText's order);
                # a single column it sums pairwise, so that one is a cumulative sum
                total = rows.sum(axis=0, dtype=np.float32) if rows.shape[1] > 1 else rows.cumsum(axis=0)[-1]
                out[i] = total * np.float32(1.0 / len(ids))
        return out

    def _output(self) -> Any:
        m = self.file.output
        if isinstance(m, QuantizedMatrix):
            cached = self._dense_output
            if cached is None:
                cached = self._dense_output = _dequantize(self._np, m, self._np.arange(m.rows))
            return cached
        return m

    def logits(self, hidden: Any) -> Any:
        """`hidden` times each output row (texts x rows). For the sigmoid table (`ova`, `ns`) in float32,
        accumulated in order as fastText's `dotRow` does, so that a score near a table step falls on
        fastText's side; otherwise one float64 product (within 1e-7 of fastText's float32 sums)."""
        np = self._np
        out = self._output()
        if self.args.loss not in ("ova", "ns"):
            return hidden.astype(np.float64) @ out.astype(np.float64).T
        acc = np.zeros((len(hidden), len(out)), dtype=np.float32)
        for j in range(self.args.dim):
            acc += hidden[:, j : j + 1] * out[:, j][None, :]
        return acc

    def scores_array(self, texts: Sequence[str]) -> Any:
        """Every label's probability for each text, as fastText's `predict` reports it (float64,
        texts x labels, in the model's label order); 0 for every label of a text without features."""
        if not texts:
            return self._np.zeros((0, len(self.labels)), dtype=self._np.float64)
        return self._scores([self.feature_ids(text) for text in texts])

    def scores_of_parts(self, parts: Sequence[str]) -> Any:
        """The scores of the parts joined by newlines (row 0), then of each part alone: the words
        are read once (a mixed document's paragraphs, `thresher.lang.fasttext_lid`)."""
        tokens = [self._tokens(part) for part in parts]
        joined = self._line([i for ids, _ in tokens for i in ids], [h for _, hs in tokens for h in hs])
        return self._scores([joined, *(self._line(ids, hs) for ids, hs in tokens)])

    def _scores(self, lines: Sequence[list[int]]) -> Any:
        np = self._np
        logits = self.logits(self.hidden(lines))
        loss = self.args.loss
        if loss == "softmax":
            e = np.exp(logits - logits.max(axis=1, keepdims=True))
            out = e / e.sum(axis=1, keepdims=True) + LOG_EPSILON
        elif loss == "hs":
            f = 1.0 / (1.0 + np.exp(-logits))  # f of internal node r at column r
            taken = f[:, self._hs_nodes]  # each label's path, one after another
            step = np.where(self._hs_right, taken, 1.0 - taken) + LOG_EPSILON
            out = np.exp(np.add.reduceat(np.log(step), self._hs_starts, axis=1)) if len(self._hs_nodes) else (
                np.ones((len(lines), len(self.labels))))
            out[:, self._hs_empty] = 1.0
        else:
            out = _table_sigmoid(np, logits) + LOG_EPSILON
        for i, ids in enumerate(lines):
            if not ids:
                out[i] = 0.0
        return out

    def predict(self, text: str, k: int = 1) -> list[tuple[str, float]]:
        """The `k` best labels (with the `__label__` prefix, as fastText names them) and their scores."""
        scores = self.scores_array([text])[0]
        order = sorted(range(len(scores)), key=lambda i: -scores[i])[:k]
        return [(self.raw_labels[i], float(scores[i])) for i in order if scores[i] > 0.0]


SIGMOID_TABLE_SIZE = 512
MAX_SIGMOID = 8


def _table_sigmoid(np: Any, x: Any) -> Any:
    """fastText's `Loss::sigmoid` (one-vs-all and negative-sampling scores): a 513-entry float32
    table over [-8, 8], indexed in float32 as fastText indexes it; 0 below -8 and 1 above 8."""
    f32 = np.float32
    steps = np.arange(SIGMOID_TABLE_SIZE + 1, dtype=np.int64)
    at = (steps * 2 * MAX_SIGMOID).astype(f32) / f32(SIGMOID_TABLE_SIZE) - f32(MAX_SIGMOID)
    table = (1.0 / (1.0 + np.exp(-at.astype(np.float64)))).astype(f32)
    x = x.astype(f32)
    index = ((x + f32(MAX_SIGMOID)) * f32(SIGMOID_TABLE_SIZE) / f32(MAX_SIGMOID) / f32(2)).astype(np.int64)
    out = table[np.clip(index, 0, SIGMOID_TABLE_SIZE)].astype(np.float64)
    out[x < -MAX_SIGMOID] = 0.0
    out[x > MAX_SIGMOID] = 1.0
    return out


def _dequantize(np: Any, m: QuantizedMatrix, ids: Any) -> Any:
    nsubq = m.codes.shape[1]
    rows = m.centroids[np.arange(nsubq), m.codes[ids]]  # len(ids) x nsubq x width
    if m.dsub != m.lastdsub:
        parts = [rows[:, : nsubq - 1, : m.dsub].reshape(len(ids), -1), rows[:, nsubq - 1, : m.lastdsub]]
        flat = np.concatenate(parts, axis=1)
    else:
        flat = rows.reshape(len(ids), -1)
    if m.norms is not None:
        flat = flat * m.norms[ids][:, None]
    return flat.astype(np.float32)


def _sha256(buf: Any) -> str:
    digest = hashlib.sha256()
    view = memoryview(buf)
    for start in range(0, len(view), 1 << 24):
        digest.update(view[start:start + (1 << 24)])
    return digest.hexdigest()


def load_fasttext(path: str, *, tokenizer: str | None = None, max_len: int = 256) -> FastTextModel:
    """The `fasttext` classifier kind's loader (`thresher.classify.kinds`); fastText reads no
    tokenizer file and scores every token of a text."""
    del tokenizer, max_len
    return FastTextModel(path)
