"""The README's library snippet as a script: build a dataset from a crawl, read it back, and stream
pages through the pipeline without writing anything.

    python examples/library_build.py [CRAWL.jsonl] [DATASET_DIR]

With no crawl given it writes the demo's synthetic one first. Written as a newcomer writes a script,
without an `if __name__ == "__main__":` guard: the process pool must not run it again in its workers.
"""

import json
import sys
from pathlib import Path

import thresher
from thresher import Pipeline, RunConfig, read_shards
from thresher.demo import write_crawl

crawl = Path(sys.argv[1]) if len(sys.argv) > 1 else write_crawl(Path("thresher-demo") / "crawl.jsonl", n_pages=200)
dataset = sys.argv[2] if len(sys.argv) > 2 else "dataset/"

result = thresher.build([str(crawl)], dataset, RunConfig.from_dict({"output": {"shard_max_records": 10_000}}))
print(result.stats.render())

kept = sum(1 for _ in read_shards(dataset))  # raises DatasetError on a missing, truncated or altered shard
print(f"read back {kept} documents from {dataset}")

pages = []
with open(crawl, encoding="utf-8", errors="replace") as f:
    for line in f:
        try:
            record = json.loads(line)
        except ValueError:  # the demo crawl has malformed lines on purpose
            continue
        if isinstance(record, dict) and isinstance(record.get("url"), str) and isinstance(record.get("html"), str):
            pages.append((record["url"], record["html"]))

pipeline = Pipeline()  # streaming: documents out as they pass, in-memory dedup index
streamed = sum(1 for doc in pipeline.process({"url": u, "html": h} for u, h in pages))
print(f"streamed {streamed} of {len(pages)} pages through the pipeline")
