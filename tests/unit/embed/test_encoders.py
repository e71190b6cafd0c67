import pytest

from thresher.core.errors import ConfigError
from thresher.embed.encoder import Encoder, get_encoder

np = pytest.importorskip("numpy")


def test_stub_encoder_rows_are_normalised_and_independent_of_the_batch():
    enc = get_encoder("stub")
    assert isinstance(enc, Encoder)
    texts = ["the cat sat on the mat", "mat the on sat cat the", "stock markets fell", ""]
    rows = enc.encode(texts)
    assert rows.dtype == np.float32 and rows.shape == (4, enc.dimension)
    assert np.allclose(np.linalg.norm(rows[:3], axis=1), 1.0) and not rows[3].any()
    assert float(rows[0] @ rows[1]) == pytest.approx(1.0)  # same words, any order
    assert float(rows[0] @ rows[2]) < 0.5
    assert enc.encode(texts[2:3])[0].tobytes() == rows[2].tobytes()
    assert enc.tokenize_lengths(texts) == [6, 6, 3, 0]


def test_unknown_encoder_is_a_config_error_naming_the_known_ones():
    with pytest.raises(ConfigError, match="known: minilm, minilm-onnx, stub, wordllama"):
        get_encoder("nope")


def test_wordllama_loads_from_the_installed_package_and_separates_meanings():
    pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")
    enc = get_encoder("wordllama")
    assert (enc.name, enc.dimension) == ("wordllama", 256) and enc.version.endswith("/l2_supercat_256")
    texts = [
        "The cat sat on the mat.",
        "A cat was sitting on the mat.",
        "Stock markets fell sharply today.",
        "",
        "word " * 600,
    ]
    lengths = enc.tokenize_lengths(texts)
    assert lengths[3] == 0 and lengths[4] > enc.max_len and 5 <= lengths[0] <= 10
    rows = enc.encode(texts)
    assert rows.shape == (5, 256) and rows.dtype == np.float32 and not rows[3].any()
    sims = rows @ rows.T
    assert sims[0, 1] > 0.8 > 0.3 > sims[0, 2]
    # a row does not depend on the other rows of its batch (padding adds exact zeros)
    assert enc.encode(texts[:1])[0].tobytes() == rows[0].tobytes()
    assert enc.encode([texts[4], texts[0]])[1].tobytes() == rows[0].tobytes()


def test_wordllama_batched_encoding_reuses_its_tokens_and_matches_plain_encoding():
    pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")
    from thresher.embed.batched import encode_texts
    from thresher.embed.encoder import PreTokenizing

    enc = get_encoder("wordllama")
    assert isinstance(enc, PreTokenizing)
    texts = [" ".join(["river bank"] * (1 + i * 13 % 300)) + f" doc {i}" for i in range(40)] + [""]
    result = encode_texts(enc, texts, max_batch_size=8)
    assert result.vectors.tobytes() == enc.encode(texts).tobytes()
    assert result.truncated == sum(1 for n in enc.tokenize_lengths(texts) if n > enc.max_len) > 0
    assert result.empty == 1


def test_wordllama_embeds_scripts_it_never_saw_through_byte_tokens_as_unit_rows():
    pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")
    from thresher.embed.batched import encode_texts

    enc = get_encoder("wordllama")
    # Cuneiform, Tifinagh, Linear B: no word pieces of their own, byte-fallback tokens instead
    texts = ["𒀀𒀁𒀂 𒀃𒀄", "ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴰⵏⴰⵡⴰⵢⵜ", "𐀀𐀁𐀂𐀃", "The harbour opened a new market today."]
    result = encode_texts(enc, texts)
    assert result.failed == () and result.empty == 0 and np.isfinite(result.vectors).all()
    assert np.allclose(np.linalg.norm(result.vectors, axis=1), 1.0, atol=1e-5)
    sims = result.vectors @ result.vectors.T
    # far from the English text; but two unrelated scripts that share UTF-8 lead bytes land close
    # together (0.82 here): docs/embeddings.md states this limit of a static model
    assert sims[0, 3] < 0.5 and sims[1, 3] < 0.5 and sims[0, 2] > sims[0, 3]
