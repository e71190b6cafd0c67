"""Semantic dedup and vectors inside `build` (`--embed`, `--semantic-dedup`): attributed drops,
counts that reconcile, vector files beside the shards, byte-identical on every engine and worker
count, resumable. The stub encoder (hashed bag of words) stands in for a model."""

import json
import random
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.core.errors import ConfigError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS

np = pytest.importorskip("numpy")

FILES, PER_FILE = 4, 30


def _doc(i: int, rng: random.Random) -> list[str]:
    # words of its own, so that distinct documents are far apart for a bag-of-words encoder
    return [f"w{i}x{j}" for j in range(40)] + [rng.choice(["river", "stone", "light", "field"]) for _ in range(5)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """FILES input files (one partition each). Every 5th document from the second file on is a
    shuffled rewrite of a document of an earlier file: same words, other order, so MinHash's
    shingles miss it and a bag-of-words cosine is 1."""
    rng = random.Random(7)
    root = tmp_path_factory.mktemp("semantic")
    docs: list[list[str]] = []
    paths = []
    for f in range(FILES):
        records = []
        for k in range(PER_FILE):
            i = f * PER_FILE + k
            if f and k % 5 == 0:
                words = list(docs[rng.randrange(f * PER_FILE)])
                rng.shuffle(words)
            else:
                words = _doc(i, rng)
            docs.append(words)
            records.append({"id": f"{i:016x}", "url": f"https://e.example/{i}", "text": " ".join(words) + "."})
        paths.append(str(write_jsonl(root / f"c{f}.jsonl", records)))
    return paths


def semantic_config(**exec_):
    return local_config(embed={"encoder": "stub", "semantic_threshold": 0.95, "semantic_clusters": 3},
                        output={"shard_max_records": 25}, exec=exec_ or {"engine": "local"})


def _outputs(folder: Path) -> dict[str, object]:
    """The shards, their vector files and the counts (stats.json less its timings)."""
    out: dict[str, object] = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name.startswith("shard-")}
    stats = json.loads((folder / "stats.json").read_text())
    stats.pop("timings_s", None)
    out["stats.json"] = stats
    return out


def _records(out: Path) -> list[dict]:
    from thresher.write.manifest import read_shards

    return list(read_shards(out))


def test_shuffled_rewrites_are_dropped_naming_the_kept_document_and_counts_reconcile(corpus, tmp_path):
    result = build(corpus, tmp_path / "out", semantic_config(), rejects=tmp_path / "rej")
    stats = result.stats
    assert stats.reconciles()
    assert stats.to_dict()["drops"]["dedup.semantic"]["semantic_duplicate"] == (FILES - 1) * PER_FILE // 5
    kept_ids = {r["id"] for r in _records(tmp_path / "out")}
    import gzip

    rejects = [json.loads(line) for line in gzip.open(tmp_path / "rej" / "rejects.jsonl.gz")]
    semantic = [r for r in rejects if r["drop"]["stage"] == "dedup.semantic"]
    assert len(semantic) == (FILES - 1) * PER_FILE // 5
    for r in semantic:
        drop = r["drop"]
        assert drop["reason"] == "semantic_duplicate" and drop["limit"] == 0.95 and drop["value"] >= 0.95
        assert drop["detail"]["kept_id"] in kept_ids and drop["detail"]["cluster"].startswith("semantic-")
    section = result.manifest["embeddings"]
    assert section["semantic_dedup"]["duplicates"] == len(semantic)
    assert section["records"] == stats.kept == sum(f["rows"] for f in section["files"])


def test_vector_files_hold_each_kept_document_in_shard_order(corpus, tmp_path):
    from thresher.embed.encoder import get_encoder
    from thresher.write.manifest import read_shards

    build(corpus, tmp_path / "out", semantic_config())
    pairs = list(read_shards(tmp_path / "out", with_embeddings=True))
    texts = [record["text"] for record, _ in pairs]
    got = np.stack([vector for _, vector in pairs])
    assert got.dtype == np.float16 and got.shape == (len(texts), 64)
    assert got.tobytes() == get_encoder("stub").encode(texts).astype(np.float16).tobytes()


def test_build_vectors_equal_thresher_embed_on_the_built_dataset(corpus, tmp_path):
    import shutil

    from thresher.embed.dataset import embed_dataset
    from thresher.embed.encoder import get_encoder

    build(corpus, tmp_path / "out", semantic_config())
    shutil.copytree(tmp_path / "out", tmp_path / "again")
    report = embed_dataset(tmp_path / "again", get_encoder("stub"), dtype="float16")
    assert report.files
    for entry in report.files:
        assert (tmp_path / "again" / entry["path"]).read_bytes() == (tmp_path / "out" / entry["path"]).read_bytes()


