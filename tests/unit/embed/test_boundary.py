"""Semantic dedup across k-means cluster boundaries and the re-split of an oversized cluster:
boundary pairs are compared (a document near two centroids is a visitor in the second), decided
once, every drop names a kept document, and the output is the same on every engine, worker count
and after a resume. The stub encoder (hashed bag of words) stands in for a model."""

import gzip
import json
import random
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS

np = pytest.importorskip("numpy")

THRESHOLD = 0.8


def window_records(n: int = 150, vocab: int = 900, width: int = 30, seed: int = 5) -> list[dict]:
    """Documents as windows on one long word list: two whose windows start d words apart share
    width - d words (bag-of-words cosine ~ 1 - d/width), so duplicates form a continuum that any
    clustering must cut somewhere."""
    rng = random.Random(seed)
    records = []
    for i in range(n):
        c = rng.randrange(vocab - width)
        words = [f"v{j}" for j in range(c, c + width)]
        rng.shuffle(words)
        # an id ending in a zero byte: NumPy's S8 would drop it, and the drop would name no document
        doc_id = f"{i:014x}00"
        records.append({"id": doc_id, "url": f"https://b.example/{i}", "text": " ".join(words)})
    return records


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    root = tmp_path_factory.mktemp("boundary")
    records = window_records()
    return [str(write_jsonl(root / f"c{k}.jsonl", records[k::2])) for k in range(2)]  # two partitions


def config(clusters: int, margin: float, **more):
    exec_ = more.pop("exec", {"engine": "local"})
    embed = {
        "encoder": "stub",
        "semantic_threshold": THRESHOLD,
        "semantic_clusters": clusters,
        "semantic_margin": margin,
        **more,
    }
    return local_config(embed=embed, dedup={"near": {"method": None}}, output={"shard_max_records": 40}, exec=exec_)


def run(crawl, out: Path, cfg, **kw):
    result = build(crawl, out, cfg, rejects=out.with_name(out.name + "-rej"), **kw)
    rejects = [json.loads(line) for line in gzip.open(out.with_name(out.name + "-rej") / "rejects.jsonl.gz")]
    return result, rejects


def _vectors(texts: list[str]):
    from thresher.embed.stub import HashingEncoder

    return HashingEncoder().encode(texts)


def test_boundary_pairs_are_found_that_nearest_only_clustering_misses(crawl, tmp_path):
    exhaustive, _ = run(crawl, tmp_path / "one", config(1, 0.0))
    nearest, _ = run(crawl, tmp_path / "near", config(8, 0.0))
    boundary, rejects = run(crawl, tmp_path / "both", config(8, 0.2))
    one, near, both = (
        r.manifest["embeddings"]["semantic_dedup"]["duplicates"] for r in (exhaustive, nearest, boundary)
    )
    section = boundary.manifest["embeddings"]["semantic_dedup"]
    # the cut loses pairs; the boundary finds them back (and no duplicate is counted twice)
    assert near < one <= both
    assert section["boundary_duplicates"] > 0 and section["boundary_rows"] > 0
    assert boundary.stats.reconciles()
    dropped = [r["id"] for r in rejects]
    assert len(dropped) == len(set(dropped)) == section["duplicates"]
    marked = [r for r in rejects if r["drop"]["detail"].get("boundary")]
    assert len(marked) == section["boundary_duplicates"]


def test_every_drop_names_a_kept_earlier_document_at_the_threshold(crawl, tmp_path):
    from thresher.write.manifest import read_shards

    result, rejects = run(crawl, tmp_path / "out", config(8, 0.3))
    assert result.manifest["embeddings"]["semantic_dedup"]["boundary_duplicates"] > 0
    kept = {r["id"]: r for r in read_shards(tmp_path / "out")}
    url = {r["id"]: r["url"] for r in [*kept.values(), *rejects]}  # the build's ids, by the input's urls
    source = window_records()
    texts = {r["url"]: r["text"] for r in source}
    # keep policy first: earlier in ordinal order, i.e. file c0 (even inputs) then c1 (odd), each in order
    rank = {r["url"]: (i % 2, i) for i, r in enumerate(source)}
    boundary = 0
    for r in rejects:
        detail = r["drop"]["detail"]
        assert detail["kept_id"] in kept, "a drop must name a document that is kept"
        linked = url[detail.get("via", detail["kept_id"])]
        cosine = float(_vectors([texts[r["url"]]])[0] @ _vectors([texts[linked]])[0])
        assert r["drop"]["value"] == pytest.approx(cosine, abs=1e-4) and cosine >= THRESHOLD
        assert rank[url[detail["kept_id"]]] < rank[r["url"]]
        if "via" in detail:
            assert rank[url[detail["kept_id"]]] < rank[linked] < rank[r["url"]]
        boundary += bool(detail.get("boundary"))
    assert boundary == result.manifest["embeddings"]["semantic_dedup"]["boundary_duplicates"]


def test_with_every_row_visiting_the_other_of_two_clusters_no_two_kept_documents_are_duplicates(crawl, tmp_path):
    from thresher.write.manifest import read_shards

    # k = 2 and a margin past any cosine gap: every pair is compared once, within or across
    run(crawl, tmp_path / "out", config(2, 1.9))
    vectors = _vectors([r["text"] for r in read_shards(tmp_path / "out")])
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, 0)
    assert sims.max() < THRESHOLD


