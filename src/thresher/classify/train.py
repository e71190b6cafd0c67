"""Training: stochastic gradient descent on the fastText model, with a fixed seed.

Per example (in a seeded shuffled order each epoch): the hidden vector is the mean of the text's
embedding rows, the logits are the output matrix times it, and the loss is softmax cross-entropy
(one label per text) or one binary logistic loss per label (one-vs-all, any number of labels per
text). The learning rate decays linearly from `lr` to 0 over all steps, as in fastText. Rows are
initialised uniform in ±1/dim from a counter-based hash of (seed, bucket, dimension), so the
initial weights do not depend on the order rows are first seen or on the trainer; the output
matrix starts at zero.

Two trainers: `python` (no dependency; exact `math.fsum` sums, so its bytes are the same on every
machine and Python version) and `numpy` (float64 NumPy updates, about an order of magnitude faster;
bytes are reproducible on the same NumPy build). `auto` picks NumPy when it is installed. Either
way the trained float weights are quantized to the fixed-point rows inference uses, and the model
returned is exactly the one a saved file loads back as.

The training set's features are held in memory (training is not a streaming stage).
"""

from __future__ import annotations

import math
import random
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import chain
from operator import add
from typing import Any, Literal

from thresher.classify.features import MASK64, FeatureExtractor, FeatureSpec, mix64
from thresher.classify.format import dump_model
from thresher.classify.model import LOSSES, Model, numpy_available
from thresher.core.errors import ThresherError

Trainer = Literal["auto", "python", "numpy"]
_INIT_SALT = 0xD1B54A32D192ED03


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
            raise ValueError(f"class weights are 'balanced' or LABEL=WEIGHT,... with positive weights, got {part.strip()!r}")
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
    examples: Iterable[Example], config: TrainConfig | None = None, *, labels: Sequence[str] | None = None, **options: Any
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
    if trainer == "numpy":
        row_ids, weights = _train_numpy(extractor, texts, target_ids, len(label_order), config, example_weights)
    else:
        row_ids, weights = _train_python(extractor, texts, target_ids, len(label_order), config, example_weights)
    rows, output, scale_bits = weights
    info = {
        "dim": config.dim, "epochs": config.epochs, "lr": config.lr, "loss": config.loss, "seed": config.seed,
        "trainer": trainer, "examples": len(texts), "examples_per_label": counts,
    }
    if weights_of_labels is not None:  # only then: unweighted models keep the bytes they always had
        info["class_weight"] = {"spec": config.class_weight, "weights": dict(zip(label_order, weights_of_labels, strict=True))}
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


def initial_value(seed: int, bucket: int, j: int, dim: int) -> float:
    """The initial weight of row `bucket`, dimension `j`: uniform in [-1/dim, 1/dim)."""
    z = mix64(((seed * _INIT_SALT) + bucket * dim + j) & MASK64)
    return ((z >> 11) * 2.0**-53 * 2.0 - 1.0) / dim


def _initial_row(base: int, dim: int) -> list[float]:
    """`initial_value` of dimensions 0..dim-1 of the row whose first counter is `base` (seed * salt
    + bucket * dim), with the splitmix64 finalizer inlined: the same floats, without two calls per
    value (initialisation was a tenth of pure-Python training)."""
    row = []
    for j in range(dim):
        z = (base + j) & MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        row.append(((z >> 11) * 2.0**-53 * 2.0 - 1.0) / dim)
    return row


def _scale_bits(max_abs: float, spec: FeatureSpec) -> int:
    bits = 30 if max_abs == 0 else max(0, min(30, math.floor(math.log2((2**31 - 1) / max_abs))))
    while bits > 0 and spec.max_features << bits >= 1 << 52:
        bits -= 1
    return bits


