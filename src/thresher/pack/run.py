"""The pack itself, in three passes that each hold a bounded amount of memory:

1. **tokenize**: a task per shard of every dataset (`tokenize_shard`, run by the caller's `runner`:
   in-process, or on the run layer's engines): the shard is read (checked against its manifest) and
   encoded in batches; its tokens go to the shard's work files, and each document to a fixed-size row
   (token offset and count, where its provenance line is, its validation draw) plus a line of
   provenance (dataset, id, url, source, language); the shard's marker is written last, so a pack
   killed and run again tokenizes only the shards without one (`_prepare_work` keeps the work folder
   when the plan is the same);
2. **key**: once every dataset's token count is known, the targets are planned (`thresher.pack.mix`)
   and each document copy (one per epoch the target needs) gets a 64-bit key, BLAKE2b of (seed,
   dataset, epoch, document id), spilled into 256 buckets by the key's first byte. The key order is
   a uniform random permutation of all copies, fixed by the seed alone;
3. **write**: the buckets are read in order, each sorted in memory (1/256 of the 20-byte key rows:
   about 78 KB per million document copies), and the copies taken in key order: a dataset's copy is
   taken while its tokens fit its target, so every dataset is a random sample of itself, and the
   shuffled order is the key order. A document drawn for validation (`--validation-fraction`, by a
   hash of seed and id) goes to the validation split, its first copy only. Token files roll over at
   `file_tokens`; a Parquet sidecar per split maps every sequence to its source.

Nothing depends on the machine, the engine or the worker count: the same datasets, tokenizer, seed and
settings give the same bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import struct
import time
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from thresher.core.errors import ConfigError
from thresher.pack.formats import WRITERS, WrittenFile, finish_split, open_writer, token_typecode
from thresher.pack.mix import Source, parse_sources, plan_targets
from thresher.pack.tokenizer import PackTokenizer, load_tokenizer
from thresher.write.atomic import atomic_open, write_work_json
from thresher.write.buckets import BucketSpill, read_bucket_range

DOC_ROW = struct.Struct("<QIQIQ")  # token offset, token count, provenance offset, its length, validation draw
KEY_ROW = struct.Struct(">8sHHII")  # key, dataset, epoch, shard, document in it: raw bytes sort by key
KEY_BUCKETS = 256
BATCH_DOCS = 512
PROVENANCE_ROWS = 8_192  # rows per Parquet row group: the buffer of rows is what a pack holds per split
PACK_FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class PackOptions:
    tokenizer: str = "llama2"
    format: str = "megatron"
    seed: int = 0
    max_tokens: int | None = None
    validation_fraction: float = 0.0
    allow_repeat: bool = False
    file_tokens: int = 1 << 28
    eos: str | None = None


@dataclass
class SplitFiles:
    """One split's token files as they are written."""

    name: str
    root: Path
    fmt: str
    typecode: str
    file_tokens: int
    tokenizer: str = ""  # its name, where the format records it
    writer: Any = None
    index: int = 0
    tokens_in_file: int = 0
    files: list[WrittenFile] = field(default_factory=list)
    sequences: int = 0
    tokens: int = 0

    def current_name(self) -> str:
        return f"{self.name}/part-{self.index:05d}"

    def add(self, tokens: array[int]) -> str:
        if self.writer is not None and self.tokens_in_file and (
                self.tokens_in_file + len(tokens) > self.file_tokens or not self.writer.fits(len(tokens))):
            self.files += self.writer.close()
            self.writer = None
            self.index += 1
            self.tokens_in_file = 0
        if self.writer is None:
            self.writer = open_writer(self.fmt, self.root, self.current_name(), self.typecode, self.tokenizer)
        self.writer.add(tokens)
        self.tokens_in_file += len(tokens)
        self.sequences += 1
        self.tokens += len(tokens)
        return self.current_name()

    def close(self) -> list[WrittenFile]:
        if self.writer is not None:
            self.files += self.writer.close()
            self.writer = None
        return self.files + finish_split(self.fmt, self.root, self.name, self.files, self.typecode)