def test_output_is_byte_identical_on_local_and_pool_engines_and_any_worker_count(corpus, tmp_path):
    reference = build(corpus, tmp_path / "local", semantic_config())
    assert reference.manifest["embeddings"]["semantic_dedup"]["duplicates"] > 0
    expected = _outputs(tmp_path / "local")
    assert any(name.endswith(".embeddings.npy") for name in expected)
    for workers in (1, 2):
        build(corpus, tmp_path / f"pool{workers}", semantic_config(engine="pool", workers=workers))
        assert _outputs(tmp_path / f"pool{workers}") == expected, f"pool with {workers} worker(s)"


def test_many_small_semantic_tasks_decide_as_one(corpus, tmp_path):
    build(corpus, tmp_path / "one", semantic_config())
    config = local_config(embed={"encoder": "stub", "semantic_threshold": 0.95, "semantic_clusters": 3,
                                 "semantic_cluster_rows": 1}, output={"shard_max_records": 25})
    build(corpus, tmp_path / "many", config)
    assert _outputs(tmp_path / "many") == _outputs(tmp_path / "one")


_failures = {"left": 0}


def semantic_task_failing_once(ctx, lo, hi, partitions, dimension):
    """Fails the first call after it was armed: the build stops with the embed phase done."""
    from thresher.embed.semantic_phase import semantic_task

    if _failures["left"]:
        _failures["left"] -= 1
        raise OSError("interrupted")
    return semantic_task(ctx, lo, hi, partitions, dimension)


def test_a_build_stopped_in_semantic_dedup_resumes_to_the_same_output(corpus, tmp_path):
    build(corpus, tmp_path / "clean", semantic_config())
    _failures["left"] = 1
    config = local_config(embed={"encoder": "stub", "semantic_threshold": 0.95, "semantic_clusters": 3},
                          output={"shard_max_records": 25}, exec={"engine": "local", "retries": 0})
    with pytest.raises(Exception, match="interrupted"):
        build(corpus, tmp_path / "out", config, tasks=DEFAULT_TASKS.replace(semantic=semantic_task_failing_once))
    done = {p.name for p in (tmp_path / "out" / ".work" / "done").iterdir()}
    assert any(n.startswith("embed-") for n in done) and not any(n.startswith("decide-") for n in done)
    build(corpus, tmp_path / "out", config)
    assert _outputs(tmp_path / "out") == _outputs(tmp_path / "clean")


def test_embed_alone_writes_vectors_and_drops_nothing(corpus, tmp_path):
    result = build(corpus, tmp_path / "out", local_config(embed={"encoder": "stub"}))
    assert "dedup.semantic" not in result.stats.to_dict()["drops"]
    assert "semantic_dedup" not in result.manifest["embeddings"]
    assert result.manifest["embeddings"]["records"] == result.stats.kept


def test_semantic_dedup_turns_embedding_on_with_the_default_encoder():
    from thresher.embed.config import EmbedConfig

    assert EmbedConfig(semantic_threshold=0.9).encoder_name == "wordllama"
    assert not EmbedConfig().enabled


@pytest.mark.parametrize("threshold", [0, 1.5, -0.2])
def test_a_threshold_outside_zero_one_is_refused(threshold):
    with pytest.raises(ConfigError, match="semantic_threshold"):
        local_config(embed={"semantic_threshold": threshold})


def test_cluster_ranges_hold_about_max_rows_and_a_large_cluster_alone():
    from thresher.embed.semantic_phase import plan_cluster_ranges

    assert plan_cluster_ranges([3, 3, 3, 10, 1, 1], 6) == [(0, 2), (2, 3), (3, 4), (4, 6)]
    assert plan_cluster_ranges([0, 0], 6) == [(0, 2)]


class PoisonedEncoder:
    """The stub, raising on any batch holding a text with POISON (a model failing on one document)."""

    def __init__(self):
        from thresher.embed.stub import HashingEncoder

        self.inner = HashingEncoder()
        self.name, self.version, self.dimension, self.max_len = "poisoned", "1", 64, 512

    def tokenize_lengths(self, texts):
        return self.inner.tokenize_lengths(texts)

    def encode(self, texts):
        if any("POISON" in t for t in texts):
            raise RuntimeError("model failure")
        return self.inner.encode(texts)


