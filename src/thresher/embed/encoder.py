"""The `Encoder` protocol and the encoders known by name.

An encoder turns a batch of texts into one float32 row each, L2-normalised (cosine = dot
product); a text with no tokens gets a zero row, so it is never anyone's near neighbour. Rows must
not depend on which other texts share the batch: that is what lets the batch plan change (token
budget, sorting) while the vector files stay byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from thresher.core.errors import ConfigError


@runtime_checkable
class Encoder(Protocol):
    name: str
    version: str  # changes whenever the same text could get a different vector
    dimension: int
    max_len: int  # tokens read per text; longer texts are truncated to their first max_len tokens

    def tokenize_lengths(self, texts: Sequence[str]) -> list[int]:
        """Each text's token count by the model's own tokenizer (before truncation)."""
        ...

    def encode(self, texts: Sequence[str]) -> Any:
        """A (len(texts), dimension) float32 array of L2-normalised rows (zero rows for no tokens)."""
        ...


@runtime_checkable
class PreTokenizing(Protocol):
    """An encoder that can encode the token ids it already produced, so a batch planner that
    needed the lengths does not pay for tokenizing twice (tokenizing is about half of a static
    encoder's time)."""

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]: ...

    def encode_tokens(self, ids: Sequence[Sequence[int]]) -> Any: ...


def _stub() -> Encoder:
    from thresher.embed.stub import HashingEncoder

    return HashingEncoder()


def _static() -> Encoder:
    from thresher.embed.static import WordLlamaEncoder

    return WordLlamaEncoder()


ENCODERS: dict[str, Callable[[], Encoder]] = {
    "wordllama": _static,  # the packaged static model: the CPU default
    "stub": _stub,  # hashed words: deterministic, dependency-light, for tests
}
DEFAULT_ENCODER = "wordllama"


def get_encoder(name: str) -> Encoder:
    try:
        factory = ENCODERS[name]
    except KeyError:
        raise ConfigError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}") from None
    return factory()
