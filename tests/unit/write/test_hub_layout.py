"""The Hugging Face layout of every output format: the card's `configs` front matter lists the shards, so
`datasets.load_dataset(FOLDER)` (plain and streaming) gives exactly the manifest's documents, never the
samples or the index; and the shards open in `datasets`, pandas, Polars and DuckDB by their paths."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import article_html, local_config, write_jsonl

from thresher.run.build import build
from thresher.write.hub import HubConfig, datasets_features, front_matter
from thresher.write.manifest import read_shards

FORMATS = ["jsonl.gz", "jsonl.zst", "parquet"]


def _needs(fmt: str) -> None:
    if fmt == "jsonl.zst":
        pytest.importorskip("zstandard", reason="jsonl.zst output needs the zstd extra")
    if fmt == "parquet":
        pytest.importorskip("pyarrow", reason="parquet output needs the parquet extra")


def _datasets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    datasets = pytest.importorskip("datasets", reason="the datasets package is not installed")
    if not hasattr(datasets, "Json"):
        pytest.skip("this datasets release has no Json feature type, which the JSONL card declares")
    return datasets


def _crawl(tmp_path: Path) -> Path:
    """Distinct articles, then repeats of one page: the duplicates' kept copy carries annotation keys
    (`dedup.duplicates`) that the first shard's records lack, and some records are malformed."""
    rows: list[dict[str, Any]] = [{"url": f"https://f.example/{i}", "html": article_html(i)} for i in range(24)]
    rows += [{"url": f"https://f.example/again/{i}", "html": article_html(99)} for i in range(4)]
    path = write_jsonl(tmp_path / "crawl.jsonl", rows)
    with open(path, "a", encoding="utf-8") as f:
        f.write("not json\n")
    return path


@pytest.fixture(params=FORMATS)
def dataset(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path, dict[str, Any]]:
    fmt = request.param
    _needs(fmt)
    out = tmp_path / "dataset"
    result = build([str(_crawl(tmp_path))], out, local_config(output={"format": fmt, "shard_max_records": 10}))
    assert (out / "samples.jsonl.gz").exists() and (out / "index").is_dir()  # what `datasets` must not read
    return fmt, out, result.manifest


def _rows(ds: Any) -> list[dict[str, Any]]:
    return [dict(row) for row in ds]


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_load_dataset_of_the_folder_gives_exactly_the_manifests_documents(
    dataset: tuple[str, Path, dict[str, Any]], streaming: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = _datasets(monkeypatch, tmp_path)
    fmt, out, manifest = dataset
    first = out / manifest["shards"][0]["path"]
    stray = first.with_name(first.name.replace("0000", "9999", 1))  # a file with a shard-like name
    stray.write_bytes(first.read_bytes())
    ds = datasets.load_dataset(str(out), split="train", streaming=streaming, cache_dir=str(tmp_path / "cache"))
    rows = _rows(ds)
    records = list(read_shards(out))
    assert len(rows) == manifest["records"] == len(records) == 25
    assert [r["id"] for r in rows] == [r["id"] for r in records]
    if fmt != "parquet":  # the card's features give every record back as written
        assert any("dedup.duplicates" in (r.get("annotations") or {}) for r in records)
        columns = [name for name, _ in datasets_features().items()]
        assert rows == [{c: r.get(c) for c in columns} for r in records]


@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_load_dataset_by_data_files_reads_the_shards(
    dataset: tuple[str, Path, dict[str, Any]], streaming: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = _datasets(monkeypatch, tmp_path)
    fmt, out, manifest = dataset
    files = [str(out / s["path"]) for s in manifest["shards"]]
    builder, extra = ("parquet", {}) if fmt == "parquet" else ("json", {"features": datasets_features()})
    ds = datasets.load_dataset(
        builder, data_files=files, split="train", streaming=streaming, cache_dir=str(tmp_path / "cache"), **extra
    )
    assert sorted(r["id"] for r in _rows(ds)) == sorted(r["id"] for r in read_shards(out))


def _jsonl_lines(path: Path, fmt: str) -> bytes:
    if fmt == "jsonl.gz":
        return gzip.decompress(path.read_bytes())
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())


def test_pandas_polars_and_duckdb_read_the_shards(dataset: tuple[str, Path, dict[str, Any]], tmp_path: Path) -> None:
    fmt, out, manifest = dataset
    paths = [out / s["path"] for s in manifest["shards"]]
    expected = sorted(r["id"] for r in read_shards(out))
    pd = pytest.importorskip("pandas", reason="pandas is not installed")
    if fmt == "parquet":
        frame = pd.concat([pd.read_parquet(p) for p in paths])
    else:
        frame = pd.concat([pd.read_json(p, lines=True, compression="infer") for p in paths])
    assert sorted(frame["id"]) == expected
    pl = pytest.importorskip("polars", reason="polars is not installed")
    if fmt == "parquet":
        ids = pl.read_parquet([str(p) for p in paths])["id"].to_list()
    else:  # Polars reads plain NDJSON: the shards decompressed
        plain = tmp_path / "plain.jsonl"
        plain.write_bytes(b"".join(_jsonl_lines(p, fmt) for p in paths))
        ids = pl.read_ndjson(plain, infer_schema_length=None)["id"].to_list()
    assert sorted(ids) == expected
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed")
    reader = "read_parquet" if fmt == "parquet" else "read_json_auto"
    listing = "[" + ", ".join(f"'{p}'" for p in paths) + "]"
    rows = duckdb.sql(f"SELECT id FROM {reader}({listing}) ORDER BY id").fetchall()
    assert [r[0] for r in rows] == expected


def test_rejects_written_inside_the_folder_get_configs_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets = _datasets(monkeypatch, tmp_path)
    crawl, out = _crawl(tmp_path), tmp_path / "dataset"
    config = local_config(output={"shard_max_records": 10})
    build([str(crawl)], out, config)  # a dataset first: a fresh output must be empty
    result = build([str(crawl)], out, config, rejects=out / "rejects", overwrite=True)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "path: rejects/rejects.jsonl.gz" in card and "path: rejects/malformed.jsonl.gz" in card
    cache = str(tmp_path / "cache")
    assert datasets.load_dataset(str(out), split="train", cache_dir=cache).num_rows == result.manifest["records"]
    rejects = datasets.load_dataset(str(out), "rejects", split="train", cache_dir=cache)
    assert rejects.num_rows == result.stats.dropped
    assert {r["drop"]["stage"] for r in rejects} == {"dedup.exact"}
    malformed = datasets.load_dataset(str(out), "malformed", split="train", cache_dir=cache)
    assert [r["reason"] for r in malformed] == ["invalid_json"]


def test_front_matter_lists_each_config_and_quotes_what_yaml_would_misread() -> None:
    text = front_matter([
        HubConfig("default", ("shard-*.jsonl.gz",), features=(("id", "string"), ("source", "json"))),
        HubConfig("odd", ("a: b.jsonl", "-c.jsonl")),
    ])
    assert text == (
        "---\nconfigs:\n"
        "- config_name: default\n  data_files:\n  - split: train\n    path: shard-*.jsonl.gz\n"
        "- config_name: odd\n  data_files:\n  - split: train\n    path:\n"
        f"    - {json.dumps('a: b.jsonl')}\n    - {json.dumps('-c.jsonl')}\n"
        "dataset_info:\n- config_name: default\n  features:\n"
        "  - name: id\n    dtype: string\n  - name: source\n    dtype: json\n"
        "---\n"
    )
