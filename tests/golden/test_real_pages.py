"""Real pages end to end: the AEB benchmark pages and the trafilatura evaluation pages, turned into
a JSONL crawl and built. Checks counts, the manifest, verification and output quality signals."""

import gzip
import json

import pytest

from thresher.config import RunConfig
from thresher.run.build import build
from thresher.write.manifest import read_shards, verify_dataset


@pytest.fixture(scope="module")
def real_crawl(tmp_path_factory, shared_data):
    aeb = shared_data / "extraction" / "aeb"
    traf = shared_data / "extraction" / "trafilatura-eval"
    if not (aeb / "ground-truth.json").exists() or not (traf / "evaldata.json").exists():
        pytest.skip("AEB or trafilatura-eval data missing under ../shared/data/extraction")
    path = tmp_path_factory.mktemp("real") / "crawl.jsonl"
    n = 0
    with open(path, "w", encoding="utf-8") as out:
        truth = json.loads((aeb / "ground-truth.json").read_text(encoding="utf-8"))
        for page_id in sorted(truth):
            raw = gzip.decompress((aeb / "html" / f"{page_id}.html.gz").read_bytes())
            out.write(
                json.dumps({"url": truth[page_id]["url"], "html": raw.decode("utf-8", "replace"), "set": "aeb"}) + "\n"
            )
            n += 1
        evaldata = json.loads((traf / "evaldata.json").read_text(encoding="utf-8"))
        for url in sorted(evaldata):
            page = traf / "pages" / (evaldata[url]["file"] + ".gz")
            if not page.exists():
                continue
            raw = gzip.decompress(page.read_bytes())
            out.write(json.dumps({"url": url, "html": raw.decode("utf-8", "replace"), "set": "trafilatura"}) + "\n")
            n += 1
    return path, n


@pytest.mark.slow
def test_real_pages_build_reconciles_and_verifies(real_crawl, tmp_path):
    path, n = real_crawl
    config = RunConfig.from_dict(
        {"exec": {"engine": "pool", "workers": 2}, "input": {"partition_bytes": 8 * 1024 * 1024}}
    )
    result = build([str(path)], tmp_path / "out", config, rejects=tmp_path / "rejects")
    stats = result.stats
    assert stats.seen == n and n >= 1100
    assert stats.malformed == 0
    assert stats.reconciles()
    manifest = result.manifest
    assert manifest["records"] == stats.kept == sum(s["records"] for s in manifest["shards"])
    assert verify_dataset(tmp_path / "out", count_records=True) == []
    records = list(read_shards(tmp_path / "out"))
    assert len(records) == stats.kept
    # these are real articles: most survive extraction and filtering, and none is empty
    aeb_kept = sum(1 for r in records if r["metadata"]["set"] == "aeb")
    assert aeb_kept >= 0.75 * 181, stats.render()
    assert all(r["text"].strip() for r in records)
    # every drop is attributed to a declared stage and reason
    for key in stats.by_prefix("drop"):
        stage, reason = key.split("/")
        assert stage.split(".")[0] in ("extract", "normalize", "quality", "dedup") and reason
    with gzip.open(tmp_path / "rejects" / "rejects.jsonl.gz", "rt", encoding="utf-8") as f:
        assert sum(1 for _ in f) == stats.dropped
