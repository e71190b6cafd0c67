"""A user's transformer sequence classifier, exported to ONNX, run by ONNX Runtime (extra `onnx`).

The model is any ONNX graph that takes `input_ids` (int64, batch × tokens), optionally
`attention_mask` and `token_type_ids`, and returns logits (batch × labels) as its first output, as
Hugging Face sequence-classification exports do; fp32 and int8-quantized graphs run alike. The
tokenizer is a `tokenizer.json` of the `tokenizers` package. Nothing is downloaded: both files are
the user's.

Texts are tokenized once, then scored in length-sorted, token-budgeted batches
(`thresher.batching`): each batch is padded only to its own longest text. Scores are the softmax of
the logits, returned in input order. ONNX Runtime runs on the CUDA provider when it is available
(onnxruntime-gpu) and on the CPU otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from thresher.batching import BatchPlan, plan_batches
from thresher.core.errors import ConfigError


def _require() -> tuple[Any, Any, Any]:
    try:
        import numpy as np
        import onnxruntime as ort  # type: ignore[import-untyped]
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(f"ONNX classifiers need the onnx extra (pip install 'thresher[onnx]'): {exc}") from None
    return np, ort, Tokenizer


class OnnxClassifier:
    """Scores texts with an ONNX sequence-classification model and its tokenizer."""

    def __init__(
        self,
        model_path: str | Path,
        tokenizer_path: str | Path,
        *,
        labels: Sequence[str] | None = None,
        max_len: int = 256,
        max_batch_size: int = 32,
        max_batch_tokens: int | None = None,
        providers: Sequence[str] | None = None,
        threads: int | None = None,
    ) -> None:
        np, ort, Tokenizer = _require()
        for path in (model_path, tokenizer_path):
            if not Path(path).is_file():
                raise ConfigError(f"file not found: {path}")
        self._np = np
        self.model_path = str(model_path)
        self.sha256 = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()
        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.max_len = max_len
        self.max_batch_size = max_batch_size
        self.max_batch_tokens = max_batch_tokens
        available = ort.get_available_providers()
        if providers is None:
            providers = [p for p in ("CUDAExecutionProvider", "CPUExecutionProvider") if p in available]
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(self.model_path, sess_options=options, providers=list(providers))
        except Exception as exc:  # onnxruntime raises its own exception types for unreadable graphs
            raise ConfigError(f"{model_path}: not a usable ONNX model: {exc}") from None
        self.providers = self.session.get_providers()
        self.input_names = [i.name for i in self.session.get_inputs()]
        if "input_ids" not in self.input_names:
            raise ConfigError(f"{model_path}: the model has no input_ids input (inputs: {', '.join(self.input_names)})")
        n_labels = self.session.get_outputs()[0].shape[-1]
        self.labels = tuple(labels) if labels is not None else self._labels_from_metadata(n_labels)
        if isinstance(n_labels, int) and len(self.labels) != n_labels:
            raise ConfigError(
                f"{model_path}: the model has {n_labels} outputs but {len(self.labels)} labels were given"
            )
        pad = self.tokenizer.token_to_id("[PAD]")
        self.pad_id = pad if pad is not None else 0
        self.last_plan: BatchPlan | None = None

    def _labels_from_metadata(self, n_labels: Any) -> tuple[str, ...]:
        meta = self.session.get_modelmeta().custom_metadata_map
        if "id2label" in meta:
            mapping = json.loads(meta["id2label"])
            return tuple(mapping[str(i)] for i in range(len(mapping)))
        if "labels" in meta:
            return tuple(json.loads(meta["labels"]))
        if not isinstance(n_labels, int):
            raise ConfigError(f"{self.model_path}: name the labels (the model's output size is not fixed)")
        return tuple(f"LABEL_{i}" for i in range(n_labels))

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, truncated to max_len."""
        return [e.ids[: self.max_len] for e in self.tokenizer.encode_batch(list(texts))]

    def logits_batch(self, texts: Sequence[str]) -> Any:
        np = self._np
        encoded = self.encode(texts)
        plan = plan_batches([len(ids) for ids in encoded], max_len=self.max_len,
                            max_batch_size=self.max_batch_size, max_batch_tokens=self.max_batch_tokens)
        self.last_plan = plan
        out: Any = None
        for batch in plan.batches:
            ids = np.full((len(batch.indices), batch.padded_len), self.pad_id, dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(batch.indices):
                seq = encoded[i] or [self.pad_id]
                ids[row, : len(seq)] = seq
                mask[row, : max(1, len(encoded[i]))] = 1  # an empty text is one attended pad token
            feed = {"input_ids": ids}
            if "attention_mask" in self.input_names:
                feed["attention_mask"] = mask
            if "token_type_ids" in self.input_names:
                feed["token_type_ids"] = np.zeros_like(ids)
            logits = np.asarray(self.session.run(None, feed)[0], dtype=np.float64)
            if out is None:
                out = np.zeros((len(texts), logits.shape[1]), dtype=np.float64)
            out[list(batch.indices)] = logits
        return out if out is not None else np.zeros((0, len(self.labels)))

    def scores_array(self, texts: Sequence[str]) -> Any:
        """Softmax scores of every label for each text, in input order, as a float64 array."""
        np = self._np
        logits = self.logits_batch(texts)
        if len(logits) == 0:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def scores_batch(self, texts: Sequence[str]) -> list[list[float]]:
        """Softmax scores of every label for each text, in input order."""
        return self.scores_array(texts).tolist()  # type: ignore[no-any-return]

    def scores(self, text: str) -> dict[str, float]:
        return dict(zip(self.labels, self.scores_batch([text])[0], strict=True))


def load_onnx(path: str, *, tokenizer: str | None = None, max_len: int = 256) -> OnnxClassifier:
    """The `onnx` classifier kind's loader (`thresher.classify.kinds`), as a build runs it: on the CPU
    with one thread (pool and Ray run one worker per core already, and a fixed thread count keeps ONNX
    Runtime's reductions the same from one run to the next); the tokenizer defaults to the
    `tokenizer.json` beside the model."""
    if tokenizer is None:
        tokenizer = str(Path(path).parent / "tokenizer.json")
    return OnnxClassifier(path, tokenizer, max_len=max_len, threads=1, providers=["CPUExecutionProvider"])
