"""The build end to end on generated input: the output contract of issue 2."""

import gzip
import json

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.clusters import Decision
from thresher.core.errors import DatasetError, InputError, TaskError, WorkDirError
from thresher.run.build import build
from thresher.run.phases import DEFAULT_TASKS
from thresher.run.records import KEY_LAYOUT
from thresher.write.manifest import read_shards, verify_dataset


def _stop(*args):
    raise RuntimeError("stop")


STOP_AT_CLUSTER = DEFAULT_TASKS.replace(cluster=_stop)

def crawl(tmp_path, n=60, dup_every=5):
    records = []
    for i in range(n):
        # every dup_every-th page repeats an earlier article under another URL
        src = i - 1 if i % dup_every == 4 else i
        records.append({"url": f"https://s.example/{i}", "html": article_html(src), "crawl": "test"})
    return write_jsonl(tmp_path / "crawl.jsonl", records, ['{"url": "x", "html": ', "[]"])


def test_build_writes_shards_manifest_stats_and_card(tmp_path):
    src = crawl(tmp_path)
    result = build([str(src)], tmp_path / "out", local_config(output={"shard_max_records": 10}))
    out = tmp_path / "out"
    m = json.loads((out / "manifest.json").read_text())
    assert m["complete"] is True and m["format"] == "jsonl.gz"
    assert [s["path"] for s in m["shards"]] == [f"shard-{i:05d}.jsonl.gz" for i in range(5)]
    assert [s["records"] for s in m["shards"]] == [10, 10, 10, 10, 8]
    assert m["config_hash"] == result.manifest["config_hash"] and len(m["config_hash"]) == 16
    assert m["extractor"]["name"] == "builtin"
    stats = json.loads((out / "stats.json").read_text())
    assert (stats["seen"], stats["kept"], stats["dropped"], stats["malformed"]) == (62, 48, 12, 2)
    assert stats["reconciles"] is True
    assert stats["drops"] == {"dedup.exact": {"exact_duplicate": 12}}
    assert stats["malformed_reasons"] == {"invalid_json": 1, "not_an_object": 1}
    assert stats["malformed_examples"][0]["location"] == f"{src}:61"
    card = (out / "README.md").read_text()
    assert "48 documents in 5 shard(s)" in card and "exact_duplicate" in card
    assert not (out / ".work").exists()


def test_output_records_are_in_input_order_with_provenance_and_dedup_annotations(tmp_path):
    src = crawl(tmp_path, n=10)
    build([str(src)], tmp_path / "out", local_config())
    records = list(read_shards(tmp_path / "out"))
    urls = [r["url"] for r in records]
    assert urls == [f"https://s.example/{i}" for i in range(10) if i % 5 != 4]
    first = records[0]
    assert first["title"] == "Article 0"
    assert "Home" not in first["text"] and "Privacy policy" not in first["text"]
    assert first["metadata"] == {"crawl": "test"}
    assert first["source"] == {"file": str(src), "offset": 0}
    keeper = records[3]  # page 3 absorbed page 4
    assert keeper["annotations"]["dedup.duplicates"] == 1


def test_rebuild_gives_byte_identical_shards(tmp_path):
    src = crawl(tmp_path)
    a = build([str(src)], tmp_path / "a", local_config(output={"shard_max_records": 7}))
    b = build([str(src)], tmp_path / "b", local_config(output={"shard_max_records": 7}, exec={"key_partitions": 5}))
    assert [s["sha256"] for s in a.manifest["shards"]] == [s["sha256"] for s in b.manifest["shards"]]
    assert a.manifest == b.manifest


def test_partitioned_input_gives_the_same_output(tmp_path):
    src = crawl(tmp_path)
    a = build([str(src)], tmp_path / "a", local_config())
    b = build([str(src)], tmp_path / "b", local_config(input={"partition_bytes": 4096}))
    assert [s["sha256"] for s in a.manifest["shards"]] == [s["sha256"] for s in b.manifest["shards"]]


def test_pool_engine_matches_local(tmp_path):
    src = crawl(tmp_path)
    a = build([str(src)], tmp_path / "a", local_config(input={"partition_bytes": 8192}))
    b = build(
        [str(src)], tmp_path / "b", local_config(input={"partition_bytes": 8192}, exec={"engine": "pool", "workers": 2})
    )
    assert a.manifest == b.manifest
    assert a.stats.counters == b.stats.counters


