"""Training: stochastic gradient descent on the fastText model, with a fixed seed.

Per example (in a seeded shuffled order each epoch): the hidden vector is the mean of the text's
embedding rows, the logits are the output matrix times it, and the loss is softmax cross-entropy
(one label per text) or one binary logistic loss per label (one-vs-all, any number of labels per
text). The learning rate decays linearly from `lr` to 0 over all steps, as in fastText. Rows are
initialised uniform in ±1/dim from BLAKE2b of (seed, bucket) (`initial_fixed_row`), so the initial
weights do not depend on the order rows are first seen or on the trainer; the output matrix
starts at zero.

The arithmetic is exact where order could matter, so the bytes are the same from both trainers and
on every machine whose C library's `exp` (softmax, sigmoid) rounds alike (the one IEEE operation
that is not correctly rounded everywhere): embedding rows are fixed-point integers during training too (at 2^-bits,
`training_scale_bits`: up to 40 bits, fewer for texts with many features), so a text's row sum is
an exact integer sum (any order) and an update (the gradient / n, rounded once to the fixed
point) an exact integer addition to each of its rows. The float steps (hidden = sum / (n 2^bits),
logits by `math.fsum`, softmax, gradients) are one code path, the same IEEE operations in the same
order every time. `trainer="numpy"` keeps the rows in an int64 array and extracts features with
NumPy (the same ids); `python` packs each row into one Python integer (a 64-bit field per
dimension: a row sum is one `sum()` of big integers); `auto` picks NumPy when it is installed. All
give the same model bytes. At the end the rows are re-expressed at the stored model's scale (int32,
round half to even), so the model returned is exactly the one a saved file loads back as.

The training set's features are held in memory (training is not a streaming stage).
"""

from __future__ import annotations

import hashlib
import math
import random
import struct
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import chain
from operator import add
from typing import Any, Literal

from thresher.classify.features import FeatureExtractor, FeatureSpec
from thresher.classify.format import dump_model
from thresher.classify.model import LOSSES, Model, numpy_available
from thresher.core.errors import ThresherError

Trainer = Literal["auto", "python", "numpy"]
TRAINER = "fixed-point"  # what the model header records: the training arithmetic, the same on both paths


class TrainingError(ThresherError):
    """The training data cannot train a classifier (no examples, one label, a label without examples)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainConfig:
    dim: int = 16
    epochs: int = 5
    lr: float = 0.5
    loss: str = "softmax"
    seed: int = 0
    trainer: Trainer = "auto"
    # None: every example counts once; "balanced": label l weighs examples / (labels x examples of l)
    # (scikit-learn's rule); or "LABEL=W,LABEL=W" (labels not named weigh 1). An example's step is
    # scaled by its label's weight (by the largest of its labels' weights with several labels).
    class_weight: str | None = None
    features: FeatureSpec = field(default_factory=FeatureSpec)

    def __post_init__(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if not 1 <= self.dim <= 1024:
            raise ValueError(f"dim must be in [1, 1024], got {self.dim}")
        if self.epochs < 1 or self.lr <= 0:
            raise ValueError("epochs must be >= 1 and lr > 0")
        if self.trainer not in ("auto", "python", "numpy"):
            raise ValueError(f"trainer must be auto, python or numpy, got {self.trainer!r}")
        if self.class_weight is not None and self.class_weight != "balanced":
            parse_class_weights(self.class_weight)


def parse_class_weights(text: str) -> dict[str, float]:
    """`LABEL=W,LABEL=W` -> {label: weight}; a weight is a positive finite number."""
    weights: dict[str, float] = {}
    for part in text.split(","):
        label, sep, value = part.strip().rpartition("=")
        try:
            weight = float(value)
        except ValueError:
            weight = float("nan")
        if not sep or not label or not (0 < weight < math.inf):
            raise ValueError(
                f"class weights are 'balanced' or LABEL=WEIGHT,... with positive weights, got {part.strip()!r}"
            )
        weights[label] = weight
    return weights


def class_weights(spec: str | None, counts: dict[str, int]) -> list[float] | None:
    """The weight of each label in `counts`' order, or None for unweighted training."""
    if spec is None:
        return None
    if spec == "balanced":
        total = sum(counts.values())
        return [total / (len(counts) * n) for n in counts.values()]
    named = parse_class_weights(spec)
    unknown = sorted(set(named) - set(counts))
    if unknown:
        raise TrainingError(f"class weight for {unknown[0]!r}, which is not among the labels {list(counts)}")
    return [named.get(label, 1.0) for label in counts]


Example = tuple[str, "str | Sequence[str]"]