def _key(seed: int, dataset: int, epoch: int, doc_id: str) -> bytes:
    return hashlib.blake2b(f"{seed}\x00{dataset}\x00{epoch}\x00{doc_id}".encode(), digest_size=8).digest()


def _validation_draw(seed: int, doc_id: str) -> int:
    digest = hashlib.blake2b(f"{seed}\x00validation\x00{doc_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True, slots=True)
class ShardTask:
    """Pass 1 for one shard of one dataset: a pure function of the shard, the tokenizer and the seed."""

    dataset: int
    shard: int
    path: str  # the dataset folder
    entry: dict[str, Any]  # the shard's line in the dataset's manifest
    fmt: str  # the dataset's shard format
    tokenizer: str
    eos: str | None
    seed: int
    folder: str  # the shard's work folder

    @property
    def label(self) -> str:
        return f"tokenize {self.path}/{self.entry['path']}"


# runs tasks given as (function, its argument, a label, a weight: the expected cost) and returns their
# results in task order, wherever they ran
TaskRunner = Callable[[Sequence[tuple[Callable[[Any], Any], Any, str, float]]], list[Any]]


def run_here(tasks: Sequence[tuple[Callable[[Any], Any], Any, str, float]]) -> list[Any]:
    return [fn(arg) for fn, arg, _, _ in tasks]


_LOADED: dict[tuple[str, str | None], PackTokenizer] = {}  # per process: a worker loads each tokenizer once


def _tokenizer(name: str, eos: str | None) -> PackTokenizer:
    if (name, eos) not in _LOADED:
        _LOADED[(name, eos)] = load_tokenizer(name, eos)
    return _LOADED[(name, eos)]


def tokenize_shard(task: ShardTask) -> dict[str, int]:
    """Tokens, document rows and provenance lines of one shard into its work folder, then its marker
    (`done.json`: its documents and tokens), last. A shard with a marker is not tokenized again."""
    from thresher.write.manifest import read_shard

    folder = Path(task.folder)
    marker = folder / "done.json"
    if marker.exists():
        done: dict[str, int] = json.loads(marker.read_text())
        return done
    tokenizer = _tokenizer(task.tokenizer, task.eos)
    folder.mkdir(parents=True, exist_ok=True)
    documents = tokens = meta_at = 0
    with (
        open(folder / "tokens.bin", "wb") as tok_out,
        open(folder / "docs.bin", "wb") as doc_out,
        open(folder / "provenance.jsonl", "wb") as meta_out,
    ):
        def flush(batch: list[dict[str, Any]]) -> None:
            nonlocal documents, tokens, meta_at
            for record, ids in zip(batch, tokenizer.encode_batch([r.get("text") or "" for r in batch]), strict=True):
                source_rec = record.get("source") or {}
                meta = json.dumps({
                    "id": record.get("id"), "url": record.get("url"), "file": source_rec.get("file"),
                    "offset": source_rec.get("offset"), "lang": (record.get("annotations") or {}).get("lang.code"),
                }, ensure_ascii=False).encode() + b"\n"
                tok_out.write(array("I", ids).tobytes())
                doc_out.write(DOC_ROW.pack(tokens, len(ids), meta_at, len(meta),
                                           _validation_draw(task.seed, str(record.get("id")))))
                meta_out.write(meta)
                meta_at += len(meta)
                tokens += len(ids)
                documents += 1

        batch: list[dict[str, Any]] = []
        for record in read_shard(task.path, task.entry, task.fmt):
            batch.append(record)
            if len(batch) >= BATCH_DOCS:
                flush(batch)
                batch = []
        if batch:
            flush(batch)
    result = {"documents": documents, "tokens": tokens}
    write_work_json(marker, result)
    return result


def _dataset_facts(source: Source, manifest: dict[str, Any]) -> dict[str, Any]:
    return {"path": source.path, "records": manifest.get("records"), "config_hash": manifest.get("config_hash"),
            "manifest_sha256": hashlib.sha256(
                json.dumps(manifest, sort_keys=True, ensure_ascii=False).encode()).hexdigest()}


def _prepare_work(work: Path, plan: dict[str, Any]) -> None:
    """Keep the work folder of an interrupted pack with the same plan (its finished shards are not
    tokenized again); anything else starts empty."""
    plan_file = work / "plan.json"
    if plan_file.exists():
        try:
            if json.loads(plan_file.read_text()) == plan:
                return
        except ValueError:
            pass
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    write_work_json(plan_file, plan)


def _doc_ids(folder: Path) -> Iterator[tuple[int, str]]:
    with open(folder / "provenance.jsonl", "rb") as f:
        for i, line in enumerate(f):
            yield i, str(json.loads(line)["id"])


class _ShardFiles:
    """The work files of the shards being read in key order, at most `limit` shards open at once."""

    def __init__(self, work: Path, limit: int = 128) -> None:
        self.work = work
        self.limit = limit
        self.open: OrderedDict[tuple[int, int], tuple[int, int, int]] = OrderedDict()

    def get(self, dataset: int, shard: int) -> tuple[int, int, int]:
        key = (dataset, shard)
        fds = self.open.get(key)
        if fds is not None:
            self.open.move_to_end(key)
            return fds
        if len(self.open) >= self.limit:
            for fd in self.open.popitem(last=False)[1]:
                os.close(fd)
        folder = _shard_folder(self.work, dataset, shard)
        fds = (os.open(folder / "docs.bin", os.O_RDONLY), os.open(folder / "tokens.bin", os.O_RDONLY),
               os.open(folder / "provenance.jsonl", os.O_RDONLY))
        self.open[key] = fds
        return fds

    def close(self) -> None:
        for fds in self.open.values():
            for fd in fds:
                os.close(fd)
        self.open.clear()


def _shard_folder(work: Path, dataset: int, shard: int) -> Path:
    return work / f"d{dataset:03d}" / f"s{shard:05d}"


def pack(
    datasets: Sequence[str], out: str | Path, options: PackOptions = PackOptions(),
    progress: Callable[[str, int], None] | None = None, runner: TaskRunner | None = None,
) -> dict[str, Any]:
    """Pack `datasets` (`PATH` or `PATH=WEIGHT`) into `out`; returns the pack's manifest. `runner` runs the
    tokenize tasks (`run_here` by default; `thresher.commands.pack.engine_runner` for the run layer's
    engines); whatever runs them, the files are the same bytes."""
    t0 = time.process_time()
    if not 0.0 <= options.validation_fraction < 1.0:
        raise ConfigError("--validation-fraction must be in [0, 1)")
    if options.max_tokens is not None and options.max_tokens <= 0:
        raise ConfigError("--max-tokens must be positive")
    if options.file_tokens <= 0:
        raise ConfigError("--file-tokens must be positive")
    sources = parse_sources(datasets)
    for s in sources:
        if not (Path(s.path) / "manifest.json").is_file():
            raise ConfigError(f"{s.path}: not a thresher dataset (no manifest.json; is the build finished?)")
    tokenizer = load_tokenizer(options.tokenizer, options.eos)
    if options.format not in WRITERS:
        raise ConfigError(f"unknown pack format {options.format!r} (known: {', '.join(WRITERS)})")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)  # written last: a pack without one is unfinished
    from thresher.write.manifest import load_manifest

    manifests = [load_manifest(source.path) for source in sources]
    facts = [_dataset_facts(source, m) for source, m in zip(sources, manifests, strict=True)]
    work = out / ".work"
    _prepare_work(work, {"format_version": PACK_FORMAT_VERSION, "seed": options.seed,
                         "tokenizer": tokenizer.sha256, "eos_id": tokenizer.eos_id,
                         "datasets": [[f["path"], f["manifest_sha256"]] for f in facts]})
    _LOADED.setdefault((options.tokenizer, options.eos), tokenizer)

    # 1. tokenize: a task per shard, on the engine; a finished shard's marker survives a kill
    tasks = [ShardTask(i, j, source.path, entry, m.get("format", "jsonl.gz"), options.tokenizer, options.eos,
                       options.seed, str(_shard_folder(work, i, j)))
             for i, (source, m) in enumerate(zip(sources, manifests, strict=True))
             for j, entry in enumerate(m["shards"])]
    done = (runner or run_here)([(tokenize_shard, t, t.label, float(t.entry.get("bytes") or 0)) for t in tasks])
    if progress:
        for r in done:
            progress("tokenize", r["documents"])
    counts = [(0, 0)] * len(sources)
    shard_counts: list[list[int]] = [[] for _ in sources]
    for t, r in zip(tasks, done, strict=True):
        d, n = counts[t.dataset]
        counts[t.dataset] = (d + r["documents"], n + r["tokens"])
        shard_counts[t.dataset].append(r["documents"])
    targets = plan_targets(sources, [t for _, t in counts], options.max_tokens, options.allow_repeat)

    # 2. key every document copy
    with BucketSpill(work / "keys.bin", KEY_BUCKETS) as spill:
        for i, target in enumerate(targets):
            if target.tokens == 0:
                continue
            for epoch in range(target.epochs):
                for j in range(len(shard_counts[i])):
                    for d, doc_id in _doc_ids(_shard_folder(work, i, j)):
                        key = _key(options.seed, i, epoch, doc_id)
                        spill.add(key[0], KEY_ROW.pack(key, i, epoch, j, d))
    with open(work / "keys.idx", "rb") as f:
        runs = json.loads(f.read())

    # 3. write in key order
    typecode = token_typecode(tokenizer.vocab_size, options.format)
    threshold = int(options.validation_fraction * (1 << 64))
    splits = {name: SplitFiles(name, out, options.format, typecode, options.file_tokens, tokenizer.name)
              for name in ("train", "validation")}
    taken = [0] * len(sources)
    taken_docs = [0] * len(sources)
    copies = [0] * len(sources)
    by_lang: dict[str, int] = {}
    by_source: dict[str, int] = {}
    handles = _ShardFiles(work)
    provenance = {name: _ProvenanceWriter(out / name / "provenance.parquet") for name in splits}
    try:
        for bucket in range(KEY_BUCKETS):
            rows = sorted(read_bucket_range(work / "keys.bin", runs, bucket, bucket + 1, KEY_ROW.size))
            for row in rows:
                _, ds, epoch, shard, d = KEY_ROW.unpack(row)
                docs_fd, tok_fd, meta_fd = handles.get(ds, shard)
                tok_at, n, meta_at, meta_len, draw = DOC_ROW.unpack(os.pread(docs_fd, DOC_ROW.size, d * DOC_ROW.size))
                if taken[ds] + n > targets[ds].tokens:
                    continue
                split = "validation" if draw < threshold else "train"
                if split == "validation" and epoch > 0:
                    continue  # a validation document is never repeated
                sequence = array("I")
                sequence.frombytes(os.pread(tok_fd, n * 4, tok_at * 4))
                taken[ds] += n
                taken_docs[ds] += 1 if epoch == 0 else 0
                copies[ds] += 1
                name = splits[split].add(sequence)
                meta = json.loads(os.pread(meta_fd, meta_len, meta_at))
                lang = meta.get("lang") or "und"
                by_lang[lang] = by_lang.get(lang, 0) + n
                src = str(meta.get("file") or "")
                by_source[src] = by_source.get(src, 0) + n
                provenance[split].add(splits[split].sequences - 1, name, sources[ds].path, epoch, n, meta)
    finally:
        handles.close()
    written = {name: (split.close(), provenance[name].close()) for name, split in splits.items()}
    manifest = {
        "format_version": PACK_FORMAT_VERSION,
        "kind": "thresher-pack",
        "format": options.format,
        "dtype": {"H": "uint16", "i": "int32", "I": "uint32"}[typecode],
        "tokenizer": tokenizer.describe(),
        "seed": options.seed,
        "max_tokens": options.max_tokens,
        "validation_fraction": options.validation_fraction,
        "datasets": [
            {**fact, "weight": s.weight, "documents": docs, "tokens": toks, "target_tokens": t.tokens,
             "epochs": t.epochs, "packed_tokens": taken[i], "packed_documents": taken_docs[i],
             "packed_sequences": copies[i]}
            for i, (s, fact, (docs, toks), t) in enumerate(zip(sources, facts, counts, targets, strict=True))
        ],
        "splits": {
            name: {"sequences": splits[name].sequences, "tokens": splits[name].tokens,
                   "files": [dataclasses.asdict(f) for f in files] + ([prov] if prov else [])}
            for name, (files, prov) in written.items()
        },
        "tokens_by_language": dict(sorted(by_lang.items())),
        "tokens_by_source": dict(sorted(by_source.items())),
        "cpu_s": round(time.process_time() - t0, 3),
    }
    shutil.rmtree(work, ignore_errors=True)
    _write_card(out, manifest)
    write_work_json(out / "manifest.json", manifest)
    return manifest


