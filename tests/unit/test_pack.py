"""`thresher pack`: a built dataset becomes token files its trainers' own readers read back (megatron-core's
IndexedDataset for `megatron`, NumPy for `npy`, datatrove's DatatroveFolderDataset for `datatrove`,
mosaicml-streaming's StreamingDataset for `mds`) as exactly the kept documents' tokens + EOS (the tokenizers
library's ids), each once, in a seeded shuffled order; a weighted mix holds its shares; a validation split is
by document; bad input gets one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import local_config, write_jsonl

from thresher.core.errors import ConfigError
from thresher.pack.mix import parse_sources, plan_targets
from thresher.pack.run import PackOptions, pack
from thresher.run.build import build
from thresher.write.manifest import read_shards

tokenizers = pytest.importorskip("tokenizers", reason="the pack extra (tokenizers) is not installed")

WORDS = ("river", "garden", "window", "engine", "market", "letter", "bridge", "forest", "station", "kitchen")


def dataset(tmp_path: Path, name: str, n: int, lang_word: str = "the") -> Path:
    records = [{"url": f"https://{name}.example/{i}",
                "text": f"{lang_word} {' '.join(WORDS[(i * 7 + j) % 10] + str(i) for j in range(8 + i % 5))}."}
               for i in range(n)]
    src = write_jsonl(tmp_path / f"{name}.jsonl", records)
    out = tmp_path / name
    build([str(src)], out, local_config(dedup={"near": {"method": None}}))
    return out


@pytest.fixture(scope="module")
def llama2():
    from thresher.pack.tokenizer import load_tokenizer

    try:
        return load_tokenizer("llama2")
    except ConfigError as exc:
        pytest.skip(f"the llama2 tokenizer file is not installed: {exc}")


def library_encode(tok, texts: list[str]) -> list[list[int]]:
    """The tokenizers library's own ids + EOS: what every packed sequence must be."""
    return [[*e.ids, tok.eos_id] for e in tok.tokenizer.encode_batch(texts, add_special_tokens=False)]


def expected_sequences(ds: Path, tok) -> dict[str, list[int]]:
    records = list(read_shards(ds))
    return {r["id"]: seq for r, seq in zip(records, library_encode(tok, [r["text"] for r in records]), strict=True)}


TRICKY = ["", " ", "  ", "a", "a ", " a", "  leading", "trailing  ", "a  b   c\n\n d\te", "tabs\t\tand\r\nnewlines",
          "日本語のテキスト 中文 😀 emoji ✓", "x\u00a0y", "\u2581already\u2581has\u2581it", "\u2581\u2581 \u2581",
          "an </s> inside", "<s>start", "<unk>", "don't, (can't) — \"quoted\"; e.g. 3.14159 and 1,000,000!!!",
          "Ωmega ΣΙΓΜΑ naïve façade Zürich", "🤖🤖🤖 a\U0010ffff b", "____ ---- .... ====", "x" * 3000]


def test_the_word_table_gives_the_librarys_ids_on_any_text(llama2, monkeypatch):
    import thresher.pack.tokenizer as tk

    assert llama2.words is not None  # LLaMA's tokenizer is word-local: the table is used
    texts = TRICKY + [f"{WORDS[i % 10]}{i}  {WORDS[(i * 3) % 10]}, {' ' * (i % 4)}x{i}." for i in range(300)]
    assert llama2.encode_batch(texts) == library_encode(llama2, texts)
    assert llama2.encode_batch(texts) == library_encode(llama2, texts)  # again, from the table
    monkeypatch.setattr(tk, "WORD_TABLE_ENTRIES", 5)  # a full table: misses are computed, not kept
    small = tk.load_tokenizer("llama2")
    assert small.encode_batch(texts) == library_encode(llama2, texts) and len(small.words) == 5


def test_a_tokenizer_whose_tokens_span_a_space_is_not_word_local(llama2, tmp_path):
    import thresher.pack.tokenizer as tk

    spec = json.loads(Path(llama2.path).read_text())
    assert tk._word_local(spec)
    spec["model"]["vocab"]["e\u2581t"] = len(spec["model"]["vocab"])  # a token across a word boundary
    assert not tk._word_local(spec)
    spec = json.loads(Path(llama2.path).read_text())
    spec["pre_tokenizer"] = {"type": "Whitespace"}
    assert not tk._word_local(spec)
    spec = json.loads(Path(llama2.path).read_text())
    spec["normalizer"]["normalizers"].append({"type": "NFKC"})
    assert not tk._word_local(spec)


