"""Decontamination and hashed PII redaction give the same shards in-process and in a worker pool
(each worker builds the benchmark index itself)."""

import json

from tests.conftest import local_config, write_jsonl

from thresher.run.build import build

Q = "A robe takes two bolts of blue fiber and half that much white fiber so how many bolts in total"


def test_pool_and_local_give_identical_shards(tmp_path):
    bench = write_jsonl(tmp_path / "bench.jsonl", [{"text": Q}])
    records = []
    for i in range(40):
        text = f"Page {i} is about gardening and the weather, with mail to gardener{i % 7}@plants-{i}.de. " * 3
        if i % 5 == 0:
            text += Q
        records.append({"url": f"https://p.test/{i}", "text": text})
    src = write_jsonl(tmp_path / "crawl.jsonl", records)
    sections = {"decontam": {"benchmarks": [str(bench)], "ngram": 8, "mode": "cut"},
                "pii": {"types": ["email"], "replacement": "hash", "salt": "s"}, "dedup": {"near": {"method": None}}}
    # several partitions, so that both workers scan some
    local = build([str(src)], tmp_path / "local", local_config(input={"partition_bytes": 4096}, **sections))
    pooled = build([str(src)], tmp_path / "pool",
                   local_config(exec={"engine": "pool", "workers": 2}, input={"partition_bytes": 4096}, **sections))
    digests = [[s["sha256"] for s in r.manifest["shards"]] for r in (local, pooled)]
    assert digests[0] == digests[1]
    assert local.stats.by_prefix("event")["decontam.cut_documents"] == 8
    assert json.dumps(local.stats.by_prefix("event"), sort_keys=True) == json.dumps(
        pooled.stats.by_prefix("event"), sort_keys=True
    )