class _ProvenanceWriter:
    """The Parquet sidecar of one split: a row per sequence, in the split's order."""

    COLUMNS = ("sequence", "file", "dataset", "epoch", "tokens", "id", "url", "source_file", "source_offset")

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows: dict[str, list[Any]] = {c: [] for c in self.COLUMNS}
        self.writer: Any = None
        self.count = 0

    def add(self, sequence: int, file: str, dataset: str, epoch: int, tokens: int, meta: dict[str, Any]) -> None:
        values = (sequence, file, dataset, epoch, tokens, meta.get("id"), meta.get("url"), meta.get("file"),
                  meta.get("offset"))
        for column, value in zip(self.COLUMNS, values, strict=True):
            self.rows[column].append(value)
        self.count += 1
        if len(self.rows["sequence"]) >= PROVENANCE_ROWS:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([("sequence", pa.int64()), ("file", pa.string()), ("dataset", pa.string()),
                            ("epoch", pa.int32()), ("tokens", pa.int64()), ("id", pa.string()), ("url", pa.string()),
                            ("source_file", pa.string()), ("source_offset", pa.int64())])
        table = pa.table({c: self.rows[c] for c in self.COLUMNS}, schema=schema)
        if self.writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(str(self.path), schema, compression="zstd")
        self.writer.write_table(table)
        self.rows = {c: [] for c in self.COLUMNS}

    def close(self) -> dict[str, Any] | None:
        if self.count == 0:
            return None
        if self.rows["sequence"]:
            self._flush()
        self.writer.close()
        blob = self.path.read_bytes()
        return {"path": f"{self.path.parent.name}/{self.path.name}", "bytes": len(blob),
                "sha256": hashlib.sha256(blob).hexdigest()}