def test_a_document_the_encoder_fails_on_alone_is_dropped_by_name_and_its_batch_mates_kept(tmp_path, monkeypatch):
    from thresher.embed import encoder as registry
    from thresher.embed import phase

    monkeypatch.setitem(registry.ENCODERS.refs, "poisoned", lambda device: PoisonedEncoder())
    monkeypatch.setattr(phase, "_encoders", {})
    rng = random.Random(3)
    records = [
        {
            "id": f"{i:016x}",
            "url": f"https://e.example/{i}",
            "text": " ".join(_doc(i, rng)) + (" POISON" if i == 7 else ""),
        }
        for i in range(20)
    ]
    crawl = write_jsonl(tmp_path / "c.jsonl", records)
    result = build([str(crawl)], tmp_path / "out", local_config(embed={"encoder": "poisoned"}))
    assert result.stats.to_dict()["drops"]["embed"] == {"encoder_failed": 1}
    assert result.stats.kept == 19 and result.stats.reconciles()
    assert result.manifest["embeddings"]["encoder_failed"] == 1 and result.manifest["embeddings"]["records"] == 19
    assert all("POISON" not in r["text"] for r in _records(tmp_path / "out"))


def test_an_unknown_encoder_or_cuda_for_a_numpy_encoder_stops_the_build_before_any_task(corpus, tmp_path):
    with pytest.raises(ConfigError, match="unknown encoder 'nope'"):
        build(corpus, tmp_path / "a", local_config(embed={"encoder": "nope"}))
    with pytest.raises(ConfigError, match="CPU only"):
        build(corpus, tmp_path / "b", local_config(embed={"encoder": "stub", "device": "cuda"}))
    assert not (tmp_path / "a" / ".work" / "done").exists() and not (tmp_path / "b" / ".work" / "done").exists()


def test_out_of_memory_in_a_build_halves_the_budget_keeps_every_document_and_is_reported(tmp_path, monkeypatch):
    from tests.unit.embed.test_batched import SmallDevice

    from thresher.embed import encoder as registry
    from thresher.embed import phase
    from thresher.embed.stub import HashingEncoder
    from thresher.write.manifest import read_shards

    monkeypatch.setitem(registry.ENCODERS.refs, "small", lambda device: SmallDevice(capacity=900))
    monkeypatch.setattr(phase, "_encoders", {})
    rng = random.Random(4)
    texts = [" ".join(_doc(i, rng)) for i in range(40)]
    texts[3] = " ".join(f"long{j}" for j in range(700))  # past the window (512): truncated, counted
    records = [{"id": f"{i:016x}", "url": f"https://e.example/{i}", "text": t} for i, t in enumerate(texts)]
    result = build(
        [str(write_jsonl(tmp_path / "c.jsonl", records))], tmp_path / "out", local_config(embed={"encoder": "small"})
    )
    section = result.manifest["embeddings"]
    assert result.stats.kept == 40 and section["records"] == 40 and section["encoder_failed"] == 0
    assert section["out_of_memory"]["backoffs"] >= 1 and section["out_of_memory"]["lowest_batch_tokens"] <= 900
    assert section["truncated"] == 1
    pairs = list(read_shards(tmp_path / "out", with_embeddings=True))
    got = np.stack([v for _, v in pairs])
    assert got.tobytes() == HashingEncoder().encode([r["text"] for r, _ in pairs]).astype(np.float16).tobytes()


@pytest.mark.parametrize(
    "damage, problem",
    [
        (lambda p: p.unlink(), "missing (vector file)"),
        (lambda p: p.write_bytes(p.read_bytes()[:-10]), "truncated"),
        (lambda p: np.save(p, np.zeros((25, 32), dtype=np.float16)), "dimension 64"),
    ],
    ids=["missing", "truncated", "wrong-dimension"],
)
def test_verify_and_read_shards_name_a_damaged_vector_file_of_a_build(corpus, tmp_path, damage, problem):
    from thresher.cli import main
    from thresher.core.errors import DatasetError
    from thresher.write.dataset_checks import check_dataset
    from thresher.write.manifest import read_shards

    build(corpus, tmp_path / "out", local_config(embed={"encoder": "stub"}, output={"shard_max_records": 25}))
    assert main(["verify", "-q", str(tmp_path / "out")]) == 0
    damage(tmp_path / "out" / "shard-00001.embeddings.npy")
    problems = [p.describe() for p in check_dataset(tmp_path / "out")[1]]
    assert len(problems) == 1 and problems[0].startswith("shard-00001.embeddings.npy") and problem in problems[0]
    assert main(["verify", "-q", str(tmp_path / "out")]) == 1
    with pytest.raises(DatasetError, match="shard-00001.embeddings.npy"):
        list(read_shards(tmp_path / "out", with_embeddings=True))
