import json
import random

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.cli import main
from thresher.core.errors import ConfigError
from thresher.embed.semantic import SemanticDedupConfig, SemanticStats, kmeans, semantic_duplicates
from thresher.write.manifest import read_shards

np = pytest.importorskip("numpy")


def original(i: int) -> str:
    return " ".join(f"Topic{i} sentence {j} speaks of thing{i}x{j} and place{i}y{j} today." for j in range(6))


def reworded(i: int) -> str:
    words = original(i).split()
    random.Random(i).shuffle(words)  # the same words in another order: no shared 5-gram shingles, same bag of words
    return " ".join(words)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    from thresher.run.build import build

    root = tmp_path_factory.mktemp("sem")
    records = [{"id": f"o{i}", "url": f"https://s.example/o{i}", "text": original(i)} for i in range(20)]
    records += [{"id": f"r{i}", "url": f"https://s.example/r{i}", "text": reworded(i)} for i in range(8)]
    crawl = write_jsonl(root / "c.jsonl", records)
    build([str(crawl)], root / "ds", local_config(output={"shard_max_records": 10}))
    assert main(["embed", str(root / "ds"), "--encoder", "stub"]) == 0
    return root / "ds"


def names(dataset) -> dict:
    """The dataset's record ids → the short name in the test's URLs (o3: original 3, r3: its rewording)."""
    return {r["id"]: r["url"].rsplit("/", 1)[1] for r in read_shards(dataset)}


def test_reworded_copies_are_attributed_to_the_kept_original(embedded):
    stats = SemanticStats()
    dups = list(semantic_duplicates(embedded, SemanticDedupConfig(threshold=0.9), stats))
    name = names(embedded)
    assert stats.records == 28 and stats.duplicates == 8
    assert sorted((name[d.id], name[d.kept_id]) for d in dups) == sorted((f"r{i}", f"o{i}") for i in range(8))
    d = next(d for d in dups if name[d.id] == "r3")
    assert d.cosine == pytest.approx(1.0, abs=1e-3) and d.kept_shard == "shard-00000.jsonl.gz" and d.kept_row == 3
    drop = d.drop(0.9)
    assert (drop.stage, drop.reason, drop.limit) == ("dedup.semantic", "semantic_duplicate", 0.9)
    assert name[drop.detail["kept_id"]] == "o3"


def test_more_clusters_find_the_same_exact_meaning_copies_and_runs_repeat(embedded):
    one = [(d.id, d.kept_id) for d in semantic_duplicates(embedded, SemanticDedupConfig(clusters=1))]
    four = [(d.id, d.kept_id) for d in semantic_duplicates(embedded, SemanticDedupConfig(clusters=4))]
    again = [(d.id, d.kept_id) for d in semantic_duplicates(embedded, SemanticDedupConfig(clusters=4))]
    assert sorted(one) == sorted(four) and four == again


def test_a_duplicate_of_a_duplicate_names_a_kept_document():
    from thresher.embed.semantic import cluster_neighbours

    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([0.95, 0.312], dtype=np.float32) / np.linalg.norm([0.95, 0.312])
    c = np.array([0.81, 0.586], dtype=np.float32) / np.linalg.norm([0.81, 0.586])
    found = cluster_neighbours(np.stack([a, b, c]).astype(np.float32), 0.9)
    # b duplicates a; c is close to b (dropped) but not to a: kept
    assert [(i, j) for i, j, _ in found] == [(1, 0)]


def test_kmeans_is_seeded_and_separates_clear_groups():
    rng = np.random.default_rng(1)
    centers = np.eye(8, dtype=np.float32)[:3]
    points = np.concatenate([c + 0.05 * rng.standard_normal((50, 8)).astype(np.float32) for c in centers])
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    c1 = kmeans(points, 3, iterations=20, seed=7)
    c2 = kmeans(points, 3, iterations=20, seed=7)
    assert c1.tobytes() == c2.tobytes()
    labels = np.argmax(points @ c1.T, axis=1)
    assert all(len(set(labels[g * 50 : (g + 1) * 50])) == 1 for g in range(3))


def test_cli_reports_duplicates_as_attributed_json_lines(embedded, tmp_path, capsys):
    report = tmp_path / "dups.jsonl"
    assert (
        main(["embed", str(embedded), "--encoder", "stub", "--semantic-dedup", "--semantic-report", str(report)]) == 0
    )
    lines = [json.loads(line) for line in report.read_text().splitlines()]
    name = names(embedded)
    assert len(lines) == 8 and {name[line["drop"]["detail"]["kept_id"]] for line in lines} == {
        f"o{i}" for i in range(8)
    }
    assert "8 of 28 records duplicate" in capsys.readouterr().err


def test_threshold_outside_the_unit_interval_is_refused():
    with pytest.raises(ConfigError):
        SemanticDedupConfig(threshold=1.5)
