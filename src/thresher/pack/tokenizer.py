"""The tokenizer a pack encodes with: a name thresher knows (`llama2`, the file the `wordllama`
package ships, as the card's token counter uses) or the path of any `tokenizer.json`, read by the
`tokenizers` library. Nothing is downloaded; the file's sha256 goes into the pack's manifest.

Each document becomes its tokens followed by the tokenizer's end-of-sequence id, so a trainer that
concatenates sequences still sees where one document ends.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError

# end-of-sequence tokens by the names common vocabularies give them, most usual first
EOS_NAMES = ("</s>", "<|endoftext|>", "<|end_of_text|>", "<eos>", "[SEP]", "<|im_end|>")


@dataclass(frozen=True)
class PackTokenizer:
    name: str  # `llama2`, or the file's name
    path: str
    sha256: str
    eos_id: int
    vocab_size: int
    tokenizer: Any  # tokenizers.Tokenizer

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids (no special tokens added) followed by the EOS id."""
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        eos = self.eos_id
        return [[*e.ids, eos] for e in encoded]

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "sha256": self.sha256, "eos_id": self.eos_id, "vocab_size": self.vocab_size}


def _file_of(name_or_path: str) -> tuple[str, Path]:
    from thresher.write.tokens import TOKENIZER_FILES, package_file

    if name_or_path in TOKENIZER_FILES:
        package, relative, _ = TOKENIZER_FILES[name_or_path]
        return name_or_path, package_file(package, relative, "--tokenizer")
    path = Path(name_or_path)
    if not path.is_file():
        known = ", ".join(TOKENIZER_FILES)
        raise ConfigError(
            f"--tokenizer {name_or_path!r}: neither a known tokenizer ({known}) nor a tokenizer.json file")
    return path.name, path


def load_tokenizer(name_or_path: str, eos: str | None = None) -> PackTokenizer:
    """The tokenizer `name_or_path`; `eos` names its end-of-sequence token when none of the usual
    names is in the vocabulary. `ConfigError` for anything that is not a usable tokenizer file."""
    name, path = _file_of(name_or_path)
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError('thresher pack needs the tokenizers package: pip install "thresher[pack]"') from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # noqa: BLE001 - the library's own message says what is wrong with the file
        raise ConfigError(f"--tokenizer {path}: not a tokenizer.json the tokenizers library reads ({exc})") from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    candidates = (eos,) if eos else EOS_NAMES
    eos_id = next((i for c in candidates if c and (i := tokenizer.token_to_id(c)) is not None), None)
    if eos_id is None:
        raise ConfigError(f"--tokenizer {path}: no end-of-sequence token ({', '.join(c for c in candidates if c)}); "
                          "name it with --eos TOKEN")
    blob = path.read_bytes()
    try:
        json.loads(blob)
    except ValueError:
        raise ConfigError(f"--tokenizer {path}: not JSON") from None
    return PackTokenizer(name, str(path), hashlib.sha256(blob).hexdigest(), eos_id,
                         tokenizer.get_vocab_size(with_added_tokens=True), tokenizer)