def test_verify_detects_flipped_byte_and_deleted_shard(tmp_path):
    build([str(crawl(tmp_path))], tmp_path / "out", local_config(output={"shard_max_records": 10}))
    out = tmp_path / "out"
    assert verify_dataset(out, count_records=True) == []
    shard = out / "shard-00001.jsonl.gz"
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    (out / "shard-00003.jsonl.gz").unlink()
    problems = [p.describe() for p in verify_dataset(out)]
    assert problems == [
        "shard-00001.jsonl.gz: sha256 differs from the manifest (altered)",
        "shard-00003.jsonl.gz: missing",
    ]
    with pytest.raises(DatasetError, match="shard-00001.jsonl.gz: sha256 differs"):
        list(read_shards(out))


def test_read_shards_raises_on_truncated_shard(tmp_path):
    build([str(crawl(tmp_path))], tmp_path / "out", local_config(output={"shard_max_records": 10}))
    shard = tmp_path / "out" / "shard-00000.jsonl.gz"
    shard.write_bytes(shard.read_bytes()[:-20])
    with pytest.raises(DatasetError, match="truncated or altered"):
        list(read_shards(tmp_path / "out"))


def test_interrupted_build_leaves_no_manifest_and_resumes_to_identical_output(tmp_path, monkeypatch):
    src = crawl(tmp_path)
    config = local_config(input={"partition_bytes": 8192}, output={"shard_max_records": 9}, exec={"retries": 0})
    reference = build([str(src)], tmp_path / "ref", config)
    out = tmp_path / "out"
    build([str(src)], out, config)  # an earlier complete build into the same folder
    assert (out / "manifest.json").exists()
    calls = {"n": 0}
    real_write_task = DEFAULT_TASKS.write

    def crashing_write_task(ctx, p, start, stages=(), following=()):
        calls["n"] += 1
        if calls["n"] == 2:
            raise RuntimeError("simulated crash")
        return real_write_task(ctx, p, start, stages, following)

    with pytest.raises(
        TaskError, match=r"task write-000001 failed after 1 attempt\(s\): RuntimeError: simulated crash"
    ):
        build([str(src)], out, config, overwrite=True, tasks=DEFAULT_TASKS.replace(write=crashing_write_task))
    assert "simulated crash" in (out / ".work" / "logs" / "write-000001.log").read_text()
    assert not (out / "manifest.json").exists()  # never a manifest that claims completeness
    done = sorted(p.name for p in (out / ".work" / "done").iterdir())
    assert "cluster.json" in done and "write-000000.json" in done
    resumed = build([str(src)], out, config)
    assert resumed.manifest == reference.manifest