def _train_python(
    extractor: FeatureExtractor, texts: list[str], targets: list[tuple[int, ...]], k: int, config: TrainConfig,
    example_weights: list[float] | None = None,
) -> tuple[array, tuple[array, array, int]]:
    d, seed, ova = config.dim, config.seed, config.loss == "ova"
    feats = [extractor.features(t) for t in texts]
    buckets = sorted({b for f in feats for b in f})
    slot = {b: i for i, b in enumerate(buckets)}
    # one list per row (a slot), not one flat array: a row is read and replaced whole, without slicing
    base = seed * _INIT_SALT
    rows = [_initial_row(base + b * d, d) for b in buckets]
    out = [[0.0] * d for _ in range(k)]
    offsets = [[slot[b] for b in f] for f in feats]
    order = list(range(len(texts)))
    rng = random.Random(seed)
    total = config.epochs * len(texts)
    step = 0
    fsum, exp = math.fsum, math.exp
    for _ in range(config.epochs):
        rng.shuffle(order)
        for i in order:
            lr = config.lr * (1.0 - step / total)
            if example_weights is not None:
                lr *= example_weights[i]
            step += 1
            offs = offsets[i]
            n = len(offs)
            if n == 0:
                continue
            inv = 1.0 / n
            hidden = [fsum(col) * inv for col in zip(*map(rows.__getitem__, offs), strict=True)]
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
                grad = [g + alpha * w for g, w in zip(grad, row, strict=True)]
                out[c] = [w + alpha * h for w, h in zip(row, hidden, strict=True)]
            step_row = [g * inv for g in grad]
            for o in offs:  # in feature order: a feature that occurs twice is updated twice, in turn
                rows[o] = list(map(add, rows[o], step_row))
    weights = array("d", chain.from_iterable(rows))
    max_abs = max(map(abs, weights), default=0.0)
    bits = _scale_bits(max_abs, config.features)
    scale = 2.0**bits
    fixed = array("i", map(round, map(scale.__mul__, weights)))
    output = array("f", (w for row in out for w in row))
    return array("I", buckets), (fixed, output, bits)


def _train_numpy(
    extractor: FeatureExtractor, texts: list[str], targets: list[tuple[int, ...]], k: int, config: TrainConfig,
    example_weights: list[float] | None = None,
) -> tuple[array, tuple[array, array, int]]:
    import numpy as np

    d, seed, ova = config.dim, config.seed, config.loss == "ova"
    ids_parts, offset_parts, base = [], [np.zeros(1, dtype=np.int64)], 0
    for start in range(0, len(texts), 4096):
        parts, counts = extractor.batch_features(texts[start : start + 4096])
        ids = np.concatenate([p[0] for p in parts])
        owner = np.concatenate([p[1] for p in parts])
        ids_parts.append(ids[np.argsort(owner, kind="stable")])  # one text's features together
        offset_parts.append(np.cumsum(counts) + base)
        base += len(ids)
    all_ids = np.concatenate(ids_parts)
    starts = np.concatenate(offset_parts)
    buckets, slots = np.unique(all_ids, return_inverse=True)
    u = buckets.astype(np.uint64)[:, None] * np.uint64(d) + np.arange(d, dtype=np.uint64)[None, :]
    z = (u + np.uint64((seed * _INIT_SALT) & MASK64)).astype(np.uint64)
    from thresher.classify.features import _mix64_array

    z = _mix64_array(z)
    weights = (((z >> np.uint64(11)).astype(np.float64) * 2.0**-53 * 2.0 - 1.0) / d).astype(np.float64)
    out = np.zeros((k, d), dtype=np.float64)
    wanted = np.zeros((len(texts), k), dtype=np.float64)
    for i, t in enumerate(targets):
        wanted[i, list(t)] = 1.0
    order = list(range(len(texts)))
    rng = random.Random(seed)
    total = config.epochs * len(texts)
    step = 0
    slots = slots.astype(np.int64)
    per_example = [slots[starts[i] : starts[i + 1]] for i in range(len(texts))]
    for _ in range(config.epochs):
        rng.shuffle(order)
        for i in order:
            lr = config.lr * (1.0 - step / total)
            if example_weights is not None:
                lr *= example_weights[i]
            step += 1
            idx = per_example[i]
            n = len(idx)
            if n == 0:
                continue
            hidden = weights[idx].sum(axis=0) / n
            logits = out @ hidden
            if ova:
                probs = 1.0 / (1.0 + np.exp(-logits))
            else:
                e = np.exp(logits - logits.max())
                probs = e / e.sum()
            alpha = lr * (wanted[i] - probs)
            grad = alpha @ out
            out += alpha[:, None] * hidden[None, :]
            np.add.at(weights, idx, grad / n)
    max_abs = float(np.abs(weights).max()) if weights.size else 0.0
    bits = _scale_bits(max_abs, config.features)
    rows = np.rint(weights * 2.0**bits).astype(np.int32)
    return (
        array("I", buckets.astype(np.uint32).tobytes()),
        (array("i", rows.tobytes()), array("f", out.astype(np.float32).tobytes()), bits),
    )