def _write_card(out: Path, manifest: dict[str, Any]) -> None:
    lines = [
        "# Tokenized training files (thresher pack)", "",
        f"Format `{manifest['format']}` ({manifest['dtype']} tokens), tokenizer `{manifest['tokenizer']['name']}` "
        f"(sha256 `{manifest['tokenizer']['sha256']}`, EOS id {manifest['tokenizer']['eos_id']} after every document), "
        f"seed {manifest['seed']}.", "",
        "| dataset | weight | documents | tokens | packed tokens | epochs |", "|---|---:|---:|---:|---:|---:|",
    ]
    for d in manifest["datasets"]:
        lines.append(f"| {d['path']} | {d['weight'] if d['weight'] is not None else '-'} | {d['documents']:,} | "
                     f"{d['tokens']:,} | {d['packed_tokens']:,} | {d['epochs']} |")
    lines += ["", "| split | sequences | tokens |", "|---|---:|---:|"]
    for name, split in manifest["splits"].items():
        lines.append(f"| {name} | {split['sequences']:,} | {split['tokens']:,} |")
    lines += ["", "Tokens by language: " + ", ".join(f"{k} {v:,}" for k, v in manifest["tokens_by_language"].items()),
              "", "Every sequence's source (dataset, document id, url, archive file and offset) is in each split's "
              "`provenance.parquet`.", ""]
    with atomic_open(out / "README.md", "w") as f:
        f.write("\n".join(lines))