def test_changed_config_on_unfinished_work_dir_is_refused_unless_overwrite(tmp_path, monkeypatch):
    src = crawl(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(TaskError, match="task cluster failed after 3 attempt"):
        build([str(src)], out, local_config(), tasks=STOP_AT_CLUSTER)
    with pytest.raises(WorkDirError, match="another config or input"):
        build([str(src)], out, local_config(output={"shard_max_records": 3}))
    result = build([str(src)], out, local_config(output={"shard_max_records": 3}), overwrite=True)
    assert result.manifest["records"] == 48


def test_two_builds_on_one_output_are_refused(tmp_path):
    from thresher.run.workdir import BuildLock, WorkDir

    src = crawl(tmp_path, n=5)
    with BuildLock(WorkDir(tmp_path / "out" / ".work")):
        with pytest.raises(WorkDirError, match="another build is running"):
            build([str(src)], tmp_path / "out", local_config())


def test_output_folder_with_foreign_files_is_refused(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "thesis.docx").write_text("precious")
    with pytest.raises(WorkDirError, match="not empty and not a thresher dataset"):
        build([str(crawl(tmp_path, n=5))], tmp_path / "out", local_config())


def test_strict_and_max_malformed_fail_the_run_without_a_manifest(tmp_path):
    src = crawl(tmp_path, n=5)
    with pytest.raises(InputError, match="2 malformed input record"):
        build([str(src)], tmp_path / "a", local_config(exec={"strict": True}))
    assert not (tmp_path / "a" / "manifest.json").exists()
    with pytest.raises(InputError, match="more than --max-malformed 1"):
        build([str(src)], tmp_path / "b", local_config(exec={"max_malformed": 1}))
    assert build([str(src)], tmp_path / "c", local_config(exec={"max_malformed": 2})).ok


def test_rejects_hold_every_dropped_document_with_its_drop(tmp_path):
    src = crawl(tmp_path, n=10)
    result = build([str(src)], tmp_path / "out", local_config(), rejects=tmp_path / "rej")
    with gzip.open(tmp_path / "rej" / "rejects.jsonl.gz", "rt") as f:
        rejects = [json.loads(line) for line in f]
    assert len(rejects) == result.stats.dropped == 2
    assert rejects[0]["url"] == "https://s.example/4"
    assert rejects[0]["drop"]["stage"] == "dedup.exact" and rejects[0]["drop"]["reason"] == "exact_duplicate"
    kept_ids = {r["id"] for r in read_shards(tmp_path / "out")}
    assert rejects[0]["drop"]["detail"]["kept_id"] in kept_ids
    with gzip.open(tmp_path / "rej" / "malformed.jsonl.gz", "rt") as f:
        malformed = [json.loads(line) for line in f]
    assert [m["reason"] for m in malformed] == ["invalid_json", "not_an_object"]


@pytest.mark.parametrize(
    ("level", "expected_kept"),
    [("raw", 3), ("normalized", 2), ("structural", 1), (None, 4)],
)
def test_exact_dedup_levels(tmp_path, level, expected_kept):
    texts = [
        "Price is 10 dollars today.",
        "Price is 10 dollars today.",
        "price IS 10 dollars, today!",
        "Price is 12 dollars today.",
    ]
    src = write_jsonl(tmp_path / "t.jsonl", [{"url": f"u{i}", "text": t} for i, t in enumerate(texts)])
    result = build(
        [str(src)], tmp_path / "out", local_config(dedup={"exact": {"level": level}, "near": {"method": None}})
    )
    assert result.stats.kept == expected_kept


def test_keep_longest_policy_keeps_the_longest_member(tmp_path):
    texts = ["Same words here.", "same words HERE", "Same words here!!!"]
    src = write_jsonl(tmp_path / "t.jsonl", [{"url": f"u{i}", "text": t} for i, t in enumerate(texts)])
    build([str(src)], tmp_path / "out", local_config(dedup={"keep": "longest", "near": {"method": None}}))
    (record,) = list(read_shards(tmp_path / "out"))
    assert record["url"] == "u2" and record["annotations"]["dedup.duplicates"] == 2


def test_empty_input_gives_an_empty_complete_dataset(tmp_path):
    src = tmp_path / "empty.jsonl"
    src.write_text("")
    result = build([str(src)], tmp_path / "out", local_config())
    assert result.manifest["shards"] == [] and result.stats.seen == 0
    assert result.stats.counters["event/empty_file"] == 1
    assert verify_dataset(tmp_path / "out") == []


def test_a_failing_task_is_retried_then_succeeds(tmp_path, monkeypatch):
    src = crawl(tmp_path, n=10)
    reference = build([str(src)], tmp_path / "ref", local_config())
    failures = {"left": 2}
    real_scan_task = DEFAULT_TASKS.scan

    def flaky_scan_task(ctx, partition):
        if failures["left"]:
            failures["left"] -= 1
            raise OSError("disk hiccup")
        return real_scan_task(ctx, partition)

    result = build(
        [str(src)],
        tmp_path / "out",
        local_config(exec={"retries": 2}),
        tasks=DEFAULT_TASKS.replace(scan=flaky_scan_task),
    )
    assert result.manifest == reference.manifest and failures["left"] == 0


def test_all_identical_corpus_is_one_cluster_at_linear_cost(tmp_path):
    text = "The same page, copied everywhere across the crawl, word for word, sentence for sentence. " * 8
    src = write_jsonl(
        tmp_path / "same.jsonl", [{"url": f"https://copy.example/{i}", "text": text} for i in range(3000)]
    )
    result = build([str(src)], tmp_path / "out", local_config(exec={"key_partitions": 3}))
    stats = result.stats
    assert (stats.kept, stats.dropped) == (1, 2999)
    assert stats.by_prefix("drop") == {"dedup.exact/exact_duplicate": 2999}
    # identical payloads are linked without verification: no candidate pairs, and one star of
    # n - 1 edges per group task (a pair seen in several buckets of a task is written once)
    assert stats.counters["event/dedup.near.candidates"] == 0
    edges = stats.counters["event/dedup.near.edges"]
    assert edges % 2999 == 0 and 0 < edges <= 3 * 2999
    (record,) = list(read_shards(tmp_path / "out"))
    assert record["url"] == "https://copy.example/0" and record["annotations"]["dedup.duplicates"] == 2999


def near_pairs_corpus(tmp_path):
    """40 pairs of 300-word documents differing in one word (Jaccard ~0.97)."""
    import random

    rng = random.Random(11)
    words = [f"w{i}" for i in range(4000)]
    rows = []
    for i in range(40):
        base = [rng.choice(words) for _ in range(300)]
        rows.append({"url": f"https://a.example/{i}", "text": " ".join(base)})
        edited = list(base)
        edited[rng.randrange(300)] = "changed"  # one word in 300: Jaccard ~0.97
        rows.append({"url": f"https://b.example/{i}", "text": " ".join(edited)})
    return write_jsonl(tmp_path / "pairs.jsonl", rows)


def test_each_distinct_candidate_pair_is_verified_once(tmp_path):
    # near-identical pairs collide in most of their 21 LSH bands, whose keys land in different
    # group tasks; the verify phase must see every pair once however many bands it shared
    src = near_pairs_corpus(tmp_path)
    config = local_config(exec={"key_partitions": 8}, quality={"preset": None})
    result = build([str(src)], tmp_path / "out", config)
    counters = result.stats.counters
    assert counters["drop/dedup.near/near_duplicate"] == 40
    assert counters["event/dedup.near.pairs"] > 40  # emitted once per group task the pair met in
    assert counters["event/dedup.near.candidates"] == 40  # verified once each
    reference = build([str(src)], tmp_path / "ref", local_config(exec={"key_partitions": 1}, quality={"preset": None}))
    assert result.manifest == reference.manifest


def test_keys_and_pairs_spilled_in_many_runs_give_the_same_output(tmp_path, monkeypatch):
    # scan and group tasks buffer at most SPILL_BYTES of keys/pairs before writing a run; with a
    # tiny buffer every task writes many runs, and group/verify must read them all back
    from thresher.write import buckets as spill

    src = near_pairs_corpus(tmp_path)
    config = {"quality": {"preset": None}}
    reference = build([str(src)], tmp_path / "ref", local_config(**config))
    monkeypatch.setattr(spill, "SPILL_BYTES", 600)
    result = build([str(src)], tmp_path / "out", local_config(exec={"keep_work": True}, **config))
    assert result.manifest == reference.manifest and result.stats.counters == reference.stats.counters
    work = tmp_path / "out" / ".work"
    key_runs = json.loads((work / "keys" / "dedup.near" / "p000000.idx").read_text())
    pair_runs = [json.loads(p.read_text()) for p in (work / "pairs" / "dedup.near").glob("*.idx")]
    assert len(key_runs) > 1 and max(len(r) for r in pair_runs) > 1


def test_write_task_merges_decisions_in_ordinal_order_and_refuses_an_orphan(tmp_path, monkeypatch):
    """The write task streams a partition's decisions beside its documents (both in ordinal order)
    instead of holding them; a decision for a document the scan never kept is a broken work dir,
    reported, never silently ignored (it would keep a duplicate)."""
    from thresher.run import shards

    src = crawl(tmp_path, n=30)
    config = local_config(exec={"retries": 0})
    reference = build([str(src)], tmp_path / "ref", config)
    assert reference.stats.kept == 24  # the merge applied every drop
    real = shards.iter_decisions

    def with_orphan(work, p, stages=()):
        yield from real(work, p, stages)
        yield Decision(ordinal=10**9, cluster="00")

    monkeypatch.setattr(shards, "iter_decisions", with_orphan)
    with pytest.raises(TaskError, match="decision for ordinal 1000000000, which no scanned document has"):
        build([str(src)], tmp_path / "out", config)


def test_unfinished_work_dir_with_another_key_layout_is_refused(tmp_path, monkeypatch):
    """Scan tasks done by a thresher that built or bucketed keys differently cannot be mixed with
    new ones (equal keys would sit in different buckets and their pairs be missed)."""
    src = crawl(tmp_path)
    out = tmp_path / "out"
    with pytest.raises(TaskError):
        build([str(src)], out, local_config(exec={"retries": 0}), tasks=STOP_AT_CLUSTER)
    plan_path = out / ".work" / "plan.json"
    plan = json.loads(plan_path.read_text())
    assert plan["key_layout"] == KEY_LAYOUT
    plan["key_layout"] = KEY_LAYOUT - 1  # as an older thresher wrote it
    plan_path.write_text(json.dumps(plan))
    with pytest.raises(WorkDirError, match="another config or input"):
        build([str(src)], out, local_config(exec={"retries": 0}))