def train(
    examples: Iterable[Example],
    config: TrainConfig | None = None,
    *,
    labels: Sequence[str] | None = None,
    **options: Any,
) -> Model:
    """Train a classifier on `(text, label)` or `(text, [labels...])` pairs.

    `labels` fixes the label order (default: sorted); every label must have examples. Options
    are `TrainConfig` fields or `FeatureSpec` fields, e.g. `train(pairs, epochs=10, word_ngrams=2)`.
    """
    config = _with_options(config or TrainConfig(), options)
    texts: list[str] = []
    targets: list[tuple[str, ...]] = []
    for text, label in examples:
        texts.append(text)
        targets.append((label,) if isinstance(label, str) else tuple(label))
    if not texts:
        raise TrainingError("no training examples")
    seen = sorted({lab for t in targets for lab in t})
    label_order = tuple(labels) if labels is not None else tuple(seen)
    unknown = sorted(set(seen) - set(label_order))
    if unknown:
        raise TrainingError(f"examples carry label {unknown[0]!r}, not among the labels {list(label_order)}")
    counts = {lab: 0 for lab in label_order}
    for t in targets:
        for lab in t:
            counts[lab] += 1
    empty = [lab for lab, n in counts.items() if n == 0]
    if empty:
        raise TrainingError(f"label {empty[0]!r} has no training examples")
    if len(label_order) < 2:
        raise TrainingError(f"only one label ({label_order[0]!r}): a classifier needs examples of at least two")
    if config.loss == "softmax" and any(len(t) != 1 for t in targets):
        raise TrainingError("an example has several labels (or none): use loss 'ova' for multi-label training")
    index = {lab: i for i, lab in enumerate(label_order)}
    target_ids = [tuple(index[lab] for lab in t) for t in targets]
    weights_of_labels = class_weights(config.class_weight, counts)
    example_weights = None
    if weights_of_labels is not None:
        example_weights = [max((weights_of_labels[c] for c in t), default=1.0) for t in target_ids]
    trainer = config.trainer
    if trainer == "auto":
        trainer = "numpy" if numpy_available() else "python"
    extractor = FeatureExtractor(config.features)
    row_ids, weights = _train_exact(extractor, texts, target_ids, len(label_order), config, example_weights,
                                    use_numpy=trainer == "numpy")
    rows, output, scale_bits = weights
    info = {
        "dim": config.dim, "epochs": config.epochs, "lr": config.lr, "loss": config.loss, "seed": config.seed,
        "trainer": TRAINER, "examples": len(texts), "examples_per_label": counts,
    }
    if weights_of_labels is not None:  # only then: unweighted models keep the bytes they always had
        info["class_weight"] = {
            "spec": config.class_weight,
            "weights": dict(zip(label_order, weights_of_labels, strict=True)),
        }
    model = Model(
        labels=label_order, loss=config.loss, dim=config.dim, spec=config.features, scale_bits=scale_bits,
        row_ids=row_ids, rows=rows, output=output, info=info,
    )
    import hashlib

    model.sha256 = hashlib.sha256(dump_model(model)).hexdigest()
    return model


def _with_options(config: TrainConfig, options: dict[str, Any]) -> TrainConfig:
    if not options:
        return config
    spec_names = {f.name for f in fields(FeatureSpec)}
    config_names = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(options) - spec_names - config_names)
    if unknown:
        raise TypeError(f"unknown training option {unknown[0]!r}")
    spec = replace(options.get("features", config.features), **{k: v for k, v in options.items() if k in spec_names})
    options = {k: v for k, v in options.items() if k != "features"}
    return replace(config, features=spec, **{k: v for k, v in options.items() if k in config_names})


def _scale_bits(max_abs: float, spec: FeatureSpec) -> int:
    bits = 30 if max_abs == 0 else max(0, min(30, math.floor(math.log2((2**31 - 1) / max_abs))))
    while bits > 0 and spec.max_features << bits >= 1 << 52:
        bits -= 1
    return bits


# Training rows are fixed point too, at `scale_bits` chosen from the training set (below), packed
# one dimension per 64-bit field into one Python integer (dimension j times 2^(64 j), signed), so
# that a text's row sum is one exact integer sum and a row's update one integer addition.
_HALF = 1 << 63  # the offset that makes a signed 64-bit field an unsigned one for `struct`
_WEIGHT_HEADROOM_BITS = 16  # a text's row sum fits its field for weights up to +/-2^16
_TRAIN_SCALE_BITS = 40  # at most: 2^-40 resolution, far below the stored model's 2^-30


def training_scale_bits(max_features: int) -> int:
    """The fixed-point bits of the training rows for texts of at most `max_features` features:
    the sum of that many rows with weights up to ±2^16 stays below 2^62 in magnitude."""
    return max(8, min(_TRAIN_SCALE_BITS, 62 - _WEIGHT_HEADROOM_BITS - max(1, max_features).bit_length()))