def test_megatron_files_read_back_with_megatron_core_as_every_document_once_shuffled(tmp_path, llama2):
    indexed = pytest.importorskip("megatron.core.datasets.indexed_dataset", reason="megatron-core not installed")
    ds = dataset(tmp_path, "a", 60)
    manifest = pack([str(ds)], tmp_path / "packed", PackOptions(tokenizer="llama2", format="megatron", seed=1))
    expected = expected_sequences(ds, llama2)
    assert all(seq[-1] == llama2.eos_id for seq in expected.values())
    files = [f["path"] for f in manifest["splits"]["train"]["files"] if f["path"].endswith(".bin")]
    assert files == ["train/part-00000.bin"]
    reader = indexed.IndexedDataset(str(tmp_path / "packed" / "train" / "part-00000"))
    got = [list(map(int, reader[i])) for i in range(len(reader))]
    assert sorted(map(tuple, got)) == sorted(map(tuple, expected.values()))  # each document once
    ids = [r["id"] for r in read_shards(ds)]
    import pyarrow.parquet as pq

    prov = pq.read_table(tmp_path / "packed" / "train" / "provenance.parquet").to_pylist()
    order = [row["id"] for row in prov]
    assert sorted(order) == sorted(ids) and order != ids  # shuffled
    assert [expected[i] for i in order] == got  # the sidecar names each sequence's document
    assert prov[0]["url"].startswith("https://a.example/") and prov[0]["source_file"]
    assert manifest["dtype"] == "uint16" and manifest["tokenizer"]["sha256"] == llama2.sha256
    again = pack([str(ds)], tmp_path / "again", PackOptions(seed=1))
    assert again["splits"] == manifest["splits"]  # same seed, same bytes (sha256 of every file)
    other = pack([str(ds)], tmp_path / "other", PackOptions(seed=2))
    assert other["splits"]["train"]["files"] != manifest["splits"]["train"]["files"]


