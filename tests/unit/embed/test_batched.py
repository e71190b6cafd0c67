import pytest

from thresher.batching import plan_batches
from thresher.embed.batched import encode_texts
from thresher.embed.encoder import get_encoder

np = pytest.importorskip("numpy")


def mixed_texts(n: int) -> list[str]:
    return [" ".join(f"w{i}x{j}" for j in range(1 + (i * 37) % 200)) for i in range(n)]


def naive_efficiency(lengths: list[int], max_len: int, size: int) -> float:
    clipped = [min(max(n, 1), max_len) for n in lengths]
    padded = sum(len(clipped[i : i + size]) * max(clipped[i : i + size]) for i in range(0, len(clipped), size))
    return sum(clipped) / padded


def test_batch_size_binding_sorting_beats_input_order_padding():
    enc = get_encoder("stub")
    texts = mixed_texts(400)
    result = encode_texts(enc, texts, max_batch_size=32)
    assert all(len(b.indices) <= 32 for b in result.plan.batches)
    naive = naive_efficiency(enc.tokenize_lengths(texts), enc.max_len, 32)
    assert result.plan.padding_efficiency > 0.9 > 0.7 > naive


def test_token_cap_binding_gives_the_same_vectors_for_any_plan_or_chunking():
    enc = get_encoder("stub")
    texts = mixed_texts(120)
    capped = encode_texts(enc, texts, max_batch_size=1000, max_batch_tokens=600)
    assert all(b.padded_tokens <= 600 or len(b.indices) == 1 for b in capped.plan.batches)
    assert len({len(b.indices) for b in capped.plan.batches}) > 1  # short texts ride in bigger batches
    # the plan depends on the lengths and limits only (no worker count, no clock): planned again, the same
    lengths = enc.tokenize_lengths(texts)
    again = plan_batches(lengths, max_len=enc.max_len, max_batch_size=1000, max_batch_tokens=600)
    assert again == capped.plan
    # and the vectors in document order do not depend on the plan, nor on encoding in chunks
    whole = encode_texts(enc, texts, max_batch_size=7).vectors
    chunks = np.concatenate([encode_texts(enc, texts[i : i + 50], max_batch_size=1000, max_batch_tokens=600).vectors
                             for i in range(0, 120, 50)])
    assert capped.vectors.tobytes() == whole.tobytes() == chunks.tobytes()


def test_truncated_and_empty_texts_are_counted():
    enc = get_encoder("stub")
    result = encode_texts(enc, ["", "a b", " ".join(["x"] * (enc.max_len + 5))])
    assert (result.truncated, result.empty) == (1, 1)
    assert not result.vectors[0].any()


class FailsOnBoom:
    """The stub, except that any batch holding a text with BOOM raises."""

    def __init__(self) -> None:
        self.inner = get_encoder("stub")
        self.name, self.version, self.dimension, self.max_len = "boom", "1", self.inner.dimension, self.inner.max_len
        self.calls = 0

    def tokenize_lengths(self, texts):
        return self.inner.tokenize_lengths(texts)

    def encode(self, texts):
        self.calls += 1
        if any("BOOM" in t for t in texts):
            raise RuntimeError("model error")
        return self.inner.encode(texts)


def test_a_batch_that_raises_is_retried_by_halves_and_only_the_bad_text_fails():
    enc = FailsOnBoom()
    texts = mixed_texts(16)
    texts[5] = "w BOOM x"
    result = encode_texts(enc, texts, max_batch_size=16)
    assert result.failed == (5,)
    assert not result.vectors[5].any()
    good = [i for i in range(16) if i != 5]
    assert result.vectors[good].tobytes() == get_encoder("stub").encode([texts[i] for i in good]).tobytes()
    assert enc.calls <= 1 + 2 * 4  # log2(16) levels of halving, two calls a level


class OutOfMemoryError(RuntimeError):
    """Named as torch's (`torch.OutOfMemoryError`, `torch.cuda.OutOfMemoryError`): what a GPU raises."""


class SmallDevice:
    """The stub on a 'device' that holds at most `capacity` padded tokens a batch: a larger batch
    raises `error` (torch's OutOfMemoryError, or a look-alike where torch is absent)."""

    def __init__(self, capacity: int, error: type[BaseException] = OutOfMemoryError) -> None:
        self.inner = get_encoder("stub")
        self.name, self.version, self.dimension, self.max_len = "small", "1", self.inner.dimension, self.inner.max_len
        self.capacity, self.error = capacity, error
        self.released = 0

    def tokenize_lengths(self, texts):
        return self.inner.tokenize_lengths(texts)

    def release_memory(self):
        self.released += 1

    def encode(self, texts):
        padded = len(texts) * max(max(n, 1) for n in self.inner.tokenize_lengths(texts))
        if padded > self.capacity:
            raise self.error(f"CUDA out of memory. Tried to allocate {padded} tokens")
        return self.inner.encode(texts)


def _oom_errors():
    errors = [OutOfMemoryError, MemoryError]
    try:
        import torch
    except ImportError:
        return errors
    return [*errors, torch.OutOfMemoryError]


@pytest.mark.parametrize("error", _oom_errors(), ids=lambda e: f"{e.__module__}.{e.__name__}")
def test_out_of_memory_halves_the_token_budget_and_loses_no_document(error):
    texts = mixed_texts(120)
    device = SmallDevice(capacity=400, error=error)  # every text fits alone (<= 200 tokens)
    result = encode_texts(device, texts, max_batch_size=64)
    assert result.failed == ()
    assert result.oom_backoffs >= 1 and result.batch_tokens is not None and result.batch_tokens <= 400
    assert device.released == result.oom_backoffs  # the encoder's cache handed back before each retry
    assert result.vectors.tobytes() == get_encoder("stub").encode(texts).tobytes()


def test_a_text_that_does_not_fit_alone_fails_by_name_and_other_errors_are_not_taken_for_memory():
    from thresher.embed.batched import is_out_of_memory

    texts = ["a b c", " ".join(["w"] * 80), "d e"]
    result = encode_texts(SmallDevice(capacity=50), texts, max_batch_size=8)
    assert result.failed == (1,) and result.vectors[[0, 2]].any(axis=1).all()
    assert is_out_of_memory(RuntimeError("CUDA error: out of memory"))
    assert is_out_of_memory(RuntimeError("[ONNXRuntimeError] : 6 : Failed to allocate memory for requested buffer"))
    assert not is_out_of_memory(RuntimeError("index out of range in self"))