class _Packer:
    """Packs `dim` signed integers into one integer (field j at bit 64 j) and back. Sums of packed
    integers are the packed sums as long as every field's sum stays inside ±2^63."""

    def __init__(self, dim: int) -> None:
        self.fields = struct.Struct(f"<{dim}Q")
        self.nbytes = 8 * dim
        self.offsets = int.from_bytes(self.fields.pack(*[_HALF] * dim), "little")  # _HALF in every field

    def pack(self, values: Iterable[int]) -> int:
        return int.from_bytes(self.fields.pack(*[v + _HALF for v in values]), "little") - self.offsets

    def unpack_offset(self, packed: int) -> tuple[int, ...]:
        """The fields of `packed`, each offset by 2^63 (so in [0, 2^64)); raises OverflowError when
        the top field left its range."""
        return self.fields.unpack((packed + self.offsets).to_bytes(self.nbytes, "little"))


def _features(extractor: FeatureExtractor, texts: list[str], use_numpy: bool) -> list[list[int]]:
    """Every text's feature ids, pure Python or NumPy (the same ids; their order within a text does
    not matter to training: its sums and updates are exact integer additions)."""
    if not use_numpy:
        return [extractor.features(t) for t in texts]
    import numpy as np

    feats: list[list[int]] = []
    for start in range(0, len(texts), 4096):
        parts, counts = extractor.batch_features(texts[start : start + 4096])
        ids = np.concatenate([p[0] for p in parts])
        owner = np.concatenate([p[1] for p in parts])
        ids = ids[np.argsort(owner, kind="stable")]
        feats += [part.tolist() for part in np.split(ids, np.cumsum(counts)[:-1])] if len(counts) else []
    return feats


