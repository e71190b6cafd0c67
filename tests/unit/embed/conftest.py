import pytest
from tests.conftest import local_config, write_jsonl

TOPICS = ["river", "mountain", "market", "library", "harbour", "orchard", "factory", "theatre", "station", "garden"]


def text(i: int) -> str:
    topic = TOPICS[i % len(TOPICS)]
    n = 12 + (i * 7) % 60  # mixed lengths, so batching has something to sort
    return " ".join(f"The {topic} number {i} holds item{j} and story{i}x{j}." for j in range(n // 6 + 1))


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A built dataset of 30 text records in three shards."""
    pytest.importorskip("numpy")
    from thresher.run.build import build

    root = tmp_path_factory.mktemp("embed")
    crawl = write_jsonl(
        root / "c.jsonl", [{"id": f"d{i}", "url": f"https://e.example/{i}", "text": text(i)} for i in range(30)]
    )
    build([str(crawl)], root / "ds", local_config(output={"shard_max_records": 10}))
    return root / "ds"
