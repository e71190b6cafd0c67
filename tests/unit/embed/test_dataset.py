import json
import shutil

import pytest

from thresher.cli import main
from thresher.core.errors import DatasetError
from thresher.embed.dataset import embed_dataset
from thresher.embed.encoder import get_encoder
from thresher.write.dataset_checks import check_dataset
from thresher.write.manifest import read_shards

np = pytest.importorskip("numpy")


@pytest.fixture
def embedded(dataset, tmp_path):
    copy = tmp_path / "ds"
    shutil.copytree(dataset, copy)
    assert main(["embed", str(copy), "--encoder", "stub", "--dtype", "float32", "--batch-size", "4"]) == 0
    return copy


def test_embed_writes_a_vector_file_per_shard_listed_in_the_manifest(embedded):
    manifest = json.loads((embedded / "manifest.json").read_text())
    section = manifest["embeddings"]
    assert (section["encoder"], section["dimension"], section["dtype"], section["records"]) == (
        "stub",
        64,
        "float32",
        30,
    )
    assert [f["path"] for f in section["files"]] == [f"shard-0000{i}.embeddings.npy" for i in range(3)]
    assert [f["rows"] for f in section["files"]] == [10, 10, 10]
    assert 0 < section["padding_efficiency"] <= 1
    assert check_dataset(embedded)[1] == []
    pairs = list(read_shards(embedded, with_embeddings=True))
    records = list(read_shards(embedded))
    assert [r for r, _ in pairs] == records
    expected = get_encoder("stub").encode([r["text"] for r in records])
    assert np.stack([v for _, v in pairs]).tobytes() == expected.tobytes()


def test_vector_files_are_byte_identical_across_runs_and_batch_plans(embedded, dataset, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(dataset, other)
    embed_dataset(other, get_encoder("stub"), dtype="float32", max_batch_size=64, max_batch_tokens=50)
    for i in range(3):
        name = f"shard-0000{i}.embeddings.npy"
        assert (other / name).read_bytes() == (embedded / name).read_bytes()


def test_float16_halves_the_files(dataset, tmp_path):
    copy = tmp_path / "h"
    shutil.copytree(dataset, copy)
    report = embed_dataset(copy, get_encoder("stub"), dtype="float16")
    vectors = np.load(copy / "shard-00000.embeddings.npy")
    assert vectors.dtype == np.float16 and vectors.shape == (10, 64)
    assert report.files[0]["bytes"] == 128 + 10 * 64 * 2


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda p: p.unlink(), "missing (vector file)"),
        (lambda p: p.write_bytes(p.read_bytes()[:-10]), "truncated"),
        (lambda p: np.save(p, np.zeros((10, 32), dtype=np.float32)), "dimension 64"),
    ],
    ids=["missing", "truncated", "wrong-dimension"],
)
def test_verify_and_read_shards_refuse_a_damaged_vector_file(embedded, damage, problem):
    damage(embedded / "shard-00001.embeddings.npy")
    problems = [p.describe() for p in check_dataset(embedded)[1]]
    assert len(problems) == 1 and problems[0].startswith("shard-00001.embeddings.npy") and problem in problems[0]
    assert main(["verify", "-q", str(embedded)]) == 1
    with pytest.raises(DatasetError, match="shard-00001.embeddings.npy"):
        list(read_shards(embedded, with_embeddings=True))


def test_reading_embeddings_of_a_dataset_without_them_says_so(dataset):
    with pytest.raises(DatasetError, match="no embeddings"):
        list(read_shards(dataset, with_embeddings=True))


def test_a_vector_path_outside_the_dataset_is_refused_not_opened(embedded):
    manifest = json.loads((embedded / "manifest.json").read_text())
    manifest["embeddings"]["files"][0]["path"] = "../outside.npy"
    (embedded / "manifest.json").write_text(json.dumps(manifest))
    problems = [p.describe() for p in check_dataset(embedded)[1]]
    assert problems == [
        "../outside.npy: refused: the manifest names a vector path outside the dataset",
        "shard-00000.embeddings.npy: a vector file the manifest does not list",  # the file the entry named before
    ]
    with pytest.raises(DatasetError, match="refused"):
        list(read_shards(embedded, with_embeddings=True, verify=False))


def test_default_encoder_embeds_from_the_cli_and_verifies(dataset, tmp_path):
    pytest.importorskip("wordllama", reason="the embed extra (wordllama) is not installed")
    copy = tmp_path / "w"
    shutil.copytree(dataset, copy)
    assert main(["embed", str(copy)]) == 0
    section = json.loads((copy / "manifest.json").read_text())["embeddings"]
    assert (section["encoder"], section["dimension"], section["dtype"], section["failed"]) == (
        "wordllama",
        256,
        "float16",
        [],
    )
    assert main(["verify", "-q", str(copy)]) == 0
    vectors = np.stack([v for _, v in read_shards(copy, with_embeddings=True)]).astype(np.float32)
    assert vectors.shape == (30, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=2e-3)
