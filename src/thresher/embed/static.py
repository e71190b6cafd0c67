"""WordLlama's static token embeddings (l2_supercat, 256 dimensions), read straight from the files
the `wordllama` package ships (weights in safetensors, a `tokenizers` JSON): no torch, nothing
downloaded. The `wordllama` module itself is never imported (it configures the root logger and
can fetch files over the network); only its installed folder is located.

A text's vector is the L2-normalised sum (= mean, up to scale) of its first `max_len` tokens'
embeddings: what WordLlama's own `embed(norm=True)` computes, without its download path.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError

_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"


def package_folder() -> Path:
    """The installed `wordllama` package's folder, without importing it; `ConfigError` naming the extra."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError('the wordllama encoder needs the embed extra: pip install "thresher[embed]"')
    return Path(next(iter(spec.submodule_search_locations)))


class WordLlamaEncoder:
    name = "wordllama"
    dimension = 256

    def __init__(self, max_len: int = 512) -> None:
        try:
            import numpy as np
            from safetensors import safe_open
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError(
                f'the wordllama encoder needs the embed extra ({exc.name} missing): pip install "thresher[embed]"'
            ) from exc
        folder = package_folder()
        weights, tokenizer = folder / _WEIGHTS, folder / _TOKENIZER
        for path in (weights, tokenizer):
            if not path.is_file():
                raise ConfigError(
                    f"the wordllama package has no {path.relative_to(folder)}: this version does not ship the model"
                )
        with safe_open(str(weights), framework="np") as f:
            table = f.get_tensor("embedding.weight")
        self._table = np.ascontiguousarray(table, dtype=np.float32)
        if self._table.shape[1] != self.dimension:
            raise ConfigError(f"wordllama weights have dimension {self._table.shape[1]}, expected {self.dimension}")
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self.max_len = max_len
        self.version = f"{metadata.version('wordllama')}/l2_supercat_256"

    def tokenize(self, texts: Sequence[str]) -> list[Any]:
        """Each text's token ids as an int32 array, one text at a time. Not as Encodings kept
        around (they carry token strings, offsets and masks, several times the ids' size), not as
        Python int lists (~40 bytes an id; they left the allocator's arenas fragmented), and not by
        `encode_batch`: its worker threads each grew an allocator arena, and embed's RSS crept up
        with the corpus (100k texts: 221 MiB parallel vs 150 MiB serial, flat after the first
        chunks, and 8% less CPU time; docs/embeddings.md). A worker process per core is how a
        build uses the cores."""
        import numpy as np

        encode = self._tokenizer.encode
        return [np.asarray(encode(text, add_special_tokens=False).ids, dtype=np.int32) for text in texts]

    def tokenize_lengths(self, texts: Sequence[str]) -> list[int]:
        return [len(ids) for ids in self.tokenize(texts)]

    def encode(self, texts: Sequence[str]) -> Any:
        return self.encode_tokens(self.tokenize(texts))

    def encode_tokens(self, token_ids: Sequence[Sequence[int]]) -> Any:
        import numpy as np

        ids = [row[: self.max_len] for row in token_ids]
        width = max((len(r) for r in ids), default=0)
        out = np.zeros((len(ids), self.dimension), dtype=np.float32)
        if width == 0:
            return out
        # a padded batch, as a transformer would see it: the padding costs work, which is why
        # batches are planned by length; padded positions add exact zeros, so a row's sum (taken
        # position by position) does not depend on its batch
        grid = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.float32)
        for r, row in enumerate(ids):
            grid[r, : len(row)] = row
            mask[r, : len(row)] = 1.0
        np.clip(grid, 0, self._table.shape[0] - 1, out=grid)
        for t in range(width):
            out += self._table[grid[:, t]] * mask[:, t, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out