def initial_fixed_row(seed: int, bucket: int, dim: int, bits: int) -> list[int]:
    """Row `bucket`'s initial weights in fixed point at `bits`: uniform in (-1/dim, 1/dim), from 32
    bits of BLAKE2b of (seed, bucket) per dimension, in integer arithmetic only (so they depend on
    nothing but the seed and the bucket: not on the order rows are first seen, the trainer or the
    machine)."""
    words: list[int] = []
    block = 0
    while len(words) < dim:
        digest = hashlib.blake2b(_INIT_KEY.pack(seed, bucket, block), digest_size=64, person=b"thresher-init").digest()
        words += _INIT_WORDS.unpack(digest)
        block += 1
    denom = dim << 32
    return [((2 * u + 1 - (1 << 32)) << bits) // denom for u in words[:dim]]


_INIT_KEY = struct.Struct("<QQI")
_INIT_WORDS = struct.Struct("<16I")


def _initial_fixed_rows(buckets: list[int], config: TrainConfig, bits: int) -> list[list[int]]:
    seed, d = config.seed, config.dim
    return [initial_fixed_row(seed, b, d, bits) for b in buckets]


class _PackedRows:
    """Pure Python: the training rows as packed integers (`_Packer`), one per bucket slot."""

    def __init__(self, initial: list[list[int]], offsets: list[list[int]], dim: int) -> None:
        self.packer = _Packer(dim)
        self.rows = list(map(self.packer.pack, initial))
        self.offsets = offsets

    def sums(self, i: int) -> list[int]:
        """Per dimension, the exact sum of example i's rows (ints; beyond ±2^63 a field is wrong,
        which `_train_exact` stops long before)."""
        try:
            fields = self.packer.unpack_offset(sum(map(self.rows.__getitem__, self.offsets[i])))
        except OverflowError:  # the top field left its range
            return [1 << 63]
        return [f - _HALF for f in fields]

    def add(self, i: int, update: list[int]) -> None:
        """Add `update` to each of example i's rows (once per occurrence)."""
        packed = self.packer.pack(update)
        rows = self.rows
        for o in self.offsets[i]:  # exact integer additions: their order does not matter
            rows[o] += packed

    def values(self) -> list[list[int]]:
        unpack = self.packer.unpack_offset
        return [[f - _HALF for f in unpack(r)] for r in self.rows]


class _NumpyRows:
    """NumPy: the training rows as one int64 array (the same integers as `_PackedRows`: integer
    sums and additions are exact in any order; int64 holds every field `_train_exact` allows)."""

    def __init__(self, initial: list[list[int]], offsets: list[list[int]], dim: int) -> None:
        import numpy as np

        self.np = np
        self.rows = np.array(initial, dtype=np.int64).reshape(len(initial), dim)
        self.index = [np.array(o, dtype=np.int64) for o in offsets]
        # a text with a feature twice adds the update to its distinct rows times the occurrences
        self.repeats: list[tuple[Any, Any] | None] = [None] * len(offsets)
        for i, o in enumerate(offsets):
            if len(set(o)) != len(o):
                distinct, times = np.unique(self.index[i], return_counts=True)
                self.repeats[i] = (distinct, times.astype(np.int64)[:, None])

    def sums(self, i: int) -> list[int]:
        found: list[int] = self.rows[self.index[i]].sum(axis=0).tolist()
        return found

    def add(self, i: int, update: list[int]) -> None:
        step = self.np.array(update, dtype=self.np.int64)
        repeats = self.repeats[i]
        if repeats is None:
            self.rows[self.index[i]] += step
        else:
            distinct, times = repeats
            self.rows[distinct] += times * step

    def values(self) -> list[list[int]]:
        found: list[list[int]] = self.rows.tolist()
        return found


def _train_exact(
    extractor: FeatureExtractor, texts: list[str], targets: list[tuple[int, ...]], k: int, config: TrainConfig,
    example_weights: list[float] | None = None, use_numpy: bool = False,
) -> tuple[array[int], tuple[array[int], array[float], int]]:
    """SGD with fixed-point rows (see the module docstring): the same bytes from either path, on any
    machine. Per step, a text's n rows are summed exactly (packed integers, or int64 NumPy rows), the
    hidden vector is each dimension's sum / (n 2^bits) (one float division), the logits, softmax and
    gradients are float64 in one code path for both, and the row update (gradient / n) is rounded
    once to the fixed point and added to each of the text's rows."""
    d, ova = config.dim, config.loss == "ova"
    feats = _features(extractor, texts, use_numpy)
    buckets = sorted({b for f in feats for b in f})
    slot = {b: i for i, b in enumerate(buckets)}
    offsets = [list(map(slot.__getitem__, f)) for f in feats]
    del feats
    bits = training_scale_bits(max(map(len, offsets), default=1))
    store = (_NumpyRows if use_numpy else _PackedRows)(_initial_fixed_rows(buckets, config, bits), offsets, d)
    sums_of, add_rows = store.sums, store.add
    out = [[0.0] * d for _ in range(k)]
    order = list(range(len(texts)))
    rng = random.Random(config.seed)
    total = config.epochs * len(texts)
    step = 0
    scale = 2.0**bits
    bound = 1 << 62  # a dimension's sum beyond ±2^62: the weights diverged
    fsum, exp, lr0 = math.fsum, math.exp, config.lr
    # the per-step float work as C-level maps (the same IEEE operations, in the same order, as the
    # arithmetic they stand for: x * y is y * x bit for bit)
    for _ in range(config.epochs):
        rng.shuffle(order)
        for i in order:
            lr = lr0 * (1.0 - step / total)
            if example_weights is not None:
                lr *= example_weights[i]
            step += 1
            n = len(offsets[i])
            if n == 0:
                continue
            sums = sums_of(i)
            if max(sums) > bound or min(sums) < -bound:
                raise _diverged(step)
            hidden = list(map(float(n << bits).__rtruediv__, sums))  # sum / (n 2^bits)
            logits = [fsum(map(float.__mul__, row, hidden)) for row in out]
            wanted = targets[i]
            if ova:
                probs = [1.0 / (1.0 + exp(-x)) if x >= 0 else exp(x) / (1.0 + exp(x)) for x in logits]
            else:
                top = max(logits)
                exps = [exp(x - top) for x in logits]
                z = fsum(exps)
                probs = [e / z for e in exps]
            grad = [0.0] * d
            for c in range(k):
                alpha = lr * ((1.0 if c in wanted else 0.0) - probs[c])
                if alpha == 0.0:
                    continue
                row = out[c]
                scaled = alpha.__mul__
                grad = list(map(add, grad, map(scaled, row)))  # g + alpha w
                out[c] = list(map(add, row, map(scaled, hidden)))  # w + alpha h
            try:
                update = list(map(round, map((scale / n).__mul__, grad)))  # round(g 2^bits / n)
            except (OverflowError, ValueError):  # an infinite or NaN gradient
                raise _diverged(step) from None
            if max(update) > bound or min(update) < -bound:
                raise _diverged(step)
            add_rows(i, update)
    fixed_rows = store.values()
    max_abs = max((max(map(abs, r)) for r in fixed_rows), default=0) / scale
    stored = _scale_bits(max_abs, config.features)
    fixed = array("i", _requantized(chain.from_iterable(fixed_rows), bits, stored))
    output = array("f", (w for row in out for w in row))
    return array("I", buckets), (fixed, output, stored)


def _diverged(step: int) -> TrainingError:
    return TrainingError(f"training diverged at step {step} (weights past ±2^16): lower the learning rate")


def _requantized(values: Iterable[int], bits: int, stored: int) -> Iterable[int]:
    """Fixed-point integers at `bits` re-expressed at `stored` bits, rounded half to even (exact
    while a value is below 2^53 in magnitude, as any trained weight under ±2^13 is, so that
    `v * 2^(stored - bits)` is an exact float; deterministic in any case)."""
    factor = 2.0 ** (stored - bits)
    return map(round, map(factor.__mul__, map(float, values)))
