import struct

import pytest
from classify_helpers import corpus

from thresher.classify import ModelFileError, load_model, train
from thresher.classify.format import FORMAT_VERSION, MAGIC, dump_model, save_model


@pytest.fixture(scope="module")
def model_bytes():
    return dump_model(train(corpus(200), epochs=2, trainer="python"))


def write(tmp_path, data):
    path = tmp_path / "m.thc"
    path.write_bytes(data)
    return path


def test_a_saved_model_loads_back_with_the_same_scores_and_checksum(tmp_path):
    import hashlib

    model = train(corpus(200), epochs=2, trainer="python")
    digest = save_model(model, str(tmp_path / "m.thc"))
    loaded = load_model(tmp_path / "m.thc")
    assert digest == loaded.sha256 == hashlib.sha256((tmp_path / "m.thc").read_bytes()).hexdigest()
    assert loaded.labels == ("bad", "good")
    assert loaded.info["examples_per_label"] == model.info["examples_per_label"]
    for text, _ in corpus(20, seed=9):
        assert loaded.scores(text) == model.scores(text)


def test_a_truncated_model_is_refused(tmp_path, model_bytes):
    for cut in (5, len(model_bytes) // 2, len(model_bytes) - 1):
        with pytest.raises(ModelFileError, match="truncated"):
            load_model(write(tmp_path, model_bytes[:cut]))


def test_a_model_from_a_newer_format_version_is_refused(tmp_path, model_bytes):
    newer = MAGIC + struct.pack("<H", FORMAT_VERSION + 1) + model_bytes[10:]
    with pytest.raises(ModelFileError, match=f"version {FORMAT_VERSION + 1} is newer"):
        load_model(write(tmp_path, newer))


def test_an_altered_model_fails_its_checksum(tmp_path, model_bytes):
    altered = bytearray(model_bytes)
    altered[-40] ^= 0x01  # a weight byte
    with pytest.raises(ModelFileError, match="checksum mismatch"):
        load_model(write(tmp_path, bytes(altered)))


def test_a_file_that_is_not_a_model_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="not a thresher classifier model"):
        load_model(write(tmp_path, b'{"labels": ["a"]}' * 4))


def test_a_missing_model_is_refused(tmp_path):
    with pytest.raises(ModelFileError, match="not found"):
        load_model(tmp_path / "absent.thc")
