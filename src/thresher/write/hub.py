"""The dataset card's YAML front matter in the Hugging Face layout: `configs` whose `data_files` list the
manifest's shards one by one (a glob would also take a stray file with a shard-like name), so that
`datasets.load_dataset(FOLDER)` (and the hub's viewer) reads exactly the documents the manifest lists,
and never the other files of the folder (`samples.jsonl.gz`, `index/`, vectors).

Without a `configs` block `datasets` takes every file of the folder's most common data format as data:
for JSONL shards that includes the samples and the index, whose records have another schema.

JSONL shards also get their `features` (`dataset_info`): `datasets` otherwise infers the columns from the
first block of the first shard, and a later shard whose `annotations` carry another key (a duplicate's
`dedup.duplicates`) fails to cast. The free-form objects (`source`, `metadata`, `annotations`) are of the
`json` type (`datasets.Json`), which gives them back exactly as written; it needs a `datasets` release that
has that type. Parquet shards need none: their schema is fixed and in the files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SPLIT = "train"
# a shard record's columns (`Document.to_record()`) as `datasets` feature types
RECORD_FEATURES: tuple[tuple[str, str], ...] = (
    ("id", "string"),
    ("url", "string"),
    ("title", "string"),
    ("text", "string"),
    ("fetched_at", "string"),
    ("source", "json"),
    ("metadata", "json"),
    ("annotations", "json"),
)
# a rejects record: the document and its `drop` (`Drop.to_record()`)
REJECT_FEATURES = RECORD_FEATURES + (("drop", "json"),)


@dataclass(frozen=True, slots=True)
class HubConfig:
    """One `configs` entry: its name and the data files (paths or glob patterns relative to the folder)
    of its one split."""

    name: str
    data_files: tuple[str, ...]
    split: str = SPLIT
    features: tuple[tuple[str, str], ...] = ()  # (column, dtype); none: `datasets` infers them


def _yaml_string(value: str) -> str:
    """A YAML scalar for a path: plain when it is safe, else a JSON string (JSON strings are YAML)."""
    safe = value and all(c.isalnum() or c in "-_./*" for c in value) and value[0] not in "-*."
    return value if safe else json.dumps(value)


def front_matter(configs: Sequence[HubConfig]) -> str:
    """The `---` block that starts the card: the `default` config first (the one `load_dataset` opens)."""
    lines = ["---", "configs:"]
    for config in configs:
        lines += [f"- config_name: {_yaml_string(config.name)}", "  data_files:", f"  - split: {config.split}"]
        if len(config.data_files) == 1:
            lines.append(f"    path: {_yaml_string(config.data_files[0])}")
        elif not config.data_files:  # a dataset without shards
            lines.append("    path: []")
        else:
            lines.append("    path:")
            lines += [f"    - {_yaml_string(p)}" for p in config.data_files]
    typed = [c for c in configs if c.features]
    if typed:
        lines.append("dataset_info:")
    for config in typed:
        lines += [f"- config_name: {_yaml_string(config.name)}", "  features:"]
        for column, dtype in config.features:
            lines += [f"  - name: {_yaml_string(column)}", f"    dtype: {dtype}"]
    return "\n".join(lines + ["---", ""])


def datasets_features(features: Sequence[tuple[str, str]] = RECORD_FEATURES) -> Any:
    """The card's features as a `datasets.Features`, for `load_dataset("json", data_files=SHARDS,
    features=...)` (without them `datasets` infers the columns from the first shard; see the module
    docstring). Needs the `datasets` package, with its `Json` type."""
    import datasets

    return datasets.Features(
        {column: datasets.Json() if dtype == "json" else datasets.Value(dtype) for column, dtype in features}
    )