def test_npy_and_small_files_and_a_validation_split_by_document(tmp_path, llama2):
    import numpy as np

    ds = dataset(tmp_path, "a", 80)
    manifest = pack([str(ds)], tmp_path / "p", PackOptions(format="npy", seed=3, validation_fraction=0.25,
                                                           file_tokens=300))
    expected = expected_sequences(ds, llama2)
    seqs = []
    for split in ("train", "validation"):
        parts = sorted((tmp_path / "p" / split).glob("part-*.offsets.npy"))
        assert len(parts) > (1 if split == "train" else 0)
        for offsets_file in parts:
            flat = np.load(offsets_file.with_name(offsets_file.name.replace(".offsets", "")))
            offsets = np.load(offsets_file)
            assert flat.dtype == np.uint16 and offsets[-1] == len(flat)
            seqs += [list(map(int, flat[a:b])) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    assert sorted(map(tuple, seqs)) == sorted(map(tuple, expected.values()))
    n_val = manifest["splits"]["validation"]["sequences"]
    assert 0.1 < n_val / len(expected) < 0.4


def test_a_weighted_mix_to_a_budget_holds_its_shares(tmp_path, llama2):
    a, b = dataset(tmp_path, "a", 600), dataset(tmp_path, "b", 600, lang_word="a")
    budget = 20_000  # documents of ~35 tokens: the 1% below the budget is well above one document
    manifest = pack([f"{a}=0.7", f"{b}=0.3"], tmp_path / "mix", PackOptions(max_tokens=budget, seed=5))
    packed = [d["packed_tokens"] for d in manifest["datasets"]]
    total = sum(packed)
    assert 0.99 * budget <= total <= budget and [d["target_tokens"] for d in manifest["datasets"]] == [14_000, 6_000]
    # whole documents are packed, so a dataset stops short of its target by less than the shortest
    # document it left out (every document is tried in key order): the fill is as tight as documents allow
    import pyarrow.parquet as pq

    taken = {(row["dataset"], row["id"]) for row in pq.read_table(tmp_path / "mix" / "train" / "provenance.parquet")
             .to_pylist()}
    for ds, fact, got in zip((a, b), manifest["datasets"], packed, strict=True):
        left_out = [len(seq) for i, seq in expected_sequences(ds, llama2).items() if (str(ds), i) not in taken]
        assert 0 < len(left_out) < 600 and 0 <= fact["target_tokens"] - got < min(left_out)
    assert abs(packed[0] / total - 0.7) <= 0.02
    with pytest.raises(ConfigError, match="has .* tokens, but its share"):
        pack([f"{a}=0.9", f"{b}=0.1"], tmp_path / "big", PackOptions(max_tokens=10 * manifest["datasets"][0]["tokens"]))
    repeated = pack([f"{a}=0.5", f"{b}=0.5"], tmp_path / "rep",
                    PackOptions(max_tokens=3 * manifest["datasets"][0]["tokens"], allow_repeat=True))
    assert repeated["datasets"][0]["epochs"] >= 2
    assert repeated["datasets"][0]["packed_sequences"] > repeated["datasets"][0]["documents"]


def test_bad_input_gets_one_clear_error(tmp_path, llama2):
    ds = dataset(tmp_path, "a", 5)
    with pytest.raises(ConfigError, match="not a thresher dataset"):
        pack([str(tmp_path)], tmp_path / "x")
    with pytest.raises(ConfigError, match="must be a number"):
        parse_sources([f"{ds}=heavy"])
    with pytest.raises(ConfigError, match="sum to zero"):
        parse_sources([f"{ds}=0", f"{ds}=0"])
    with pytest.raises(ConfigError, match="every dataset a weight"):
        parse_sources([f"{ds}=1", str(ds)])
    with pytest.raises(ConfigError, match="neither a known tokenizer"):
        pack([str(ds)], tmp_path / "x", PackOptions(tokenizer="gpt9"))
    shard = ds / json.loads((ds / "manifest.json").read_text())["shards"][0]["path"]
    shard.write_bytes(shard.read_bytes()[:-10] + b"0123456789")
    from thresher.core.errors import ThresherError

    with pytest.raises(ThresherError, match="sha256|unreadable"):
        pack([str(ds)], tmp_path / "x")
    assert plan_targets(parse_sources(["a", "b"]), [10, 30], None, False)[1].tokens == 30


def test_the_cli_packs(tmp_path, llama2, capsys):
    from thresher.cli import main

    ds = dataset(tmp_path, "a", 10)
    assert main(["pack", str(ds), "-o", str(tmp_path / "p"), "--seed", "4"]) == 0
    manifest = json.loads((tmp_path / "p" / "manifest.json").read_text())
    assert manifest["splits"]["train"]["sequences"] == 10
    assert "train: 10 sequences" in capsys.readouterr().err
    assert (tmp_path / "p" / "README.md").read_text().startswith("# Tokenized training files")


def packed_documents(out: Path, split: str = "train") -> list[list[int]]:
    """The sequences of a split in order, as the provenance sidecar lists them (by the pack's files)."""
    import pyarrow.parquet as pq

    return [row["tokens"] for row in pq.read_table(out / split / "provenance.parquet").to_pylist()]


def test_datatrove_files_are_tokens_with_uint64_document_ends(tmp_path, llama2):
    import numpy as np

    ds = dataset(tmp_path, "a", 50)
    manifest = pack([str(ds)], tmp_path / "p", PackOptions(format="datatrove", seed=2, file_tokens=700))
    expected = expected_sequences(ds, llama2)
    paths = [f["path"] for f in manifest["splits"]["train"]["files"]]
    assert paths[:3] == ["train/part-00000.ds", "train/part-00000.ds.index", "train/part-00000.ds.metadata"]
    seqs = []
    for name in sorted(p for p in paths if p.endswith(".ds")):
        tokens = np.fromfile(tmp_path / "p" / name, dtype="<u2")
        ends = np.fromfile(tmp_path / "p" / f"{name}.index", dtype="<u8")
        assert ends[-1] == len(tokens) and np.all(np.diff(ends) > 0)
        seqs += [list(map(int, tokens[a:b])) for a, b in zip([0, *ends[:-1]], ends, strict=True)]
        meta = (tmp_path / "p" / f"{name}.metadata").read_text().splitlines()
        assert meta[:2] == ["llama2|2", str(len(tokens))]
    assert len(paths) > 3  # 700 tokens a file: several files
    assert sorted(map(tuple, seqs)) == sorted(map(tuple, expected.values()))
    ids = [r["id"] for r in read_shards(ds)]
    import pyarrow.parquet as pq

    order = [row["id"] for row in pq.read_table(tmp_path / "p" / "train" / "provenance.parquet").to_pylist()]
    assert [expected[i] for i in order] == seqs and order != ids  # shuffled, and the sidecar names each one


def test_datatrove_files_read_back_with_datatroves_folder_dataset(tmp_path, llama2):
    dt = pytest.importorskip("datatrove.utils.dataset", reason="datatrove (the pack-readers extra) is not installed")
    import torch

    ds = dataset(tmp_path, "a", 40)
    pack([str(ds)], tmp_path / "p", PackOptions(format="datatrove", seed=7))
    expected = packed_documents(tmp_path / "p")
    total = sum(expected)
    # one window of the whole file: the reader's tokens, and its positions restart where the .index says
    folder = dt.DatatroveFolderDataset(str(tmp_path / "p" / "train"), seq_len=total - 1, return_positions=True)
    assert len(folder) == 1
    item = folder[0]
    tokens, positions = item["input_ids"].tolist(), item["positions"]
    starts = torch.nonzero(positions == 0).flatten().tolist() + [total]
    got = [tokens[a:b] for a, b in zip(starts[:-1], starts[1:], strict=True)]
    assert [len(s) for s in got] == expected
    assert all(s[-1] == llama2.eos_id for s in got)
    assert sorted(map(tuple, got)) == sorted(map(tuple, expected_sequences(ds, llama2).values()))


def read_mds(split: Path) -> list[list[int]]:
    """The `tokens` column of every sample, read from `index.json` and the shards by the MDS layout
    (mosaicml-streaming's `MDSWriter`): a uint32 sample count, uint32 offsets, then each sample's
    uint32 size and its ndarray encoding (a shape byte, the length, the values)."""
    import numpy as np

    index = json.loads((split / "index.json").read_text())
    assert index["version"] == 2
    samples = []
    for shard in index["shards"]:
        assert shard["format"] == "mds" and shard["column_names"] == ["tokens"]
        dtype = shard["column_encodings"][0].split(":")[1]
        blob = (split / shard["raw_data"]["basename"]).read_bytes()
        assert len(blob) == shard["raw_data"]["bytes"]
        n = int(np.frombuffer(blob[:4], np.uint32)[0])
        assert n == shard["samples"]
        offsets = np.frombuffer(blob[4:4 + 4 * (n + 1)], np.uint32)
        assert offsets[-1] == len(blob)
        for a, b in zip(offsets[:-1], offsets[1:], strict=True):
            size = int(np.frombuffer(blob[a:a + 4], np.uint32)[0])
            assert size == b - a - 4
            shape_byte = blob[a + 4]
            assert shape_byte >> 2 == 1  # one dimension
            shape_dtype = ("uint8", "uint16", "uint32", "uint64")[shape_byte & 3]
            width = np.dtype(shape_dtype).itemsize
            length = int(np.frombuffer(blob[a + 5:a + 5 + width], shape_dtype)[0])
            values = np.frombuffer(blob[a + 5 + width:b], dtype)
            assert len(values) == length
            samples.append(list(map(int, values)))
    return samples


def test_mds_shards_and_index_hold_every_document_once_in_the_packed_order(tmp_path, llama2):
    ds = dataset(tmp_path, "a", 50)
    # long documents too: a length of 256 or more takes a uint16 shape
    long = write_jsonl(tmp_path / "long.jsonl", [{"url": f"https://long.example/{i}",
                                                  "text": " ".join(f"{WORDS[j % 10]}{j}" for j in range(150 * i))}
                                                 for i in range(1, 4)])
    build([str(long)], tmp_path / "long", local_config(dedup={"near": {"method": None}}))
    manifest = pack([str(ds), str(tmp_path / "long")], tmp_path / "p",
                    PackOptions(format="mds", seed=2, file_tokens=900, validation_fraction=0.2))
    for split in ("train", "validation"):
        paths = [f["path"] for f in manifest["splits"][split]["files"]]
        assert paths[-2:] == [f"{split}/index.json", f"{split}/provenance.parquet"]
        assert paths[0] == f"{split}/part-00000.mds"
    assert len(manifest["splits"]["train"]["files"]) > 3
    got = read_mds(tmp_path / "p" / "train") + read_mds(tmp_path / "p" / "validation")
    assert [len(s) for s in got] == packed_documents(tmp_path / "p") + packed_documents(tmp_path / "p", "validation")
    expected = {**expected_sequences(ds, llama2), **expected_sequences(tmp_path / "long", llama2)}
    assert max(map(len, got)) >= 256
    assert sorted(map(tuple, got)) == sorted(map(tuple, expected.values()))


def test_mds_files_read_back_with_mosaicml_streaming(tmp_path, llama2):
    streaming = pytest.importorskip("streaming", reason="mosaicml-streaming (the pack-readers-mds extra) is not "
                                    "installed; it pins numpy<2.2 and transformers<5, so it lives in a side venv")
    ds = dataset(tmp_path, "a", 30)
    pack([str(ds)], tmp_path / "p", PackOptions(format="mds", seed=3, file_tokens=400))
    data = streaming.StreamingDataset(local=str(tmp_path / "p" / "train"), shuffle=False, batch_size=1)
    got = [list(map(int, data[i]["tokens"])) for i in range(len(data))]
    assert got == read_mds(tmp_path / "p" / "train")
    assert sorted(map(tuple, got)) == sorted(map(tuple, expected_sequences(ds, llama2).values()))
