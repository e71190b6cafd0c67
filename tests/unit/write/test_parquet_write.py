"""Parquet shards: fixed schema, typed annotation columns, zstd, byte-identical reruns, the Hugging
Face layout, and pyarrow, polars and DuckDB reading them."""

from __future__ import annotations

from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from thresher.core.document import Document  # noqa: E402
from thresher.read.base import Partition  # noqa: E402
from thresher.read.config import InputConfig  # noqa: E402
from thresher.read.parquet import read_parquet  # noqa: E402
from thresher.write.atomic import dumps_line  # noqa: E402
from thresher.write.parquet import ParquetFormat, hf_card_config, hf_shard_path, read_records  # noqa: E402


def records(n: int, start: int = 0) -> list[dict]:
    out = []
    for i in range(start, start + n):
        doc = Document(
            id=f"{i:016x}",
            text=f"text of document {i} — ünïcode",
            url=f"http://example.com/{i}",
            title=None if i % 3 else f"Title {i}",
            source={"file": "crawl.warc.gz", "offset": 1000 * i, "record_id": f"<urn:uuid:{i}>", "format": "warc"},
            fetched_at="2024-05-18T01:58:10Z",
            metadata={"content_type": "text/html"} if i % 2 else {},
            annotations={
                "lang.code": "en",
                "lang.score": 0.5 + i % 5 / 10,
                "quality.word_count": i,
                "dedup.duplicates": i % 4,
            },
        )
        out.append(doc.to_record())
    return out


def test_records_round_trip_through_a_shard(tmp_path: Path) -> None:
    recs = records(25)
    dest = tmp_path / "shard.parquet"
    assert ParquetFormat(row_group_rows=10).write_records(recs, dest) == 25
    assert list(read_records(dest)) == recs
    meta = pq.ParquetFile(dest).metadata
    assert meta.num_row_groups == 3
    assert meta.row_group(0).column(0).compression == "ZSTD"


def test_row_groups_are_bounded_by_text_size(tmp_path: Path) -> None:
    dest = tmp_path / "big.parquet"
    recs = records(12)
    for r in recs:
        r["text"] = "x" * 1000
    ParquetFormat(row_group_bytes=3000).write_records(recs, dest)
    meta = pq.ParquetFile(dest).metadata
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [3, 3, 3, 3]
    assert list(read_records(dest)) == recs


def test_schema_is_fixed_and_typed_where_declared(tmp_path: Path) -> None:
    dest = tmp_path / "s.parquet"
    ParquetFormat().write_records(records(3), dest)
    schema = pq.read_schema(dest)
    assert schema.names == [
        "id",
        "url",
        "title",
        "text",
        "fetched_at",
        "lang_code",
        "lang_label",
        "lang_score",
        "dedup_duplicates",
        "annotations",
        "source",
        "metadata",
    ]
    assert str(schema.field("lang_score").type) == "double"
    assert str(schema.field("dedup_duplicates").type) == "int64"
    assert not schema.field("id").nullable
    empty = tmp_path / "empty.parquet"
    assert ParquetFormat().write_records([], empty) == 0
    assert pq.read_schema(empty).equals(schema, check_metadata=True)


def test_value_of_the_wrong_type_stays_in_the_json_column(tmp_path: Path) -> None:
    rec = records(1)[0]
    rec["annotations"]["lang.score"] = "high"
    dest = tmp_path / "w.parquet"
    ParquetFormat().write_records([rec], dest)
    row = pq.read_table(dest).to_pylist()[0]
    assert row["lang_score"] is None and '"lang.score":"high"' in row["annotations"]
    assert list(read_records(dest)) == [rec]


def test_rerun_gives_byte_identical_shards(tmp_path: Path) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    ParquetFormat().write_records(records(50), a)
    ParquetFormat().write_records(records(50), b)
    assert a.read_bytes() == b.read_bytes()


def test_assemble_writes_pieces_in_order(tmp_path: Path) -> None:
    pieces = []
    for p, (start, n) in enumerate(((0, 5), (5, 7))):
        piece = tmp_path / f"piece{p}.jsonl"
        piece.write_bytes(b"".join(dumps_line(r) for r in records(n, start)))
        pieces.append(piece)
    dest = tmp_path / "out" / "shard-00000.parquet"
    assert ParquetFormat().assemble(pieces, dest) == 12
    assert [r["id"] for r in read_records(dest)] == [f"{i:016x}" for i in range(12)]
    assert not any(p.name.startswith(".") for p in dest.parent.iterdir())  # no temp file left


def test_bad_declarations_are_refused() -> None:
    with pytest.raises(ValueError):
        ParquetFormat({"x": "decimal"})
    with pytest.raises(ValueError):
        ParquetFormat({"text": "string"})


def test_hugging_face_layout_names() -> None:
    assert hf_shard_path(0, 4) == "data/train-00000-of-00004.parquet"
    assert hf_shard_path(3, 4, "validation") == "data/validation-00003-of-00004.parquet"
    with pytest.raises(ValueError):
        hf_shard_path(4, 4)
    assert "path: data/train-*" in hf_card_config()


@pytest.fixture
def hf_dataset(tmp_path: Path) -> Path:
    root = tmp_path / "dataset"
    for i in range(3):
        ParquetFormat().write_records(records(10, 10 * i), root / hf_shard_path(i, 3))
    (root / "README.md").write_text(hf_card_config() + "\n# test dataset\n")
    return root


def test_pyarrow_dataset_reads_the_layout(hf_dataset: Path) -> None:
    ds = pytest.importorskip("pyarrow.dataset")
    table = ds.dataset(hf_dataset / "data", format="parquet").to_table()
    assert table.num_rows == 30
    assert sorted(table.column("id").to_pylist()) == [f"{i:016x}" for i in range(30)]


def test_polars_reads_the_layout(hf_dataset: Path) -> None:
    pl = pytest.importorskip("polars")
    df = pl.read_parquet(str(hf_dataset / "data" / "*.parquet"))
    assert df.height == 30
    assert df.filter(pl.col("dedup_duplicates") == 0).height == 8
    assert df.schema["lang_score"] == pl.Float64


def test_duckdb_reads_the_layout(hf_dataset: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    glob = str(hf_dataset / "data" / "*.parquet")
    (count, words) = con.execute(
        f"select count(*), sum(cast(json_extract(annotations, '$.\"quality.word_count\"') as integer)) from "
        f"read_parquet('{glob}')"
    ).fetchone()
    assert (count, words) == (30, sum(range(30)))


def test_datasets_loads_the_layout(hf_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    datasets = pytest.importorskip("datasets")
    ds = datasets.load_dataset(str(hf_dataset), split="train", cache_dir=str(tmp_path / "cache"))
    assert ds.num_rows == 30
    assert ds.features["lang_score"].dtype == "float64"
    assert sorted(ds["id"]) == [f"{i:016x}" for i in range(30)]


def test_thresher_reads_its_own_shards(hf_dataset: Path) -> None:
    path = hf_dataset / hf_shard_path(1, 3)
    docs = list(read_parquet(Partition(0, "parquet", (str(path),)), InputConfig()))
    assert [d.text for d in docs] == [r["text"] for r in records(10, 10)]
