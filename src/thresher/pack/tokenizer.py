"""The tokenizer a pack encodes with: a name thresher knows (`llama2`, the file the `wordllama`
package ships, as the card's token counter uses) or the path of any `tokenizer.json`, read by the
`tokenizers` library. Nothing is downloaded; the file's sha256 goes into the pack's manifest.

Each document becomes its tokens followed by the tokenizer's end-of-sequence id, so a trainer that
concatenates sequences still sees where one document ends.

**Words.** LLaMA's tokenizer (a SentencePiece BPE: spaces become `▁`, one `▁` is prepended, and no
pre-tokenizer) runs BPE over a whole document as one string. No token of its vocabulary holds a `▁`
after another character, so no merge ever joins a character to a following `▁`: the document's
tokens are exactly the concatenation of the tokens of its pieces `▁*[^▁]+` (a run of `▁`, then the
characters up to the next `▁`), each run through the BPE model alone (BPE applies merges by rank
among adjacent symbols, and pieces share none). Pieces repeat (Zipf), so each is tokenized once and
kept in a table (`WORD_TABLE_ENTRIES` at most, the first ones seen; later misses are computed each
time): about 4x fewer CPU seconds than the library's `encode_batch`, with the same ids. The shortcut
is taken only where `_word_local` proves these conditions from the tokenizer file, and never for a
text holding an added token's content (the library matches those first); everything else goes
through the library.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError

# end-of-sequence tokens by the names common vocabularies give them, most usual first
EOS_NAMES = ("</s>", "<|endoftext|>", "<|end_of_text|>", "<eos>", "[SEP]", "<|im_end|>")


SPACE = "\u2581"  # ▁, SentencePiece's space
PIECE = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
SPANS_A_SPACE = re.compile(f"[^{SPACE}]{SPACE}")
WORD_TABLE_ENTRIES = 1 << 18  # ~60 MB of pieces and their ids at most


class _Words(dict[str, tuple[int, ...]]):
    """Piece -> its BPE ids, filled on first sight up to `WORD_TABLE_ENTRIES`."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def __missing__(self, piece: str) -> tuple[int, ...]:
        ids = tuple(t.id for t in self.model.tokenize(piece))
        if len(self) < WORD_TABLE_ENTRIES:
            self[piece] = ids
        return ids


def _word_local(spec: dict[str, Any]) -> bool:
    """Whether the tokenizer file describes a SentencePiece-style BPE whose tokens never join a character
    to a following `▁` (see the module's docstring), so that pieces can be tokenized alone."""
    model = spec.get("model") or {}
    if (model.get("type") != "BPE" or model.get("dropout") or model.get("continuing_subword_prefix")
            or model.get("end_of_word_suffix") or spec.get("pre_tokenizer") is not None):
        return False
    expected = [{"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]
    normalizer = spec.get("normalizer") or {}
    if normalizer.get("type") != "Sequence" or normalizer.get("normalizers") != expected:
        return False
    if any(" " in t.get("content", " ") or SPACE in t.get("content", SPACE) for t in spec.get("added_tokens") or []):
        return False
    vocab = model.get("vocab")
    return isinstance(vocab, dict) and not any(SPANS_A_SPACE.search(token) for token in vocab)


@dataclass(frozen=True)
class PackTokenizer:
    name: str  # `llama2`, or the file's name
    path: str
    sha256: str
    eos_id: int
    vocab_size: int
    tokenizer: Any  # tokenizers.Tokenizer
    words: _Words | None = None  # the piece table, where the tokenizer is word-local
    added: tuple[str, ...] = field(default=())  # the added tokens' contents

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids (no special tokens added) followed by the EOS id."""
        eos = self.eos_id
        words = self.words
        if words is None:
            return [[*e.ids, eos] for e in self.tokenizer.encode_batch(list(texts), add_special_tokens=False)]
        out = []
        lookup = words.__getitem__
        for text in texts:
            if any(a in text for a in self.added):
                ids = self.tokenizer.encode(text, add_special_tokens=False).ids
            elif text:
                ids = list(chain.from_iterable(map(lookup, PIECE.findall(SPACE + text.replace(" ", SPACE)))))
            else:
                ids = []
            ids.append(eos)
            out.append(ids)
        return out

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
        spec = json.loads(blob)
    except ValueError:
        raise ConfigError(f"--tokenizer {path}: not JSON") from None
    local = isinstance(spec, dict) and _word_local(spec)
    return PackTokenizer(name, str(path), hashlib.sha256(blob).hexdigest(), eos_id,
                         tokenizer.get_vocab_size(with_added_tokens=True), tokenizer,
                         words=_Words(tokenizer.model) if local else None,
                         added=tuple(t["content"] for t in spec.get("added_tokens") or []) if local else ())
