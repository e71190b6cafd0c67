"""Token counts for the dataset card with a real tokenizer, beside the whitespace count.

A corpus is sized in a model's tokens, not in words: "1.2 B tokens" means tokens of some vocabulary.
The card can count the kept text in the LLaMA-2 32k BPE vocabulary (`llama2`), read from the
tokenizer file the `wordllama` package ships (the embed extra), through the `tokenizers` library:
nothing is downloaded, and the count is the same on every machine with that file. The file's
sha256 goes on the card so a reader knows exactly which vocabulary counted.

The counting happens where the text already is (the scan, for documents that pass the per-document
stages, and the write task, for those the corpus stages drop); it is off by default because it costs
a tokenizer pass over the corpus.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from thresher.core.errors import ConfigError

# name -> (package whose folder holds the file, the file inside it, what it is)
TOKENIZER_FILES = {
    "llama2": ("wordllama", "tokenizers/l2_supercat_tokenizer_config.json", "LLaMA-2 32k BPE (wordllama's copy)"),
}


@dataclass(frozen=True, slots=True)
class TokenCounter:
    name: str
    description: str
    sha256: str
    count: Callable[[str], int]


def package_file(package: str, relative: str, setting: str = "output.card_tokenizer") -> Path:
    """The file `relative` inside the installed `package`, found without importing it; `setting`
    names what asked for it in the error when it is missing."""
    import importlib.util

    spec = importlib.util.find_spec(package)  # located, never imported (wordllama's import has side effects)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f'{setting} needs the {package} package: pip install "thresher[embed]"')
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise ConfigError(f"{setting}: {path} is missing from the installed {package} package")
    return path


@functools.cache
def token_counter(name: str) -> TokenCounter:
    """The tokenizer `name` (loaded once per process); `ConfigError` when it is not installed."""
    if name not in TOKENIZER_FILES:
        raise ConfigError(f"unknown card tokenizer {name!r} (known: {', '.join(TOKENIZER_FILES)})")
    package, relative, description = TOKENIZER_FILES[name]
    path = package_file(package, relative)
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError('output.card_tokenizer needs the tokenizers package: pip install "thresher[embed]"') from exc
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    encode = tokenizer.encode

    def count(text: str) -> int:
        return len(encode(text, add_special_tokens=False).ids) if text else 0

    return TokenCounter(name, description, hashlib.sha256(path.read_bytes()).hexdigest(), count)
