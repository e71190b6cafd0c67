import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.run.build import build
from thresher.write.manifest import read_shards, verify_dataset


@pytest.fixture
def crawl(tmp_path):
    return write_jsonl(
        tmp_path / "c.jsonl", [{"url": f"https://f.example/{i}", "html": article_html(i)} for i in range(25)]
    )


@pytest.mark.parametrize("fmt", ["jsonl.gz", "jsonl.zst", "parquet"])
def test_every_format_round_trips_verifies_and_is_byte_identical_on_rebuild(tmp_path, crawl, fmt):
    if fmt == "jsonl.zst":
        pytest.importorskip("zstandard")
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    config = local_config(output={"format": fmt, "shard_max_records": 10})
    a = build([str(crawl)], tmp_path / "a", config)
    b = build(
        [str(crawl)],
        tmp_path / "b",
        local_config(output={"format": fmt, "shard_max_records": 10}, exec={"engine": "pool", "workers": 2}),
    )
    assert [s["sha256"] for s in a.manifest["shards"]] == [s["sha256"] for s in b.manifest["shards"]]
    assert [s["records"] for s in a.manifest["shards"]] == [10, 10, 5]
    assert verify_dataset(tmp_path / "a", count_records=True) == []
    records = list(read_shards(tmp_path / "a"))
    assert [r["url"] for r in records] == [f"https://f.example/{i}" for i in range(25)]
    assert records[0]["title"] == "Article 0"


def test_parquet_uses_the_hugging_face_layout_and_card(tmp_path, crawl):
    pytest.importorskip("pyarrow")
    result = build([str(crawl)], tmp_path / "out", local_config(output={"format": "parquet", "shard_max_records": 10}))
    assert [s["path"] for s in result.manifest["shards"]] == [f"data/train-0000{i}-of-00003.parquet" for i in range(3)]
    card = (tmp_path / "out" / "README.md").read_text()
    listed = "".join(f"    - data/train-0000{i}-of-00003.parquet\n" for i in range(3))
    head = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path:\n"
    assert card.startswith(head + listed)
