"""`--partition-by language`: one complete dataset per language-script (issue 38)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from tests.conftest import write_jsonl

from thresher.config import RunConfig
from thresher.core.errors import ConfigError
from thresher.run.build import build
from thresher.write.manifest import read_shards, verify_dataset
from thresher.write.partitions import PARTITIONS_DIR, partition_key

GERMAN = "Die Stadt liegt am Fluss und hat eine lange Geschichte. Im Sommer kommen viele Besucher in die Altstadt."
ENGLISH = "The town lies on the river and has a long history. In summer many visitors come to the old town."
GREEK = "Η πόλη βρίσκεται δίπλα στο ποτάμι και έχει μακρά ιστορία. Το καλοκαίρι έρχονται πολλοί επισκέπτες."
RUSSIAN = "Город стоит на реке и имеет долгую историю. Летом в старый город приезжает много гостей."


def corpus(path: Path) -> Path:
    texts = [(t + f" Nummer {i}. ") * 4 for i in range(12) for t in (GERMAN, ENGLISH, GREEK, RUSSIAN)]
    texts += [f"{i} + {i} = {2 * i} ... 1234567 %% ##" * 8 for i in range(3)]  # no letters: und
    return write_jsonl(path, [{"url": f"https://example.org/{i}", "text": t} for i, t in enumerate(texts)])


def config(**output: object) -> RunConfig:
    return RunConfig.from_dict({"exec": {"engine": "local"}, "lang": {"detector": "ngram"},
                                "quality": {"preset": "none"}, "dedup": {"near": {"method": None}},
                                "output": {"partition_by": "language", "shard_max_records": 5, **output}})


def test_each_language_script_gets_a_complete_dataset_of_its_documents(tmp_path):
    out = tmp_path / "out"
    manifest = build([str(corpus(tmp_path / "in.jsonl"))], out, config()).manifest
    root = list(read_shards(out))
    section = manifest["partitions"]
    folders = [d["path"] for d in section["datasets"]]
    assert folders == sorted(folders) and section["by"] == "language"
    # folders are the canonical labels (ISO 639-3 and script), the records' `lang.label`
    assert {f.rpartition("/")[2] for f in folders} >= {"deu_Latn", "eng_Latn", "ell_Grek", "rus_Cyrl"}
    assert {(d["label"], d["alias"]) for d in section["datasets"]} >= {("deu_Latn", "de"), ("rus_Cyrl", "ru")}
    seen: list[str] = []
    for dataset in section["datasets"]:
        folder = out / dataset["path"]
        assert verify_dataset(folder, count_records=True) == []  # shards, sizes, sha256 as its manifest lists
        records = list(read_shards(folder))
        assert {partition_key(r) for r in records} == {folder.name} == {r["annotations"]["lang.label"] for r in records}
        assert len(records) == dataset["records"]
        assert len(dataset["shards"]) == -(-len(records) // 5)  # at most shard_max_records each
        # in the root dataset's order
        order = [r["id"] for r in root if partition_key(r) == folder.name]
        assert [r["id"] for r in records] == order
        card = (folder / "README.md").read_text(encoding="utf-8")
        assert card.startswith("---\nconfigs:") and f"# {folder.name}" in card
        seen += order
    assert Counter(seen) == Counter(r["id"] for r in root)
    root_card = (out / "README.md").read_text(encoding="utf-8")
    assert "- config_name: deu_Latn" in root_card and f"{PARTITIONS_DIR}/deu_Latn/shard-00001.jsonl.gz" in root_card
    # the root card's language tables use the labels, with the ISO 639-1 alias beside them
    assert "| deu_Latn | de | 12 |" in root_card


def test_partitions_keep_the_root_record_bytes(tmp_path):
    import gzip

    out = tmp_path / "out"
    build([str(corpus(tmp_path / "in.jsonl"))], out, config(shard_max_records=1000))
    root_lines = {line for p in sorted(out.glob("shard-*")) for line in gzip.decompress(p.read_bytes()).splitlines()}
    part_lines = [line for p in sorted((out / PARTITIONS_DIR).glob("*/shard-*"))
                  for line in gzip.decompress(p.read_bytes()).splitlines()]
    assert len(part_lines) == len(root_lines) and set(part_lines) == root_lines


def test_rebuild_without_partitions_removes_the_previous_ones(tmp_path):
    out = tmp_path / "out"
    data = corpus(tmp_path / "in.jsonl")
    build([str(data)], out, config())
    assert (out / PARTITIONS_DIR / "deu_Latn" / "manifest.json").exists()
    plain = RunConfig.from_dict({"exec": {"engine": "local"}, "lang": {"detector": "ngram"},
                                 "quality": {"preset": "none"}, "dedup": {"near": {"method": None}}})
    manifest = build([str(data)], out, plain, overwrite=True).manifest
    assert "partitions" not in manifest
    assert not [p for p in (out / PARTITIONS_DIR).rglob("*") if p.is_file()]


def test_partitioning_needs_the_language_stage_and_annotations():
    with pytest.raises(ConfigError, match="partition-by language"):
        RunConfig.from_dict({"lang": {"enabled": False}, "output": {"partition_by": "language"}})
    with pytest.raises(ConfigError, match="partition-by language"):
        RunConfig.from_dict({"output": {"partition_by": "language", "include_annotations": False}})


def test_partition_setting_does_not_change_the_config_hash_the_shards_depend_on():
    from thresher.core.config import to_dict

    partitioned = RunConfig.from_dict({"output": {"partition_by": "language"}})
    assert partitioned.hash == RunConfig.from_dict({}).hash
    assert "partition_by" not in to_dict(partitioned, hashed_only=True)["output"]


def test_partition_key_of_records_without_language():
    assert partition_key({"annotations": {"lang.code": "de", "lang.script": "Latn"}}) == "deu_Latn"  # older records
    assert partition_key({"annotations": {"lang.code": "de", "lang.label": "deu_Latn"}}) == "deu_Latn"
    assert partition_key({"annotations": {}}) == "und_Zyyy"
    assert partition_key({"annotations": {"lang.code": "../x", "lang.script": "Latn"}}) == "---x_Latn"


def test_temp_files_of_a_killed_partition_step_are_removed(tmp_path):
    out = tmp_path / "out"
    data = corpus(tmp_path / "in.jsonl")
    build([str(data)], out, config())
    left = out / PARTITIONS_DIR / "deu_Latn" / ".shard-00000.jsonl.gz.tmp-12345"
    left.write_bytes(b"half a shard")
    keep = out / PARTITIONS_DIR / "deu_Latn" / "notes.txt"  # not thresher's: left alone
    keep.write_text("mine")
    build([str(data)], out, config(), overwrite=True)
    assert not left.exists() and keep.read_text() == "mine"
