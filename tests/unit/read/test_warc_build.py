"""A build from the web-archive samples end to end: counts reconcile, the reader's skips and malformed
regions reach stats.json, and every output document traces back to its input record (re-read at the
recorded offset, same id and URL)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from thresher.cli import main
from thresher.core.document import Document
from thresher.read.warc import read_record_at

SAMPLES = (
    "warc/edge-cases/example.arc.gz",
    "warc/copycat-arc/small-sample-1262850551027_8.arc.gz",
    "warc/whirlwind/whirlwind.warc.wet.gz",
    "warc/edge-cases/bad.arc",
    "warc/pywb/iana.warc.gz",
)


@pytest.fixture(scope="module")
def built(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    inputs = [shared_data / s for s in SAMPLES]
    for path in inputs:
        if not path.exists():
            pytest.skip(f"evaluation data missing: {path}")
    out = tmp_path_factory.mktemp("warc_build") / "out"
    argv = ["build", *map(str, inputs), "-o", str(out), "--engine", "local", "--quality", "none", "-q"]
    assert main(argv) == 0
    return out


def shard_records(out: Path) -> list[dict]:
    records = []
    for shard in sorted(out.glob("shard-*.jsonl.gz")):
        with gzip.open(shard, "rt", encoding="utf-8") as fh:
            records.extend(json.loads(line) for line in fh)
    return records


def test_build_from_archives_reconciles_and_attributes_reader_decisions(built: Path) -> None:
    stats = json.loads((built / "stats.json").read_text())
    assert stats["reconciles"]
    assert stats["kept"] > 0
    assert stats["drops"]["read"]["revisit"] == 123
    assert stats["drops"]["read"]["http_status"] == 4
    assert stats["malformed_reasons"] == {"bad_header": 3, "garbage": 1}


def test_every_output_document_reads_back_from_its_input_record(built: Path) -> None:
    records = shard_records(built)
    assert records
    for rec in records:
        src = rec["source"]
        again = read_record_at(src["file"], src["offset"], src.get("inner_offset", 0))
        assert isinstance(again, Document), src
        assert (again.id, again.url) == (rec["id"], rec["url"])
        assert again.source["record_id"] == src["record_id"]
    formats = {r["source"]["format"] for r in records}
    assert formats == {"warc", "arc"}