def test_margin_zero_visits_nothing_and_matches_the_nearest_centroid_split(crawl, tmp_path):
    result, _ = run(crawl, tmp_path / "out", config(8, 0.0))
    section = result.manifest["embeddings"]["semantic_dedup"]
    assert section["boundary_rows"] == 0 and section["boundary_duplicates"] == 0 and section["reattributed"] == 0


def _outputs(folder: Path) -> dict[str, object]:
    out: dict[str, object] = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name.startswith("shard-")}
    stats = json.loads((folder / "stats.json").read_text())
    stats.pop("timings_s", None)
    out["stats.json"] = stats
    out["manifest.embeddings"] = json.loads((folder / "manifest.json").read_text())["embeddings"]
    return out


def test_boundary_output_is_byte_identical_on_every_engine_and_worker_count(crawl, tmp_path):
    reference, rejects = run(crawl, tmp_path / "local", config(8, 0.3))
    assert reference.manifest["embeddings"]["semantic_dedup"]["boundary_duplicates"] > 0
    expected = _outputs(tmp_path / "local")
    expected_rejects = (tmp_path / "local-rej" / "rejects.jsonl.gz").read_bytes()
    for workers in (1, 2):
        run(crawl, tmp_path / f"pool{workers}", config(8, 0.3, exec={"engine": "pool", "workers": workers}))
        assert _outputs(tmp_path / f"pool{workers}") == expected, f"pool with {workers} worker(s)"
        assert (tmp_path / f"pool{workers}-rej" / "rejects.jsonl.gz").read_bytes() == expected_rejects
    # one semantic task per cluster instead of one for all: the same decisions
    run(crawl, tmp_path / "many", config(8, 0.3, semantic_cluster_rows=1))
    assert _outputs(tmp_path / "many") == expected


_failures = {"left": 0}


def boundary_task_failing_once(ctx, starts):
    from thresher.embed.semantic_phase import boundary_task

    if _failures["left"]:
        _failures["left"] -= 1
        raise OSError("interrupted")
    return boundary_task(ctx, starts)


def test_a_build_stopped_at_the_boundary_resumes_to_the_same_output(crawl, tmp_path):
    run(crawl, tmp_path / "clean", config(8, 0.3))
    _failures["left"] = 1
    cfg = config(8, 0.3, exec={"engine": "local", "retries": 0})
    with pytest.raises(Exception, match="interrupted"):
        build(crawl, tmp_path / "out", cfg, tasks=DEFAULT_TASKS.replace(boundary=boundary_task_failing_once))
    done = {p.name for p in (tmp_path / "out" / ".work" / "done").iterdir()}
    assert any(n.startswith("semantic-") for n in done) and "boundary" not in done
    build(crawl, tmp_path / "out", cfg)
    assert _outputs(tmp_path / "out") == _outputs(tmp_path / "clean")


def test_an_oversized_cluster_is_re_split_and_its_rows_still_deduplicated(crawl, tmp_path):
    whole, _ = run(crawl, tmp_path / "whole", config(1, 0.0))
    split, _ = run(crawl, tmp_path / "split", config(1, 0.3, semantic_cluster_max=40))
    section = split.manifest["embeddings"]["semantic_dedup"]
    assert section["clusters_split"] >= 1 and section["clusters"] >= 4
    assert section["largest_cluster"] < whole.manifest["embeddings"]["semantic_dedup"]["largest_cluster"]
    # the boundary keeps the split from costing many duplicates
    assert section["duplicates"] >= 0.95 * whole.manifest["embeddings"]["semantic_dedup"]["duplicates"]


def test_split_oversized_divides_dense_clusters_and_leaves_identical_rows_alone():
    from thresher.embed.semantic import kmeans, nearest, split_oversized

    rng = np.random.default_rng(0)
    blobs = [rng.normal(size=(1, 16)) + 0.05 * rng.normal(size=(300, 16)) for _ in range(4)]
    sample = np.concatenate(blobs).astype(np.float32)
    sample /= np.linalg.norm(sample, axis=1, keepdims=True)
    one = kmeans(sample, 1, iterations=10, seed=0)
    centroids, split = split_oversized(sample, one, total=1200, max_rows=400, iterations=10, seed=0)
    sizes = np.bincount(nearest(sample, centroids))
    assert split >= 1 and len(centroids) >= 3 and sizes.max() <= 400
    again, _ = split_oversized(sample, one, total=1200, max_rows=400, iterations=10, seed=0)
    assert again.tobytes() == centroids.tobytes()
    # the sample stands for 10x as many rows: clusters are split by their estimated size
    _, split_scaled = split_oversized(sample, centroids, total=12_000, max_rows=400, iterations=10, seed=0)
    assert split_scaled >= 1
    same = np.tile(sample[:1], (500, 1))
    kept, none = split_oversized(
        same, kmeans(same, 1, iterations=5, seed=0), total=500, max_rows=10, iterations=5, seed=0
    )
    assert none == 0 and len(kept) == 1


def test_nearest_two_names_a_second_centroid_only_within_the_margin():
    from thresher.embed.semantic import nearest_two

    centroids = np.array([[1, 0], [0, 1], [-1, 0]], dtype=np.float32)
    rows = np.array([[1, 0], [0.72, 0.69], [0, 1]], dtype=np.float32)
    first, second = nearest_two(rows, centroids, 0.05)
    assert first.tolist() == [0, 0, 1] and second.tolist() == [-1, 1, -1]
    assert nearest_two(rows, centroids, 0.0)[1].tolist() == [-1, -1, -1]
